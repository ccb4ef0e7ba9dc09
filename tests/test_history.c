/* test_history.c - loading the history from runs/: series identity, skipped
 * temp names and damaged records, cutting at a night. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

/* cmocka compares floats as float; these are doubles */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"
#include "fsx.h"
#include "history.h"
#include "record.h"

/* A record of night `day` with one row per op, on device dev, built as build. */
static void make_record(struct run_record *r, int day, const char *dev, const char *build,
			double us)
{
	struct rec_device d = {.kind = "cpu", .arch = "x86_64", .sm_clock_mhz = NAN,
			       .mem_clock_mhz = NAN, .peak_gbps = NAN, .copy_gbps = NAN};
	struct rec_row w = {.op = "tree_attn", .variant = "cold", .backend = "cpu",
			    .median_us = us, .p10_us = NAN, .p90_us = NAN, .min_us = NAN,
			    .max_us = NAN, .stdev_us = NAN, .bytes = NAN, .flops = NAN,
			    .gbps = NAN, .pct_peak = NAN, .max_err = NAN, .sm_clock_mhz = NAN,
			    .status = REC_OK};
	memset(r, 0, sizeof *r);
	r->schema = RECORD_SCHEMA;
	snprintf(r->run_id, sizeof r->run_id, "202603%02dT010000Z-h", day);
	snprintf(r->created, sizeof r->created, "2026-03-%02dT01:00:00Z", day);
	snprintf(r->template_name, sizeof r->template_name, "cpu");
	snprintf(r->prov.build, sizeof r->prov.build, "%s", build);
	snprintf(d.name, sizeof d.name, "%s", dev);
	assert_int_equal(record_add_device(r, &d), 0);
	rec_row_param_set(&w, "M", 9);
	assert_int_equal(record_add_row(r, &w), 0);
	rec_row_param_set(&w, "M", 33);
	assert_int_equal(record_add_row(r, &w), 0);
	w.status = REC_FAILED;
	w.median_us = NAN;
	snprintf(w.op, sizeof w.op, "accept");
	snprintf(w.reason, sizeof w.reason, "max_err 0.5 > tol 1e-3");
	assert_int_equal(record_add_row(r, &w), 0);
}

/* Writes the record as runs/<run-id>/run.yaml. */
static void store(const char *runs, const struct run_record *r)
{
	char *dir = fsx_join(runs, r->run_id), *path = fsx_join(dir, "run.yaml");
	assert_int_equal(fsx_mkdir_p(dir), 0);
	assert_int_equal(record_write(r, path), 0);
	free(path);
	free(dir);
}

static void store_night(const char *runs, int day, const char *dev, const char *build, double us)
{
	struct run_record r;
	make_record(&r, day, dev, build, us);
	store(runs, &r);
	record_free(&r);
}

static void test_history__series_split_by_params_device_and_build(void **state)
{
	(void)state;
	char runs[] = "/tmp/ddt-hist-XXXXXX";
	struct history h;
	struct ydiag warn = {0};
	assert_non_null(mkdtemp(runs));
	store_night(runs, 1, "cpu A", "O2", 100);
	store_night(runs, 2, "cpu A", "O2", 101);
	store_night(runs, 3, "cpu B", "O2", 50);
	store_night(runs, 4, "cpu A", "O3", 90);
	assert_int_equal(history_load(&h, runs, &warn), 0);
	assert_int_equal(warn.n, 0);
	assert_int_equal(h.nruns, 4);
	/* (M=9, M=33, accept) x (A/O2, B/O2, A/O3) */
	assert_int_equal(h.n, 9);
	assert_int_equal(h.series[0].n, 2);
	assert_string_equal(h.series[0].key.params, "M=9");
	assert_string_equal(h.series[1].key.params, "M=33");
	assert_near(h.series[0].pts[1].median_us, 101, 0);
	assert_int_equal(h.series[0].pts[1].run, 1);
	const struct hist_point *p = history_point_at(&h.series[2], 0);
	assert_non_null(p);
	assert_int_equal(p->status, REC_FAILED);
	assert_true(isnan(p->median_us));
	assert_string_equal(p->reason, "max_err 0.5 > tol 1e-3");
	assert_null(history_point_at(&h.series[0], 2));
	struct hist_key k = h.series[0].key;
	assert_int_equal(history_find(&h, &k), 0);
	snprintf(k.build, sizeof k.build, "O3");
	assert_int_equal(history_find(&h, &k), 6);
	assert_int_equal(history_run_index(&h, "20260303T010000Z-h"), 2);
	char label[512];
	/* the machine: the host of the run id (no provenance host here) and the
	 * device's fingerprint */
	assert_string_equal(history_key_label(&h.series[0].key, label, sizeof label),
			    "tree_attn/cold M=9 [cpu, cpu A, O2, h:e66cbd44]");
	history_free(&h);
	ydiag_free(&warn);
	fsx_rm_rf(runs);
}

