/* test_cli.c - the ddt command as users run it: estimate, check, nightly, exit codes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsx.h"

/* Runs "$DDT_BIN args" with stderr joined to stdout; returns the exit status
 * and the output (malloc'd) in *out. */
static int ddt(char **out, const char *args)
{
	const char *bin = getenv("DDT_BIN");
	char cmd[4096], *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len), *p;
	int c;

	snprintf(cmd, sizeof cmd, "%s %s 2>&1", bin ? bin : "build/ddt", args);
	p = popen(cmd, "r");
	assert_non_null(p);
	while ((c = fgetc(p)) != EOF)
		fputc(c, mem);
	int st = pclose(p);
	fclose(mem);
	*out = buf;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Finds the CSV row of scenario at acceptance accept; returns its fields. */
static int csv_row(const char *csv, const char *prefix, char fields[][32], int max)
{
	const char *line = strstr(csv, prefix);
	int n = 0;
	if (!line)
		return 0;
	while (n < max && *line && *line != '\n') {
		int k = 0;
		while (*line && *line != ',' && *line != '\n' && k < 31)
			fields[n][k++] = *line++;
		fields[n++][k] = '\0';
		if (*line == ',')
			line++;
	}
	return n;
}

static void test_cli__estimate_csv_reproduces_the_seed(void **state)
{
	(void)state;
	char *out, f[32][32];
	assert_int_equal(ddt(&out, "estimate --scenario seed-b8-sglang --format csv"), 0);
	assert_memory_equal(out, "scenario,target,pipeline,block,budget,concurrency,M,accept,moe_ms,"
				 "nonmoe_ms,step_ms,tok_s",
			    strlen("scenario,target,pipeline,block,budget,concurrency,M,accept,"
				   "moe_ms,nonmoe_ms,step_ms,tok_s"));
	assert_true(csv_row(out, "seed-b8-sglang,", f, 32) >= 12);
	assert_true(atof(f[10]) > 14.5 * 0.99 && atof(f[10]) < 14.5 * 1.01);
	assert_true(atof(f[11]) > 303 * 0.99 && atof(f[11]) < 303 * 1.01);
	free(out);
	assert_int_equal(ddt(&out, "estimate --scenario seed-b8-native --format csv"), 0);
	assert_true(csv_row(out, "seed-b8-native,", f, 32) >= 12);
	assert_true(atof(f[11]) > 460 * 0.99 && atof(f[11]) < 460 * 1.01);
	free(out);
}

static void test_cli__estimate_adhoc_and_set(void **state)
{
	(void)state;
	char *out, f[32][32];
	assert_int_equal(ddt(&out, "estimate --target b300 --pipeline native --block 16 --budget 32 "
				   "--accept 12,14,16 --estimator seed --format csv --set native_cut=0.4"),
			 0);
	assert_true(csv_row(out, "adhoc,b300,native,16,32,1,33,14,", f, 32) >= 12);
	assert_true(atof(f[10]) > 14.7 * 0.99 && atof(f[10]) < 14.7 * 1.01);
	free(out);
	/* a lower cut leaves more non-MoE time: slower */
	assert_int_equal(ddt(&out, "estimate --scenario seed-b8-native --set native_cut=0.2 --format csv"), 0);
	assert_true(csv_row(out, "seed-b8-native,", f, 32) >= 12);
	assert_true(atof(f[11]) < 440);
	free(out);
}

static void test_cli__usage_errors_exit_2_with_one_line(void **state)
{
	(void)state;
	char *out;
	assert_int_equal(ddt(&out, "estimate --set native_cutt=0.3"), 2);
	assert_string_equal(out, "ddt estimate: --set native_cutt: no such key\n");
	free(out);
	assert_int_equal(ddt(&out, "estimate --scenario nope"), 2);
	assert_non_null(strstr(out, "no scenario 'nope'"));
	free(out);
	assert_int_equal(ddt(&out, "estimate --format xml"), 2);
	free(out);
	assert_int_equal(ddt(&out, "estimate --block 16"), 2);
	assert_non_null(strstr(out, "--accept is required"));
	free(out);
	assert_int_equal(ddt(&out, "frobnicate"), 2);
	free(out);
}

static void test_cli__bad_calibration_exits_2_naming_file_line_column(void **state)
{
	(void)state;
	char *out;
	assert_int_equal(ddt(&out, "estimate --calibration tests/fixtures/bad/nan.yaml"), 2);
	assert_non_null(strstr(out, "tests/fixtures/bad/nan.yaml:6:14: bw_tbps: must be a finite number"));
	assert_ptr_equal(strchr(out, '\n'), out + strlen(out) - 1); /* one line */
	free(out);
}

static void test_cli__check_lists_every_problem(void **state)
{
	(void)state;
	char *out;
	assert_int_equal(ddt(&out, "check"), 0);
	assert_non_null(strstr(out, "ok"));
	free(out);
	assert_int_equal(ddt(&out, "check --calibration tests/fixtures/bad/unknown_key.yaml"), 2);
	assert_non_null(strstr(out, "6:5: unknown key 'bw_tbsp'"));
	assert_non_null(strstr(out, "missing section 'model'"));
	assert_non_null(strstr(out, "missing section 'assumptions'"));
	free(out);
}

static void test_cli__every_command_has_help(void **state)
{
	(void)state;
	const char *cmds[] = {"estimate", "check", "nightly"};
	char *out, args[64];
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		snprintf(args, sizeof args, "%s --help", cmds[i]);
		assert_int_equal(ddt(&out, args), 0);
		assert_non_null(strstr(out, "usage: ddt"));
		free(out);
	}
	assert_int_equal(ddt(&out, "--help"), 0);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli__estimate_csv_reproduces_the_seed),
		cmocka_unit_test(test_cli__estimate_adhoc_and_set),
		cmocka_unit_test(test_cli__usage_errors_exit_2_with_one_line),
		cmocka_unit_test(test_cli__bad_calibration_exits_2_naming_file_line_column),
		cmocka_unit_test(test_cli__check_lists_every_problem),
		cmocka_unit_test(test_cli__every_command_has_help),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
