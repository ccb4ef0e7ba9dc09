/* test_faults.c - write faults as users meet them, from the real OS: a full
 * disk (ENOSPC: a small tmpfs in a private mount namespace, filled to a
 * chosen level), a file-size limit (EFBIG: RLIMIT_FSIZE with SIGXFSZ
 * ignored), /dev/full as stdout, and SIGTERM/SIGINT during a nightly. After
 * each: a clean error, the earlier records and documents byte for byte
 * intact, no partial file at a final path, nothing temporary left behind by
 * a process that failed, and the next nightly fine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "err.h"
#include "fsx.h"
#include "lock.h"
#include "record.h"

static char root[64];   /* this test's folder */
static char proj[2048]; /* the project folder: calibration, templates, fonts */
static char tmpl_path[4096], cal_path[4096];

/* Checks inside a forked child, where cmocka cannot assert: print and fail. */
#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);         \
			fprintf(stderr, __VA_ARGS__);                           \
			fputc('\n', stderr);                                    \
			return 1;                                               \
		}                                                               \
	} while (0)

/* ---------------------------------------------------------------- processes */

/* Runs ddt with args (NULL-terminated) under a file-size limit (fsize bytes;
 * RLIM_INFINITY: none) with SIGXFSZ ignored, stdout to out_path when given
 * (else with stderr into *output through a pipe, which no limit touches).
 * When kill_after_s > 0, sends sig after that many seconds. Returns the exit
 * status, 128 + signal when killed. */
static int ddt_run(const char *const *args, rlim_t fsize, const char *out_path, char **output,
		   double kill_after_s, int sig)
{
	int fds[2];
	pid_t pid;
	int st;

	if (pipe(fds) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		const char *argv[40] = {helpers_bin()};
		struct rlimit rl = {fsize, fsize};
		int i;
		for (i = 0; args[i] && i < 38; i++)
			argv[i + 1] = args[i];
		argv[i + 1] = NULL;
		close(fds[0]);
		if (out_path) {
			int fo = open(out_path, O_WRONLY);
			if (fo < 0)
				_exit(126);
			dup2(fo, 1);
		} else
			dup2(fds[1], 1);
		dup2(fds[1], 2);
		signal(SIGXFSZ, SIG_IGN);
		if (fsize != RLIM_INFINITY && setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(126);
		setenv("DDT_HOME", proj, 1);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	if (kill_after_s > 0) {
		usleep((useconds_t)(kill_after_s * 1e6));
		kill(pid, sig);
	}
	{
		char *buf = NULL, chunk[4096];
		size_t len = 0;
		FILE *mem = open_memstream(&buf, &len);
		ssize_t k;
		while ((k = read(fds[0], chunk, sizeof chunk)) > 0 || (k < 0 && errno == EINTR))
			if (k > 0)
				fwrite(chunk, 1, (size_t)k, mem);
		fclose(mem);
		close(fds[0]);
		if (output)
			*output = buf;
		else
			free(buf);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* `ddt nightly` on runs/reports; *output (may be NULL) receives what it said. */
static int nightly(const char *runs, const char *reports, rlim_t fsize, char **output)
{
	const char *args[] = {"nightly", "--runs", runs, "--reports", reports, "--template",
			      tmpl_path, "--calibration", cal_path, NULL};
	return ddt_run(args, fsize, NULL, output, 0, 0);
}

/* `ddt report ID` from runs into reports. */
static int render(const char *runs, const char *reports, const char *id, rlim_t fsize,
		  char **output)
{
	const char *args[] = {"report", "--runs", runs, "--reports", reports, "-q", id, NULL};
	return ddt_run(args, fsize, NULL, output, 0, 0);
}

/* ---------------------------------------------------------------- files */

static char *join(const char *a, const char *b)
{
	char *p = fsx_join(a, b);
	if (!p)
		abort();
	return p;
}

/* The run ids among dir's folders, sorted; returns how many (at most max). */
static int run_ids(const char *dir, char ids[][80], int max)
{
	struct dirent **list;
	int n = scandir(dir, &list, NULL, alphasort), k = 0;
	for (int i = 0; i < n; i++) {
		if (record_run_id_valid(list[i]->d_name) && k < max) /* at most 79 bytes */
			snprintf(ids[k++], 80, "%.79s", list[i]->d_name);
		free(list[i]);
	}
	if (n >= 0)
		free(list);
	return k;
}

/* FNV-1a of a file's bytes; 0 when it cannot be read. */
static uint64_t file_hash(const char *path)
{
	char *data = NULL;
	size_t len = 0;
	uint64_t h = 1469598103934665603u;
	if (fsx_read_all(path, 1 << 26, &data, &len) != 0)
		return 0;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)data[i]) * 1099511628211u;
	free(data);
	return h;
}

/* "relative-path size hash" of every entry under dir that is not a
 * temporary name (links as their target), sorted, one a line. */
static void snap_into(const char *dir, const char *rel, FILE *out)
{
	struct dirent **list;
	int n = scandir(dir, &list, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		const char *name = list[i]->d_name;
		char *p = join(dir, name), *r = rel[0] ? join(rel, name) : strdup(name), link[256];
		struct stat st;
		if (!fsx_is_temp_name(name) && lstat(p, &st) == 0) {
			if (S_ISLNK(st.st_mode)) {
				ssize_t k = readlink(p, link, sizeof link - 1);
				link[k > 0 ? k : 0] = '\0';
				fprintf(out, "%s -> %s\n", r, link);
			} else if (S_ISDIR(st.st_mode)) {
				fprintf(out, "%s/\n", r);
				snap_into(p, r, out);
			} else
				fprintf(out, "%s %lld %016llx\n", r, (long long)st.st_size,
					(unsigned long long)file_hash(p));
		}
		free(p);
		free(r);
		free(list[i]);
	}
	if (n >= 0)
		free(list);
}

static char *snapshot(const char *dir)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	snap_into(dir, "", m);
	fclose(m);
	return buf;
}

/* True when every line of before is in after: nothing that was there has
 * changed or gone (new entries may appear; `latest` may move on, and is
 * checked by nothing_partial; the history site, index.html and site/, is
 * rebuilt whole by every night that commits). */
static int kept(const char *before, const char *after)
{
	for (const char *l = before; *l;) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l + 1) : strlen(l);
		char line[1024];
		snprintf(line, sizeof line, "%.*s", (int)n, l);
		int site = strstr(line, "index.html ") || strstr(line, "/site/");
		if (!strstr(line, "latest -> ") && !site && !strstr(after, line)) {
			fprintf(stderr, "changed or gone: %s", line);
			return 0;
		}
		l += n;
	}
	return 1;
}

