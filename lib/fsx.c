/* fsx.c - crash-safe file output: temp file, fsync, rename, fsync directory. */

#include "fsx.h"

#include "err.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *fsx_join(const char *a, const char *b)
{
	char *s = NULL;
	if (asprintf(&s, "%s/%s", a, b) < 0)
		return NULL;
	return s;
}

/* "dir/name" -> "dir/.name.tmp-PID"; malloc'd or NULL. */
static char *tmp_name_for(const char *path)
{
	char *copy1 = strdup(path), *copy2 = strdup(path), *s = NULL;
	if (copy1 && copy2 &&
	    asprintf(&s, "%s/.%s.tmp-%ld", dirname(copy1), basename(copy2), (long)getpid()) < 0)
		s = NULL;
	free(copy1);
	free(copy2);
	return s;
}

static int fsync_dir_of(const char *path)
{
	char *copy = strdup(path);
	int fd, rc = 0;

	if (!copy)
		return err_nomem();
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
	if (fd < 0 || fsync(fd) != 0)
		rc = err_set(DDT_EIO, "%s: fsync of folder failed: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	free(copy);
	return rc;
}

int fsx_open(struct fsx_file *f, const char *path)
{
	memset(f, 0, sizeof *f);
	f->final_path = strdup(path);
	f->tmp_path = tmp_name_for(path);
	if (!f->final_path || !f->tmp_path) {
		fsx_abort(f);
		return err_nomem();
	}
	f->fp = fopen(f->tmp_path, "wbx");
	if (!f->fp && errno == EEXIST) { /* left by a killed process with our pid */
		unlink(f->tmp_path);
		f->fp = fopen(f->tmp_path, "wbx");
	}
	if (!f->fp) {
		int rc = err_set(DDT_EIO, "%s: cannot create: %s", path, strerror(errno));
		fsx_abort(f);
		return rc;
	}
	return 0;
}

static void fsx_free(struct fsx_file *f)
{
	free(f->final_path);
	free(f->tmp_path);
	f->final_path = f->tmp_path = NULL;
	f->fp = NULL;
}

void fsx_abort(struct fsx_file *f)
{
	if (f->fp)
		fclose(f->fp);
	if (f->tmp_path)
		unlink(f->tmp_path);
	fsx_free(f);
}

int fsx_commit(struct fsx_file *f)
{
	int bad = ferror(f->fp) || fflush(f->fp) != 0 || fsync(fileno(f->fp)) != 0;
	int saved = errno;
	int rc;

	if (fclose(f->fp) != 0 && !bad) {
		bad = 1;
		saved = errno;
	}
	f->fp = NULL;
	if (!bad && rename(f->tmp_path, f->final_path) != 0) {
		bad = 1;
		saved = errno;
	}
	if (bad) {
		rc = err_set(DDT_EIO, "%s: write failed: %s", f->final_path,
			     strerror(saved ? saved : EIO));
		unlink(f->tmp_path);
		fsx_free(f);
		return rc;
	}
	rc = fsync_dir_of(f->final_path);
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

/* Opens path for reading when it is a regular file: a FIFO or a device named
 * where a file belongs must not block or stream forever. NULL with the error
 * set otherwise. */
static FILE *open_regular(const char *path, int *rc)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	FILE *fp;

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

int fsx_mkdir_p(const char *path)
{
	char *p = strdup(path);
	int rc = 0;

	if (!p)
		return err_nomem();
	for (char *s = p + 1;; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, 0777) != 0 && errno != EEXIST) {
				rc = err_set(DDT_EIO, "%s: cannot create folder: %s", p, strerror(errno));
				break;
			}
			*s = c;
			if (c == '\0')
				break;
		}
	}
	free(p);
	return rc;
}

int fsx_dir_begin(const char *final_dir, char **tmp_dir)
{
	*tmp_dir = tmp_name_for(final_dir);
	if (!*tmp_dir)
		return err_nomem();
	fsx_rm_rf(*tmp_dir); /* a leftover of a killed process with our pid */
	if (mkdir(*tmp_dir, 0777) != 0) {
		int rc = err_set(DDT_EIO, "%s: cannot create folder: %s", *tmp_dir, strerror(errno));
		free(*tmp_dir);
		*tmp_dir = NULL;
		return rc;
	}
	return 0;
}

static int fsync_path(const char *path)
{
	int fd = open(path, O_RDONLY);
	int rc = fd >= 0 && fsync(fd) == 0 ? 0 : -1;
	if (fd >= 0)
		close(fd);
	return rc;
}

int fsx_dir_commit(const char *tmp_dir, const char *final_dir)
{
	DIR *d = opendir(tmp_dir);
	struct dirent *e;
	int rc = 0;

	if (!d)
		return err_set(DDT_EIO, "%s: cannot open folder: %s", tmp_dir, strerror(errno));
	while (!rc && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *p = fsx_join(tmp_dir, e->d_name);
		if (!p)
			rc = err_nomem();
		else if (fsync_path(p) != 0)
			rc = err_set(DDT_EIO, "%s: fsync failed: %s", p, strerror(errno));
		free(p);
	}
	closedir(d);
	if (!rc && fsync_path(tmp_dir) != 0)
		rc = err_set(DDT_EIO, "%s: fsync failed: %s", tmp_dir, strerror(errno));
	if (!rc && rename(tmp_dir, final_dir) != 0)
		rc = err_set(DDT_EIO, "%s: cannot rename into place: %s", final_dir, strerror(errno));
	if (!rc)
		rc = fsync_dir_of(final_dir);
	if (rc && fsx_exists(tmp_dir))
		fsx_rm_rf(tmp_dir);
	return rc;
}

int fsx_rm_rf(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : err_set(DDT_EIO, "%s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return unlink(path) == 0 ? 0 : err_set(DDT_EIO, "%s: %s", path, strerror(errno));
	d = opendir(path);
	if (!d)
		return err_set(DDT_EIO, "%s: %s", path, strerror(errno));
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *p = fsx_join(path, e->d_name);
		if (!p) {
			rc = err_nomem();
			break;
		}
		if (fsx_rm_rf(p) != 0)
			rc = DDT_EIO;
		free(p);
	}
	closedir(d);
	if (rmdir(path) != 0 && !rc)
		rc = err_set(DDT_EIO, "%s: %s", path, strerror(errno));
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
