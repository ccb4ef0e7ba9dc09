/* test_bench.c - the bench section loader, the suite runner's rows, the run record it writes (atomically, even when killed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_conf.h"
#include "cpu/cpu.h"
#include "cpu/opkit.h"
#include "err.h"
#include "fsx.h"
#include "record.h"
#include "tmpl.h"

static const char parent_yaml[] = "name: base\n"
				  "scenarios:\n"
				  "  - name: s\n"
				  "    target: b300\n"
				  "    pipeline: native\n"
				  "    block: 8\n"
				  "    budget: 8\n"
				  "    concurrency: 1\n"
				  "    accept: [4.4]\n";

/* Writes base.yaml and t.yaml (extending it, with body appended) into a
 * fresh folder; returns the folder (free it) and t.yaml's path in path. */
static char *write_templates(const char *body, char *path, size_t len)
{
	char *dir = strdup("/tmp/ddt-bench-XXXXXX"), buf[8192];
	assert_non_null(mkdtemp(dir));
	snprintf(path, len, "%s/base.yaml", dir);
	assert_int_equal(fsx_write_all(path, parent_yaml, strlen(parent_yaml)), 0);
	snprintf(buf, sizeof buf, "name: t\nextends: base.yaml\n%s", body);
	snprintf(path, len, "%s/t.yaml", dir);
	assert_int_equal(fsx_write_all(path, buf, strlen(buf)), 0);
	return dir;
}

/* Loads body as a template's bench section; returns bench_conf_load's code
 * and leaves the diagnostics in diag. */
static int load_conf(const char *body, struct bench_conf *bc, struct ydiag *diag)
{
	char path[512];
	struct tmpl t;
	char *dir = write_templates(body, path, sizeof path);
	int rc = tmpl_load(&t, path, diag);
	if (!rc)
		rc = bench_conf_load(bc, &t, diag);
	tmpl_free(&t);
	fsx_rm_rf(dir);
	free(dir);
	return rc;
}

static int diag_has(const struct ydiag *d, const char *s)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->msgs[i], s))
			return 1;
	return 0;
}

static void test_bench__conf_reads_every_setting(void **state)
{
	(void)state;
	static struct bench_conf bc;
	struct ydiag diag = {0};
	const char *body = "bench:\n"
			   "  seed: 7\n"
			   "  backends: [cpu]\n"
			   "  variants: [hot]\n"
			   "  source: test\n"
			   "  timing: {warmup: 2, min_samples: 3, max_samples: 50, min_time_s: 0.01,\n"
			   "           target_rsd: 0.1, timeout_s: 1, min_clock_frac: 0.5}\n"
			   "  cpu: {threads: 1, flush_mib: 4, copy_mib: 8, check_rows: 6}\n"
			   "  ops:\n"
			   "    - op: moe_w4a16\n"
			   "      params: {M: [1, 9, 33], hidden: 256, experts: [16, 32]}\n"
			   "    - op: memcpy\n"
			   "      variants: [cold, hot]\n"
			   "      backends: [cpu, cuda]\n"
			   "    - op: allreduce\n"
			   "      params: {M: [9, 33]}\n";
	int rc = load_conf(body, &bc, &diag);
	ydiag_print(&diag, stderr);
	assert_int_equal(rc, 0);
	assert_int_equal(bc.seed, 7);
	assert_int_equal(bc.timing.warmup, 2);
	assert_int_equal(bc.timing.max_samples, 50);
	assert_float_equal(bc.timing.target_rsd, 0.1, 0);
	assert_int_equal(bc.cpu_threads, 1);
	assert_float_equal(bc.flush_mib, 4, 0);
	assert_int_equal(bc.check_rows, 6);
	assert_int_equal(bc.nops, 3);
	assert_int_equal(bc.ops[0].backends, BENCH_CPU);
	assert_int_equal(bc.ops[0].variants, BENCH_HOT);
	assert_int_equal(bc.ops[1].variants, BENCH_COLD | BENCH_HOT);
	assert_int_equal(bc.ops[1].backends, BENCH_CPU | BENCH_CUDA);
	assert_int_equal(bc.ops[2].backends, 0); /* CUDA-only, and the section says cpu */
	/* sweeps: every combination, the last key fastest */
	assert_int_equal(bench_conf_op_points(&bc.ops[0]), 6);
	struct op_params p;
	bench_conf_op_point(&bc.ops[0], 1, &p);
	assert_float_equal(op_param(&p, "M", 0), 1, 0);
	assert_float_equal(op_param(&p, "experts", 0), 32, 0);
	assert_float_equal(op_param(&p, "hidden", 0), 256, 0);
	bench_conf_op_point(&bc.ops[0], 4, &p);
	assert_float_equal(op_param(&p, "M", 0), 33, 0);
	assert_float_equal(op_param(&p, "experts", 0), 16, 0);
	assert_int_equal(bench_conf_op_points(&bc.ops[1]), 1);
	ydiag_free(&diag);
}

