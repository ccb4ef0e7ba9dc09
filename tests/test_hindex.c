/* test_hindex.c - the history index (runs/.index.sqlite): the same history as
 * the records give, changed records read again, a damaged index rebuilt, a
 * link at its name refused, concurrent loads, read-only queries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "fsx.h"
#include "hindex.h"
#include "history.h"
#include "record.h"

#include <sqlite3.h>

/* Night `day` (created on day `created`): three shapes of one op with their
 * spreads, a failed row, a row whose key repeats, an ok row without a
 * median; with machine and GPU state on even days. */
static void make_record(struct run_record *r, int day, int created, double us)
{
	struct rec_device d = {.kind = "cuda", .name = "GPU X", .arch = "sm_90", .cores = 132,
			       .mem_gb = 80, .sm_clock_mhz = 1980, .mem_clock_mhz = NAN,
			       .peak_gbps = NAN, .copy_gbps = NAN};
	struct rec_row w = {.op = "tree_attn", .variant = "cold", .backend = "cuda",
			    .samples = 50, .median_us = us, .p10_us = us * 0.9,
			    .p90_us = us * 1.2, .min_us = NAN, .max_us = NAN, .stdev_us = NAN,
			    .bytes = NAN, .flops = NAN, .gbps = NAN, .pct_peak = NAN,
			    .max_err = NAN, .sm_clock_mhz = NAN, .status = REC_OK};
	memset(r, 0, sizeof *r);
	r->schema = RECORD_SCHEMA;
	snprintf(r->run_id, sizeof r->run_id, "202604%02dT010000Z-h", day);
	snprintf(r->created, sizeof r->created, "2026-04-%02dT01:00:00Z", created);
	snprintf(r->template_name, sizeof r->template_name, "gpu");
	snprintf(r->prov.build, sizeof r->prov.build, "O2");
	snprintf(r->prov.git_rev, sizeof r->prov.git_rev, "abc%04d", day);
	if (day % 2 == 0) {
		r->machine = (struct rec_machine){.known = 1, .load_avg_1m = 0.5 * day,
						  .cpu_steal_pct = NAN, .cpu_others_pct = 3,
						  .cpu_mhz = 2400, .cpus = 2, .ngpus = 1};
		r->machine.gpus[0] = (struct rec_gpu_state){.index = 0, .sm_clock_mhz = 1900,
							    .mem_clock_mhz = NAN, .temp_c = 60,
							    .throttle = "sw_thermal",
							    .other_procs = day % 3};
	}
	assert_int_equal(record_add_device(r, &d), 0);
	for (int m = 1; m <= 3; m++) {
		rec_row_param_set(&w, "M", 8 * m);
		w.median_us = us * m;
		assert_int_equal(record_add_row(r, &w), 0);
	}
	assert_int_equal(record_add_row(r, &w), 0); /* the key again: ignored */
	w.p10_us = w.p90_us = NAN;
	w.stdev_us = 2;
	snprintf(w.op, sizeof w.op, "accept%d", day % 2); /* a series every other night */
	w.median_us = NAN;                                /* ok without a median */
	assert_int_equal(record_add_row(r, &w), 0);
	w.status = REC_FAILED;
	snprintf(w.op, sizeof w.op, "moe");
	snprintf(w.reason, sizeof w.reason, "max_err 0.5 > tol 1e-3");
	assert_int_equal(record_add_row(r, &w), 0);
}

static char *run_yaml(const char *runs, const char *id)
{
	char *dir = fsx_join(runs, id), *path = fsx_join(dir, "run.yaml");
	assert_int_equal(fsx_mkdir_p(dir), 0);
	free(dir);
	return path;
}

static void store_night(const char *runs, int day, int created, double us)
{
	struct run_record r;
	make_record(&r, day, created, us);
	char *path = run_yaml(runs, r.run_id);
	assert_int_equal(record_write(&r, path), 0);
	free(path);
	record_free(&r);
}

/* A runs folder of 8 nights (two out of created order), a damaged record
 * and one filed under another run's name. */
