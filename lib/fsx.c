/* fsx.c - crash-safe file output (temp file, fsync, rename, fsync directory)
 * that never follows a symbolic link on the way to what it writes or deletes. */

#include "fsx.h"

#include "err.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Folders nested deeper than this are not removed (a hostile tree). */
#define FSX_MAX_DEPTH 64

char *fsx_join(const char *a, const char *b)
{
	char *s = NULL;
	if (asprintf(&s, "%s/%s", a, b) < 0)
		return NULL;
	return s;
}

/* ---------------------------------------------------------------- the walk */

/* Sets the error for component comp (the first n bytes of path name it) that
 * could not be opened as a folder in fd; returns -1. */
static int refuse_component(int fd, const char *comp, const char *path, int n, int e)
{
	struct stat st;
	if ((e == ENOTDIR || e == ELOOP) && fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		err_set(DDT_EIO,
			"%.*s: a symbolic link where ddt expects a folder of its own: not followed "
			"(remove it, or give the folder's real path)",
			n, path);
	else
		err_set(DDT_EIO, "%.*s: cannot open folder: %s", n, path, strerror(e));
	errno = e;
	return -1;
}

/* Opens component comp of fd as a folder without following a link, creating
 * it first when missing and mkdir is set. The folder fd, or -1 (errno set). */
static int open_component(int fd, const char *comp, int mkdir_missing, int oflag)
{
	int next = openat(fd, comp, oflag | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (next < 0 && errno == ENOENT && mkdir_missing) {
		if (mkdirat(fd, comp, 0777) != 0 && errno != EEXIST)
			return -1;
		next = openat(fd, comp, oflag | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	return next;
}

/* Opens the folder that holds path's last component: every folder on the way
 * is reached from "/" (or the current folder) with openat(O_DIRECTORY |
 * O_NOFOLLOW), created when missing if mkdir_missing. *leaf receives the last
 * component (malloc'd; "." for "/"). Returns a descriptor open for reading
 * (so it can be fsynced and listed), or -1 with the error set. */
static int walk_parent(const char *path, int mkdir_missing, char **leaf)
{
	char *copy = strdup(path), *p, *last;
	int fd, e;

	*leaf = NULL;
	if (!copy)
		return err_nomem(), -1;
	for (size_t n = strlen(copy); n > 1 && copy[n - 1] == '/'; n--)
		copy[n - 1] = '\0';
	last = strrchr(copy, '/');
	fd = open(copy[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err_set(DDT_EIO, "%s: cannot open folder: %s", copy[0] == '/' ? "/" : ".",
			strerror(errno));
		free(copy);
		return -1;
	}
	for (p = copy; last && p < last;) {
		char *end = strchr(p, '/');
		*end = '\0';
		if (*p && strcmp(p, ".") != 0) {
			int next = open_component(fd, p, mkdir_missing, O_PATH);
			if (next < 0) {
				e = errno;
				refuse_component(fd, p, path, (int)(end - copy), e);
				close(fd);
				free(copy);
				return -1;
			}
			close(fd);
			fd = next;
		}
		*end = '/';
		p = end + 1;
	}
	/* the holding folder itself, for reading and fsync */
	int dir = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	e = errno;
	close(fd);
	if (dir < 0) {
		err_set(DDT_EIO, "%.*s: cannot open folder: %s", last ? (int)(last - copy) + 1 : 1,
			last ? copy : ".", strerror(e));
		free(copy);
		return -1;
	}
	*leaf = strdup(last ? (last[1] ? last + 1 : ".") : copy);
	free(copy);
	if (!*leaf) {
		close(dir);
		return err_nomem(), -1;
	}
	return dir;
}

/* "dir/.name.tmp-PID" for a name in dir; malloc'd or NULL. */
static char *tmp_name_of(const char *name)
{
	char *s = NULL;
	if (asprintf(&s, ".%s.tmp-%ld", name, (long)getpid()) < 0)
		return NULL;
	return s;
}

/* path's folder part joined to name ("a/b/c", "x" -> "a/b/x"); malloc'd. */
static char *sibling(const char *path, const char *name)
{
	const char *slash = strrchr(path, '/');
	char *s = NULL;
	if (!slash)
		return strdup(name);
	if (asprintf(&s, "%.*s/%s", (int)(slash - path), path, name) < 0)
		return NULL;
	return s;
}

/* An error when name in dirfd is a symbolic link: ddt writes its own file
 * there and never replaces someone's link silently. */
static int refuse_link_at(int dirfd, const char *name, const char *shown)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		return err_set(DDT_EIO,
			       "%s: a symbolic link where ddt writes its own file: refused (remove "
			       "it)",
			       shown);
	return 0;
}

static int fsync_fd(int fd, const char *shown)
{
	if (fsync(fd) != 0 && errno != EINVAL) /* EINVAL: a file system without fsync */
		return err_set(DDT_EIO, "%s: fsync failed: %s", shown, strerror(errno));
	return 0;
}

/* ---------------------------------------------------------------- files */

int fsx_open(struct fsx_file *f, const char *path)
{
	int fd, rc;

	memset(f, 0, sizeof *f);
	f->dirfd = -1;
	if (!(f->final_path = strdup(path))) {
		rc = err_nomem();
		goto fail;
	}
	if ((f->dirfd = walk_parent(path, 0, &f->name)) < 0) {
		rc = DDT_EIO;
		goto fail;
	}
	if (!(f->tmp_name = tmp_name_of(f->name))) {
		rc = err_nomem();
		goto fail;
	}
	fd = openat(f->dirfd, f->tmp_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0666);
	if (fd < 0 && errno == EEXIST) { /* left by a killed process with our pid */
		unlinkat(f->dirfd, f->tmp_name, 0);
		fd = openat(f->dirfd, f->tmp_name,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	}
	if (fd < 0) {
		rc = err_set(DDT_EIO, "%s: cannot create: %s", path, strerror(errno));
		goto fail;
	}
	if (!(f->fp = fdopen(fd, "wb"))) {
		close(fd);
		unlinkat(f->dirfd, f->tmp_name, 0);
		rc = err_nomem();
		goto fail;
	}
	return 0;
fail:
	fsx_abort(f);
	return rc;
}

static void fsx_free(struct fsx_file *f)
{
	if (f->dirfd >= 0)
		close(f->dirfd);
	free(f->final_path);
	free(f->name);
	free(f->tmp_name);
	memset(f, 0, sizeof *f);
	f->dirfd = -1;
}

void fsx_abort(struct fsx_file *f)
{
	if (f->fp) {
		fclose(f->fp);
		unlinkat(f->dirfd, f->tmp_name, 0);
	}
	fsx_free(f);
}

int fsx_commit(struct fsx_file *f)
{
	int bad = ferror(f->fp) || fflush(f->fp) != 0 || fsync(fileno(f->fp)) != 0;
	int saved = errno, rc = 0;

	if (fclose(f->fp) != 0 && !bad) {
		bad = 1;
		saved = errno;
	}
	f->fp = NULL;
	if (!bad && (rc = refuse_link_at(f->dirfd, f->name, f->final_path)) != 0)
		bad = -1;
	else if (!bad && renameat(f->dirfd, f->tmp_name, f->dirfd, f->name) != 0) {
		bad = 1;
		saved = errno;
	}
	if (bad) {
		if (bad > 0)
			rc = err_set(DDT_EIO, "%s: write failed: %s", f->final_path,
				     strerror(saved ? saved : EIO));
		unlinkat(f->dirfd, f->tmp_name, 0);
	} else
		rc = fsync_fd(f->dirfd, f->final_path);
	fsx_free(f);
	return rc;
}

int fsx_write_all(const char *path, const void *data, size_t len)
{
	struct fsx_file f;
	int rc = fsx_open(&f, path);

	if (rc)
		return rc;
	if (len && fwrite(data, 1, len, f.fp) != len) {
		rc = err_set(DDT_EIO, "%s: write failed: %s", path, strerror(errno));
		fsx_abort(&f);
		return rc;
	}
	return fsx_commit(&f);
}

int fsx_open_fd(const char *path, int flags, mode_t mode)
{
	char *leaf;
	int dir = walk_parent(path, 0, &leaf), fd, e;

	if (dir < 0)
		return -1;
	fd = openat(dir, leaf, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	e = errno;
	if (fd < 0 && e == ELOOP)
		err_set(DDT_EIO,
			"%s: a symbolic link where ddt expects its own file: not followed (remove "
			"it)",
			path);
	else if (fd < 0)
		err_set(DDT_EIO, "%s: cannot open: %s", path, strerror(e));
	close(dir);
	free(leaf);
	errno = e;
	return fd;
}

int fsx_dir_fd(const char *path)
{
	char *leaf;
	int dir = walk_parent(path, 0, &leaf), fd;

	if (dir < 0)
		return -1;
	if ((fd = open_component(dir, leaf, 0, O_RDONLY)) < 0)
		refuse_component(dir, leaf, path, (int)strlen(path), errno);
	close(dir);
	free(leaf);
	return fd;
}

int fsx_open_append(const char *path)
{
	char part[PATH_MAX], dir[PATH_MAX], why[96], *full = NULL;
	const char *slash = strrchr(path, '/'), *leaf = slash ? slash + 1 : path;
	struct stat st;
	int fd = -1;

	if (!*leaf || !strcmp(leaf, ".") || !strcmp(leaf, ".."))
		return err_set(DDT_EINPUT, "%s: not a file name", path), -1;
	snprintf(part, sizeof part, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
		 slash ? path : ".");
	if (fsx_canonical(part, dir, sizeof dir) != 0 || !(full = fsx_join(dir, leaf))) {
		if (!full && !err_msg()[0])
			err_nomem();
		return -1;
	}
	fd = fsx_open_fd(full, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK, 0644);
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
			!fsx_trusted(&st, why, sizeof why))) {
		err_set(DDT_EIO, "%s: %s: not written", full,
			!S_ISREG(st.st_mode) ? "not a regular file"
			: st.st_nlink != 1   ? "another name of some other file (a hard link)"
					     : why);
		close(fd);
		fd = -1;
	}
	free(full);
	return fd;
}

/* ---------------------------------------------------------------- reading */

/* ---------------------------------------------------------------- trust */

int fsx_trusted(const struct stat *st, char *why, size_t len)
{
	char tmp[8];
	if (!why) {
		why = tmp;
		len = sizeof tmp;
	}
	if (S_ISLNK(st->st_mode))
		return snprintf(why, len, "a symbolic link"), 0;
	if (st->st_uid != geteuid() && st->st_uid != 0)
		return snprintf(why, len, "owned by uid %ld, not by uid %ld or root",
				(long)st->st_uid, (long)geteuid()),
		       0;
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return snprintf(why, len, "writable by group or others (mode %04o)",
				(unsigned)(st->st_mode & 07777)),
		       0;
	return 1;
}

int fsx_trusted_at(int dirfd, const char *name, char *why, size_t len)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (why)
			snprintf(why, len, "%s", errno == ENOENT ? "missing" : strerror(errno));
		return 0;
	}
	return fsx_trusted(&st, why, len);
}

int fsx_trusted_path(const char *path, char *why, size_t len)
{
	struct stat st;
	if (fsx_lstat(path, &st) != 0) {
		if (why)
			snprintf(why, len, "%s", errno == ENOENT ? "missing" : strerror(errno));
		return 0;
	}
	return fsx_trusted(&st, why, len);
}

/* The openat walk of fsx_open_beneath where openat2 is missing. */
static int walk_beneath(int dirfd, const char *rel, int flags)
{
	char *copy = strdup(rel), *save = NULL, *comp, *next;
	int fd = dup(dirfd), e = 0;

	if (!copy || fd < 0) {
		e = copy ? errno : ENOMEM;
		goto done;
	}
	for (comp = strtok_r(copy, "/", &save); comp; comp = next) {
		next = strtok_r(NULL, "/", &save);
		if (!strcmp(comp, ".."))
			e = EXDEV;
		int sub = e ? -1
			    : openat(fd, comp,
				     next ? O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
					  : flags | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			e = e ? e : errno == ENOTDIR && next ? ELOOP : errno;
			goto done;
		}
		close(fd);
		fd = sub;
	}
done:
	free(copy);
	if (e && fd >= 0)
		close(fd);
	errno = e;
	return e ? -1 : fd;
}

int fsx_open_beneath(int dirfd, const char *rel, int flags)
{
	struct open_how how = {.flags = (unsigned long long)(flags | O_NOFOLLOW | O_CLOEXEC),
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					  RESOLVE_NO_MAGICLINKS};
	if (!*rel || rel[0] == '/') {
		errno = EXDEV;
		return -1;
	}
	if (getenv("DDT_NO_OPENAT2")) /* the tests' way to try the walk */
		return walk_beneath(dirfd, rel, flags);
	long fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
	if (fd >= 0 || (errno != ENOSYS && errno != EPERM && errno != E2BIG))
		return (int)fd; /* EPERM, ENOSYS: a sandbox or an old kernel */
	return walk_beneath(dirfd, rel, flags);
}

/* The folders others may write (fsx_confine_reads). */
static char *confined[8];

void fsx_confine_reads(const char *dir)
{
	size_t i = 0, n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	for (; i < sizeof confined / sizeof *confined && confined[i]; i++)
		if (strlen(confined[i]) == n && !strncmp(confined[i], dir, n))
			return;
	if (i < sizeof confined / sizeof *confined)
		confined[i] = strndup(dir, n);
}

/* open(2) of path for reading; beneath its confined folder when it is under
 * one (fsx_confine_reads). */
static int open_read(const char *path)
{
	for (size_t i = 0; i < sizeof confined / sizeof *confined && confined[i]; i++) {
		size_t n = strlen(confined[i]);
		if (strncmp(path, confined[i], n) != 0 || path[n] != '/')
			continue;
		int dir = open(confined[i], O_PATH | O_DIRECTORY | O_CLOEXEC), e;
		if (dir < 0)
			return -1;
		int fd = fsx_open_beneath(dir, path + n + 1, O_RDONLY | O_NONBLOCK);
		e = errno;
		close(dir);
		errno = e;
		return fd;
	}
	return open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

/* Opens path for reading when it is a regular file: a FIFO or a device named
 * where a file belongs must not block or stream forever. NULL with the error
 * set otherwise. */
static FILE *open_regular(const char *path, int *rc)
{
	int fd = open_read(path);
	struct stat st;
	FILE *fp;

	if (fd < 0 && (errno == ELOOP || errno == EXDEV)) {
		*rc = err_set(DDT_EINPUT, "%s: %s: not followed", path,
			      errno == ELOOP ? "a symbolic link on the way"
					     : "leads out of its folder");
		return NULL;
	}
	if (fd < 0) {
		*rc = err_set(errno == ENOENT ? DDT_ENOTFOUND : DDT_EIO, "%s: cannot open: %s", path,
			      strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		*rc = err_set(DDT_EINPUT, "%s: not a regular file", path);
		close(fd);
		return NULL;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	if (!(fp = fdopen(fd, "rb"))) {
		*rc = err_nomem();
		close(fd);
	}
	return fp;
}

int fsx_read_all(const char *path, size_t cap, char **data, size_t *len)
{
	char *buf = NULL;
	size_t n = 0, size = 0;
	int rc = 0;
	FILE *fp;

	*data = NULL;
	if (len)
		*len = 0;
	if (!(fp = open_regular(path, &rc)))
		return rc;
	for (;;) {
		if (n + 1 >= size) {
			size_t nsize = size ? size * 2 : 65536;
			char *nbuf = realloc(buf, nsize);
			if (!nbuf) {
				rc = err_nomem();
				goto done;
			}
			buf = nbuf;
			size = nsize;
		}
		size_t got = fread(buf + n, 1, size - n - 1, fp);
		n += got;
		if (n > cap) {
			rc = err_set(DDT_EINPUT, "%s: larger than %zu bytes", path, cap);
			goto done;
		}
		if (got == 0)
			break;
	}
	if (ferror(fp)) {
		rc = err_set(DDT_EIO, "%s: read failed", path);
		goto done;
	}
	buf[n] = '\0';
	*data = buf;
	buf = NULL;
	if (len)
		*len = n;
done:
	free(buf);
	fclose(fp);
	return rc;
}

/* ---------------------------------------------------------------- folders */

int fsx_mkdir_p(const char *path)
{
	char *leaf;
	int dir = walk_parent(path, 1, &leaf), fd, rc = 0;

	if (dir < 0)
		return DDT_EIO;
	if ((fd = open_component(dir, leaf, 1, O_PATH)) < 0)
		rc = refuse_component(dir, leaf, path, (int)strlen(path), errno) ? DDT_EIO : 0;
	else
		close(fd);
	close(dir);
	free(leaf);
	return rc;
}

int fsx_dir_begin(const char *final_dir, char **tmp_dir)
{
	char *leaf, *tmp = NULL;
	int dir = walk_parent(final_dir, 0, &leaf), rc = 0;

	*tmp_dir = NULL;
	if (dir < 0)
		return DDT_EIO;
	if (!(tmp = tmp_name_of(leaf)) || !(*tmp_dir = sibling(final_dir, tmp)))
		rc = err_nomem();
	else {
		fsx_rm_rf_at(dir, tmp); /* a leftover of a killed process with our pid */
		if (mkdirat(dir, tmp, 0777) != 0)
			rc = err_set(DDT_EIO, "%s: cannot create folder: %s", *tmp_dir,
				     strerror(errno));
	}
	if (rc) {
		free(*tmp_dir);
		*tmp_dir = NULL;
	}
	free(tmp);
	free(leaf);
	close(dir);
	return rc;
}

/* fsyncs every entry of folder fd but the dot-names, then the folder. */
static int fsync_entries(int fd, const char *shown)
{
	int dup_fd = dup(fd), rc = 0;
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return err_set(DDT_EIO, "%s: cannot open folder: %s", shown, strerror(errno));
	}
	while (!rc && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		int f = openat(fd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (f < 0)
			rc = err_set(DDT_EIO, "%s/%s: cannot open: %s", shown, e->d_name,
				     strerror(errno));
		else
			rc = fsync_fd(f, shown);
		if (f >= 0)
			close(f);
	}
	closedir(d);
	return rc ? rc : fsync_fd(fd, shown);
}

/* renameat2 with flags, falling back where the file system has no flags
 * (EINVAL): NOREPLACE by a check first, EXCHANGE not at all. */
static int rename_at(int fd1, const char *a, int fd2, const char *b, enum fsx_rename_how how)
{
	static const unsigned flag[] = {[FSX_REPLACE] = 0, [FSX_NOREPLACE] = RENAME_NOREPLACE,
					[FSX_EXCHANGE] = RENAME_EXCHANGE};
	struct stat st;

	if (how == FSX_REPLACE)
		return renameat(fd1, a, fd2, b);
	if (renameat2(fd1, a, fd2, b, flag[how]) == 0)
		return 0;
	if (errno != EINVAL || how != FSX_NOREPLACE)
		return -1;
	if (fstatat(fd2, b, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		errno = EEXIST;
		return -1;
	}
	return renameat(fd1, a, fd2, b);
}

/* fsx_dir_commit; keep_taken: a taken name is DDT_ETAKEN and tmp_dir stays. */
static int dir_commit(const char *tmp_dir, const char *final_dir, int keep_taken)
{
	char *tleaf = NULL, *fleaf = NULL;
	int tdir = walk_parent(tmp_dir, 0, &tleaf), fdir = -1, fd = -1, rc = 0;

	if (tdir < 0)
		return DDT_EIO;
	if ((fdir = walk_parent(final_dir, 0, &fleaf)) < 0) {
		rc = DDT_EIO;
		goto done;
	}
	if ((fd = open_component(tdir, tleaf, 0, O_RDONLY)) < 0) {
		refuse_component(tdir, tleaf, tmp_dir, (int)strlen(tmp_dir), errno);
		rc = DDT_EIO;
		goto done;
	}
	if ((rc = fsync_entries(fd, tmp_dir)) != 0)
		goto done;
	if (rename_at(tdir, tleaf, fdir, fleaf, FSX_NOREPLACE) != 0) {
		int taken = errno == EEXIST || errno == ENOTEMPTY || errno == ENOTDIR ||
			    errno == EISDIR;
		rc = err_set(keep_taken && taken ? DDT_ETAKEN : DDT_EIO,
			     "%s: cannot rename into place: %s", final_dir, strerror(errno));
	} else
		rc = fsync_fd(fdir, final_dir);
done:
	if (rc && rc != DDT_ETAKEN && tleaf)
		fsx_rm_rf_at(tdir, tleaf);
	if (fd >= 0)
		close(fd);
	if (fdir >= 0)
		close(fdir);
	close(tdir);
	free(tleaf);
	free(fleaf);
	return rc;
}

int fsx_dir_commit(const char *tmp_dir, const char *final_dir)
{
	return dir_commit(tmp_dir, final_dir, 0);
}

int fsx_dir_place(const char *tmp_dir, const char *final_dir)
{
	return dir_commit(tmp_dir, final_dir, 1);
}

int fsx_rename(const char *from, const char *to, enum fsx_rename_how how)
{
	char *a = NULL, *b = NULL;
	int fa = walk_parent(from, 0, &a), fb = fa >= 0 ? walk_parent(to, 0, &b) : -1, rc = 0;

	if (fb < 0)
		rc = DDT_EIO;
	else if (rename_at(fa, a, fb, b, how) != 0) {
		int e = errno;
		rc = err_set(DDT_EIO, "%s -> %s: cannot rename: %s", from, to, strerror(e));
		errno = e;
	} else if ((rc = fsync_fd(fb, to)) == 0)
		rc = fsync_fd(fa, from);
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	free(a);
	free(b);
	return rc;
}

int fsx_symlink(const char *target, const char *path)
{
	char *leaf, *tmp = NULL;
	int dir = walk_parent(path, 0, &leaf), rc = 0;

	if (dir < 0)
		return DDT_EIO;
	if (!(tmp = tmp_name_of(leaf)))
		rc = err_nomem();
	else {
		unlinkat(dir, tmp, 0);
		if (symlinkat(target, dir, tmp) != 0 || renameat(dir, tmp, dir, leaf) != 0) {
			rc = err_set(DDT_EIO, "%s: cannot point at %s: %s", path, target,
				     strerror(errno));
			unlinkat(dir, tmp, 0);
		} else
			rc = fsync_fd(dir, path);
	}
	free(tmp);
	free(leaf);
	close(dir);
	return rc;
}

int fsx_fsync_path(const char *path)
{
	char *leaf;
	int dir = walk_parent(path, 0, &leaf), fd, rc;

	if (dir < 0)
		return DDT_EIO;
	fd = openat(dir, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	rc = fd < 0 ? err_set(DDT_EIO, "%s: fsync failed: %s", path, strerror(errno))
		    : fsync_fd(fd, path);
	if (fd >= 0)
		close(fd);
	close(dir);
	free(leaf);
	return rc;
}

/* ---------------------------------------------------------------- removal */

/* Removes the entry name of dirfd: a folder's contents first, through
 * descriptors opened without following links. A folder swapped for a link
 * between the look and the open is met as the link, and the link is what
 * goes. */
static int rm_at(int dirfd, const char *name, int depth)
{
	struct stat st;
	int rc = 0, fd;
	DIR *d;
	struct dirent *e;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : err_set(DDT_EIO, "%s: %s", name, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0) == 0 || errno == ENOENT
			       ? 0
			       : err_set(DDT_EIO, "%s: cannot remove: %s", name, strerror(errno));
	if (depth >= FSX_MAX_DEPTH)
		return err_set(DDT_EIO, "%s: folders nested deeper than %d: not removed", name,
			       FSX_MAX_DEPTH);
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR))
		return unlinkat(dirfd, name, 0) == 0 || errno == ENOENT
			       ? 0
			       : err_set(DDT_EIO, "%s: cannot remove: %s", name, strerror(errno));
	if (fd < 0 || !(d = fdopendir(fd))) {
		rc = err_set(DDT_EIO, "%s: cannot open folder: %s", name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    rm_at(fd, e->d_name, depth + 1) && !rc)
			rc = DDT_EIO;
	closedir(d);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT && !rc)
		rc = err_set(DDT_EIO, "%s: cannot remove: %s", name, strerror(errno));
	return rc;
}

int fsx_rm_rf_at(int dirfd, const char *name)
{
	return rm_at(dirfd, name, 0);
}

int fsx_rm_rf(const char *path)
{
	char *leaf;
	int dir = walk_parent(path, 0, &leaf), rc;

	if (dir < 0) {
		if (errno == ENOENT) { /* a folder on the way is missing: nothing to remove */
			err_clear();
			return 0;
		}
		return DDT_EIO;
	}
	if ((rc = rm_at(dir, leaf, 0)) != 0)
		err_wrap(rc, "%s", path);
	close(dir);
	free(leaf);
	return rc;
}

/* ---------------------------------------------------------------- names */

int fsx_lstat(const char *path, struct stat *st)
{
	char *leaf;
	int dir = walk_parent(path, 0, &leaf), rc, e;

	if (dir < 0) {
		e = errno;
		err_clear();
		errno = e;
		return -1;
	}
	rc = fstatat(dir, leaf, st, AT_SYMLINK_NOFOLLOW);
	e = errno;
	close(dir);
	free(leaf);
	errno = e;
	return rc;
}

enum fsx_kind fsx_kind(const char *path)
{
	struct stat st;
	if (fsx_lstat(path, &st) != 0)
		return FSX_NONE;
	return S_ISLNK(st.st_mode)   ? FSX_LINK
	       : S_ISDIR(st.st_mode) ? FSX_DIR
	       : S_ISREG(st.st_mode) ? FSX_FILE
				     : FSX_OTHER;
}

int fsx_canonical(const char *path, char *out, size_t len)
{
	char *head = strdup(path), *real = NULL;
	const char *rest = "";
	int rc = 0;

	if (!head)
		return err_nomem();
	/* the longest head that exists; what follows it does not exist yet */
	for (;;) {
		if ((real = realpath(head[0] ? head : ".", NULL)) || errno != ENOENT ||
		    !head[0] || !strcmp(head, "/"))
			break;
		char *slash = strrchr(head, '/');
		size_t cut = slash ? (size_t)(slash - head) : 0;
		rest = path + cut + (slash ? 1 : 0);
		head[slash == head ? 1 : cut] = '\0';
	}
	if (!real)
		rc = err_set(DDT_EIO, "%s: %s", path, strerror(errno));
	else if ((size_t)snprintf(out, len, "%s%s%s", real,
				  *rest && strcmp(real, "/") ? "/" : "", rest) >= len)
		rc = err_set(DDT_EINPUT, "%s: path longer than %zu bytes", path, len - 1);
	free(real);
	free(head);
	return rc;
}

int fsx_is_temp_name(const char *name)
{
	return name[0] == '.' || strstr(name, ".tmp-") != NULL;
}

int fsx_name_ok(const char *name)
{
	size_t n = strlen(name);
	return n > 0 && n <= 255 && name[0] != '.' && !strchr(name, '/');
}

int fsx_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

uint64_t fsx_hash(uint64_t h, const void *p, size_t n)
{
	for (const unsigned char *b = p; n--; b++)
		h = (h ^ *b) * 1099511628211ull;
	return h;
}

int fsx_hash_file(uint64_t *h, const char *path, size_t cap)
{
	char *buf = NULL;
	size_t len = 0;
	int rc = fsx_read_all(path, cap, &buf, &len);
	if (!rc)
		*h = fsx_hash(*h, buf, len);
	free(buf);
	return rc;
}