static void test_bench__conf_rejects_mistakes_with_positions(void **state)
{
	(void)state;
	static struct bench_conf bc;
	struct ydiag diag = {0};
	const char *body = "bench:\n"
			   "  variants: [cold, lukewarm]\n"
			   "  timing: {warmup: 1, target_rsd: -1, colour: red}\n"
			   "  ops:\n"
			   "    - op: moe_w4a16\n"
			   "      params: {M: 9, hiden: 7168}\n"
			   "    - op: warp_drive\n"
			   "    - op: memcpy\n"
			   "      params: {mib: fast}\n"
			   "  extra: 1\n";
	assert_int_equal(load_conf(body, &bc, &diag), DDT_EINPUT);
	assert_true(diag_has(&diag, "t.yaml:4:"));
	assert_true(diag_has(&diag, "t.yaml:4:20: variants: expected cold or hot, got 'lukewarm'"));
	assert_true(diag_has(&diag, "unknown key 'colour'"));
	assert_true(diag_has(&diag, "target_rsd"));
	assert_true(diag_has(&diag, "t.yaml:8:") && diag_has(&diag, "no parameter 'hiden'"));
	assert_true(diag_has(&diag, "unknown op 'warp_drive'"));
	assert_true(diag_has(&diag, "mib"));
	assert_true(diag_has(&diag, "unknown key 'extra'"));
	ydiag_free(&diag);
}

/* cpu.copy_mib has bounds, said with their unit, at the value's position. */
static void test_bench__copy_mib_out_of_bounds_is_refused_with_position(void **state)
{
	(void)state;
	static struct bench_conf bc;
	static const char *const bad[] = {"0.5", "65537", "1e9"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char body[256];
		struct ydiag diag = {0};
		snprintf(body, sizeof body, "bench:\n  cpu:\n    copy_mib: %s\n", bad[i]);
		assert_int_equal(load_conf(body, &bc, &diag), DDT_EINPUT);
		ydiag_print(&diag, stdout);
		assert_true(diag_has(&diag, "t.yaml:5:15: copy_mib must be within [1, 65536], got "));
		ydiag_free(&diag);
	}
	struct ydiag diag = {0};
	assert_int_equal(load_conf("bench:\n  cpu: {copy_mib: 65536}\n", &bc, &diag), 0);
	assert_int_equal(load_conf("bench:\n  cpu: {copy_mib: 1}\n", &bc, &diag), 0);
	ydiag_free(&diag);
}

/* A template's timing gives some keys over the defaults: the rest keep
 * theirs, and max_samples is held to min_samples as they then stand. */
