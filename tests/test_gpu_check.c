/* test_gpu_check.c - tools/gpu-check without a GPU: its closing table (each row beside its floor, what passes and what does not) from prepared rows, and its dry run (build for sm_90, plan, time budget). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A rows_*.tsv line (gpu_check_main.c's gc_write_row): op variant backend
 * status samples median p10 p90 bytes flops gbps pct max_err clock params
 * reason. */
#define ROW(op, var, st, us, bytes, flops, params, reason)                                   \
	op "\t" var "\tcuda\t" st "\t10\t" us "\t0\t0\t" bytes "\t" flops "\t0\t0\t1e-4\t1980\t" \
	   params "\t" reason "\n"
#define DEVICE "#device\tNVIDIA H200\tsm_90\t132\t143.0\t1980\t4000.0\t13.0\t580\t2.27\t1\n"
#define CEILING "#ceiling\ttensor_tflops\t800.0\n"
#define STEPS_OK                                                                       \
	"env\tok\t1\t10\t\nbuild\tok\t60\t120\t\nvalidate\tok\t30\t90\t\n"                \
	"sanitize\tunavailable\t1\t90\tcompute-sanitizer not found\ntime\tok\t100\t180\t\n" \
	"ncu\tunavailable\t1\t30\tncu not found\n"
#define END "#end\n"

/* A fresh folder with a run's steps, its validation rows and time rows. */
static char *run_dir(const char *steps, const char *time_rows)
{
	char *dir = strdup("/tmp/ddt-gpu-check-XXXXXX");
	assert_non_null(mkdtemp(dir));
	put(dir, "steps.tsv", steps);
	put(dir, "rows_validate.tsv",
	    DEVICE ROW("accept", "validate", "ok", "nan", "1000", "0", "B=8", "")
		ROW("allreduce", "validate", "skipped", "nan", "0", "0", "M=1",
		    "needs 2 or more GPUs, found 1") END);
	put(dir, "rows_time.tsv", time_rows);
	return dir;
}

static int table(char **out, const char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "python3 tools/gpu_check.py table %s", dir);
	return helpers_run(out, cmd);
}

static void cleanup(char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	free(dir);
}

/* 4e9 bytes at 4000 GB/s: 1000 us, measured 2000 us -> 50%; 8e12 flops at
 * 800 TFLOP/s: 10000 us (more than its bytes' 1 us), measured 12500 -> 80%. */
static void test_gpu_check__table_puts_each_row_beside_its_floor(void **state)
{
	(void)state;
	char *out, *dir = run_dir(STEPS_OK,
				  DEVICE CEILING ROW("moe_w4a16", "cold", "ok", "2000", "4e9", "1e9",
						     "M=9", "")
					  ROW("tree_attn", "cold", "ok", "12500", "4e6", "8e12",
					      "B=32", "") END);
	int rc = table(&out, dir);
	if (rc)
		fprintf(stderr, "%s", out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "copy 4000.0 GB/s"));
	assert_non_null(strstr(out, "tensor 800 TFLOP/s"));
	const char *moe = strstr(out, "\nmoe_w4a16"), *ta = strstr(out, "\ntree_attn");
	assert_non_null(moe);
	assert_non_null(ta);
	assert_non_null(strstr(moe, "2000.00    1000.00 bytes    50.0"));
	assert_non_null(strstr(ta, "12500.00   10000.00 flops    80.0"));
	assert_non_null(strstr(out, "4 rows: 4 pass, 0 do not"));
	/* the table is the last thing printed: the device run's reply ends with it */
	assert_non_null(strstr(out, "% of floor = floor / measured time\n"));
	free(out);
	cleanup(dir);
}

/* unsupported at a template size, a plan cut short (no "#end"), a step that
 * timed out: each fails the check; a skip for want of GPUs does not, nor a
 * tool the machine lacks (the fixture's "unavailable" steps). */
static void test_gpu_check__table_fails_what_did_not_pass(void **state)
{
	(void)state;
	const char *ok_moe = ROW("moe_w4a16", "cold", "ok", "2000", "4e9", "1e9", "M=9", "");
	const char *ok_ta = ROW("tree_attn", "cold", "ok", "12500", "4e6", "8e12", "B=32", "");
	char rows[2048], steps[1024], *out, *dir;

	snprintf(rows, sizeof rows, DEVICE CEILING "%s%s" END, ok_moe,
		 ROW("tree_attn", "cold", "unsupported", "nan", "4e6", "8e12", "B=32",
		     "cuda setup: unsupported: 33 rows"));
	dir = run_dir(STEPS_OK, rows);
	assert_int_equal(table(&out, dir), 4);
	assert_non_null(strstr(out, "note: tree_attn cold B=32: unsupported"));
	free(out);
	cleanup(dir);

	snprintf(rows, sizeof rows, DEVICE CEILING "%s", ok_moe);
	dir = run_dir(STEPS_OK, rows);
	assert_int_equal(table(&out, dir), 4);
	assert_non_null(strstr(out, "the time plan stopped after 1 rows"));
	free(out);
	cleanup(dir);

	snprintf(rows, sizeof rows, DEVICE CEILING "%s%s" END, ok_moe, ok_ta);
	snprintf(steps, sizeof steps, "%s", STEPS_OK);
	*strstr(steps, "validate\tok") = '\0';
	strcat(steps, "validate\ttimeout\t90\t90\tstopped at 90 s\n");
	dir = run_dir(steps, rows);
	assert_int_equal(table(&out, dir), 4);
	assert_non_null(strstr(out, "validate timeout"));
	free(out);
	cleanup(dir);
}

/* The dry run builds the check program for sm_90 (no GPU needed), checks its
 * plans and prints each step's budget, the whole under 9 minutes. */
static void test_gpu_check__dry_run_builds_and_plans_within_nine_minutes(void **state)
{
	(void)state;
	const char *nvcc = getenv("DDT_NVCC"), *bin = helpers_bin();
	char cmd[1024], dir[512], *out, *total;
	int secs = 0;

	if (!nvcc || !nvcc[0])
		skip(); /* built without nvcc: nothing to build for sm_90 */
	snprintf(dir, sizeof dir, "%s", bin);
	*(strrchr(dir, '/') ? strrchr(dir, '/') : dir) = '\0';
	snprintf(cmd, sizeof cmd,
		 "PATH=\"$(dirname %s):$PATH\" GPU_CHECK_ARCH=90 GPU_CHECK_BUILD=%s/gpu-check-sm90 "
		 "tools/gpu-check --dry-run",
		 nvcc, dir[0] ? dir : ".");
	int rc = helpers_run(&out, cmd);
	if (rc)
		fprintf(stderr, "%s", out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "built "));
	for (const char *s = "env,build,validate,sanitize,time,ncu,table"; *s;) {
		char step[16];
		size_t n = strcspn(s, ",");
		snprintf(step, sizeof step, "\n  %.*s ", (int)n, s);
		assert_non_null(strstr(out, step));
		s += n + (s[n] == ',');
	}
	assert_non_null(total = strstr(out, "\n  total "));
	assert_int_equal(sscanf(total, "\n  total %d s", &secs), 1);
	assert_true(secs > 0 && secs <= 540);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_check__table_puts_each_row_beside_its_floor),
		cmocka_unit_test(test_gpu_check__table_fails_what_did_not_pass),
		cmocka_unit_test(test_gpu_check__dry_run_builds_and_plans_within_nine_minutes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