/* Entries of dir and of its folders (one level down) under ddt's temporary
 * names; the nightly's lock file is not one. */
static int temps(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (lock_temp_owner(e->d_name)) {
			fprintf(stderr, "temporary left: %s/%s\n", dir, e->d_name);
			n++;
		} else if (depth > 0 && e->d_name[0] != '.') {
			char *p = join(dir, e->d_name);
			n += temps(p, depth - 1);
			free(p);
		}
	}
	closedir(d);
	return n;
}

/* True when path's last bytes are tail. */
static int ends_with(const char *path, const void *tail, size_t n)
{
	char *data = NULL;
	size_t len = 0;
	int ok = fsx_read_all(path, 1 << 26, &data, &len) == 0 && len >= n &&
		 !memcmp(data + len - n, tail, n);
	free(data);
	return ok;
}

/* True when path is a whole zip: its end-of-central-directory record is
 * there (22 bytes from the end: no archive comment is written). */
static int zip_whole(const char *path)
{
	char *data = NULL;
	size_t len = 0;
	int ok = fsx_read_all(path, 1 << 26, &data, &len) == 0 && len >= 22 &&
		 !memcmp(data + len - 22, "PK\005\006", 4);
	free(data);
	return ok;
}

static int pdf_whole(const char *path)
{
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "qpdf --check '%s' >/dev/null 2>&1", path);
	return system(cmd) == 0;
}

/* True when reports/<id> holds every document, each whole. */
static int docs_whole(const char *reports, const char *id)
{
	static const unsigned char iend[] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
	char *dir = join(reports, id), *pdf = join(dir, "report.pdf"), *xlsx = join(dir, "report.xlsx");
	char *sum = join(dir, "summary.txt"), *charts = join(dir, "charts");
	struct dirent **list;
	int ok = pdf_whole(pdf) && zip_whole(xlsx) && ends_with(sum, "\n", 1);
	int n = scandir(charts, &list, NULL, alphasort), pngs = 0;
	for (int i = 0; i < n; i++) {
		if (strstr(list[i]->d_name, ".png")) {
			char *p = join(charts, list[i]->d_name);
			ok &= ends_with(p, iend, sizeof iend);
			pngs++;
			free(p);
		}
		free(list[i]);
	}
	if (n >= 0)
		free(list);
	free(dir);
	free(pdf);
	free(xlsx);
	free(sum);
	free(charts);
	return ok && pngs > 0;
}

/* True when runs/<id>/run.yaml reads. */
static int run_whole(const char *runs, const char *id)
{
	char *dir = join(runs, id), *p = join(dir, "run.yaml");
	struct run_record r;
	struct ydiag diag = {0};
	int ok = record_read(&r, p, &diag) == 0;
	record_free(&r);
	ydiag_free(&diag);
	free(p);
	free(dir);
	return ok;
}