static void test_bench__timing_keys_given_over_the_defaults(void **state)
{
	(void)state;
	static struct bench_conf bc;
	struct ydiag diag = {0};
	assert_int_equal(load_conf("bench:\n  timing: {max_samples: 50}\n", &bc, &diag), 0);
	assert_int_equal(bc.timing.max_samples, 50);
	assert_int_equal(bc.timing.min_samples, 10);
	assert_true(bc.timing.timeout_s == 15 && bc.copy_mib == 512);
	assert_int_equal(load_conf("bench:\n  timing: {max_samples: 5}\n", &bc, &diag), DDT_EINPUT);
	assert_true(diag_has(&diag, "t.yaml:4:11: max_samples 5 is below min_samples 10"));
	ydiag_free(&diag);
}

static const char one_copy[] =
	"bench:\n"
	"  variants: [hot]\n"
	"  timing: {warmup: 1, min_samples: 3, max_samples: 5, min_time_s: 0, target_rsd: 0.5,\n"
	"           timeout_s: 0.2}\n"
	"  cpu: {threads: %d, flush_mib: 2, copy_mib: %d}\n"
	"  ops:\n"
	"    - op: memcpy\n"
	"      backends: [cpu]\n"
	"      params: {mib: 1}\n";

/* Runs one_copy with threads and copy_mib into r; returns bench_run's code. */
static int run_one_copy(struct run_record *r, int threads, int copy_mib)
{
	static struct bench_conf bc;
	struct ydiag diag = {0};
	struct bench_opts o = {.home = "/nonexistent"};
	char body[1024];
	snprintf(body, sizeof body, one_copy, threads, copy_mib);
	assert_int_equal(load_conf(body, &bc, &diag), 0);
	ydiag_free(&diag);
	bench_record_init(r, "t", o.home);
	return bench_run(&bc, &o, r);
}

static const char moe_sweep[] =
	"bench:\n"
	"  variants: [hot]\n"
	"  timing: {warmup: 0, min_samples: 1, max_samples: 2, min_time_s: 0, target_rsd: 1,\n"
	"           timeout_s: 0.2}\n"
	"  cpu: {threads: 1, flush_mib: 1, copy_mib: 1}\n"
	"  ops:\n"
	"    - op: moe_w4a16\n"
	"      backends: [cpu]\n"
	"      params: {M: [1, 2, 3, 4], hidden: 256, moe_inter: 512, experts: 32, topk: 4, tp: 2}\n"
	"    - op: dense_gemv\n"
	"      backends: [cpu]\n"
	"      params: {M: [1, 2], K: 64, N: 64}\n";

/* A sweep of M draws the op's weights once: four points of moe_w4a16 draw
 * less than twice one instance's inputs (four times before), and every
 * point is still validated and timed. */
static void test_bench__a_sweep_draws_its_weights_once(void **state)
{
	(void)state;
	static struct bench_conf bc;
	struct ydiag diag = {0};
	struct bench_opts o = {.home = "/nonexistent", .only = "moe_w4a16"};
	struct run_record r;
	assert_int_equal(load_conf(moe_sweep, &bc, &diag), 0);
	ydiag_free(&diag);
	struct op_params p = {0};
	void *inst;
	bench_conf_op_point(&bc.ops[0], 3, &p);
	const struct op_desc *op = op_find("moe_w4a16");
	unsigned long long d0 = opkit_drawn_bytes();
	assert_int_equal(op->setup(&inst, &p, 1), 0);
	unsigned long long one = opkit_drawn_bytes() - d0;
	op->teardown(inst);
	bench_record_init(&r, "t", o.home);
	d0 = opkit_drawn_bytes();
	assert_int_equal(bench_run(&bc, &o, &r), 0);
	unsigned long long copy = 2u << 20; /* the copy probe's source (1 MiB, twice over) */
	assert_true(opkit_drawn_bytes() - d0 < 2 * one + copy);
	assert_int_equal(r.nrows, 4);
	for (size_t i = 0; i < r.nrows; i++) {
		assert_int_equal(r.rows[i].status, REC_OK);
		assert_true(r.rows[i].max_err <= op->tol);
		assert_true(rec_row_param(&r.rows[i], "M", 0) == (double)i + 1);
	}
	record_free(&r);
	/* the next op takes over from the kept instance: both of its rows ok */
	o.only = "moe_w4a16,dense_gemv";
	bench_record_init(&r, "t", o.home);
	assert_int_equal(bench_run(&bc, &o, &r), 0);
	assert_int_equal(r.nrows, 6);
	for (size_t i = 0; i < r.nrows; i++)
		assert_int_equal(r.rows[i].status, REC_OK);
	record_free(&r);
}

