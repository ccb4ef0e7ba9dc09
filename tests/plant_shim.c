/* plant_shim.c - preloaded into ddt by test_trust (LD_PRELOAD): at the very
 * moment ddt renames a temporary folder into its place, a second user (uid
 * 65534, through setpriv) plants that name first: the race a hostile
 * co-user with write access to runs/ would run, made certain. Not part of
 * ddt.
 *   DDT_PLANT_INTO   the folder whose renames into it are watched
 *   DDT_PLANT_AT     the folder the name is planted in (default: the same)
 *   DDT_PLANT_TIMES  how many such renames get a name planted (default 1)
 *   DDT_PLANT_SWAP   set: an exchange into DDT_PLANT_INTO is watched
 *                    instead, and the second user first moves the folder
 *                    there to NAME.moved (a folder without the sticky bit
 *                    lets them) and plants NAME
 * What is planted: a folder of the second user holding a file "mine". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int rename2_fn(int, const char *, int, const char *, unsigned);

static void plant(const char *dir, const char *name, int swap)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (chdir(dir) == 0)
			execlp("setpriv", "setpriv", "--reuid=65534", "--regid=65534",
			       "--clear-groups", "sh", "-c",
			       swap ? "mv \"$0\" \"$0.moved\" && mkdir \"$0\" && echo mine >\"$0\"/mine"
				    : "mkdir \"$0\" && echo mine >\"$0\"/mine",
			       name, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

int renameat2(int ofd, const char *old, int nfd, const char *new, unsigned flags)
{
	static int planted;
	rename2_fn *real = (rename2_fn *)dlsym(RTLD_NEXT, "renameat2");
	const char *into = getenv("DDT_PLANT_INTO"), *at = getenv("DDT_PLANT_AT"),
		   *times = getenv("DDT_PLANT_TIMES");
	int swap = getenv("DDT_PLANT_SWAP") != NULL;
	char fd_path[64], dir[PATH_MAX];
	ssize_t n;

	snprintf(fd_path, sizeof fd_path, "/proc/self/fd/%d", nfd);
	if (into && (flags & (swap ? RENAME_EXCHANGE : RENAME_NOREPLACE)) && old[0] == '.' &&
	    planted < (times ? atoi(times) : 1) &&
	    (n = readlink(fd_path, dir, sizeof dir - 1)) > 0) {
		dir[n] = '\0';
		if (!strcmp(dir, into)) {
			planted++;
			plant(at ? at : into, new, swap);
		}
	}
	return real(ofd, old, nfd, new, flags);
}
