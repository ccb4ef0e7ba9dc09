/* test_gpu_check.c - tools/gpu-check without a GPU: its closing table (each row beside its floor, what passes and what does not) from prepared rows, each step's exit code (sanitizers and ncu absent, refused, failing), the row runner on the CPU simulator (a fault recovered, a hung row stopped by the watchdog, a stop keeping the rows), a whole --sim run and its record, and the dry runs (build for sm_90, plan, time budget). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* The folder of the ddt under test (build/), where make puts
 * tools/gpu-check-sim. */
static void build_dir(char *dir, size_t len)
{
	snprintf(dir, len, "%s", helpers_bin());
	*(strrchr(dir, '/') ? strrchr(dir, '/') : dir) = '\0';
	if (!dir[0])
		snprintf(dir, len, ".");
}

/* Runs one step of tools/gpu-check (--step NAME) with GC_OUT=dir and the
 * check program prog, PATH starting with bin; returns its exit code, its
 * output in *out. */
static int step(char **out, const char *dir, const char *bin, const char *name, const char *env)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
		 "PATH=%s:/usr/bin:/bin GC_OUT=%s GC_CAP=90 NVCC=/bin/true GC_PROG=%s/prog "
		 "BUDGET_S=4 %s tools/gpu-check --step %s",
		 bin, dir, dir, env, name);
	return helpers_run(out, cmd);
}

static void put_exec(const char *dir, const char *name, const char *text)
{
	char path[512];
	put(dir, name, text);
	snprintf(path, sizeof path, "%s/%s", dir, name);
	assert_int_equal(chmod(path, 0755), 0);
}

/* A fake compute-sanitizer and ncu (FAKE=refuse: print the refusal and never
 * start the program; errors: run it and exit 9; nocounters: run it, print no
 * metric; slow: sleep past the budget; else run it and print one metric), and
 * a fake check program that reaches "the device" (writes its rows file). */
static char *fake_tools(void)
{
	char *dir = strdup("/tmp/ddt-gpu-step-XXXXXX");
	assert_non_null(mkdtemp(dir));
	put_exec(dir, "prog", "#!/bin/sh\nprintf '#device\\tfake\\n#end\\n' > \"$2\"\n");
	put_exec(dir, "compute-sanitizer",
		 "#!/bin/sh\nwhile [ \"${1#--}\" != \"$1\" ]; do shift 2; done\n"
		 "case $FAKE in refuse) echo '========= Error: Device not supported'; exit 1 ;;\n"
		 "slow) sleep 30 ;; esac\n\"$@\" || exit $?\n[ \"$FAKE\" = errors ] && exit 9\nexit 0\n");
	put_exec(dir, "ncu",
		 "#!/bin/sh\nwhile [ \"${1#--}\" != \"$1\" ]; do case $1 in --csv) shift ;; *) shift 2 "
		 ";; esac; done\n"
		 "[ \"$FAKE\" = refuse ] && { echo '==ERROR== ERR_NVGPUCTRPERM'; exit 1; }\n\"$@\"\n"
		 "echo '\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"'\n"
		 "[ \"$FAKE\" = nocounters ] || echo '\"0\",\"moe_gemm2\",\"Duration\",\"us\",\"12\"'\n");
	return dir;
}

/* Each step's exit code, which tools/gpu-check maps to its status (0 ok, 3
 * unavailable, 124 timeout, else failed): env ends 0 (it fell through to
 * exit 2, so every real run ended 4), an unknown step 2, a tool that is
 * absent or refused 3, a sanitizer that found errors 1, one past its budget
 * 124, ncu without counters 3 and with them 0. */