static void make_runs(char *runs)
{
	assert_non_null(mkdtemp(runs));
	for (int d = 1; d <= 8; d++)
		store_night(runs, d, d == 3 ? 6 : d == 6 ? 3 : d, 100 + d);
	char *p = run_yaml(runs, "20260420T010000Z-h");
	assert_int_equal(fsx_write_all(p, "schema: 2\nrun_id: [oops\n", 24), 0);
	free(p);
	struct run_record r;
	make_record(&r, 21, 21, 5);
	p = run_yaml(runs, "20260422T010000Z-h");
	assert_int_equal(record_write(&r, p), 0);
	record_free(&r);
	free(p);
}

static int same_num(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

static void assert_same_machine(const struct rec_machine *a, const struct rec_machine *b)
{
	assert_int_equal(a->known, b->known);
	assert_true(same_num(a->load_avg_1m, b->load_avg_1m));
	assert_true(same_num(a->cpu_steal_pct, b->cpu_steal_pct));
	assert_true(same_num(a->cpu_others_pct, b->cpu_others_pct));
	assert_true(same_num(a->cpu_mhz, b->cpu_mhz));
	assert_int_equal(a->cpus, b->cpus);
	assert_int_equal(a->ngpus, b->ngpus);
	for (int g = 0; g < a->ngpus; g++) {
		assert_int_equal(a->gpus[g].index, b->gpus[g].index);
		assert_true(same_num(a->gpus[g].sm_clock_mhz, b->gpus[g].sm_clock_mhz));
		assert_true(same_num(a->gpus[g].mem_clock_mhz, b->gpus[g].mem_clock_mhz));
		assert_true(same_num(a->gpus[g].temp_c, b->gpus[g].temp_c));
		assert_string_equal(a->gpus[g].throttle, b->gpus[g].throttle);
		assert_int_equal(a->gpus[g].other_procs, b->gpus[g].other_procs);
	}
}

/* Every night, series (in order) and point of a and b are the same. */
static void assert_same_history(const struct history *a, const struct history *b)
{
	assert_int_equal(a->nruns, b->nruns);
	assert_int_equal(a->nfolders, b->nfolders);
	assert_int_equal(a->nskipped, b->nskipped);
	for (size_t i = 0; i < a->nruns; i++) {
		const struct hist_run *x = &a->runs[i], *y = &b->runs[i];
		assert_string_equal(x->run_id, y->run_id);
		assert_string_equal(x->created, y->created);
		assert_string_equal(x->template_name, y->template_name);
		assert_string_equal(x->git_rev, y->git_rev);
		assert_string_equal(x->engine_rev, y->engine_rev);
		assert_true(x->t == y->t);
		assert_int_equal(x->clock_behind, y->clock_behind);
		assert_same_machine(&x->machine, &y->machine);
	}
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		const struct hist_series *s = &a->series[i], *t = &b->series[i];
		assert_true(history_key_equal(&s->key, &t->key));
		assert_int_equal(s->n, t->n);
		for (size_t k = 0; k < s->n; k++) {
			const struct hist_point *p = &s->pts[k], *q = &t->pts[k];
			assert_int_equal(p->run, q->run);
			assert_int_equal(p->status, q->status);
			assert_true(same_num(p->median_us, q->median_us));
			assert_true(same_num(p->spread_us, q->spread_us));
			assert_int_equal(p->samples, q->samples);
			assert_string_equal(p->reason, q->reason);
			assert_true(isnan(p->baseline_us) && isnan(q->baseline_us));
			assert_int_equal(p->verdict, REG_NEW);
			assert_int_equal(q->good_run, HIST_NO_RUN);
		}
	}
}

/* Loads runs through the index and from the records alone; they must be the
 * same. Returns the index load's warnings (caller frees). */
static struct ydiag load_both(const char *runs, struct history *h)
{
	struct history plain;
	struct ydiag warn = {0}, plain_warn = {0};
	assert_int_equal(history_load_with(&plain, runs, NULL, HISTORY_RECORDS_ONLY, &plain_warn),
			 0);
	assert_int_equal(history_load(h, runs, &warn), 0);
	assert_same_history(h, &plain);
	history_free(&plain);
	ydiag_free(&plain_warn);
	return warn;
}