/* The copy probe's buffers serve a memcpy row of the same size: its source
 * is drawn once (twice before); the row is checked and timed. */
static void test_bench__the_copy_probe_hands_its_buffers_to_the_memcpy_row(void **state)
{
	(void)state;
	struct run_record r;
	unsigned long long d0 = opkit_drawn_bytes();
	assert_int_equal(run_one_copy(&r, 1, 1), 0);
	assert_int_equal(opkit_drawn_bytes() - d0, 1u << 20);
	assert_true(r.nrows == 1 && r.rows[0].status == REC_OK && r.rows[0].max_err == 0);
	/* at most 5 samples: max_samples, or an earlier rule; never none */
	assert_true(!strcmp(r.rows[0].stop, "max_samples") || !strcmp(r.rows[0].stop, "rsd") ||
		    !strcmp(r.rows[0].stop, "ci") || !strcmp(r.rows[0].stop, "timeout"));
	assert_true(r.rows[0].samples == 5 || strcmp(r.rows[0].stop, "max_samples"));
	record_free(&r);
	d0 = opkit_drawn_bytes();
	assert_int_equal(run_one_copy(&r, 1, 2), 0); /* another size: drawn anew */
	assert_int_equal(opkit_drawn_bytes() - d0, 3u << 20);
	assert_true(r.nrows == 1 && r.rows[0].status == REC_OK);
	record_free(&r);
}

/* cpu.threads past the machine's online cores runs on the online cores, and
 * the record says how many threads ran (it said what was asked: 64). */
static void test_bench__threads_past_the_online_cores_are_capped_and_recorded(void **state)
{
	(void)state;
	struct run_record r;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int want = online > CPU_MAX_THREADS ? CPU_MAX_THREADS : (int)online;
	assert_int_equal(run_one_copy(&r, 1000, 4), 0);
	assert_true(r.nrows == 1 && r.rows[0].status == REC_OK);
	assert_true(rec_row_param(&r.rows[0], "threads", 0) == want);
	assert_int_equal(r.devices[0].cores, want);
	record_free(&r);
	assert_int_equal(run_one_copy(&r, 1, 4), 0);
	assert_true(rec_row_param(&r.rows[0], "threads", 0) == 1);
	record_free(&r);
}

/* A copy bandwidth that cannot be measured (here: the copy's buffers do not
 * fit the address space) is an error naming cpu.copy_mib, not a record whose
 * rows show a percentage of nothing. In a child, under RLIMIT_AS. */
static void test_bench__a_missing_copy_bandwidth_is_an_error(void **state)
{
	(void)state;
	int fds[2], status;
	char msg[512] = "";
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct run_record r;
		long pages = 0;
		FILE *fp = fopen("/proc/self/statm", "r");
		if (!fp || fscanf(fp, "%ld", &pages) != 1)
			_exit(100);
		fclose(fp);
		struct rlimit lim = {.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) +
						 (512u << 20)};
		lim.rlim_max = lim.rlim_cur;
		if (setrlimit(RLIMIT_AS, &lim) != 0)
			_exit(101);
		int rc = run_one_copy(&r, 1, 4096);
		dprintf(fds[1], "%s", rc ? err_msg() : "");
		_exit(rc == 0 ? 1 : rc == DDT_ENOMEM ? 0 : 2);
	}
	close(fds[1]);
	ssize_t n = read(fds[0], msg, sizeof msg - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	printf("%s\n", msg);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_non_null(strstr(msg, "cpu.copy_mib"));
	assert_non_null(strstr(msg, "4096 MiB"));
}