static void test_history__skips_temp_names_and_damage_with_a_warning(void **state)
{
	(void)state;
	char runs[] = "/tmp/ddt-hist-XXXXXX";
	struct history h;
	struct ydiag warn = {0};
	char *p;
	assert_non_null(mkdtemp(runs));
	store_night(runs, 1, "cpu", "O2", 100);
	store_night(runs, 3, "cpu", "O2", 100);
	/* a killed writer's folder, a lock file, a damaged record, an empty folder,
	 * a record filed under another run's name */
	p = fsx_join(runs, ".20260302T010000Z-h.tmp-99999");
	assert_int_equal(fsx_mkdir_p(p), 0);
	free(p);
	p = fsx_join(runs, ".nightly.lock");
	assert_int_equal(fsx_write_all(p, "1\n", 2), 0);
	free(p);
	p = fsx_join(runs, "20260304T010000Z-h");
	assert_int_equal(fsx_mkdir_p(p), 0);
	char *f = fsx_join(p, "run.yaml");
	assert_int_equal(fsx_write_all(f, "schema: 1\nrun_id: [oops\n", 24), 0);
	free(f);
	free(p);
	p = fsx_join(runs, "20260305T010000Z-h");
	assert_int_equal(fsx_mkdir_p(p), 0);
	free(p);
	struct run_record r;
	make_record(&r, 6, "cpu", "O2", 100);
	snprintf(r.run_id, sizeof r.run_id, "20260301T010000Z-h");
	p = fsx_join(runs, "20260306T010000Z-h");
	f = fsx_join(p, "run.yaml");
	assert_int_equal(fsx_mkdir_p(p), 0);
	assert_int_equal(record_write(&r, f), 0);
	record_free(&r);
	free(f);
	free(p);

	assert_int_equal(history_load(&h, runs, &warn), 0);
	ydiag_print(&warn, stdout);
	assert_int_equal(h.nruns, 2);
	assert_int_equal(warn.n, 3);
	/* what a night that finds fewer nights than folders says why from */
	assert_int_equal(h.nfolders, 5);
	assert_int_equal(h.nskipped, 3);
	assert_non_null(strstr(warn.msgs[0], "20260304T010000Z-h/run.yaml"));
	assert_non_null(strstr(warn.msgs[0], "damaged"));
	assert_non_null(strstr(warn.msgs[1], "20260305T010000Z-h/run.yaml"));
	assert_non_null(strstr(warn.msgs[2], "differs from its folder"));
	history_free(&h);
	ydiag_free(&warn);
	fsx_rm_rf(runs);
}

/* Loads runs as the user nobody when run as root (permissions bind root
 * nowhere), in a child; returns how many of want[] the warnings held, or -1. */
static int unreadable_as_nobody(const char *runs, const char *const *want, int nwant)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct history h;
		struct ydiag warn = {0};
		int found = 0;
		if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
			_exit(100);
		if (history_load(&h, runs, &warn) != 0)
			_exit(101);
		ydiag_print(&warn, stdout);
		printf("note: %s\n", h.skipped_note);
		for (int i = 0; i < nwant; i++)
			for (size_t k = 0; k < warn.n; k++)
				if (strstr(warn.msgs[k], want[i])) {
					found++;
					break;
				}
		found += h.nruns == 1 && h.nskipped == 2 && strstr(h.skipped_note, "(unreadable)");
		fflush(stdout);
		_exit(found);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A run folder ddt cannot read is named with the reason, and counted: a
 * file where the folder should be, a run.yaml that is a folder, a damaged
 * record; then, as a user the permissions bind, a folder and a record it
 * may not read. A note beside the runs is no run at all. */