static size_t count_warnings(const struct ydiag *w, const char *what)
{
	size_t n = 0;
	for (size_t i = 0; i < w->n; i++)
		n += strstr(w->msgs[i], what) != NULL;
	return n;
}

/* Loads runs as load_both does and frees it all; returns how many warnings
 * name `what` (all of them: NULL). */
static size_t load_warns(const char *runs, const char *what)
{
	struct history h;
	struct ydiag w = load_both(runs, &h);
	size_t n = what ? count_warnings(&w, what) : w.n;
	ydiag_print(&w, stdout);
	history_free(&h);
	ydiag_free(&w);
	return n;
}

static void test_hindex__cold_and_warm_loads_equal_the_records(void **state)
{
	(void)state;
	char runs[] = "/tmp/ddt-hindex-XXXXXX";
	struct history h;
	make_runs(runs);
	for (int pass = 0; pass < 2; pass++) { /* cold: builds it; warm: reads it */
		struct ydiag w = load_both(runs, &h);
		ydiag_print(&w, stdout);
		assert_int_equal(h.nruns, 8);
		assert_int_equal(h.nskipped, 2);
		/* the skipped records warn on every load, indexed or not */
		assert_int_equal(w.n, 2);
		assert_int_equal(count_warnings(&w, "damaged"), 1);
		assert_int_equal(count_warnings(&w, "differs from its folder"), 1);
		history_free(&h);
		ydiag_free(&w);
	}
	char *p = fsx_join(runs, HINDEX_NAME);
	assert_int_equal(fsx_kind(p), FSX_FILE);
	free(p);
	/* history_load_until through the index cuts the same night */
	struct ydiag w = {0};
	assert_int_equal(history_load_until(&h, runs, "20260405T010000Z-h", &w), 0);
	assert_int_equal(h.nruns, 5);
	assert_string_equal(h.runs[4].run_id, "20260405T010000Z-h");
	history_free(&h);
	ydiag_free(&w);
	fsx_rm_rf(runs);
}

static void test_hindex__a_changed_record_is_read_again(void **state)
{
	(void)state;
	char runs[] = "/tmp/ddt-hindex-XXXXXX";
	struct history h;
	make_runs(runs);
	assert_int_equal(load_warns(runs, NULL), 2); /* the two skipped records */
	/* night 4 rewritten with other medians (size and mtime change) */
	store_night(runs, 4, 4, 400);
	struct ydiag w = load_both(runs, &h);
	ydiag_print(&w, stdout);
	assert_int_equal(count_warnings(&w, "20260404T010000Z-h/run.yaml changed since it was "
					    "indexed"),
			 1);
	assert_true(h.series[0].pts[3].median_us == 400);
	history_free(&h);
	ydiag_free(&w);
	/* the same size, only the mtime moved: read again too */
	char *p = run_yaml(runs, "20260405T010000Z-h");
	struct timespec ts[2] = {{0, UTIME_OMIT}, {1700000000, 0}};
	assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
	free(p);
	assert_int_equal(load_warns(runs, "changed since it was indexed"), 1);
	/* a night removed, one added: neither warns; the index follows */
	p = fsx_join(runs, "20260402T010000Z-h");
	assert_int_equal(fsx_rm_rf(p), 0);
	free(p);
	store_night(runs, 9, 9, 109);
	w = load_both(runs, &h);
	assert_int_equal(w.n, 2); /* the two skipped records */
	assert_int_equal(h.nruns, 8);
	history_free(&h);
	ydiag_free(&w);
	assert_int_equal(load_warns(runs, NULL), 2);
	fsx_rm_rf(runs);
}