static void test_bench__conf_without_section_has_no_ops(void **state)
{
	(void)state;
	static struct bench_conf bc;
	struct ydiag diag = {0};
	assert_int_equal(load_conf("", &bc, &diag), 0);
	assert_int_equal(bc.nops, 0);
	assert_int_equal(bc.timing.min_samples, 10);
	assert_int_equal(bc.seed, 1);
	ydiag_free(&diag);
}

/* The bench section as bench_conf_emit writes it reads back to the same
 * settings: the shipped CPU template's, every op, sweep and default. */
static void test_bench__conf_written_reads_back_the_same(void **state)
{
	(void)state;
	static struct bench_conf a, b;
	struct ydiag diag = {0};
	struct tmpl t;
	char *text = NULL;
	size_t len = 0;
	assert_int_equal(tmpl_load(&t, "templates/cpu.yaml", &diag), 0);
	assert_int_equal(bench_conf_load(&a, &t, &diag), 0);
	tmpl_free(&t);
	FILE *fp = open_memstream(&text, &len);
	assert_non_null(fp);
	bench_conf_emit(&a, fp);
	fclose(fp);
	int rc = load_conf(text, &b, &diag);
	ydiag_print(&diag, stderr);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(text, "  backends: [cpu]\n  variants: [cold, hot]\n"));
	assert_non_null(strstr(text, "params: {M: [1, 9, 33], hidden: 7168,"));
	assert_true(a.nops > 5);
	assert_int_equal(b.nops, a.nops);
	for (int i = 0; i < a.nops; i++)
		a.ops[i].line = b.ops[i].line = 0; /* where each stood */
	assert_memory_equal(&a, &b, sizeof a);
	free(text);
	ydiag_free(&diag);
}

static void test_bench__shipped_cpu_template_loads(void **state)
{
	(void)state;
	static struct bench_conf bc;
	struct ydiag diag = {0};
	struct tmpl t;
	int rc = tmpl_load(&t, "templates/cpu.yaml", &diag);
	if (!rc)
		rc = bench_conf_load(&bc, &t, &diag);
	ydiag_print(&diag, stderr);
	assert_int_equal(rc, 0);
	int moe = -1;
	for (int i = 0; i < bc.nops; i++)
		if (!strcmp(bc.ops[i].op, "moe_w4a16"))
			moe = i;
	assert_true(moe >= 0);
	assert_int_equal(bench_conf_op_points(&bc.ops[moe]), 3); /* M = 1, 9, 33 */
	tmpl_free(&t);
	ydiag_free(&diag);
}

/* A small suite: every table op at test sizes, cold and hot, CPU and CUDA.
 * Its timeout is far above what 20 samples take, so that on a loaded host
 * no row stops on time before min_samples (a timeout takes what it has). */
static const char small_suite[] =
	"bench:\n"
	"  variants: [cold, hot]\n"
	"  timing: {warmup: 1, min_samples: 3, max_samples: 20, min_time_s: 0, target_rsd: 0.5,\n"
	"           timeout_s: 10}\n"
	"  cpu: {threads: 2, flush_mib: 2, copy_mib: 4}\n"
	"  ops:\n"
	"    - op: memcpy\n"
	"      params: {mib: 1}\n"
	"    - op: moe_w4a16\n"
	"      params: {M: [1, 9], hidden: 256, moe_inter: 512, experts: 16, topk: 4}\n"
	"    - op: moe_w4a16\n"
	"      backends: [cpu]\n"
	"      params: {tp: 3}\n"
	"    - op: dense_gemv\n"
	"      params: {M: 3, K: 256, N: 64}\n"
	"    - op: tree_build\n"
	"      params: {L: 4, V: 1000, B: 12}\n"
	"    - op: tree_attn\n"
	"      params: {B: 6, ctx: 64, kv_lora: 64, rope: 16}\n"
	"    - op: accept\n"
	"      params: {B: 12, L: 5, layers: 2, row: 32}\n"
	"    - op: allreduce\n"
	"      params: {M: [9, 33]}\n";

