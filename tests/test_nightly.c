/* test_nightly.c - the nightly job as cron runs it: every stage on a tiny CPU
 * template, the lock, SIGKILL at any moment, regressions with their cost,
 * a failing stage, --quiet, history/compare, retention and the temp sweep. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "err.h"
#include "fsx.h"
#include "lock.h"
#include "nightly.h"
#include "record.h"
#include "regress.h"

static char root[64];            /* the test's folder */
static char proj[2048];          /* the project folder (calibration, fonts) */
static char tmpl_path[4096], cal_path[4096];

/* ---------------------------------------------------------------- helpers */

static char *path_in(const char *a, const char *b)
{
	char *p = fsx_join(a, b);
	assert_non_null(p);
	return p;
}

/* Starts ddt with args (NULL-terminated, after the binary), stdout and stderr
 * into the files out/err (NULL: /dev/null). Returns the pid. */
static pid_t spawn(const char *const *args, const char *out, const char *err)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const char *argv[32] = {helpers_bin()};
		int i = 0;
		while (args[i] && i < 30) {
			argv[i + 1] = args[i];
			i++;
		}
		argv[i + 1] = NULL;
		int fo = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fe = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fo, 1);
		dup2(fe, 2);
		setenv("DDT_HOME", proj, 1);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static int wait_status(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Runs `ddt nightly` on runs/reports under root with extra args; returns the
 * exit status, stdout and stderr (malloc'd) when out/err are non-NULL. */
static int nightly(const char *runs, const char *reports, const char *extra, char **out,
		   char **err)
{
	char *fo = path_in(root, "out.txt"), *fe = path_in(root, "err.txt");
	const char *args[] = {"nightly", "--runs", runs, "--reports", reports, "--template",
			      tmpl_path, "--calibration", cal_path, extra, NULL};
	int st = wait_status(spawn(args, fo, fe));
	if (out)
		*out = helpers_slurp(fo);
	if (err)
		*err = helpers_slurp(fe);
	if (st != 0 && st != 3 && (!out || !err)) { /* say why before failing */
		char *o = helpers_slurp(fo), *e = helpers_slurp(fe);
		fprintf(stderr, "ddt nightly exited %d\n%s%s", st, o, e);
		free(o);
		free(e);
	}
	free(fo);
	free(fe);
	return st;
}

static int run_id_entry(const struct dirent *e)
{
	return record_run_id_valid(e->d_name);
}

/* The run ids of dir's folders, sorted; returns how many (at most max). */
static int list_runs(const char *dir, char ids[][80], int max)
{
	struct dirent **list;
	int n = scandir(dir, &list, run_id_entry, alphasort), k = 0;
	for (int i = 0; i < n; i++) {
		if (k < max)
			snprintf(ids[k++], 80, "%.79s", list[i]->d_name);
		free(list[i]);
	}
	if (n > 0)
		free(list);
	return k;
}

static int has(const char *dir, const char *name)
{
	char *p = path_in(dir, name);
	int ok = fsx_exists(p);
	free(p);
	return ok;
}

/* True when runs/<id>/ holds everything a finished nightly stores. */
static int run_complete(const char *runs, const char *id)
{
	char *dir = path_in(runs, id), *rec = path_in(dir, "run.yaml");
	char *ver = path_in(dir, "verdicts.yaml");
	struct run_record r;
	struct regress_night v;
	struct ydiag diag = {0};
	int ok = record_read(&r, rec, &diag) == 0 && regress_night_read(&v, ver, &diag) == 0 &&
		 has(dir, "projection.yaml") && has(dir, "nightly.log") &&
		 has(dir, "calibration") && has(dir, "template");
	record_free(&r);
	regress_night_free(&v);
	ydiag_free(&diag);
	free(ver);
	free(rec);
	free(dir);
	return ok;
}

/* True when reports/<id>/ holds every document. */
static int docs_complete(const char *reports, const char *id)
{
	char *dir = path_in(reports, id);
	int ok = has(dir, "report.pdf") && has(dir, "report.xlsx") && has(dir, "summary.txt") &&
		 has(dir, "charts");
	free(dir);
	return ok;
}

/* Entries of dir (and of its folders, one level down) with a temporary name
 * of ddt's writers. */
static int count_temps(const char *dir, int recurse)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (lock_temp_owner(e->d_name))
			n++;
		else if (recurse && e->d_name[0] != '.') {
			char *p = path_in(dir, e->d_name);
			n += count_temps(p, 0);
			free(p);
		}
	}
	closedir(d);
	return n;
}

/* Every run folder and document folder that is not under a temporary name
 * is complete, and latest points at a complete one. */
