/* test_help.c - what a newcomer meets: the README's size, ddt help and its docs pages, --version, ddt list, unknown names, JSON output, estimate's answer first, compare latest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "fsx.h"
#include "op.h"
#include "record.h"

/* The project folder: $DDT_HOME, else the working folder (tests run from
 * the root). */
static const char *home(void)
{
	const char *h = getenv("DDT_HOME");
	return h && *h ? h : ".";
}

static char tmp[256];

static int setup(void **state)
{
	(void)state;
	const char *t = getenv("TMPDIR");
	snprintf(tmp, sizeof tmp, "%s/ddt-test-help-%d", t && *t ? t : "/tmp", (int)getpid());
	return fsx_mkdir_p(tmp);
}

static int teardown(void **state)
{
	(void)state;
	char cmd[300], *out;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	helpers_run(&out, cmd);
	free(out);
	return 0;
}

static void test_help__readme_is_at_most_250_lines(void **state)
{
	(void)state;
	char path[4096];
	snprintf(path, sizeof path, "%s/README.md", home());
	char *readme = helpers_slurp(path), *latest = strstr(readme, "reports/latest");
	int lines = 0, latest_line = 0;
	assert_true(readme[0]);
	for (const char *p = readme; *p; p++)
		if (*p == '\n') {
			lines++;
			if (latest && p < latest)
				latest_line = lines + 1;
		}
	printf("README.md: %d lines, reports/latest first at line %d\n", lines, latest_line);
	assert_true(lines <= 250);
	/* where the documents are is said before the reader scrolls */
	assert_non_null(latest);
	assert_true(latest_line <= 50);
	free(readme);
}

/* The docs pages, by name (*.md under docs/), into names[]; returns how many. */
static int docs_pages(char names[][64], int max)
{
	char dir[4096];
	int n = 0;
	snprintf(dir, sizeof dir, "%s/docs", home());
	DIR *d = opendir(dir);
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d)) && n < max;) {
		size_t len = strlen(e->d_name);
		if (len > 3 && len < 64 && !strcmp(e->d_name + len - 3, ".md"))
			snprintf(names[n++], 64, "%.*s", (int)(len - 3), e->d_name);
	}
	closedir(d);
	return n;
}

/* Every page of docs/ is printed whole by `ddt help TOPIC` and listed by
 * `ddt help`; the README points at each. */
static void test_help__every_docs_page_is_reachable(void **state)
{
	(void)state;
	char names[64][64], path[4096], args[128], *list, *out;
	static const char *const required[] = {"projection", "regressions", "acceptance", "cluster",
					       "reliability", "performance", "calibration"};
	int n = docs_pages(names, 64);
	assert_int_equal(helpers_ddt(&list, "help"), 0);
	snprintf(path, sizeof path, "%s/README.md", home());
	char *readme = helpers_slurp(path);
	for (size_t i = 0; i < sizeof required / sizeof *required; i++) {
		snprintf(path, sizeof path, "%s/docs/%s.md", home(), required[i]);
		assert_int_equal(access(path, R_OK), 0);
	}
	for (int i = 0; i < n; i++) {
		char want[80];
		snprintf(path, sizeof path, "%.3000s/docs/%.63s.md", home(), names[i]);
		char *page = helpers_slurp(path);
		snprintf(args, sizeof args, "help %.63s", names[i]);
		assert_int_equal(helpers_ddt(&out, args), 0);
		if (strcmp(out, page))
			fail_msg("ddt help %s differs from docs/%s.md (rebuild?)", names[i], names[i]);
		snprintf(want, sizeof want, "\n  %.63s ", names[i]);
		assert_non_null(strstr(list, want));
		snprintf(want, sizeof want, "`%.63s`", names[i]);
		if (!strstr(readme, want))
			fail_msg("README.md does not name the topic %s", names[i]);
		free(page);
		free(out);
	}
	printf("%d docs pages, each printed whole by ddt help\n", n);
	assert_true(n >= 7);
	free(readme);
	free(list);
}

static void test_help__version_names_the_build(void **state)
{
	(void)state;
	char *out;
	assert_int_equal(helpers_ddt(&out, "--version"), 0);
	assert_memory_equal(out, "ddt ", 4);
	assert_true(strlen(out) > 5 && out[strlen(out) - 1] == '\n');
	assert_null(strchr(out + 4, ' '));
	free(out);
}

/* Each kind of name, mistyped, is answered with exit status 2 and the
 * names that are valid. */