static void run_small_suite(struct run_record *r)
{
	static struct bench_conf bc;
	struct ydiag diag = {0};
	struct bench_opts o = {.home = "/nonexistent"};
	int rc = load_conf(small_suite, &bc, &diag);
	ydiag_print(&diag, stdout);
	if (rc)
		printf("%s\n", err_msg());
	assert_int_equal(rc, 0);
	bench_record_init(r, "t", o.home);
	rc = bench_run(&bc, &o, r);
	if (rc)
		printf("%s\n", err_msg());
	assert_int_equal(rc, 0);
	ydiag_free(&diag);
}

static void test_bench__suite_rows_carry_status_and_figures(void **state)
{
	(void)state;
	struct run_record r;
	int ok = 0, cuda = 0, failed = 0;
	run_small_suite(&r);
	assert_true(record_run_id_valid(r.run_id));
	assert_string_equal(r.prov.git_rev, "unknown"); /* not a checkout */
	assert_true(r.ndevices >= 1);
	assert_string_equal(r.devices[0].kind, "cpu");
	assert_true(r.devices[0].copy_gbps > 0);
	for (size_t i = 0; i < r.nrows; i++) {
		const struct rec_row *w = &r.rows[i];
		assert_true((size_t)w->device < r.ndevices);
		if (!strcmp(w->backend, "cuda") || !strcmp(w->backend, "nccl")) {
			cuda++;
			assert_true(w->status != REC_OK || r.ndevices > 1);
			if (w->status != REC_OK)
				assert_true(w->reason[0] != '\0');
			continue;
		}
		if (!strcmp(w->op, "moe_w4a16") && rec_row_param(w, "tp", 0) == 3) {
			failed++;
			assert_int_equal(w->status, REC_FAILED);
			assert_non_null(strstr(w->reason, "tp"));
			continue;
		}
		assert_int_equal(w->status, REC_OK);
		assert_true(w->samples >= 3);
		assert_true(w->median_us > 0 && w->p10_us <= w->median_us && w->median_us <= w->p90_us);
		assert_true(w->bytes > 0 && w->gbps > 0 && w->pct_peak > 0);
		assert_true(w->max_err <= op_find(w->op)->tol);
		/* the threads that ran: 2 asked, and 2 on a machine of 2 cores or
		 * more where the op splits its work (small ones run on one) */
		int ran = (int)rec_row_param(w, "threads", 0);
		if (ran != 1 && ran != (cpu_online_cores() < 2 ? 1 : 2))
			fail_msg("%s: threads %d", w->op, ran);
		ok++;
	}
	/* 7 op points x cold and hot on the CPU; the failing one both times */
	assert_int_equal(ok, 14);
	assert_int_equal(failed, 2);
	assert_true(cuda >= 2 * 6 + 2); /* every op point on CUDA, plus two all-reduces */
	record_free(&r);
}