/* Every run and document folder under a final name is whole, and latest
 * points at whole documents. Returns 0 or 1 (says why on stderr). */
static int nothing_partial(const char *runs, const char *reports)
{
	char ids[64][80], link[128], *lp = join(reports, "latest");
	int n = run_ids(runs, ids, 64), bad = 0;
	ssize_t k;
	for (int i = 0; i < n; i++)
		if (!run_whole(runs, ids[i]))
			bad = fprintf(stderr, "partial run folder %s/%s\n", runs, ids[i]);
	n = run_ids(reports, ids, 64);
	for (int i = 0; i < n; i++)
		if (!docs_whole(reports, ids[i]))
			bad = fprintf(stderr, "partial documents %s/%s\n", reports, ids[i]);
	if ((k = readlink(lp, link, sizeof link - 1)) > 0) {
		link[k] = '\0';
		if (!docs_whole(reports, link))
			bad = fprintf(stderr, "latest -> %s: not whole\n", link);
	}
	free(lp);
	return bad ? 1 : 0;
}

/* ---------------------------------------------------------------- full disk */

/* Runs fn(dir, arg) in a child process inside a private mount namespace, dir
 * being a fresh tmpfs of size_b bytes. Returns fn's result; 77 when this
 * machine lets the test make no mount namespace (then the test skips). */
static int in_tmpfs(size_t size_b, int (*fn)(const char *dir, void *arg), void *arg)
{
	char *dir = join(root, "disk");
	pid_t pid;
	int st;

	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return 1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		char opts[64];
		int ok = unshare(CLONE_NEWNS) == 0;
		if (!ok && unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0) { /* unprivileged */
			char map[64];
			int fd;
			snprintf(map, sizeof map, "0 %d 1", (int)getuid());
			ok = (fd = open("/proc/self/setgroups", O_WRONLY)) >= 0 &&
			     write(fd, "deny", 4) == 4;
			if (fd >= 0)
				close(fd);
			fd = open("/proc/self/uid_map", O_WRONLY);
			ok = ok && fd >= 0 && write(fd, map, strlen(map)) > 0;
			if (fd >= 0)
				close(fd);
		}
		snprintf(opts, sizeof opts, "size=%zu,mode=0755", size_b);
		if (!ok || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
		    mount("tmpfs", dir, "tmpfs", 0, opts) != 0)
			_exit(77);
		int rc = fn(dir, arg);
		fflush(NULL); /* _exit drops what stdio holds */
		_exit(rc);
	}
	free(dir);
	if (pid < 0)
		return 1;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Leaves exactly free_b bytes (page-rounded down) free on dir's file system
 * with a filler file; returns 0 or -1. unfill() removes it. */
static int fill(const char *dir, size_t free_b)
{
	char *p = join(dir, "filler");
	struct statvfs sv;
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644), rc = -1;
	if (fd >= 0 && statvfs(dir, &sv) == 0) {
		size_t avail = (size_t)sv.f_bavail * sv.f_frsize;
		rc = avail <= free_b ? 0 : posix_fallocate(fd, 0, (off_t)(avail - free_b)) == 0 ? 0 : -1;
	}
	if (fd >= 0)
		close(fd);
	free(p);
	return rc;
}

static void unfill(const char *dir)
{
	char *p = join(dir, "filler");
	unlink(p);
	free(p);
}

/* ---------------------------------------------------------------- records */

/* A record of rows rows whose median is base + row. */
static void make_record(struct run_record *r, int rows, double base)
{
	struct rec_device d = {.kind = "cpu", .name = "cpu", .arch = "x86_64", .cores = 2,
			       .mem_gb = 8, .sm_clock_mhz = NAN, .mem_clock_mhz = NAN,
			       .peak_gbps = NAN, .copy_gbps = 10};
	memset(r, 0, sizeof *r);
	r->schema = RECORD_SCHEMA;
	snprintf(r->run_id, sizeof r->run_id, "20260101T000000Z-faults");
	snprintf(r->created, sizeof r->created, "2026-01-01T00:00:00Z");
	snprintf(r->template_name, sizeof r->template_name, "tiny");
	assert_int_equal(record_add_device(r, &d), 0);
	for (int i = 0; i < rows; i++) {
		struct rec_row w = {.op = "memcpy", .variant = "hot", .backend = "cpu", .samples = 5,
				    .median_us = base + i, .p10_us = 1, .p90_us = 2, .min_us = 1,
				    .max_us = 3, .stdev_us = 0.5, .bytes = 1e6, .flops = 0,
				    .gbps = 100, .pct_peak = 50, .max_err = NAN,
				    .sm_clock_mhz = NAN, .status = REC_OK};
		rec_row_param_set(&w, "M", i);
		assert_int_equal(record_add_row(r, &w), 0);
	}
}