static void test_history__unreadable_run_folders_are_named_with_why(void **state)
{
	(void)state;
	char runs[] = "/tmp/ddt-hist-XXXXXX", *p, *f;
	struct history h;
	struct ydiag warn = {0};

	assert_non_null(mkdtemp(runs));
	store_night(runs, 1, "cpu", "O2", 100);
	p = fsx_join(runs, "20260302T010000Z-h");
	assert_int_equal(fsx_write_all(p, "x\n", 2), 0);
	free(p);
	p = fsx_join(runs, "notes.txt");
	assert_int_equal(fsx_write_all(p, "x\n", 2), 0);
	free(p);
	p = fsx_join(runs, "20260303T010000Z-h/run.yaml");
	assert_int_equal(fsx_mkdir_p(p), 0);
	free(p);
	p = fsx_join(runs, "20260304T010000Z-h");
	f = fsx_join(p, "run.yaml");
	assert_int_equal(fsx_mkdir_p(p), 0);
	assert_int_equal(fsx_write_all(f, "schema: [\n", 10), 0);
	free(f);
	free(p);

	assert_int_equal(history_load(&h, runs, &warn), 0);
	ydiag_print(&warn, stdout);
	assert_int_equal(h.nruns, 1);
	assert_int_equal(h.nfolders, 4);
	assert_int_equal(h.nskipped, 3);
	assert_int_equal(warn.n, 3);
	assert_non_null(strstr(warn.msgs[0], "20260302T010000Z-h: skipped, not a folder: a file"));
	assert_non_null(strstr(warn.msgs[1], "20260303T010000Z-h/run.yaml: skipped, unreadable: "
					     "run.yaml is not a regular file"));
	assert_non_null(strstr(warn.msgs[2], "20260304T010000Z-h/run.yaml: skipped, damaged record: "));
	assert_string_equal(h.skipped_note, "20260302T010000Z-h (not a folder), 20260303T010000Z-h "
					    "(unreadable), 20260304T010000Z-h (damaged record)");
	history_free(&h);
	ydiag_free(&warn);
	fsx_rm_rf(runs);

	/* permissions: a folder that cannot be entered, a record that cannot be read */
	char runs2[] = "/tmp/ddt-hist-XXXXXX";
	static const char *const want[] = {"20260305T010000Z-h/run.yaml: skipped, unreadable: "
					   "Permission denied",
					   "20260306T010000Z-h/run.yaml: skipped, unreadable: cannot open: "
					   "Permission denied"};
	assert_non_null(mkdtemp(runs2));
	assert_int_equal(chmod(runs2, 0755), 0);
	store_night(runs2, 1, "cpu", "O2", 100);
	store_night(runs2, 5, "cpu", "O2", 100);
	store_night(runs2, 6, "cpu", "O2", 100);
	p = fsx_join(runs2, "20260305T010000Z-h");
	assert_int_equal(chmod(p, 0), 0);
	free(p);
	p = fsx_join(runs2, "20260306T010000Z-h/run.yaml");
	assert_int_equal(chmod(p, 0), 0);
	free(p);
	assert_int_equal(unreadable_as_nobody(runs2, want, 2), 3);
	p = fsx_join(runs2, "20260305T010000Z-h");
	assert_int_equal(chmod(p, 0755), 0);
	free(p);
	fsx_rm_rf(runs2);
}

static void test_history__load_until_cuts_at_a_night(void **state)
{
	(void)state;
	char runs[] = "/tmp/ddt-hist-XXXXXX";
	struct history h;
	struct ydiag warn = {0};
	assert_non_null(mkdtemp(runs));
	for (int d = 1; d <= 5; d++)
		store_night(runs, d, "cpu", "O2", 100 + d);
	assert_int_equal(history_load_until(&h, runs, "20260303T010000Z-h", &warn), 0);
	assert_int_equal(h.nruns, 3);
	assert_string_equal(h.runs[2].run_id, "20260303T010000Z-h");
	assert_string_equal(h.runs[2].created, "2026-03-03T01:00:00Z");
	history_free(&h);
	ydiag_free(&warn);
	fsx_rm_rf(runs);
}