static void test_gpu_check__each_step_exits_with_its_status(void **state)
{
	(void)state;
	char *out, *dir = fake_tools(), empty[600];
	snprintf(empty, sizeof empty, "%s/none", dir);

	assert_int_equal(step(&out, dir, empty, "env", ""), 0);
	assert_non_null(strstr(out, "compute-sanitizer: none"));
	free(out);
	assert_int_equal(step(&out, dir, empty, "nosuch", ""), 2);
	free(out);
	assert_int_equal(step(&out, dir, empty, "memcheck", ""), 3);
	assert_non_null(strstr(out, "compute-sanitizer not found"));
	free(out);
	assert_int_equal(step(&out, dir, dir, "racecheck", "FAKE=refuse"), 3);
	assert_non_null(strstr(out, "racecheck refused"));
	free(out);
	assert_int_equal(step(&out, dir, dir, "memcheck", "FAKE=errors"), 1);
	free(out);
	assert_int_equal(step(&out, dir, dir, "synccheck", "FAKE=slow"), 124);
	free(out);
	assert_int_equal(step(&out, dir, dir, "memcheck", ""), 0);
	free(out);
	assert_int_equal(step(&out, dir, empty, "ncu", ""), 3);
	assert_non_null(strstr(out, "ncu not found"));
	free(out);
	assert_int_equal(step(&out, dir, dir, "ncu", "FAKE=refuse"), 3);
	assert_non_null(strstr(out, "ncu refused"));
	free(out);
	assert_int_equal(step(&out, dir, dir, "ncu", "FAKE=nocounters"), 3);
	assert_non_null(strstr(out, "no counters read"));
	free(out);
	assert_int_equal(step(&out, dir, dir, "ncu", ""), 0);
	assert_non_null(strstr(out, "moe_gemm2"));
	free(out);
	cleanup(dir);
}

/* Four small rows on the CPU simulator (tools/gpu-check-sim --sim), the
 * runner's exit code; GPU_CHECK_SIM_INJECT=inject (may be ""). The rows
 * file's text goes to *rows. */
static int sim_rows(char **rows, const char *inject, const char *watchdog_s)
{
	char b[512], cmd[2048], *out, *dir = strdup("/tmp/ddt-gpu-rows-XXXXXX"), plan[1024];
	assert_non_null(mkdtemp(dir));
	snprintf(plan, sizeof plan,
		 "seed\t1\nwatchdog\t%s\nvalidate\tmemcpy\tmib=1\nvalidate\taccept\tB=8,L=7,layers=3\n"
		 "validate\tmemcpy\tmib=2\nvalidate\taccept\tB=9,L=7,layers=3\n", watchdog_s);
	put(dir, "plan.tsv", plan);
	build_dir(b, sizeof b);
	snprintf(cmd, sizeof cmd, "GPU_CHECK_SIM_INJECT=%s %s/tools/gpu-check-sim --sim %s/plan.tsv "
		 "%s/rows.tsv", inject, b, dir, dir);
	int rc = helpers_run(&out, cmd);
	fprintf(stderr, "%s", out);
	free(out);
	snprintf(cmd, sizeof cmd, "%s/rows.tsv", dir);
	*rows = helpers_slurp(cmd);
	cleanup(dir);
	return rc;
}

/* The nth row line (1-based, after "#device") of a rows file, its status
 * field checked against want; returns the line. */
static const char *row_is(const char *rows, int n, const char *op, const char *want)
{
	const char *l = rows;
	char head[128];
	for (int i = 0; i < n && l; i++)
		l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL;
	assert_non_null(l);
	snprintf(head, sizeof head, "%s\tvalidate\tcuda\t%s\t", op, want);
	if (strncmp(l, head, strlen(head)))
		fprintf(stderr, "row %d: want %s, got %.200s\n", n, head, l);
	assert_int_equal(strncmp(l, head, strlen(head)), 0);
	return l;
}

/* A kernel fault in row 2 (an illegal address: a sticky error) fails that
 * row only: the device is reset and rows 3 and 4 pass. */
static void test_gpu_check__fault_is_recovered_and_later_rows_pass(void **state)
{
	(void)state;
	char *rows;
	assert_int_equal(sim_rows(&rows, "", "30"), 0);
	row_is(rows, 2, "accept", "ok");
	assert_non_null(strstr(rows, "\n#end\n"));
	free(rows);

	assert_int_equal(sim_rows(&rows, "fault:2", "30"), 4);
	row_is(rows, 1, "memcpy", "ok");
	const char *bad = row_is(rows, 2, "accept", "failed");
	assert_non_null(strstr(bad, "device reset after: "));
	assert_non_null(strstr(bad, "illegal memory access"));
	row_is(rows, 3, "memcpy", "ok");
	row_is(rows, 4, "accept", "ok");
	assert_non_null(strstr(rows, "\n#end\n"));
	free(rows);
}

/* A kernel that never returns in row 2: the watchdog writes the row as
 * "timeout" after its limit, kills the process and a fresh one runs rows 3
 * and 4. */