static void test_bench__record_round_trips_and_table_prints(void **state)
{
	(void)state;
	char dir[] = "/tmp/ddt-bench-runs-XXXXXX", folder[512], file[600];
	struct run_record a, b;
	struct ydiag diag = {0};
	assert_non_null(mkdtemp(dir));
	run_small_suite(&a);
	assert_int_equal(bench_write_run(&a, dir, folder, sizeof folder), 0);
	snprintf(file, sizeof file, "%s/run.yaml", folder);
	int rc = record_read(&b, file, &diag);
	ydiag_print(&diag, stderr);
	assert_int_equal(rc, 0);
	assert_int_equal(b.nrows, a.nrows);
	assert_string_equal(b.run_id, a.run_id);
	for (size_t i = 0; i < a.nrows; i++) {
		assert_string_equal(b.rows[i].op, a.rows[i].op);
		assert_int_equal(b.rows[i].status, a.rows[i].status);
		assert_int_equal(b.rows[i].nparams, a.rows[i].nparams);
	}
	/* the same run id again: refused, the first record untouched */
	assert_int_not_equal(bench_write_run(&a, dir, folder, sizeof folder), 0);

	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	bench_print_table(&a, fp);
	fclose(fp);
	assert_non_null(strstr(text, "median_us"));
	assert_non_null(strstr(text, "moe_w4a16"));
	assert_non_null(strstr(text, "failed: "));
	free(text);
	record_free(&a);
	record_free(&b);
	ydiag_free(&diag);
	fsx_rm_rf(dir);
}

static void test_bench__unknown_op_filter_is_an_input_error(void **state)
{
	(void)state;
	static struct bench_conf bc;
	struct run_record r;
	struct bench_opts o = {.home = "/nonexistent", .only = "memcpy,warp_drive"};
	struct ydiag diag = {0};
	assert_int_equal(load_conf(small_suite, &bc, &diag), 0);
	bench_record_init(&r, "t", o.home);
	assert_int_equal(bench_run(&bc, &o, &r), DDT_EINPUT);
	assert_non_null(strstr(err_msg(), "warp_drive"));
	assert_int_equal(r.nrows, 0);
	record_free(&r);
	/* a filter keeps only the ops it names */
	o.only = "tree_build";
	bench_record_init(&r, "t", o.home);
	assert_int_equal(bench_run(&bc, &o, &r), 0);
	assert_true(r.nrows >= 2);
	for (size_t i = 0; i < r.nrows; i++)
		assert_string_equal(r.rows[i].op, "tree_build");
	record_free(&r);
	ydiag_free(&diag);
}

/* A record big enough that writing it takes a while. */
static void big_record(struct run_record *r)
{
	bench_record_init(r, "t", "/nonexistent");
	struct rec_device d = {.kind = "cpu", .name = "test", .arch = "x86_64", .cores = 1,
			       .mem_gb = 1, .sm_clock_mhz = NAN, .mem_clock_mhz = NAN,
			       .peak_gbps = NAN, .copy_gbps = 10};
	assert_int_equal(record_add_device(r, &d), 0);
	for (int i = 0; i < 3000; i++) {
		struct rec_row w = {.op = "memcpy", .variant = "hot", .backend = "cpu", .samples = 1,
				    .median_us = i, .p10_us = i, .p90_us = i, .min_us = i,
				    .max_us = i, .stdev_us = 0, .bytes = 1, .flops = 0, .gbps = 1,
				    .pct_peak = 1, .max_err = 0, .sm_clock_mhz = NAN};
		rec_row_param_set(&w, "mib", i);
		assert_int_equal(record_add_row(r, &w), 0);
	}
}

/* Every entry of a runs folder is a temporary name (readers skip those) or a
 * complete record. Returns how many complete ones there were. */
static int check_runs_folder(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int complete = 0;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    fsx_is_temp_name(e->d_name))
			continue;
		char path[1024];
		struct run_record r;
		struct ydiag diag = {0};
		snprintf(path, sizeof path, "%s/%s/run.yaml", dir, e->d_name);
		int rc = record_read(&r, path, &diag);
		if (rc)
			fprintf(stderr, "incomplete run folder %s\n", path);
		assert_int_equal(rc, 0);
		assert_int_equal(r.nrows, 3000);
		record_free(&r);
		ydiag_free(&diag);
		complete++;
	}
	closedir(d);
	return complete;
}