static void test_history__missing_folder_is_empty_and_a_night_counts_once(void **state)
{
	(void)state;
	struct history h;
	struct ydiag warn = {0};
	struct run_record r;
	assert_int_equal(history_load(&h, "/tmp/ddt-no-such-runs-folder", &warn), 0);
	assert_int_equal(h.nruns, 0);
	make_record(&r, 5, "cpu", "O2", 1);
	assert_int_equal(history_add_record(&h, &r), 0);
	/* the same key twice in one record: the first counts */
	assert_int_equal(h.n, 3);
	assert_int_equal(history_add_record(&h, &r), DDT_EINPUT);
	assert_non_null(strstr(err_msg(), "already in the history"));
	record_free(&r);
	make_record(&r, 6, "cpu", "O2", 1);
	r.rows[1] = r.rows[0];
	r.rows[1].median_us = 2;
	assert_int_equal(history_add_record(&h, &r), 0);
	assert_int_equal(h.series[0].n, 2);
	assert_near(h.series[0].pts[1].median_us, 1, 0);
	record_free(&r);
	history_free(&h);
	ydiag_free(&warn);
}


/* A record whose created time is not the one its id says (a host whose clock
 * was set back and then forward, a record copied from elsewhere). */
static void store_created(const char *runs, int day, int created_day, double us)
{
	struct run_record r;
	make_record(&r, day, "cpu", "O2", us);
	snprintf(r.created, sizeof r.created, "2026-03-%02dT01:00:00Z", created_day);
	store(runs, &r);
	record_free(&r);
}

static void test_history__nights_are_ordered_by_created(void **state)
{
	(void)state;
	char runs[] = "/tmp/ddt-hist-XXXXXX";
	struct history h;
	struct ydiag warn = {0};
	assert_non_null(mkdtemp(runs));
	store_created(runs, 1, 1, 101);
	store_created(runs, 2, 5, 105); /* made on the 5th, filed under the 2nd */
	store_created(runs, 3, 3, 103);
	store_created(runs, 4, 4, 104);
	assert_int_equal(history_load(&h, runs, &warn), 0);
	assert_int_equal(h.nruns, 4);
	assert_string_equal(h.runs[0].run_id, "20260301T010000Z-h");
	assert_string_equal(h.runs[1].run_id, "20260303T010000Z-h");
	assert_string_equal(h.runs[2].run_id, "20260304T010000Z-h");
	assert_string_equal(h.runs[3].run_id, "20260302T010000Z-h");
	/* every series follows: its points in the new order of the nights */
	for (size_t i = 0; i < h.series[0].n; i++)
		assert_int_equal(h.series[0].pts[i].run, i);
	assert_near(h.series[0].pts[3].median_us, 105, 0);
	assert_int_equal(history_run_index(&h, "20260302T010000Z-h"), 3);
	history_free(&h);
	/* up to a night: the nights created before it, whatever their names */
	assert_int_equal(history_load_until(&h, runs, "20260304T010000Z-h", &warn), 0);
	assert_int_equal(h.nruns, 3);
	assert_string_equal(h.runs[2].run_id, "20260304T010000Z-h");
	history_free(&h);
	ydiag_free(&warn);
	fsx_rm_rf(runs);
}

static void test_history__a_night_behind_the_clock_is_appended_as_the_newest(void **state)
{
	(void)state;
	char runs[] = "/tmp/ddt-hist-XXXXXX";
	struct history h;
	struct ydiag warn = {0};
	struct run_record r;
	assert_non_null(mkdtemp(runs));
	for (int d = 10; d <= 12; d++)
		store_night(runs, d, "cpu", "O2", 100 + d);
	assert_int_equal(history_load(&h, runs, &warn), 0);
	/* tonight's clock says the 2nd: it is still tonight, the newest night */
	make_record(&r, 2, "cpu", "O2", 200);
	assert_int_equal(history_add_record(&h, &r), 0);
	assert_int_equal(h.nruns, 4);
	assert_string_equal(h.runs[3].run_id, "20260302T010000Z-h");
	assert_int_equal(h.series[0].n, 4);
	assert_int_equal(h.series[0].pts[3].run, 3);
	assert_near(h.series[0].pts[3].median_us, 200, 0);
	assert_true(h.runs[3].clock_behind);
	assert_false(h.runs[2].clock_behind);
	record_free(&r);
	history_free(&h);
	ydiag_free(&warn);
	fsx_rm_rf(runs);
}