static void test_hindex__a_damaged_index_is_rebuilt_with_a_warning(void **state)
{
	(void)state;
	char runs[] = "/tmp/ddt-hindex-XXXXXX";
	struct history h;
	char garbage[8192];
	make_runs(runs);
	char *p = fsx_join(runs, HINDEX_NAME);
	for (size_t i = 0; i < sizeof garbage; i++)
		garbage[i] = (char)(i * 7919 % 251);
	assert_int_equal(fsx_write_all(p, garbage, sizeof garbage), 0);
	struct ydiag w = load_both(runs, &h);
	ydiag_print(&w, stdout);
	assert_int_equal(count_warnings(&w, "rebuilt from the run records"), 1);
	assert_int_equal(h.nruns, 8);
	history_free(&h);
	ydiag_free(&w);
	/* rebuilt: the next load reads it without a word */
	assert_int_equal(load_warns(runs, NULL), 2);
	/* a sound file whose pages are overwritten midway */
	FILE *fp = fopen(p, "r+");
	assert_non_null(fp);
	assert_int_equal(fseek(fp, 4096, SEEK_SET), 0);
	assert_int_equal(fwrite(garbage, 1, 4096, fp), 4096);
	fclose(fp);
	assert_int_equal(load_warns(runs, "rebuilt from the run records"), 1);
	assert_int_equal(load_warns(runs, NULL), 2);
	free(p);
	fsx_rm_rf(runs);
}

static void test_hindex__a_link_at_its_name_is_refused(void **state)
{
	(void)state;
	char runs[] = "/tmp/ddt-hindex-XXXXXX", victim[] = "/tmp/ddt-hindex-victim-XXXXXX";
	struct history h;
	struct stat st;
	make_runs(runs);
	int fd = mkstemp(victim);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "precious\n", 9), 9);
	close(fd);
	char *p = fsx_join(runs, HINDEX_NAME);
	assert_int_equal(symlink(victim, p), 0);
	struct ydiag w = load_both(runs, &h);
	ydiag_print(&w, stdout);
	assert_int_equal(count_warnings(&w, "a symbolic link where ddt keeps its history index"),
			 1);
	history_free(&h);
	ydiag_free(&w);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISLNK(st.st_mode)); /* left as it was */
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_size, 9); /* never written through */
	/* a link at the journal's name: refused the same way */
	assert_int_equal(unlink(p), 0);
	char journal[4200];
	snprintf(journal, sizeof journal, "%s-journal", p);
	assert_int_equal(symlink(victim, journal), 0);
	w = load_both(runs, &h);
	assert_int_equal(count_warnings(&w, "a symbolic link"), 1);
	assert_int_equal(fsx_kind(p), FSX_NONE);
	history_free(&h);
	ydiag_free(&w);
	/* the query refuses it too */
	assert_int_equal(unlink(journal), 0);
	assert_int_equal(symlink(victim, p), 0);
	assert_int_equal(hindex_query(runs, "SELECT 1", stdout), DDT_ENOTFOUND);
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_size, 9);
	unlink(victim);
	free(p);
	fsx_rm_rf(runs);
}