static void assert_nothing_partial(const char *runs, const char *reports)
{
	char ids[256][80], link[256], *lp;
	int n = list_runs(runs, ids, 256);
	for (int i = 0; i < n; i++)
		if (!run_complete(runs, ids[i]))
			fail_msg("partial run folder %s/%s", runs, ids[i]);
	n = list_runs(reports, ids, 256);
	for (int i = 0; i < n; i++)
		if (!docs_complete(reports, ids[i]))
			fail_msg("partial documents %s/%s", reports, ids[i]);
	lp = path_in(reports, "latest");
	ssize_t k = readlink(lp, link, sizeof link - 1);
	if (k > 0) {
		link[k] = '\0';
		assert_true(docs_complete(reports, link));
	}
	free(lp);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* "path size mtime" of every entry under dir, sorted, into a string. */
static void snapshot(const char *dir, FILE *out)
{
	struct dirent **list;
	int n = scandir(dir, &list, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		struct stat st;
		char *p = path_in(dir, list[i]->d_name);
		if (strcmp(list[i]->d_name, ".") && strcmp(list[i]->d_name, "..") &&
		    lstat(p, &st) == 0) {
			fprintf(out, "%s %lld %lld.%09ld\n", p, (long long)st.st_size,
				(long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
			if (S_ISDIR(st.st_mode))
				snapshot(p, out);
		}
		free(p);
		free(list[i]);
	}
	if (n > 0)
		free(list);
}

static char *snapshot_str(const char *dir)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	snapshot(dir, m);
	fclose(m);
	return buf;
}

/* Removes the lines naming the test's out.txt / err.txt from a snapshot. */
static void drop_capture_lines(char *snap)
{
	char *w = snap;
	for (char *line = snap; *line;) {
		char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line + 1) : strlen(line);
		if (!strstr(line, "/out.txt ") && !strstr(line, "/err.txt ")) {
			memmove(w, line, len);
			w += len;
		}
		line += len;
	}
	*w = '\0';
}

/* The copied default template with the contention limits lifted: the test
 * nights run on a shared machine, and a night judged "not judgeable" would
 * hide the regression these tests plant (contention: test_regress). With
 * at_once, one flagged night confirms (confirm_nights 1). Returns a new
 * buffer or NULL. */
static char *lift_contention(const char *yaml, size_t *len, int at_once)
{
	static const char *const keys[] = {"max_load_per_cpu:", "max_cpu_others_pct:",
					   "max_cpu_steal_pct:", "confirm_nights:"};
	static const char *const to[] = {"1000000", "1000000", "1000000", "1"};
	size_t nkeys = sizeof keys / sizeof *keys - !at_once;
	char *out = malloc(strlen(yaml) + 256), *w = out;
	if (!out)
		return NULL;
	for (const char *line = yaml; *line;) {
		size_t n = strcspn(line, "\n");
		const char *k = line + strspn(line, " ");
		int lifted = 0;
		for (size_t i = 0; i < nkeys && !lifted; i++)
			if (!strncmp(k, keys[i], strlen(keys[i]))) {
				w += sprintf(w, "%.*s%s %s", (int)(k - line), line, keys[i], to[i]);
				lifted = 1;
			}
		if (!lifted) {
			memcpy(w, line, n);
			w += n;
		}
		line += n;
		if (*line == '\n')
			*w++ = *line++;
	}
	*w = '\0';
	*len = (size_t)(w - out);
	return out;
}

static int setup(void **state)
{
	(void)state;
	char *buf = NULL, *dst;
	size_t len;
	const char *h = getenv("DDT_HOME");

	if (h && *h)
		snprintf(proj, sizeof proj, "%s", h);
	else if (!getcwd(proj, sizeof proj))
		return -1;
	snprintf(root, sizeof root, "/tmp/ddt-nightly-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(tmpl_path, sizeof tmpl_path, "%s/templates/tiny.yaml", root);
	snprintf(cal_path, sizeof cal_path, "%s/calibration", proj);
	/* extends: names a template of the same folder: copy the default beside */
	char src[4096];
	snprintf(src, sizeof src, "%s/templates/default.yaml", proj);
	dst = fsx_join(root, "templates/default.yaml");
	char *lifted = NULL, *once = NULL, *once_dst = fsx_join(root, "templates-once/default.yaml");
	char *once_tiny = fsx_join(root, "templates-once/tiny.yaml");
	size_t once_len = 0;
	if (fsx_read_all(src, 1 << 20, &buf, &len) ||
	    !(once = lift_contention(buf, &once_len, 1)) ||
	    !(lifted = lift_contention(buf, &len, 0)) || fsx_mkdir_p(dst) || rmdir(dst) ||
	    fsx_write_all(dst, lifted, len) ||
	    fsx_write_all(tmpl_path, helpers_tiny_yaml, strlen(helpers_tiny_yaml)) || fsx_mkdir_p(once_dst) ||
	    rmdir(once_dst) || fsx_write_all(once_dst, once, once_len) ||
	    fsx_write_all(once_tiny, helpers_tiny_yaml, strlen(helpers_tiny_yaml)))
		return -1;
	free(buf);
	free(lifted);
	free(once);
	free(once_dst);
	free(once_tiny);
	free(dst);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fsx_rm_rf(root);
	return 0;
}

/* ---------------------------------------------------------------- tests */

static void test_nightly__runs_every_stage_and_writes_the_run_whole(void **state)
{
	(void)state;
	char *runs = path_in(root, "runs"), *reports = path_in(root, "reports"), *out, *err;
	char ids[4][80];

	int st = nightly(runs, reports, NULL, &out, &err);
	printf("%s%s", out, err);
	assert_int_equal(st, 0);
	assert_int_equal(list_runs(runs, ids, 4), 1);
	assert_true(run_complete(runs, ids[0]));
	assert_true(docs_complete(reports, ids[0]));
	for (const char *s = "bench\0record\0history\0regress\0project\0commit\0documents\0"
			     "repair\0retention\0";
	     *s; s += strlen(s) + 1) {
		char want[64];
		snprintf(want, sizeof want, "  %-10s ok", s);
		if (!strstr(out, want))
			fail_msg("stage %s not ok in:\n%s", s, out);
	}
	/* the log of the run, in the run's folder */
	char *dir = path_in(runs, ids[0]), *logp = path_in(dir, "nightly.log"), *log = helpers_slurp(logp);
	assert_non_null(strstr(log, "documents: ok"));
	assert_non_null(strstr(log, "exit status 0"));
	free(log);
	free(logp);
	free(dir);
	free(out);
	free(err);
	free(runs);
	free(reports);
}

/* The second night: every series is new or short of history, so all is well
 * and --quiet prints nothing at all. */
static void test_nightly__quiet_prints_nothing_on_success(void **state)
{
	(void)state;
	char *runs = path_in(root, "runs"), *reports = path_in(root, "reports"), *out, *err;
	assert_int_equal(nightly(runs, reports, "--quiet", &out, &err), 0);
	assert_string_equal(out, "");
	assert_string_equal(err, "");
	free(out);
	free(err);
	free(runs);
	free(reports);
}

static void test_nightly__second_nightly_exits_75_and_touches_nothing(void **state)
{
	(void)state;
	char *runs = path_in(root, "runs"), *reports = path_in(root, "reports"), *out, *err;
	char *lockp = path_in(runs, ".nightly.lock");
	int fd;

	/* another nightly: this process holds the lock (flock, as a nightly does) */
	assert_int_equal(lock_take(lockp, &fd, NULL), 0);
	char *before = snapshot_str(root);
	int st = nightly(runs, reports, NULL, &out, &err);
	char *after = snapshot_str(root);
	assert_int_equal(st, 75);
	assert_string_equal(out, "");
	assert_int_equal(strchr(err, '\n') - err + 1, (long)strlen(err)); /* one line */
	assert_non_null(strstr(err, "another nightly"));
	printf("%s", err);
	/* nothing changed but the test's own capture of the output */
	drop_capture_lines(before);
	drop_capture_lines(after);
	assert_string_equal(before, after);
	lock_release(fd);
	free(before);
	free(after);
	free(lockp);
	free(out);
	free(err);
	free(runs);
	free(reports);
}

static void test_nightly__sigkill_at_any_stage_leaves_nothing_partial(void **state)
{
	(void)state;
	char *runs = path_in(root, "runs-kill"), *reports = path_in(root, "reports-kill");
	const char *args[] = {"nightly", "--runs", runs, "--reports", reports, "--template",
			      tmpl_path, "--calibration", cal_path, NULL};
	char ids[256][80];
	enum { KILLS = 12 };

	/* how long a night takes here, to spread the kills over it */
	double t = now_s();
	int st = nightly(runs, reports, NULL, NULL, NULL);
	double night_s = now_s() - t;
	assert_true(st == 0 || st == 3);
	printf("one night: %.2f s; killing at %d points across it\n", night_s, KILLS);
	for (int k = 0; k < KILLS; k++) {
		int before = list_runs(runs, ids, 256);
		pid_t pid = spawn(args, NULL, NULL);
		usleep((useconds_t)(night_s * 1e6 * (k + 0.5) / KILLS));
		kill(pid, SIGKILL);
		int ks = wait_status(pid);
		/* a night quicker than the first may end before the kill */
		assert_true(ks == 128 + SIGKILL || ks == 0 || ks == 3);
		int tr = count_temps(runs, 1), td = count_temps(reports, 1);
		int after = list_runs(runs, ids, 256);
		printf("  kill %2d at %3.0f%%: %s%s%s%s\n", k, 100.0 * (k + 0.5) / KILLS,
		       ks == 128 + SIGKILL ? "" : "finished before the kill; ",
		       after > before ? "run folder committed" : "no run folder",
		       tr ? ", temporary run folder left" : "",
		       td ? ", temporary documents left" : "");
		assert_nothing_partial(runs, reports);
	}
	/* the next nightly sweeps what the killed ones left and runs normally */
	st = nightly(runs, reports, NULL, NULL, NULL);
	assert_true(st == 0 || st == 3);
	assert_int_equal(count_temps(runs, 1), 0);
	assert_int_equal(count_temps(reports, 1), 0);
	assert_nothing_partial(runs, reports);
	int n = list_runs(runs, ids, 256);
	assert_true(docs_complete(reports, ids[n - 1]));
	free(runs);
	free(reports);
}

/* Writes r under runs/<its id>/run.yaml. */
static void store_record(const char *runs, const struct run_record *r)
{
	char *dir = path_in(runs, r->run_id), *p = path_in(dir, "run.yaml");
	assert_int_equal(fsx_mkdir_p(dir), 0);
	assert_int_equal(record_write(r, p), 0);
	free(p);
	free(dir);
}

static void test_nightly__regression_exits_3_and_prints_its_cost(void **state)
{
	(void)state;
	char *runs = path_in(root, "runs-reg"), *reports = path_in(root, "reports-reg"), *out, *err;
	char ids[16][80];
	struct run_record r;
	struct ydiag diag = {0};

	/* Nights 1-7 are fabricated from a real measurement, thirty times
	 * faster, and tonight (night 8) is measured. One flagged night confirms
	 * here (the suspect-then-confirm walk is test_regress's): two real
	 * nights of a 2 us op on a loaded machine can differ by 70%, and the
	 * second would start a new suspect run instead of confirming. */
	char saved_tmpl[sizeof tmpl_path];
	memcpy(saved_tmpl, tmpl_path, sizeof tmpl_path);
	snprintf(tmpl_path, sizeof tmpl_path, "%s/templates-once/tiny.yaml", root);
	assert_true(nightly(runs, reports, NULL, NULL, NULL) == 0);
	assert_int_equal(list_runs(runs, ids, 16), 1);
	char *dir = path_in(runs, ids[0]), *p = path_in(dir, "run.yaml");
	assert_int_equal(record_read(&r, p, &diag), 0);
	assert_int_equal(fsx_rm_rf(dir), 0);
	for (size_t i = 0; i < r.nrows; i++) {
		struct rec_row *w = &r.rows[i];
		w->median_us /= 30, w->p10_us /= 30, w->p90_us /= 30;
		w->min_us /= 30, w->max_us /= 30, w->stdev_us /= 30;
	}
	for (int d = 1; d <= 7; d++) {
		snprintf(r.run_id, sizeof r.run_id, "2020010%dT000000Z-fake", d);
		snprintf(r.created, sizeof r.created, "2020-01-0%dT00:00:00Z", d);
		store_record(runs, &r);
	}
	record_free(&r);
	int st = nightly(runs, reports, "--quiet", &out, &err);
	printf("%s%s", out, err);
	assert_int_equal(st, 3);
	assert_string_equal(err, "");
	assert_non_null(strstr(out, "REGRESSION dense_gemv/cold"));
	assert_non_null(strstr(out, "dense_gemv +"));
	assert_non_null(strstr(out, "\u2192 seed-b16-native \u2212"));
	assert_non_null(strstr(out, "tree_build +"));
	/* the verdicts are stored with the run, impact included */
	int n = list_runs(runs, ids, 16);
	assert_int_equal(n, 8);
	char *d8 = path_in(runs, ids[n - 1]), *vp = path_in(d8, "verdicts.yaml");
	struct regress_night v;
	assert_int_equal(regress_night_read(&v, vp, &diag), 0);
	assert_true(v.count[REG_REGRESSION] >= 2);
	assert_true(v.impacts.n >= 8);
	assert_int_equal(v.nruns, 8);
	regress_night_free(&v);
	assert_true(docs_complete(reports, ids[n - 1]));
	/* the documents took the nightly's own history: what `ddt report`
	 * renders from runs/ alone has the same bytes */
	char *again = path_in(root, "reports-reg-again");
	const char *rargs[] = {"report", "--runs", runs, "--reports", again, "-q", ids[n - 1],
			       NULL};
	assert_int_equal(wait_status(spawn(rargs, NULL, NULL)), 0);
	char cmd[2400];
	snprintf(cmd, sizeof cmd, "diff -r '%s/%s' '%s/%s' >&2", reports, ids[n - 1], again,
		 ids[n - 1]);
	assert_int_equal(system(cmd), 0); /* every document and chart */
	free(again);

	/* history and compare read the same runs */
	char *fo = path_in(root, "h.txt");
	const char *hargs[] = {"history", "--runs", runs, "--template", tmpl_path, "--op",
			       "dense_gemv", NULL};
	assert_int_equal(wait_status(spawn(hargs, fo, NULL)), 0);
	char *h = helpers_slurp(fo);
	printf("%s", h);
	assert_non_null(strstr(h, "dense_gemv/cold K=256,M=1,"));
	assert_non_null(strstr(h, "regression"));
	assert_null(strstr(h, "tree_build"));
	free(h);
	const char *cargs[] = {"compare", "--runs", runs, "--template", tmpl_path,
			       "20200106T000000Z-fake", ids[n - 1], NULL};
	assert_int_equal(wait_status(spawn(cargs, fo, NULL)), 0);
	h = helpers_slurp(fo);
	printf("%s", h);
	assert_non_null(strstr(h, "slower"));
	assert_non_null(strstr(h, "regression"));
	free(h);
	const char *csvargs[] = {"history", "--runs", runs, "--template", tmpl_path, "--format",
				 "csv", "--last", "0", NULL};
	assert_int_equal(wait_status(spawn(csvargs, fo, NULL)), 0);
	h = helpers_slurp(fo);
	/* the columns of before, in their order, then machine and the commit range */
	const char head[] = "op,variant,params,device,backend,build,run_id,created,status,"
			    "median_us,baseline_us,noise_pct,delta_pct,z,band_lo_us,band_hi_us,"
			    "verdict,night_verdict,reason,machine,git_rev,commits,last_good_run,"
			    "first_bad_run\n";
	assert_int_equal(strncmp(h, head, sizeof head - 1), 0);
	free(h);
	free(fo);
	free(vp);
	free(d8);
	free(p);
	free(dir);
	free(out);
	free(err);
	ydiag_free(&diag);
	free(runs);
	free(reports);
	memcpy(tmpl_path, saved_tmpl, sizeof tmpl_path);
}

/* Page one of reports/RUN/report.pdf as text (pdftotext), malloc'd. */
static char *page_one_text(const char *reports, const char *id)
{
	char cmd[4600];
	snprintf(cmd, sizeof cmd, "pdftotext -f 1 -l 1 '%s/%s/report.pdf' '%s/page1.txt'", reports,
		 id, root);
	assert_int_equal(system(cmd), 0);
	char *p = path_in(root, "page1.txt"), *t = helpers_slurp(p);
	free(p);
	assert_non_null(t);
	return t;
}

/* A shared 10% slowdown that came with a new revision stays an open alert:
 * fourteen fabricated nights of every series of a real measurement (variant
 * "planted": series tonight's bench does not measure), revision aaaaaaa on
 * nights 1-10 and bbbbbbb, 10% slower, on 11-14. Tonight's nightly exits 3
 * naming the range, page one lists the alert with its age; the next night,
 * nothing acknowledged, exits 3 again; after `ddt ack ID` page one of a
 * re-render reads answered and the following night exits 0. */
static void test_nightly__open_alert_exits_3_every_night_until_acknowledged(void **state)
{
	(void)state;
	char *runs = path_in(root, "runs-alert"), *reports = path_in(root, "reports-alert");
	char ids[16][80], *out, *err, *page, id[16] = "", range[32], aged[64];
	int age = 0;
	struct run_record r;
	struct ydiag diag = {0};
	char saved_tmpl[sizeof tmpl_path];
	memcpy(saved_tmpl, tmpl_path, sizeof tmpl_path);
	snprintf(tmpl_path, sizeof tmpl_path, "%s/templates-once/tiny.yaml", root);
	assert_true(nightly(runs, reports, NULL, NULL, NULL) == 0);
	assert_int_equal(list_runs(runs, ids, 16), 1);
	char *dir = path_in(runs, ids[0]), *p = path_in(dir, "run.yaml");
	assert_int_equal(record_read(&r, p, &diag), 0);
	assert_int_equal(fsx_rm_rf(dir), 0);
	for (int d = 1; d <= 14; d++) {
		struct run_record f = r;
		struct rec_row rows[64];
		assert_true(r.nrows <= 64);
		memcpy(rows, r.rows, r.nrows * sizeof *rows);
		f.rows = rows;
		for (size_t i = 0; i < r.nrows; i++) {
			snprintf(rows[i].variant, sizeof rows[i].variant, "planted");
			rows[i].median_us *= d > 10 ? 1.10 : 1;
		}
		snprintf(f.run_id, sizeof f.run_id, "202001%02dT000000Z-fake", d);
		snprintf(f.created, sizeof f.created, "2020-01-%02dT00:00:00Z", d);
		snprintf(f.prov.git_rev, sizeof f.prov.git_rev, "%s",
			 d > 10 ? "bbbbbbb000000000000000000000000000000000"
				: "aaaaaaa000000000000000000000000000000000");
		store_record(runs, &f);
	}
	record_free(&r);
	snprintf(range, sizeof range, "commits aaaaaaa..bbbbbbb");
	int st = nightly(runs, reports, "--quiet", &out, &err);
	printf("%s%s", out, err);
	assert_int_equal(st, 3);
	char *a = strstr(out, "alert ");
	assert_non_null(a);
	assert_int_equal(sscanf(a, "alert %15s open %d nights", id, &age), 2);
	snprintf(aged, sizeof aged, "alert %s open %d nights", id, age);
	assert_non_null(strstr(out, range));
	assert_int_equal(list_runs(runs, ids, 16), 15);
	page = page_one_text(reports, ids[14]);
	assert_non_null(strstr(page, "Open alerts"));
	assert_non_null(strstr(page, aged)); /* with its age */
	assert_non_null(strstr(page, range));
	free(page);
	free(out);
	free(err);
	/* the next night: still slower, not acknowledged */
	st = nightly(runs, reports, "--quiet", &out, &err);
	printf("%s%s", out, err);
	assert_int_equal(st, 3);
	snprintf(aged, sizeof aged, "alert %s open %d nights", id, age + 1);
	assert_non_null(strstr(out, aged)); /* a night older */
	assert_non_null(strstr(out, range));
	free(out);
	free(err);
	assert_int_equal(list_runs(runs, ids, 16), 16);
	/* acknowledged: the re-rendered page one reads answered, the next night exits 0 */
	char *fo = path_in(root, "ack.txt");
	const char *aargs[] = {"ack", "--runs", runs, "--template", tmpl_path, "--reason",
			       "known: the new tree layout", id, NULL};
	assert_int_equal(wait_status(spawn(aargs, fo, NULL)), 0);
	const char *rargs[] = {"report", "--runs", runs, "--reports", reports, "-q", ids[15], NULL};
	assert_int_equal(wait_status(spawn(rargs, NULL, NULL)), 0);
	page = page_one_text(reports, ids[15]);
	printf("%s", page);
	assert_null(strstr(page, range));
	assert_non_null(strstr(page, "alerts answered (ddt ack)"));
	free(page);
	st = nightly(runs, reports, "--quiet", &out, &err);
	printf("%s%s", out, err);
	assert_int_equal(st, 0);
	free(out);
	free(err);
	free(fo);
	free(p);
	free(dir);
	ydiag_free(&diag);
	free(runs);
	free(reports);
	memcpy(tmpl_path, saved_tmpl, sizeof tmpl_path);
}

static void test_nightly__failed_stage_is_reported_and_the_rest_run(void **state)
{
	(void)state;
	char *runs = path_in(root, "runs-fail"), *reports = path_in(root, "not-a-folder"), *out,
	     *err;
	char ids[4][80];
	assert_int_equal(fsx_write_all(reports, "x", 1), 0);
	int st = nightly(runs, reports, NULL, &out, &err);
	printf("%s%s", out, err);
	assert_int_equal(st, 1);
	assert_non_null(strstr(err, "documents failed"));
	assert_non_null(strstr(out, "  documents  FAILED"));
	/* the run itself is stored whole */
	assert_int_equal(list_runs(runs, ids, 4), 1);
	assert_true(run_complete(runs, ids[0]));
	free(out);
	free(err);
	free(runs);
	free(reports);
}

/* Run folders the night cannot read are counted and named with why on the
 * history line, and each gets its warning. */
static void test_nightly__unreadable_run_folders_are_counted_and_named(void **state)
{
	(void)state;
	char *runs = path_in(root, "runs-unreadable"), *reports = path_in(root, "reports-unreadable");
	char *file = path_in(runs, "20260101T000000Z-x"), *bad = path_in(runs, "20260102T000000Z-x");
	char *rec = path_in(bad, "run.yaml"), *out, *err;
	assert_int_equal(fsx_mkdir_p(bad), 0);
	assert_int_equal(fsx_write_all(file, "x\n", 2), 0);
	assert_int_equal(fsx_write_all(rec, "schema: [\n", 10), 0);
	int st = nightly(runs, reports, NULL, &out, &err);
	printf("%s%s", out, err);
	assert_true(st == 0 || st == 3);
	assert_non_null(strstr(out, "(found 2 nights, 2 unreadable: 20260101T000000Z-x (not a "
				    "folder), 20260102T000000Z-x (damaged record); see the warnings)"));
	assert_non_null(strstr(err, "20260101T000000Z-x: skipped, not a folder"));
	assert_non_null(strstr(err, "20260102T000000Z-x/run.yaml: skipped, damaged record"));
	free(out);
	free(err);
	free(rec);
	free(bad);
	free(file);
	free(runs);
	free(reports);
}

static void test_nightly__next_night_repairs_runs_left_without_projection_or_documents(void **state)
{
	(void)state;
	char *runs = path_in(root, "runs-repair"), *reports = path_in(root, "reports-repair");
	char ids[4][80], want[512], *out, *err, *p;

	/* exit 3 would be a regression found in noise: not what this tests */
	int st = nightly(runs, reports, NULL, NULL, NULL);
	assert_true(st == 0 || st == 3);
	st = nightly(runs, reports, NULL, NULL, NULL);
	assert_true(st == 0 || st == 3);
	assert_int_equal(list_runs(runs, ids, 4), 2);
	/* the first lost its projection (a full disk), the second its documents (a kill) */
	char *d0 = path_in(runs, ids[0]), *proj = path_in(d0, "projection.yaml");
	assert_int_equal(unlink(proj), 0);
	p = path_in(reports, ids[1]);
	assert_int_equal(fsx_rm_rf(p), 0);
	free(p);
	st = nightly(runs, reports, NULL, &out, &err);
	printf("%s%s", out, err);
	assert_true(st == 0 || st == 3);
	snprintf(want, sizeof want,
		 "  repair     ok      2 runs repaired: %s (projection, documents), %s (documents)",
		 ids[0], ids[1]);
	assert_non_null(strstr(out, want));
	assert_true(run_complete(runs, ids[0]));
	assert_true(docs_complete(reports, ids[0]));
	assert_true(docs_complete(reports, ids[1]));
	free(out);
	free(err);
	/* whole again: the next night has nothing to repair */
	st = nightly(runs, reports, NULL, &out, &err);
	assert_true(st == 0 || st == 3);
	assert_non_null(strstr(out, "  repair     ok      nothing to repair"));
	free(out);
	free(err);
	free(proj);
	free(d0);
	free(runs);
	free(reports);
}

static void test_nightly__bad_template_exits_2_and_writes_nothing(void **state)
{
	(void)state;
	char *runs = path_in(root, "runs-bad"), *reports = path_in(root, "reports-bad"), *out, *err;
	char saved[4096];
	snprintf(saved, sizeof saved, "%s", tmpl_path);
	snprintf(tmpl_path, sizeof tmpl_path, "%s/templates/bad.yaml", root);
	assert_int_equal(
	    fsx_write_all(tmpl_path, "name: bad\nextends: default.yaml\nbench: 3\n", 41), 0);
	int st = nightly(runs, reports, NULL, &out, &err);
	snprintf(tmpl_path, sizeof tmpl_path, "%s", saved);
	printf("%s%s", out, err);
	assert_true(st == 2);
	char ids[4][80];
	assert_int_equal(list_runs(runs, ids, 4), 0);
	assert_false(fsx_exists(reports));
	free(out);
	free(err);
	free(runs);
	free(reports);
}

/* ---------------------------------------------------------------- units */

static void mk(const char *dir, const char *name)
{
	char *p = path_in(dir, name);
	assert_int_equal(fsx_mkdir_p(p), 0);
	free(p);
}

static void test_nightly__lock_held_past_its_limit_says_the_holder_looks_hung(void **state)
{
	(void)state;
	char *runs = path_in(root, "runs"), *reports = path_in(root, "reports"), *out, *err;
	char *lockp = path_in(runs, ".nightly.lock"), text[64], want[64];
	int fd, len;

	assert_int_equal(fsx_mkdir_p(runs), 0);
	assert_int_equal(lock_take(lockp, &fd, NULL), 0);
	/* the holder took it three hours ago (default limit: 120 min) */
	len = snprintf(text, sizeof text, "%ld %lld\n", (long)getpid(),
		       (long long)time(NULL) - 3 * 3600 - 60);
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(pwrite(fd, text, (size_t)len, 0), len);
	int st = nightly(runs, reports, NULL, &out, &err);
	printf("%s", err);
	assert_int_equal(st, 75);
	assert_int_equal(strchr(err, '\n') - err + 1, (long)strlen(err)); /* one line */
	snprintf(want, sizeof want, "(pid %ld, since ", (long)getpid());
	assert_non_null(strstr(err, want));
	assert_non_null(strstr(err, "for 3 h 1 min"));
	assert_non_null(strstr(err, "looks hung"));
	free(out);
	free(err);
	/* a holder within the limit is named, not called hung */
	len = snprintf(text, sizeof text, "%ld %lld\n", (long)getpid(), (long long)time(NULL) - 600);
	assert_int_equal(pwrite(fd, text, (size_t)len, 0), len);
	assert_int_equal(nightly(runs, reports, NULL, &out, &err), 75);
	assert_non_null(strstr(err, want));
	assert_null(strstr(err, "looks hung"));
	lock_release(fd);
	free(lockp);
	free(out);
	free(err);
	free(runs);
	free(reports);
}

static void test_nightly__prune_keeps_the_newest_documents(void **state)
{
	(void)state;
	char *d = path_in(root, "prune");
	int removed = -1;
	mk(d, "20260101T000000Z-a");
	mk(d, "20260102T000000Z-a");
	mk(d, "20260103T000000Z-a/charts");
	mk(d, "20260104T000000Z-a");
	mk(d, "notes");
	mk(d, ".20260105T000000Z-a.tmp-1");
	assert_int_equal(nightly_prune_documents(d, NULL, NULL, 2, &removed), 0);
	assert_int_equal(removed, 2);
	assert_false(has(d, "20260101T000000Z-a"));
	assert_false(has(d, "20260102T000000Z-a"));
	assert_true(has(d, "20260103T000000Z-a/charts"));
	assert_true(has(d, "20260104T000000Z-a"));
	assert_true(has(d, "notes"));
	assert_true(has(d, ".20260105T000000Z-a.tmp-1"));
	assert_int_equal(count_temps(d, 1), 1); /* the removal left no temp names */
	assert_int_equal(nightly_prune_documents(d, NULL, NULL, 60, &removed), 0);
	assert_int_equal(removed, 0);
	assert_int_equal(nightly_prune_documents("/tmp/ddt-no-such-reports", NULL, NULL, 1, &removed), 0);
	free(d);
}

/* A pid that is not running: a child that has exited and been reaped. */
static long dead_pid(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	wait_status(pid);
	return (long)pid;
}

/* Sets the modification time of dir/name to t seconds since the epoch. */
static void set_mtime(const char *dir, const char *name, time_t t)
{
	char *p = path_in(dir, name);
	struct timespec ts[2] = {{t, 0}, {t, 0}};
	assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
	free(p);
}

static void test_nightly__prune_goes_by_commit_time_and_keeps_tonight(void **state)
{
	(void)state;
	char *d = path_in(root, "prune-clock"), *runs = path_in(root, "runs-clock");
	static const char *const id[] = {"20260101T000000Z-a", "20260102T000000Z-a",
					 "20260103T000000Z-a"};
	int removed = -1;
	for (int i = 0; i < 3; i++) {
		char rec[128];
		mk(d, id[i]);
		mk(runs, id[i]);
		snprintf(rec, sizeof rec, "%s/%s/run.yaml", runs, id[i]);
		assert_int_equal(fsx_write_all(rec, "x", 1), 0);
	}
	/* committed in the order 03, 02, 01: the clock went back twice */
	set_mtime(runs, "20260103T000000Z-a/run.yaml", 1000);
	set_mtime(runs, "20260102T000000Z-a/run.yaml", 2000);
	set_mtime(runs, "20260101T000000Z-a/run.yaml", 3000);
	/* later writes in a run folder (a repaired projection) move nothing */
	set_mtime(runs, id[2], 4000);
	assert_int_equal(nightly_prune_documents(d, runs, NULL, 2, &removed), 0);
	assert_int_equal(removed, 1);
	assert_false(has(d, id[2])); /* the oldest committed, whatever its name */
	assert_true(has(d, id[1]));
	assert_true(has(d, id[0]));
	/* tonight (02) is never removed, even when it is not the newest committed */
	assert_int_equal(nightly_prune_documents(d, runs, id[1], 1, &removed), 0);
	assert_int_equal(removed, 1);
	assert_true(has(d, id[1]));
	assert_false(has(d, id[0]));
	free(d);
	free(runs);
}

static void test_nightly__sweep_removes_only_dead_writers_temps(void **state)
{
	(void)state;
	char *d = path_in(root, "sweep"), name[128];
	long dead = dead_pid(), alive = (long)getpid();
	snprintf(name, sizeof name, ".20260101T000000Z-a.tmp-%ld/run.yaml", dead);
	mk(d, name);
	snprintf(name, sizeof name, ".20260102T000000Z-a.tmp-%ld", alive);
	mk(d, name);
	snprintf(name, sizeof name, "20260103T000000Z-a/.nightly.log.tmp-%ld", dead);
	mk(d, name);
	mk(d, ".nightly.lock");
	mk(d, "20260104T000000Z-a.tmp-x");
	assert_int_equal(lock_sweep_temps(d), 2);
	snprintf(name, sizeof name, ".20260102T000000Z-a.tmp-%ld", alive);
	assert_true(has(d, name));
	assert_true(has(d, "20260103T000000Z-a"));
	assert_true(has(d, ".nightly.lock"));
	assert_true(has(d, "20260104T000000Z-a.tmp-x"));
	assert_int_equal(lock_temp_owner(".a.tmp-12"), 12);
	assert_int_equal(lock_temp_owner(".a.tmp-12x"), 0);
	assert_int_equal(lock_temp_owner("a.tmp-12"), 0);
	assert_int_equal(lock_temp_owner(".a.tmp-"), 0);
	free(d);
}

static void test_nightly__lock_is_exclusive_until_released(void **state)
{
	(void)state;
	char *p = path_in(root, "lockfile");
	int a, b;
	assert_int_equal(lock_take(p, &a, NULL), 0);
	assert_int_equal(lock_take(p, &b, NULL), DDT_ELOCKED);
	assert_int_equal(b, -1);
	char want[64];
	snprintf(want, sizeof want, "(pid %ld, since ", (long)getpid());
	assert_non_null(strstr(err_msg(), want));
	lock_release(a);
	assert_int_equal(lock_take(p, &b, NULL), 0);
	lock_release(b);
	free(p);
}

static void test_nightly__conf_loader_is_strict(void **state)
{
	(void)state;
	char *p = path_in(root, "templates/n.yaml");
	const char y[] = "name: n\nextends: default.yaml\nnightly:\n  source: x\n"
			 "  keep_documents_runs: 0\n  keep_runs: 3\n  lock_hung_after_min: 120\n";
	struct tmpl t;
	struct nightly_conf c;
	struct ydiag diag = {0};
	assert_int_equal(fsx_write_all(p, y, sizeof y - 1), 0);
	assert_int_equal(tmpl_load(&t, p, &diag), 0);
	assert_int_equal(nightly_conf_load(&c, &t, &diag), DDT_EINPUT);
	ydiag_print(&diag, stdout);
	assert_int_equal(diag.n, 2);
	assert_non_null(strstr(diag.msgs[0], "n.yaml:5:24: keep_documents_runs must be greater"));
	assert_non_null(strstr(diag.msgs[1], "n.yaml:6:3: unknown key 'keep_runs'"));
	tmpl_free(&t);
	ydiag_free(&diag);
	/* the shipped default: 60 */
	char dflt[4096];
	snprintf(dflt, sizeof dflt, "%s/templates/default.yaml", proj);
	assert_int_equal(tmpl_load(&t, dflt, &diag), 0);
	assert_int_equal(nightly_conf_load(&c, &t, &diag), 0);
	assert_int_equal(c.keep_documents_runs, 60);
	tmpl_free(&t);
	ydiag_free(&diag);
	free(p);
}

/* Output of a shell command run in the project folder. */
static char *sh(const char *cmd)
{
	char full[4096], *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len), *p;
	int c;
	snprintf(full, sizeof full, "cd '%s' && %s 2>&1", proj, cmd);
	p = popen(full, "r");
	assert_non_null(p);
	while ((c = fgetc(p)) != EOF)
		fputc(c, m);
	pclose(p);
	fclose(m);
	return buf;
}

static void test_nightly__install_cron_entry_sets_path_lang_and_log(void **state)
{
	(void)state;
	char *out = sh("tools/install-cron --print --at '15 4'"), want[4200];
	printf("%s", out);
	assert_int_equal(strncmp(out, "15 4 * * * cd '", 15), 0);
	snprintf(want, sizeof want, "cd '%s' && export PATH='", proj);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "LANG=C.UTF-8"));
	/* ddt appends to the log itself (--log): no shell >> or tee -a, which
	 * follow a link planted at the log's name; stopped past the lock's limit */
	assert_non_null(strstr(out, "timeout --kill-after=5m 120m build/ddt nightly --quiet "
				    "--log runs/nightly-cron.log "));
	assert_null(strstr(out, ">>"));
	assert_null(strstr(out, "tee"));
	if (fsx_exists("/usr/local/cuda/bin") && !getenv("CUDA_HOME"))
		assert_non_null(strstr(out, "/usr/local/cuda/bin:"));
	free(out);
	out = sh("tools/install-cron --print --systemd --at '15 4'");
	snprintf(want, sizeof want,
		 "ExecStart=%s/build/ddt nightly --quiet --log %s/runs/nightly-cron.log\n", proj,
		 proj);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "TimeoutStartSec=120min\n"));
	assert_null(strstr(out, "StandardOutput"));
	assert_non_null(strstr(out, "Environment=LANG=C.UTF-8"));
	assert_non_null(strstr(out, "OnCalendar=*-*-* 04:15:00"));
	for (char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (*l != '#') /* every @NAME@ of the unit files substituted */
			assert_true(!memchr(l, '@', strcspn(l, "\n")));
	free(out);
	out = sh("tools/install-cron --at '61 4' ; echo rc=$?");
	assert_non_null(strstr(out, "rc=2"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nightly__runs_every_stage_and_writes_the_run_whole),
		cmocka_unit_test(test_nightly__quiet_prints_nothing_on_success),
		cmocka_unit_test(test_nightly__second_nightly_exits_75_and_touches_nothing),
		cmocka_unit_test(test_nightly__sigkill_at_any_stage_leaves_nothing_partial),
		cmocka_unit_test(test_nightly__regression_exits_3_and_prints_its_cost),
		cmocka_unit_test(test_nightly__open_alert_exits_3_every_night_until_acknowledged),
		cmocka_unit_test(test_nightly__failed_stage_is_reported_and_the_rest_run),
		cmocka_unit_test(test_nightly__unreadable_run_folders_are_counted_and_named),
		cmocka_unit_test(test_nightly__next_night_repairs_runs_left_without_projection_or_documents),
		cmocka_unit_test(test_nightly__bad_template_exits_2_and_writes_nothing),
		cmocka_unit_test(test_nightly__lock_held_past_its_limit_says_the_holder_looks_hung),
		cmocka_unit_test(test_nightly__prune_keeps_the_newest_documents),
		cmocka_unit_test(test_nightly__prune_goes_by_commit_time_and_keeps_tonight),
		cmocka_unit_test(test_nightly__sweep_removes_only_dead_writers_temps),
		cmocka_unit_test(test_nightly__lock_is_exclusive_until_released),
		cmocka_unit_test(test_nightly__conf_loader_is_strict),
		cmocka_unit_test(test_nightly__install_cron_entry_sets_path_lang_and_log),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
