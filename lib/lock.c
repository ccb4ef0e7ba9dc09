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
#include <time.h>
#include <unistd.h>

/* What a held lock file says: "PID SINCE". */
static void holder_read(int fd, struct lock_holder *h)
{
	char buf[64];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	memset(h, 0, sizeof *h);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (sscanf(buf, "%ld %lld", &h->pid, &h->since) < 1 || h->pid < 0)
		memset(h, 0, sizeof *h);
}

/* The refusal of a lock someone else holds. */
static int held_by(const char *path, const struct lock_holder *h)
{
	char when[32] = "";
	struct tm tm;
	time_t t = (time_t)h->since;

	if (h->since > 0 && gmtime_r(&t, &tm))
		strftime(when, sizeof when, ", since %Y-%m-%dT%H:%M:%SZ", &tm);
	if (h->pid > 0)
		return err_set(DDT_ELOCKED, "another nightly (pid %ld%s) holds %s", h->pid, when,
			       path);
	return err_set(DDT_ELOCKED, "another nightly holds %s", path);
}

/* 0 when fd is a lock file ddt may write: a regular file with one name, the
 * one at path now (not replaced since it was opened). */
static int check_lock_file(int fd, const char *path)
{
	struct stat st, now;
	if (fstat(fd, &st) != 0)
		return err_set(DDT_EIO, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1)
		return err_set(DDT_EIO, "%s: not a lock file ddt made (%s): refused, never written "
				       "(remove it)",
			       path, S_ISREG(st.st_mode) ? "another name of some other file"
							 : "not a regular file");
	if (!fsx_trusted(&st, NULL, 0) || fsx_lstat(path, &now) != 0 ||
	    now.st_ino != st.st_ino || now.st_dev != st.st_dev)
		return err_set(DDT_EIO, "%s: replaced while being locked: try again", path);
	return 0;
}

/* Puts a new empty lock file of this user in place of the one at path when
 * that one is not trusted (another user's, or writable by others; a link or
 * second name of our own is left to check_lock_file to refuse): a new file
 * under a temporary name, renamed over it (the old one's link or file is
 * replaced, never followed or written). why[len] says why, "" when nothing
 * was replaced. Returns 0 or DDT_EIO. */
static int replace_untrusted(const char *path, char *why, size_t len)
{
	struct stat st;
	char *tmp = NULL, reason[96];
	int rc = 0, fd;

	why[0] = '\0';
	if (fsx_lstat(path, &st) != 0 || fsx_trusted(&st, reason, sizeof reason) ||
	    ((st.st_uid == geteuid() || st.st_uid == 0) && !S_ISREG(st.st_mode)))
		return 0;
	if (asprintf(&tmp, "%s.tmp-%ld", path, (long)getpid()) < 0)
		return err_nomem();
	fsx_rm_rf(tmp);
	if ((fd = fsx_open_fd(tmp, O_RDWR | O_CREAT | O_EXCL, 0644)) < 0)
		rc = err_wrap(DDT_EIO, "lock file");
	else {
		close(fd);
		if ((rc = fsx_rename(tmp, path, FSX_REPLACE)) != 0)
			fsx_rm_rf(tmp);
	}
	free(tmp);
	if (!rc)
		snprintf(why, len, "%s", reason);
	return rc;
}

int lock_take(const char *path, int *fd, struct lock_holder *holder)
{
	struct lock_holder h;
	char text[64], replaced[128];
	int len, rc;

	*fd = -1;
	if ((rc = replace_untrusted(path, replaced, sizeof replaced)) != 0)
		return rc;
	if (holder)
		snprintf(holder->replaced, sizeof holder->replaced, "%s", replaced);
	*fd = fsx_open_fd(path, O_RDWR | O_CREAT, 0644);
	if (*fd < 0)
		return err_wrap(DDT_EIO, "lock file");
	if ((rc = check_lock_file(*fd, path)) != 0)
		goto fail;
	if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;
		holder_read(*fd, &h);
		if (holder) {
			holder->pid = h.pid;
			holder->since = h.since;
		}
		rc = e == EWOULDBLOCK ? held_by(path, &h)
				      : err_set(DDT_EIO, "%s: cannot lock: %s", path, strerror(e));
		goto fail;
	}
	/* locked: the file is still the one at path (no one swapped it meanwhile) */
	if ((rc = check_lock_file(*fd, path)) != 0)
		goto fail;
	/* for the message of the next one that finds it held */
	len = snprintf(text, sizeof text, "%ld %lld\n", (long)getpid(), (long long)time(NULL));
	if (ftruncate(*fd, 0) != 0 || pwrite(*fd, text, (size_t)len, 0) != len) {
		rc = err_set(DDT_EIO, "%s: cannot write: %s", path, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	close(*fd);
	*fd = -1;
	return rc;
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

/* Sweeps the entries of folder fd; recurse: also inside its non-temporary
 * subfolders (one level), each opened without following a link. */
static int sweep(int fd, int recurse)
{
	int dup_fd = dup(fd), removed = 0;
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return 0;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		long owner = lock_temp_owner(e->d_name);
		if (owner && !pid_alive(owner)) {
			if (fsx_rm_rf_at(fd, e->d_name) == 0)
				removed++;
		} else if (!owner && recurse && !fsx_is_temp_name(e->d_name)) {
			int sub = openat(fd, e->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0) {
				removed += sweep(sub, 0);
				close(sub);
			}
		}
	}
	closedir(d);
	return removed;
}

int lock_sweep_temps(const char *dir)
{
	int fd = fsx_dir_fd(dir), removed;
	if (fd < 0) {
		err_clear();
		return 0;
	}
	removed = sweep(fd, 1);
	close(fd);
	return removed;
}
