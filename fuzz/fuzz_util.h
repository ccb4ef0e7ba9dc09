/* fuzz_util.h - what the libFuzzer targets share: the project folder, whole
 * files, and a memfd that loaders taking a path can read bytes from. */
#ifndef DDT_FUZZ_UTIL_H
#define DDT_FUZZ_UTIL_H

#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "err.h"
#include "fsx.h"

/* The project folder: $DDT_HOME, else three levels above the fuzzer binary
 * (build-fuzz/fuzz/fuzz_x), else ".". Static storage. */
static inline const char *fuzz_home(void)
{
	static char home[PATH_MAX];
	const char *env = getenv("DDT_HOME");
	char exe[PATH_MAX];
	ssize_t n;

	if (home[0])
		return home;
	if (env && *env) {
		snprintf(home, sizeof home, "%s", env);
		return home;
	}
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0) {
		snprintf(home, sizeof home, ".");
		return home;
	}
	exe[n] = '\0';
	snprintf(home, sizeof home, "%s", dirname(dirname(dirname(exe))));
	return home;
}

/* "home/rel" in a static buffer (one at a time). */
static inline const char *fuzz_path(const char *rel)
{
	static char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", fuzz_home(), rel);
	return path;
}

/* Every *.yaml of a folder concatenated: the calibration's files hold
 * disjoint top-level sections, so the result is one valid file of them all.
 * malloc'd; exits on failure (setup only). */
static inline char *fuzz_cat_yaml(const char *dir, size_t *len)
{
	struct dirent **list;
	char *all = NULL;
	size_t size = 0;
	FILE *mem = open_memstream(&all, &size);
	int n = scandir(dir, &list, NULL, alphasort);

	if (!mem || n < 0) {
		fprintf(stderr, "fuzz: cannot read %s\n", dir);
		exit(1);
	}
	for (int i = 0; i < n; i++) {
		const char *name = list[i]->d_name;
		size_t k = strlen(name);
		if (name[0] != '.' && k > 5 && !strcmp(name + k - 5, ".yaml")) {
			char *p = fsx_join(dir, name), *text = NULL;
			size_t tl = 0;
			if (!p || fsx_read_all(p, 1 << 24, &text, &tl) != 0) {
				fprintf(stderr, "fuzz: cannot read %s: %s\n", p ? p : name, err_msg());
				exit(1);
			}
			fwrite(text, 1, tl, mem);
			fputc('\n', mem);
			free(text);
			free(p);
		}
		free(list[i]);
	}
	free(list);
	fclose(mem);
	*len = size;
	return all;
}

/* A memory file holding exactly len bytes of data; its path is written to
 * path ("/proc/self/fd/N"). Returns the fd (reused across calls when fd >= 0). */
static inline int fuzz_memfile(int fd, const void *data, size_t len, char *path, size_t plen)
{
	if (fd < 0 && (fd = memfd_create("fuzz-input.yaml", MFD_CLOEXEC)) < 0) {
		perror("memfd_create");
		exit(1);
	}
	if (ftruncate(fd, 0) != 0 || pwrite(fd, data, len, 0) != (ssize_t)len) {
		perror("memfd write");
		exit(1);
	}
	snprintf(path, plen, "/proc/self/fd/%d", fd);
	return fd;
}

#endif