/* Runs sql on runs' index, with ?1 bound to night 3's id in it. */
static void index_exec(const char *runs, const char *sql)
{
	char *p = fsx_join(runs, HINDEX_NAME);
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_text(st, 1, "20260403T010000Z-h", -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(p);
}

/* A night whose packed points (run_points) do not read back, whatever SQLite
 * says of the file, is found in the load: the index is rebuilt with a
 * warning naming the night, the history is the records', and the next load
 * reads the rebuilt index without a word. */
static void test_hindex__a_night_whose_points_do_not_read_back_is_rebuilt(void **state)
{
	(void)state;
	char runs[] = "/tmp/ddt-hindex-XXXXXX";
#define NIGHT3 " WHERE run = (SELECT id FROM runs WHERE run_id = ?1)"
	static const char *const damage[] = {
		"UPDATE run_points SET data = substr(data, 1, 30)" NIGHT3, /* cut in a point */
		"UPDATE run_points SET data = x'0100'" NIGHT3,             /* cut in the count */
		"UPDATE run_points SET data = x'07' || substr(data, 2)" NIGHT3, /* (text) */
		"UPDATE run_points SET data = CAST(x'07000000' || substr(data, 5) AS BLOB)" NIGHT3,
		"UPDATE run_points SET data = CAST(substr(data, 1, 8) || x'09' || substr(data, 10)"
		" AS BLOB)" NIGHT3, /* the first point's status */
		"UPDATE run_points SET data = CAST(x'05000000ffff' || substr(data, 7) AS BLOB)"
		NIGHT3, /* its series */
		"DELETE FROM run_points" NIGHT3,
	};
#undef NIGHT3
	make_runs(runs);
	assert_int_equal(load_warns(runs, NULL), 2);
	for (size_t i = 0; i < sizeof damage / sizeof *damage; i++) {
		index_exec(runs, damage[i]);
		assert_int_equal(load_warns(runs, "20260403T010000Z-h"), 1);
		assert_int_equal(load_warns(runs, NULL), 2);
	}
	fsx_rm_rf(runs);
}

/* Four processes load (and build) the same index at once: every one gets
 * the whole history and none gives up on the index. */
static void test_hindex__concurrent_loads_share_it(void **state)
{
	(void)state;
	char runs[] = "/tmp/ddt-hindex-XXXXXX";
	pid_t kid[4];
	make_runs(runs);
	for (int k = 0; k < 4; k++) {
		kid[k] = fork();
		assert_true(kid[k] >= 0);
		if (kid[k])
			continue;
		int bad = 0;
		for (int i = 0; i < 5 && !bad; i++) {
			struct history h;
			struct ydiag w = {0};
			bad = history_load(&h, runs, &w) || h.nruns != 8 || h.n != 6 ||
			      w.n - count_warnings(&w, "changed since it was indexed") != 2;
			if (bad)
				ydiag_print(&w, stderr);
			history_free(&h);
			ydiag_free(&w);
			if (k == 0 && i == 2)
				store_night(runs, 4, 4, 404 + i); /* a change amid the loads */
		}
		_exit(bad);
	}
	for (int k = 0; k < 4; k++) {
		int status;
		assert_int_equal(waitpid(kid[k], &status, 0), kid[k]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	struct history h;
	struct ydiag w = load_both(runs, &h);
	history_free(&h);
	ydiag_free(&w);
	fsx_rm_rf(runs);
}

/* Runs sql through hindex_query into a string (caller frees); *rc its code. */
static char *query(const char *runs, const char *sql, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	assert_non_null(fp);
	*rc = hindex_query(runs, sql, fp);
	fclose(fp);
	return buf;
}

static void test_hindex__queries_read_only(void **state)
{
	(void)state;
	char runs[] = "/tmp/ddt-hindex-XXXXXX";
	int rc;
	make_runs(runs);
	assert_int_equal(load_warns(runs, NULL), 2);
	char *out = query(runs,
			  "SELECT op, count(*) AS nights, max(median_us) FROM history"
			  " WHERE status = 'ok' GROUP BY op ORDER BY op;",
			  &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(out, "op,nights,max(median_us)\ntree_attn,24,324\n");
	free(out);
	out = query(runs, "SELECT run_id, skipped IS NOT NULL FROM runs ORDER BY run_id LIMIT 1",
		    &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(out, "run_id,skipped IS NOT NULL\n20260401T010000Z-h,0\n");
	free(out);
	static const char *const refused[] = {
		"DELETE FROM runs",
		"INSERT INTO series(op) VALUES('x')",
		"SELECT 1; DELETE FROM runs",
		"ATTACH '/tmp/x.db' AS x",
		"PRAGMA user_version = 7",
		"SELECT nope FROM runs",
		"",
	};
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
		free(query(runs, refused[i], &rc));
		assert_int_equal(rc, DDT_EINPUT);
		assert_non_null(strstr(err_msg(), "--sql"));
	}
	out = query(runs, "SELECT count(*) FROM runs", &rc);
	assert_string_equal(out, "count(*)\n10\n"); /* nothing was deleted */
	free(out);
	fsx_rm_rf(runs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hindex__cold_and_warm_loads_equal_the_records),
		cmocka_unit_test(test_hindex__a_changed_record_is_read_again),
		cmocka_unit_test(test_hindex__a_damaged_index_is_rebuilt_with_a_warning),
		cmocka_unit_test(test_hindex__a_link_at_its_name_is_refused),
		cmocka_unit_test(test_hindex__a_night_whose_points_do_not_read_back_is_rebuilt),
		cmocka_unit_test(test_hindex__concurrent_loads_share_it),
		cmocka_unit_test(test_hindex__queries_read_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