/* The bytes record_emit writes for r. */
static char *emitted(const struct run_record *r, size_t *len)
{
	char *buf = NULL;
	FILE *m = open_memstream(&buf, len);
	record_emit(r, m);
	fclose(m);
	return buf;
}

/* In a child: record_write(r, path) under limit fsize (RLIM_INFINITY: none).
 * Returns the child's exit: 0 written, 10 DDT_EIO naming the cause
 * (expect_errno's text), 11 anything else. */
static int write_in_child(const struct run_record *r, const char *path, rlim_t fsize,
			  const char *why)
{
	pid_t pid = fork();
	int st;
	if (pid == 0) {
		struct rlimit rl = {fsize, fsize};
		signal(SIGXFSZ, SIG_IGN);
		if (fsize != RLIM_INFINITY && setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(12);
		int rc = record_write(r, path);
		if (rc && !strstr(err_msg(), why))
			fprintf(stderr, "unexpected message: %s\n", err_msg());
		_exit(rc == 0 ? 0 : rc == DDT_EIO && strstr(err_msg(), why) ? 10 : 11);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* True when path holds exactly want (len bytes). */
static int holds(const char *path, const char *want, size_t len)
{
	char *data = NULL;
	size_t n = 0;
	int ok = fsx_read_all(path, 1 << 26, &data, &n) == 0 && n == len && !memcmp(data, want, n);
	free(data);
	return ok;
}

static void test_faults__run_record_hits_a_file_size_limit_at_every_point(void **state)
{
	(void)state;
	char *dir = join(root, "efbig-record"), *path = join(dir, "run.yaml");
	struct run_record old, new;
	size_t old_len, new_len;
	char *old_text, *new_text;
	int tried = 0;

	assert_int_equal(fsx_mkdir_p(dir), 0);
	make_record(&old, 3, 100);
	make_record(&new, 60, 200);
	old_text = emitted(&old, &old_len);
	new_text = emitted(&new, &new_len);
	assert_int_equal(record_write(&old, path), 0);
	/* every byte of the first and last 64, each side of every 4 KiB stdio
	 * flush, every 97th between */
	for (size_t lim = 0; lim < new_len;
	     lim += lim < 64 || lim + 64 >= new_len || (lim + 1) % 4096 < 2 ? 1 : 97) {
		int ex = write_in_child(&new, path, (rlim_t)lim, "File too large");
		if (ex != 10)
			fail_msg("limit %zu of %zu bytes: child exit %d, wanted a clean EIO", lim,
				 new_len, ex);
		if (!holds(path, old_text, old_len))
			fail_msg("limit %zu: the previous record changed", lim);
		assert_int_equal(temps(dir, 0), 0);
		tried++;
	}
	assert_int_equal(write_in_child(&new, path, (rlim_t)new_len, ""), 0);
	assert_true(holds(path, new_text, new_len));
	printf("run record: %zu bytes; %d size limits below it each gave a clean error with the "
	       "previous record intact\n",
	       new_len, tried);
	record_free(&old);
	record_free(&new);
	free(old_text);
	free(new_text);
	free(path);
	free(dir);
}

/* The full-disk sweep of record_write on a tmpfs (runs in the child). */
static int record_full_disk(const char *disk, void *arg)
{
	(void)arg;
	char *path = join(disk, "run.yaml");
	struct run_record old, new;
	size_t old_len, new_len, page = (size_t)sysconf(_SC_PAGESIZE);
	char *old_text, *new_text;
	int tried = 0;

	make_record(&old, 3, 100);
	make_record(&new, 300, 200);
	old_text = emitted(&old, &old_len);
	new_text = emitted(&new, &new_len);
	CHECK(record_write(&old, path) == 0, "first write: %s", err_msg());
	for (size_t f = 0; f * page < new_len; f++) {
		CHECK(fill(disk, f * page) == 0, "fill");
		int ex = write_in_child(&new, path, RLIM_INFINITY, "No space left on device");
		unfill(disk);
		CHECK(ex == 10, "%zu pages free: child exit %d, wanted a clean EIO", f, ex);
		CHECK(holds(path, old_text, old_len), "%zu pages free: previous record changed", f);
		CHECK(temps(disk, 0) == 0, "%zu pages free: temporary file left", f);
		tried++;
	}
	CHECK(write_in_child(&new, path, RLIM_INFINITY, "") == 0, "with room: not written");
	CHECK(holds(path, new_text, new_len), "with room: wrong bytes");
	printf("run record: %zu bytes; a full disk at %d levels each gave a clean error with the "
	       "previous record intact\n",
	       new_len, tried);
	record_free(&old);
	record_free(&new);
	free(old_text);
	free(new_text);
	free(path);
	return 0;
}

static void test_faults__run_record_on_a_full_disk(void **state)
{
	(void)state;
	int rc = in_tmpfs(2 << 20, record_full_disk, NULL);
	if (rc == 77)
		skip(); /* no mount namespace here: nothing to fill */
	assert_int_equal(rc, 0);
}

/* ---------------------------------------------------------------- documents */

struct doc_file {
	char rel[256];       /* under reports/<id>/ */
	long long mtime_ns;  /* write order */
	size_t size, used_b; /* bytes; bytes of disk (blocks) */
};

static int by_mtime(const void *a, const void *b)
{
	long long x = ((const struct doc_file *)a)->mtime_ns, y = ((const struct doc_file *)b)->mtime_ns;
	return (x > y) - (x < y);
}

/* The files of a rendering in the order they were written. Returns how many. */
static int doc_files(const char *dir, const char *rel, struct doc_file *f, int n, int max)
{
	struct dirent **list;
	int k = scandir(dir, &list, NULL, alphasort);
	for (int i = 0; i < k; i++) {
		const char *name = list[i]->d_name;
		char *p = join(dir, name);
		struct stat st;
		if (name[0] != '.' && lstat(p, &st) == 0) {
			if (S_ISDIR(st.st_mode))
				n = doc_files(p, name, f, n, max);
			else if (S_ISREG(st.st_mode) && n < max) {
				snprintf(f[n].rel, sizeof f[n].rel, "%.120s%s%.120s", rel,
					 rel[0] ? "/" : "", name);
				f[n].mtime_ns = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
				f[n].size = (size_t)st.st_size;
				f[n].used_b = (size_t)st.st_blocks * 512;
				n++;
			}
		}
		free(p);
		free(list[i]);
	}
	if (k >= 0)
		free(list);
	if (!rel[0])
		qsort(f, (size_t)n, sizeof *f, by_mtime);
	return n;
}

/* Which document a failure message is about. */
static const char *doc_named(const char *msg)
{
	return strstr(msg, "report.xlsx")  ? "spreadsheet"
	       : strstr(msg, "report.pdf") ? "pdf"
	       : strstr(msg, ".png")       ? "chart"
	       : strstr(msg, "summary.txt") ? "summary"
					    : "other";
}

/* One rendering of run id with room bytes free: it must fail cleanly (or,
 * with room for everything, succeed) and leave everything that was there as
 * it was. Counts the document that failed in hits. Returns 0 or 1. */
static int render_with_room(const char *disk, const char *runs, const char *reports,
			    const char *id, size_t room, const char *before, int hits[4])
{
	static const char *const kinds[4] = {"chart", "pdf", "spreadsheet", "summary"};
	char *out = NULL, *after;
	int st;

	CHECK(fill(disk, room) == 0, "fill");
	st = render(runs, reports, id, RLIM_INFINITY, &out);
	unfill(disk);
	CHECK(st == 1 || st == 0, "%zu bytes free: exit %d\n%s", room, st, out);
	if (st == 1) {
		const char *what = doc_named(out);
		CHECK(strcmp(what, "other"), "%zu bytes free: names no document: %s", room, out);
		for (int k = 0; k < 4; k++)
			hits[k] += !strcmp(what, kinds[k]);
		printf("  %4zu KiB free: the %s failed cleanly: %s", room >> 10, what,
		       strstr(out, "ddt ") ? strstr(out, "ddt ") : out);
	}
	free(out);
	after = snapshot(disk);
	CHECK(!strcmp(before, after), "%zu bytes free: the earlier documents changed", room);
	free(after);
	CHECK(temps(reports, 1) == 0, "%zu bytes free: temporary left", room);
	CHECK(nothing_partial(runs, reports) == 0, "%zu bytes free: something partial", room);
	return 0;
}

/* The full-disk sweep of the documents (in the child, on the tmpfs): room
 * for the files written before each file and half of it (in the order of
 * their times), then every twelfth of the whole. */
static int documents_full_disk(const char *disk, void *arg)
{
	(void)arg;
	char *runs = join(disk, "runs"), *reports = join(disk, "reports"), *out = NULL;
	char ids[4][80], *before, *after, *dir;
	struct doc_file files[64];
	int n, st, hits[4] = {0}, tried = 0;
	size_t cum = 0, total = 0, page = (size_t)sysconf(_SC_PAGESIZE);

	st = nightly(runs, reports, RLIM_INFINITY, &out);
	CHECK(st == 0 || st == 3, "first nightly: exit %d\n%s", st, out);
	free(out);
	CHECK(run_ids(reports, ids, 4) == 1, "no documents");
	dir = join(reports, ids[0]);
	n = doc_files(dir, "", files, 0, 64);
	free(dir);
	before = snapshot(disk);
	for (int i = 0; i < n; i++)
		total += files[i].used_b;
	for (int i = 0; i < n; i++) {
		size_t room = cum + (files[i].used_b / 2 / page) * page;
		cum += files[i].used_b;
		if (files[i].used_b < 2 * page)
			continue; /* too small to cut in half on this disk */
		if (render_with_room(disk, runs, reports, ids[0], room, before, hits))
			return 1;
		tried++;
	}
	for (size_t room = 0, step = (total / 12 / page + 1) * page; room < total; room += step) {
		if (render_with_room(disk, runs, reports, ids[0], room, before, hits))
			return 1;
		tried++;
	}
	/* the documents are written one after the other (PDF, spreadsheet,
	 * summary, charts), so each meets the full disk at some level */
	CHECK(hits[0] && hits[1] && hits[2], "not every document was cut: chart %d pdf %d xlsx %d",
	      hits[0], hits[1], hits[2]);
	printf("documents: %d full-disk levels; failed cleanly in a chart %d times, the PDF %d, "
	       "the spreadsheet %d\n",
	       tried, hits[0], hits[1], hits[2]);
	/* with room again the same bytes come back */
	st = render(runs, reports, ids[0], RLIM_INFINITY, &out);
	CHECK(st == 0, "render with room: exit %d\n%s", st, out);
	free(out);
	after = snapshot(disk);
	CHECK(!strcmp(before, after), "re-rendered documents differ from the first");
	free(after);
	free(before);
	free(runs);
	free(reports);
	return 0;
}

static void test_faults__documents_on_a_full_disk(void **state)
{
	(void)state;
	int rc = in_tmpfs(8 << 20, documents_full_disk, NULL);
	if (rc == 77)
		skip();
	assert_int_equal(rc, 0);
}

static void test_faults__documents_hit_a_file_size_limit(void **state)
{
	(void)state;
	char *runs = join(root, "efbig-runs"), *reports = join(root, "efbig-reports"), *out = NULL;
	char ids[4][80], *dir, *before, *after;
	struct doc_file files[64];
	int n, st, hit_chart = 0, tried = 0;
	size_t last = 0;

	st = nightly(runs, reports, RLIM_INFINITY, &out);
	if (st != 0 && st != 3)
		fail_msg("first nightly: exit %d\n%s", st, out);
	free(out);
	assert_int_equal(run_ids(reports, ids, 4), 1);
	dir = join(reports, ids[0]);
	n = doc_files(dir, "", files, 0, 64);
	free(dir);
	before = snapshot(reports);
	/* a limit just under a file's size (the smallest, then every third by
	 * size, and the largest): the first file of that size or more in writing
	 * order fails, a chart first as they are written first and are largest */
	for (int pass = 0; pass < n; pass++) {
		size_t lim = SIZE_MAX, largest = 0;
		for (int i = 0; i < n; i++) {
			if (files[i].size > last && files[i].size - 1 < lim)
				lim = files[i].size - 1;
			largest = files[i].size > largest ? files[i].size : largest;
		}
		if (lim == SIZE_MAX)
			break;
		last = lim + 1;
		if (pass % 3 && lim + 1 != largest)
			continue;
		st = render(runs, reports, ids[0], (rlim_t)lim, &out);
		if (st != 1 || !strstr(out, "File too large"))
			fail_msg("limit %zu bytes: exit %d, wanted 1 with EFBIG:\n%s", lim, st, out);
		hit_chart |= !strcmp(doc_named(out), "chart");
		printf("  limit %zu bytes: %s failed cleanly\n", lim, doc_named(out));
		free(out);
		after = snapshot(reports);
		if (strcmp(before, after))
			fail_msg("limit %zu: the earlier documents changed", lim);
		free(after);
		assert_int_equal(temps(reports, 1), 0);
		tried++;
	}
	assert_true(hit_chart); /* the PDF and spreadsheet: on a full disk, above */
	assert_true(tried >= 3);
	assert_int_equal(nothing_partial(runs, reports), 0);
	free(before);
	free(runs);
	free(reports);
}

/* ---------------------------------------------------------------- nightly */

/* Nights on a disk that fills at several levels: each fails cleanly, the
 * earlier nights stay whole, and the night after the disk is freed is fine. */
static int nightly_full_disk(const char *disk, void *arg)
{
	(void)arg;
	char *runs = join(disk, "runs"), *reports = join(disk, "reports"), *out = NULL;
	char *before, *after;
	struct statvfs a, b;
	int st;

	CHECK(statvfs(disk, &a) == 0, "statvfs");
	st = nightly(runs, reports, RLIM_INFINITY, &out);
	CHECK(st == 0 || st == 3, "first nightly: exit %d\n%s", st, out);
	free(out);
	CHECK(statvfs(disk, &b) == 0, "statvfs");
	size_t night_b = (size_t)(a.f_bavail - b.f_bavail) * a.f_frsize;
	/* no room at all; room for part of the run folder; room for the run and
	 * part of the documents */
	size_t levels[] = {0, night_b / 20, night_b / 2, night_b * 3 / 4};
	for (size_t i = 0; i < sizeof levels / sizeof *levels; i++) {
		before = snapshot(disk);
		CHECK(fill(disk, levels[i]) == 0, "fill");
		st = nightly(runs, reports, RLIM_INFINITY, &out);
		unfill(disk);
		CHECK(st == 1, "%zu KiB free: exit %d, wanted 1\n%s", levels[i] >> 10, st, out);
		CHECK(strstr(out, "No space left on device") || strstr(out, "FAILED"),
		      "%zu KiB free: no cause given\n%s", levels[i] >> 10, out);
		after = snapshot(disk);
		CHECK(kept(before, after), "%zu KiB free: an earlier night changed", levels[i] >> 10);
		CHECK(nothing_partial(runs, reports) == 0, "%zu KiB free: partial", levels[i] >> 10);
		CHECK(temps(runs, 1) + temps(reports, 1) == 0, "%zu KiB free: temporary left",
		      levels[i] >> 10);
		printf("  %zu KiB free of a %zu KiB night: exit 1, earlier nights intact\n",
		       levels[i] >> 10, night_b >> 10);
		free(out);
		free(before);
		free(after);
	}
	st = nightly(runs, reports, RLIM_INFINITY, &out);
	CHECK(st == 0 || st == 3, "night after the disk was freed: exit %d\n%s", st, out);
	CHECK(nothing_partial(runs, reports) == 0, "after: partial");
	free(out);
	free(runs);
	free(reports);
	return 0;
}

static void test_faults__nightly_on_a_full_disk_then_the_next_night_is_fine(void **state)
{
	(void)state;
	int rc = in_tmpfs(16 << 20, nightly_full_disk, NULL);
	if (rc == 77)
		skip();
	assert_int_equal(rc, 0);
}

static void test_faults__nightly_under_a_file_size_limit_then_the_next_night_is_fine(void **state)
{
	(void)state;
	char *runs = join(root, "limit-runs"), *reports = join(root, "limit-reports"), *out = NULL;
	char *before, *after, ids[4][80], *dir;
	struct doc_file files[64];
	rlim_t limits[3] = {512, 4096, 0};
	size_t run_max = 0, nlim = 2;
	int st = nightly(runs, reports, RLIM_INFINITY, &out);

	if (st != 0 && st != 3)
		fail_msg("first nightly: exit %d\n%s", st, out);
	free(out);
	/* under the run record; under the stored calibration; just over the run
	 * folder's largest file, so the run commits and a document fails */
	assert_int_equal(run_ids(runs, ids, 4), 1);
	dir = join(runs, ids[0]);
	for (int i = 0, n = doc_files(dir, "", files, 0, 64); i < n; i++)
		run_max = files[i].size > run_max ? files[i].size : run_max;
	free(dir);
	dir = join(reports, ids[0]);
	for (int i = 0, n = doc_files(dir, "", files, 0, 64); i < n; i++)
		if (files[i].size > run_max + 1)
			limits[2] = (rlim_t)run_max + 1, nlim = 3;
	free(dir);
	for (size_t i = 0; i < nlim; i++) {
		before = snapshot(root);
		st = nightly(runs, reports, limits[i], &out);
		after = snapshot(root);
		if (st != 1 || !strstr(out, "File too large"))
			fail_msg("limit %ld: exit %d, wanted 1 with EFBIG\n%s", (long)limits[i], st, out);
		const char *failed = strstr(out, "FAILED"); /* the stage's line */
		while (failed && failed > out && failed[-1] != '\n')
			failed--;
		printf("  nightly under a %ld-byte file limit: exit 1; %.*s\n", (long)limits[i],
		       failed ? (int)strcspn(failed, "\n") : 0, failed ? failed : "");
		assert_true(kept(before, after));
		assert_int_equal(nothing_partial(runs, reports), 0);
		assert_int_equal(temps(runs, 1) + temps(reports, 1), 0);
		free(out);
		free(before);
		free(after);
	}
	st = nightly(runs, reports, RLIM_INFINITY, &out);
	if (st != 0 && st != 3)
		fail_msg("next nightly: exit %d\n%s", st, out);
	assert_int_equal(nothing_partial(runs, reports), 0);
	free(out);
	free(runs);
	free(reports);
}

/* ---------------------------------------------------------------- stdout, signals */

static void test_faults__output_to_a_full_device_is_an_error(void **state)
{
	(void)state;
	static const char *const cmds[][8] = {
		{"estimate", "--format", "csv", NULL},
		{"estimate", NULL},
		{"--help", NULL},
		{"nightly", "--help", NULL},
		{"report", "--help", NULL},
		{"check", NULL},
	};
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		char *out = NULL;
		int st = ddt_run(cmds[i], RLIM_INFINITY, "/dev/full", &out, 0, 0);
		if (st != 1)
			fail_msg("ddt %s > /dev/full: exit %d, wanted 1; said: %s", cmds[i][0], st, out);
		free(out);
	}
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_faults__sigterm_or_sigint_during_a_nightly_then_the_next_is_fine(void **state)
{
	(void)state;
	char *runs = join(root, "term-runs"), *reports = join(root, "term-reports"), *out = NULL;
	const char *args[] = {"nightly", "--runs", runs, "--reports", reports, "--template",
			      tmpl_path, "--calibration", cal_path, NULL};
	static const int sigs[] = {SIGTERM, SIGINT, SIGTERM, SIGTERM};
	enum { N = sizeof sigs / sizeof *sigs };
	double t = now_s(), night_s;
	int st = nightly(runs, reports, RLIM_INFINITY, NULL);

	night_s = now_s() - t;
	assert_true(st == 0 || st == 3);
	for (int k = 0; k < N; k++) {
		char *before = snapshot(root), *after;
		double at = night_s * (k + 0.5) / N;
		st = ddt_run(args, RLIM_INFINITY, NULL, NULL, at, sigs[k]);
		after = snapshot(root);
		printf("  %s at %.0f%% of a night: exit %d\n", sigs[k] == SIGTERM ? "SIGTERM" : "SIGINT",
		       100.0 * (k + 0.5) / N, st);
		assert_true(st == 128 + sigs[k] || st == 0 || st == 3);
		assert_true(kept(before, after));
		assert_int_equal(nothing_partial(runs, reports), 0);
		free(before);
		free(after);
	}
	st = nightly(runs, reports, RLIM_INFINITY, &out);
	if (st != 0 && st != 3)
		fail_msg("next nightly: exit %d\n%s", st, out);
	assert_int_equal(temps(runs, 1) + temps(reports, 1), 0); /* swept */
	assert_int_equal(nothing_partial(runs, reports), 0);
	free(out);
	free(runs);
	free(reports);
}

/* ---------------------------------------------------------------- setup */

static int setup(void **state)
{
	(void)state;
	char src[4096], *buf = NULL, *dst, *tdir;
	size_t len;
	const char *h = getenv("DDT_HOME");

	if (h && *h)
		snprintf(proj, sizeof proj, "%s", h);
	else if (!getcwd(proj, sizeof proj))
		return -1;
	snprintf(root, sizeof root, "/tmp/ddt-faults-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	tdir = join(root, "templates");
	snprintf(tmpl_path, sizeof tmpl_path, "%s/tiny.yaml", tdir);
	snprintf(cal_path, sizeof cal_path, "%s/calibration", proj);
	snprintf(src, sizeof src, "%s/templates/default.yaml", proj);
	dst = join(tdir, "default.yaml");
	int rc = fsx_mkdir_p(tdir) || fsx_read_all(src, 1 << 20, &buf, &len) ||
		 fsx_write_all(dst, buf, len) ||
		 fsx_write_all(tmpl_path, helpers_tiny_yaml, strlen(helpers_tiny_yaml));
	free(buf);
	free(dst);
	free(tdir);
	return rc ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	fsx_rm_rf(root);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_faults__run_record_hits_a_file_size_limit_at_every_point),
		cmocka_unit_test(test_faults__run_record_on_a_full_disk),
		cmocka_unit_test(test_faults__documents_hit_a_file_size_limit),
		cmocka_unit_test(test_faults__documents_on_a_full_disk),
		cmocka_unit_test(test_faults__nightly_under_a_file_size_limit_then_the_next_night_is_fine),
		cmocka_unit_test(test_faults__nightly_on_a_full_disk_then_the_next_night_is_fine),
		cmocka_unit_test(test_faults__output_to_a_full_device_is_an_error),
		cmocka_unit_test(test_faults__sigterm_or_sigint_during_a_nightly_then_the_next_is_fine),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