static void test_help__unknown_names_list_the_valid_ones(void **state)
{
	(void)state;
	char args[512];
	struct {
		const char *args, *names[3];
	} cases[] = {
		{"nightlly", {"nightly", "estimate", "help"}},
		{"help nope", {"projection", "reliability", "estimate"}},
		{"estimate --scenario b300-b8", {"b300-b8-native", "seed-b16-native", NULL}},
		{"estimate --target b330 --accept 4", {"b300", "rtx_pro_6000", NULL}},
		{"bench --ops tree_atn", {"tree_attn", "moe_w4a16", "allreduce"}},
		{"history --op tree_atn --runs RUNS", {"tree_attn", "accept", NULL}},
		{"compare --op tree_atn latest --runs RUNS", {"tree_attn", "accept", NULL}},
		{"list gpu", {"scenarios", "gpus", "ops"}},
		{"compare 20990101T000000Z-x latest --runs RUNS", {"no readable run", NULL, NULL}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *out;
		const char *r = strstr(cases[i].args, "RUNS");
		if (r)
			snprintf(args, sizeof args, "%.*s%s", (int)(r - cases[i].args), cases[i].args, tmp);
		else
			snprintf(args, sizeof args, "%s", cases[i].args);
		assert_int_equal(helpers_ddt(&out, args), 2);
		for (int k = 0; k < 3 && cases[i].names[k]; k++)
			if (!strstr(out, cases[i].names[k]))
				fail_msg("ddt %s: '%s' not named in:\n%s", args, cases[i].names[k], out);
		free(out);
	}
}

static void test_help__list_names_scenarios_gpus_and_ops(void **state)
{
	(void)state;
	char *out;
	assert_int_equal(helpers_ddt(&out, "list scenarios"), 0);
	assert_non_null(strstr(out, "\nb300-b8-native "));
	assert_non_null(strstr(out, "\nseed-b16-sglang "));
	free(out);
	assert_int_equal(helpers_ddt(&out, "list gpus"), 0);
	assert_non_null(strstr(out, "\nb300 "));
	assert_non_null(strstr(out, "\nrtx_pro_6000 "));
	free(out);
	assert_int_equal(helpers_ddt(&out, "list ops"), 0);
	for (int i = 0; op_table[i]; i++) {
		char want[80];
		snprintf(want, sizeof want, "\n%s ", op_table[i]->name);
		assert_non_null(strstr(out, want));
	}
	assert_non_null(strstr(out, "\nallreduce "));
	free(out);
}

/* estimate's table starts with the answer, and --brief is that answer
 * alone: two lines of legend, then one line per projected row. */
static void test_help__estimate_answers_first_and_brief_is_the_answer(void **state)
{
	(void)state;
	char *brief, *full;
	assert_int_equal(helpers_ddt(&brief, "estimate --brief"), 0);
	assert_int_equal(helpers_ddt(&full, "estimate"), 0);
	assert_memory_equal(full, brief, strlen(brief));
	assert_memory_equal(brief, "answer: ", 8);
	int lines = 0;
	for (const char *p = brief; *p; p++)
		lines += *p == '\n';
	/* default.yaml: 6 scenarios, the seed b16 ones at 3 acceptances each */
	assert_int_equal(lines, 2 + 10);
	const char *row = strstr(brief, "\n  b300-b8-native ");
	assert_non_null(row);
	char line[400];
	snprintf(line, sizeof line, "%.*s", (int)strcspn(row + 1, "\n"), row + 1);
	assert_non_null(strstr(line, " tok/s median "));
	assert_non_null(strstr(line, "p5-p95 "));
	double x = NAN;
	const char *xs = strstr(line, " x");
	assert_non_null(xs);
	x = atof(xs + 2);
	assert_true(x > 1.3 && x < 1.5); /* about 429 over 303 */
	free(full);
	free(brief);
	assert_int_equal(helpers_ddt(&brief, "estimate --brief --format csv"), 2);
	free(brief);
}

/* The JSON parses (python3's json module, which make test's checks already
 * need) and holds what the other formats hold. */
static void test_help__json_output_parses(void **state)
{
	(void)state;
	char cmd[2048], *out;
	const char *py = "python3 -c 'import json,sys; d=json.load(sys.stdin); ";
	snprintf(cmd, sizeof cmd,
		 "%s estimate --scenario b300-b8-native --format json | %s"
		 "e=d[\"estimates\"]; assert d[\"made_from\"][\"calibration_hash\"]; "
		 "print(len(e), e[0][\"scenario\"])'",
		 helpers_bin(), py);
	assert_int_equal(helpers_run(&out, cmd), 0);
	assert_non_null(strstr(out, "b300-b8-native"));
	free(out);
	/* a JSON record replays to the same bytes, as a YAML or CSV one does */
	char path[300], *again;
	snprintf(path, sizeof path, "%s/estimate.json", tmp);
	snprintf(cmd, sizeof cmd, "estimate --scenario b300-b8-native --samples 500 --format json");
	assert_int_equal(helpers_ddt(&out, cmd), 0);
	assert_int_equal(fsx_write_all(path, out, strlen(out)), 0);
	snprintf(cmd, sizeof cmd, "estimate --replay %s", path);
	assert_int_equal(helpers_ddt(&again, cmd), 0);
	assert_string_equal(again, out);
	free(again);
	free(out);
	snprintf(cmd, sizeof cmd,
		 "%s acceptance %s/tests/fixtures/acceptance/synthetic.jsonl --format json | %s"
		 "a=d[\"acceptance\"]; print(a[\"steps\"])'",
		 helpers_bin(), home(), py);
	assert_int_equal(helpers_run(&out, cmd), 0);
	assert_string_equal(out, "400\n");
	free(out);
}

/* A record of night `day`: one op, a device whose name JSON must escape. */
static void store_night(int day, double us)
{
	struct run_record r;
	struct rec_device d = {.kind = "cpu", .arch = "x86_64", .sm_clock_mhz = NAN,
			       .mem_clock_mhz = NAN, .peak_gbps = NAN, .copy_gbps = NAN};
	struct rec_row w = {.op = "accept", .variant = "cold", .backend = "cpu",
			    .median_us = us, .p10_us = NAN, .p90_us = NAN, .min_us = NAN,
			    .max_us = NAN, .stdev_us = NAN, .bytes = NAN, .flops = NAN,
			    .gbps = NAN, .pct_peak = NAN, .max_err = NAN, .sm_clock_mhz = NAN,
			    .status = REC_OK};
	memset(&r, 0, sizeof r);
	r.schema = RECORD_SCHEMA;
	snprintf(r.run_id, sizeof r.run_id, "202603%02dT010000Z-h", day);
	snprintf(r.created, sizeof r.created, "2026-03-%02dT01:00:00Z", day);
	snprintf(r.template_name, sizeof r.template_name, "cpu");
	snprintf(r.prov.build, sizeof r.prov.build, "b\\\"1\t");
	snprintf(d.name, sizeof d.name, "cpu \"quoted\" \\ back\xc3\xa9");
	assert_int_equal(record_add_device(&r, &d), 0);
	rec_row_param_set(&w, "B", 8);
	assert_int_equal(record_add_row(&r, &w), 0);
	char *dir = fsx_join(tmp, r.run_id), *path = fsx_join(dir, "run.yaml");
	assert_int_equal(fsx_mkdir_p(dir), 0);
	assert_int_equal(record_write(&r, path), 0);
	free(path);
	free(dir);
	record_free(&r);
}

/* history and compare as JSON: one object a CSV row, the same fields and
 * values (the same calls write both); compare latest is the two newest. */
static void test_help__history_and_compare_json_are_their_csv(void **state)
{
	(void)state;
	char cmd[4096], *out;
	for (int day = 1; day <= 3; day++)
		store_night(day, 50 + day);
	static const char *const args[] = {"history --last 0", "compare latest",
					   "compare 20260301T010000Z-h latest"};
	for (size_t i = 0; i < sizeof args / sizeof *args; i++) {
		snprintf(cmd, sizeof cmd,
			 "python3 -c 'import csv,json,subprocess as s,sys\n"
			 "run=lambda f: s.run([\"%s\"]+\"%s --runs %s --format \".split()+[f],"
			 "capture_output=True,text=True,check=True).stdout\n"
			 "j=json.loads(run(\"json\")); c=list(csv.DictReader(run(\"csv\").splitlines()))\n"
			 "assert len(j)==len(c)>0, (len(j),len(c))\n"
			 "for a,b in zip(j,c):\n"
			 "  assert list(a)==list(b)\n"
			 "  for k in a: assert (\"\" if a[k] is None else str(a[k]) if isinstance(a[k],str) "
			 "else float(a[k]))==(b[k] if isinstance(a[k],str) or a[k] is None else float(b[k])),k\n"
			 "print(len(j), j[0][\"device\"], j[0].get(\"a_median_us\"), j[-1][\"b_median_us\" if \"b_median_us\" in j[-1] else \"median_us\"])'",
			 helpers_bin(), args[i], tmp);
		int rc = helpers_run(&out, cmd);
		if (rc)
			fail_msg("%s: %s", args[i], out);
		printf("%s: %s", args[i], out);
		assert_non_null(strstr(out, "cpu \"quoted\" \\ back\xc3\xa9"));
		if (i == 1) /* the newest night (53 us) against the one before (52) */
			assert_non_null(strstr(out, " 52 53\n"));
		if (i == 2)
			assert_non_null(strstr(out, " 51 53\n"));
		free(out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help__readme_is_at_most_250_lines),
		cmocka_unit_test(test_help__every_docs_page_is_reachable),
		cmocka_unit_test(test_help__version_names_the_build),
		cmocka_unit_test(test_help__unknown_names_list_the_valid_ones),
		cmocka_unit_test(test_help__list_names_scenarios_gpus_and_ops),
		cmocka_unit_test(test_help__estimate_answers_first_and_brief_is_the_answer),
		cmocka_unit_test(test_help__json_output_parses),
		cmocka_unit_test(test_help__history_and_compare_json_are_their_csv),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