static void test_gpu_check__hung_row_is_stopped_by_the_watchdog(void **state)
{
	(void)state;
	char *rows;
	assert_int_equal(sim_rows(&rows, "hang:2", "1"), 4);
	row_is(rows, 1, "memcpy", "ok");
	assert_non_null(strstr(row_is(rows, 2, "accept", "timeout"), "timed out: no result within 1 s"));
	row_is(rows, 3, "memcpy", "ok");
	row_is(rows, 4, "accept", "ok");
	assert_non_null(strstr(rows, "\n#end\n"));
	/* the first process wrote the device line, the fresh one did not */
	assert_int_equal(strstr(rows, "#device") - rows, 0);
	assert_null(strstr(rows + 1, "#device"));
	free(rows);
}

/* tools/gpu-check --sim end to end: env, validation on the simulator, the
 * table last and the record in --out; every step passes, so it exits 0. */
static void test_gpu_check__sim_run_exits_zero_and_writes_the_record(void **state)
{
	(void)state;
	char b[512], cmd[2048], path[600], *out, *dir = strdup("/tmp/ddt-gpu-rec-XXXXXX");
	assert_non_null(mkdtemp(dir));
	build_dir(b, sizeof b);
	snprintf(cmd, sizeof cmd, "GPU_CHECK_SIM_BIN=%s/tools/gpu-check-sim GPU_CHECK_BUILD=%s/work "
		 "tools/gpu-check --sim --out %s/rec", b, dir, dir);
	int rc = helpers_run(&out, cmd);
	if (rc)
		fprintf(stderr, "%s", out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "5 rows: 5 pass, 0 do not; 2 of 2 steps ok"));
	assert_non_null(strstr(out, "the record is in"));
	free(out);
	snprintf(path, sizeof path, "%s/rec/table.txt", dir);
	out = helpers_slurp(path);
	assert_non_null(strstr(out, "5 rows: 5 pass"));
	free(out);
	snprintf(path, sizeof path, "%s/rec/steps.tsv", dir);
	out = helpers_slurp(path);
	assert_non_null(strstr(out, "env\tok\t"));
	assert_non_null(strstr(out, "validate\tok\t"));
	free(out);
	/* the whole record in one archive: plans, logs, rows */
	snprintf(cmd, sizeof cmd, "tar -tzf %s/rec/record.tar.gz | sort | tr '\\n' ' '", dir);
	assert_int_equal(helpers_run(&out, cmd), 0);
	assert_non_null(strstr(out, "env.log plan_ncu.tsv plan_san1.tsv plan_small.tsv plan_time.tsv "
				    "plan_validate.tsv rows_validate.tsv steps.tsv table.txt validate.log"));
	free(out);
	cleanup(dir);
}

/* SIGTERM in the middle of a row (one that hangs): the run ends 143 with
 * the rows so far, the step "stopped", the table and the record written. */
static void test_gpu_check__stopped_run_still_writes_table_and_record(void **state)
{
	(void)state;
	char b[512], cmd[4096], path[600], *out, *dir = strdup("/tmp/ddt-gpu-stop-XXXXXX");
	assert_non_null(mkdtemp(dir));
	build_dir(b, sizeof b);
	snprintf(cmd, sizeof cmd,
		 "GPU_CHECK_SIM_INJECT=hang:2 GPU_CHECK_SIM_BIN=%s/tools/gpu-check-sim "
		 "GPU_CHECK_BUILD=%s/work tools/gpu-check --sim --out %s/rec > %s/log 2>&1 & pid=$!; "
		 "i=0; until [ \"$(grep -c '^memcpy' %s/work/rows_validate.tsv 2>/dev/null)\" = 1 ] || "
		 "[ $i -ge 1200 ]; do sleep 0.1; i=$((i + 1)); done; kill -TERM $pid; wait $pid",
		 b, dir, dir, dir, dir);
	assert_int_equal(helpers_run(&out, cmd), 143);
	free(out);
	snprintf(path, sizeof path, "%s/log", dir);
	out = helpers_slurp(path);
	assert_non_null(strstr(out, "1 rows: 1 pass, 0 do not; 1 of 2 steps ok, validate stopped"));
	assert_non_null(strstr(out, "note: the validate plan stopped after 1 rows"));
	free(out);
	snprintf(path, sizeof path, "%s/rec/table.txt", dir);
	out = helpers_slurp(path);
	assert_non_null(strstr(out, "validate stopped"));
	free(out);
	snprintf(path, sizeof path, "%s/rec/rows_validate.tsv", dir);
	out = helpers_slurp(path);
	assert_non_null(strstr(out, "\nmemcpy\tvalidate"));
	assert_null(strstr(out, "#end"));
	free(out);
	cleanup(dir);
}