/* One record of n rows, each its own series (as a fleet's merged record of
 * many devices and shapes has). */
static void big_record(struct run_record *r, size_t n)
{
	make_record(r, 1, "cpu", "O2", 1);
	r->nrows = 0;
	for (size_t i = 0; i < n; i++) {
		struct rec_row w = {.op = "moe_w4a16", .variant = "cold", .backend = "cpu",
				    .median_us = 1 + (double)i, .status = REC_OK};
		rec_row_param_set(&w, "M", (double)(i % 512));
		rec_row_param_set(&w, "ctx", (double)(i / 512));
		assert_int_equal(record_add_row(r, &w), 0);
	}
}

static void test_history__a_100k_row_record_adds_in_linear_time(void **state)
{
	(void)state;
	/* In a child with 20 s of CPU: a hashed lookup adds the 100,000 series
	 * in well under a second (even under ASan); the linear search it
	 * replaced needed 5e9 key comparisons, minutes, and is killed. */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit cpu = {20, 30};
		struct run_record r;
		struct history h;
		memset(&h, 0, sizeof h);
		setrlimit(RLIMIT_CPU, &cpu);
		big_record(&r, 100000);
		int ok = history_add_record(&h, &r) == 0 && h.n == 100000 &&
			 history_find(&h, &h.series[77777].key) == 77777;
		history_free(&h);
		record_free(&r);
		_exit(ok ? 0 : 1);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st))
		fail_msg("killed by signal %d (SIGXCPU %d: over 20 s of CPU)", WTERMSIG(st), SIGXCPU);
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* A point's reason is the history's own copy, whatever held the text it
 * came from; each text is kept once however many points give it, and a
 * reason is cut where a record row's would be. */
static void test_history__reasons_are_kept_once_and_outlive_their_source(void **state)
{
	(void)state;
	struct history h;
	struct hist_key k = {.op = "accept", .variant = "cold"};
	char text[HIST_REASON_LEN + 40];
	struct hist_point p = {.status = REC_FAILED, .median_us = NAN, .reason = text};

	memset(&h, 0, sizeof h);
	for (int night = 0; night < 300; night++) {
		struct hist_run r = {.created = "2026-03-01T01:00:00Z"};
		snprintf(r.run_id, sizeof r.run_id, "20260301T0100%02dZ-h%d", night % 60, night);
		assert_int_equal(history_add_run(&h, &r), 0);
		p.run = (size_t)night;
		snprintf(text, sizeof text, "max_err %d > tol", night % 3);
		assert_int_equal(history_push_point(&h, (size_t)history_series_of(&h, &k), &p), 0);
		memset(text, 'x', sizeof text - 1); /* the source changes; the point keeps its text */
	}
	assert_int_equal(h.reasons.n, 3);
	assert_string_equal(h.series[0].pts[299].reason, "max_err 2 > tol");
	assert_ptr_equal(h.series[0].pts[2].reason, h.series[0].pts[299].reason);
	text[sizeof text - 1] = '\0';
	assert_int_equal(history_reason_set(&h, &h.series[0].pts[0], "%s", text), 0);
	assert_int_equal(strlen(h.series[0].pts[0].reason), HIST_REASON_LEN - 1);
	p.reason = NULL; /* none */
	p.run = 300;
	assert_int_equal(history_add_run(&h, &(struct hist_run){.run_id = "20260302T010000Z-h"}), 0);
	assert_int_equal(history_push_point(&h, 0, &p), 0);
	assert_string_equal(h.series[0].pts[300].reason, "");
	history_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_history__series_split_by_params_device_and_build),
		cmocka_unit_test(test_history__skips_temp_names_and_damage_with_a_warning),
		cmocka_unit_test(test_history__unreadable_run_folders_are_named_with_why),
		cmocka_unit_test(test_history__load_until_cuts_at_a_night),
		cmocka_unit_test(test_history__missing_folder_is_empty_and_a_night_counts_once),
		cmocka_unit_test(test_history__nights_are_ordered_by_created),
		cmocka_unit_test(test_history__a_night_behind_the_clock_is_appended_as_the_newest),
		cmocka_unit_test(test_history__a_100k_row_record_adds_in_linear_time),
		cmocka_unit_test(test_history__reasons_are_kept_once_and_outlive_their_source),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