static void test_bench__a_killed_writer_leaves_no_run_folder(void **state)
{
	(void)state;
	char dir[] = "/tmp/ddt-bench-kill-XXXXXX";
	struct run_record r;
	assert_non_null(mkdtemp(dir));
	big_record(&r);
	for (int k = 0; k < 12; k++) {
		char runs[600];
		snprintf(runs, sizeof runs, "%s/runs%d", dir, k);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			char folder[700];
			_exit(bench_write_run(&r, runs, folder, sizeof folder) ? 1 : 0);
		}
		/* kill it somewhere between not started and done */
		struct timespec t = {0, (long)k * 1500000};
		nanosleep(&t, NULL);
		kill(pid, SIGKILL);
		int st;
		waitpid(pid, &st, 0);
		assert_true(check_runs_folder(runs) <= 1);
	}
	record_free(&r);
	fsx_rm_rf(dir);
}

/* An op's params: a sweep takes 1 to BENCH_MAX_VALS values, a lone number
 * is a sweep of one, and an op holds at most OP_MAX_PARAMS of them; each
 * problem at its place. */
static void test_bench__params_sweeps_and_their_bounds(void **state)
{
	(void)state;
	static struct bench_conf bc;
	struct ydiag diag = {0};
	const char *body = "bench:\n"
			   "  ops:\n"
			   "    - op: moe_w4a16\n"
			   "      params: {M: [], hidden: 7168}\n"
			   "    - op: memcpy\n"
			   "      params: {mib: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]}\n"
			   "    - op: memcpy\n"
			   "      params: {a: 1, b: 1, c: 1, d: 1, e: 1, f: 1, g: 1, h: 1, i: 1, j: 1,"
			   " k: 1, l: 1, m: 1}\n";
	assert_int_equal(load_conf(body, &bc, &diag), DDT_EINPUT);
	ydiag_print(&diag, stdout);
	assert_true(diag_has(&diag, "t.yaml:6:19: M: a sweep takes 1 to 16 values"));
	assert_true(diag_has(&diag, "t.yaml:8:77: mib: at most 16 items, got 17"));
	assert_true(diag_has(&diag, "t.yaml:10:") &&
		    diag_has(&diag, ": params: at most 12 items, got 13"));
	assert_true(diag_has(&diag, "t.yaml:10:16: memcpy has no parameter 'a'"));
	ydiag_free(&diag);
	assert_int_equal(load_conf("bench:\n  ops:\n    - op: memcpy\n      params: {mib: 4}\n",
				   &bc, &diag), 0);
	assert_true(bc.nops == 1 && bc.ops[0].nparams == 1 && bc.ops[0].params[0].nvals == 1);
	assert_true(bc.ops[0].params[0].vals[0] == 4);
	ydiag_free(&diag);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bench__conf_reads_every_setting),
		cmocka_unit_test(test_bench__conf_rejects_mistakes_with_positions),
		cmocka_unit_test(test_bench__copy_mib_out_of_bounds_is_refused_with_position),
		cmocka_unit_test(test_bench__timing_keys_given_over_the_defaults),
		cmocka_unit_test(test_bench__threads_past_the_online_cores_are_capped_and_recorded),
		cmocka_unit_test(test_bench__a_missing_copy_bandwidth_is_an_error),
		cmocka_unit_test(test_bench__a_sweep_draws_its_weights_once),
		cmocka_unit_test(test_bench__the_copy_probe_hands_its_buffers_to_the_memcpy_row),
		cmocka_unit_test(test_bench__conf_without_section_has_no_ops),
		cmocka_unit_test(test_bench__shipped_cpu_template_loads),
		cmocka_unit_test(test_bench__conf_written_reads_back_the_same),
		cmocka_unit_test(test_bench__suite_rows_carry_status_and_figures),
		cmocka_unit_test(test_bench__record_round_trips_and_table_prints),
		cmocka_unit_test(test_bench__unknown_op_filter_is_an_input_error),
		cmocka_unit_test(test_bench__a_killed_writer_leaves_no_run_folder),
		cmocka_unit_test(test_bench__params_sweeps_and_their_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