/* NCCL (or any CUDA library) from NVIDIA's Python wheels when the toolkit
 * has none: the CUDA 12 layout (nvidia/nccl/) and the CUDA 13 one
 * (nvidia/cu13/); nothing (exit 1) where no wheel holds it. */
static void test_gpu_check__nccl_found_in_python_wheels(void **state)
{
	(void)state;
	char cmd[1024], *out, *dir = strdup("/tmp/ddt-gpu-pip-XXXXXX");
	assert_non_null(mkdtemp(dir));
	const char *layout[] = {"nccl", "cu13"};
	for (int i = 0; i < 2; i++) {
		snprintf(cmd, sizeof cmd, "rm -rf %s/nvidia && mkdir -p %s/nvidia/%s/include "
			 "%s/nvidia/%s/lib && touch %s/nvidia/%s/include/nccl.h "
			 "%s/nvidia/%s/lib/libnccl.so.2 && PYTHONPATH=%s python3 "
			 "tools/find_nvidia_lib.py libnccl nccl.h",
			 dir, dir, layout[i], dir, layout[i], dir, layout[i], dir, layout[i], dir);
		assert_int_equal(helpers_run(&out, cmd), 0);
		snprintf(cmd, sizeof cmd, "%s/nvidia/%s/include %s/nvidia/%s/lib libnccl.so.2\n", dir,
			 layout[i], dir, layout[i]);
		assert_string_equal(out, cmd);
		free(out);
	}
	snprintf(cmd, sizeof cmd, "PYTHONPATH=%s python3 tools/find_nvidia_lib.py libnosuch nosuch.h",
		 dir);
	assert_int_equal(helpers_run(&out, cmd), 1);
	assert_string_equal(out, "");
	free(out);
	cleanup(dir);
}

/* The dry runs build the check program and libddt-cuda.so for sm_90 (no
 * GPU needed), check the plans and print each step's budget: the whole run
 * under 9 minutes, --quick's under 6. */
static void test_gpu_check__dry_run_builds_and_plans_within_nine_minutes(void **state)
{
	(void)state;
	const char *nvcc = getenv("DDT_NVCC");
	char cmd[1024], dir[512], *out, *total;
	int secs = 0;

	if (!nvcc || !nvcc[0])
		skip(); /* built without nvcc: nothing to build for sm_90 */
	build_dir(dir, sizeof dir);
	for (int quick = 0; quick < 2; quick++) {
		snprintf(cmd, sizeof cmd,
			 "PATH=\"$(dirname %s):$PATH\" GPU_CHECK_ARCH=90 GPU_CHECK_BUILD=%s/gpu-check-sm90 "
			 "tools/gpu-check --dry-run%s",
			 nvcc, dir, quick ? " --quick" : "");
		int rc = helpers_run(&out, cmd);
		if (rc)
			fprintf(stderr, "%s", out);
		assert_int_equal(rc, 0);
		assert_non_null(strstr(out, "built "));
		for (const char *s = quick ? "env,build,validate,time,table"
					   : "env,build,validate,memcheck,racecheck,synccheck,time,ncu,table";
		     *s;) {
			char st[16];
			size_t n = strcspn(s, ",");
			snprintf(st, sizeof st, "\n  %.*s ", (int)n, s);
			assert_non_null(strstr(out, st));
			s += n + (s[n] == ',');
		}
		assert_true(!quick || !strstr(out, "\n  memcheck "));
		assert_non_null(total = strstr(out, "\n  total "));
		assert_int_equal(sscanf(total, "\n  total %d s", &secs), 1);
		assert_true(secs > 0 && secs <= (quick ? 360 : 540));
		free(out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_check__table_puts_each_row_beside_its_floor),
		cmocka_unit_test(test_gpu_check__table_fails_what_did_not_pass),
		cmocka_unit_test(test_gpu_check__each_step_exits_with_its_status),
		cmocka_unit_test(test_gpu_check__fault_is_recovered_and_later_rows_pass),
		cmocka_unit_test(test_gpu_check__hung_row_is_stopped_by_the_watchdog),
		cmocka_unit_test(test_gpu_check__sim_run_exits_zero_and_writes_the_record),
		cmocka_unit_test(test_gpu_check__stopped_run_still_writes_table_and_record),
		cmocka_unit_test(test_gpu_check__nccl_found_in_python_wheels),
		cmocka_unit_test(test_gpu_check__dry_run_builds_and_plans_within_nine_minutes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
