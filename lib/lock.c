/* lock.c - the nightly's flock and the sweep of temporary names of dead writers. */
#include "lock.h"

#include "err.h"
#include "fsx.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* The pid written in a held lock file, or 0 when it cannot be read. */
static long holder_pid(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

int lock_take(const char *path, int *fd)
{
	char pid[32];
	int len;

	*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (*fd < 0)
		return err_set(DDT_EIO, "%s: cannot open lock file: %s", path, strerror(errno));
	if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;
		long holder = e == EWOULDBLOCK ? holder_pid(*fd) : 0;
		close(*fd);
		*fd = -1;
		if (e != EWOULDBLOCK)
			return err_set(DDT_EIO, "%s: cannot lock: %s", path, strerror(e));
		if (holder > 0)
			return err_set(DDT_ELOCKED, "another nightly (pid %ld) holds %s", holder,
				       path);
		return err_set(DDT_ELOCKED, "another nightly holds %s", path);
	}
	/* for the message of the next one that finds it held */
	len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	if (ftruncate(*fd, 0) != 0 || pwrite(*fd, pid, (size_t)len, 0) != len) {
		int rc = err_set(DDT_EIO, "%s: cannot write: %s", path, strerror(errno));
		lock_release(*fd);
		*fd = -1;
		return rc;
	}
	return 0;
}

void lock_release(int fd)
{
	if (fd < 0)
		return;
	flock(fd, LOCK_UN);
	close(fd);
}

long lock_temp_owner(const char *name)
{
	const char *t = name[0] == '.' ? strstr(name, ".tmp-") : NULL;
	const char *last = NULL;
	char *end;

	for (; t; t = strstr(t + 1, ".tmp-"))
		last = t;
	if (!last || !last[5])
		return 0;
	long pid = strtol(last + 5, &end, 10);
	return *end == '\0' && pid > 0 ? pid : 0;
}

/* True when process pid exists (EPERM: it exists under another user). */
static int pid_alive(long pid)
{
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* Sweeps one folder's own entries; recurse: also sweep inside its non-temp
 * subfolders (one level). */
static int sweep(const char *dir, int recurse)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int removed = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		long owner = lock_temp_owner(e->d_name);
		char *p = fsx_join(dir, e->d_name);
		struct stat st;
		if (!p)
			break;
		if (owner && !pid_alive(owner)) {
			if (fsx_rm_rf(p) == 0)
				removed++;
		} else if (!owner && recurse && !fsx_is_temp_name(e->d_name) &&
			   lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			removed += sweep(p, 0);
		free(p);
	}
	closedir(d);
	return removed;
}

int lock_sweep_temps(const char *dir)
{
	return sweep(dir, 1);
}
