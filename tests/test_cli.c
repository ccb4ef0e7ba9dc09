/* test_cli.c - the ddt command as users run it: options, --help, estimate, check, exit codes. */
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
#include "cmd.h"
#include "err.h"
#include "fsx.h"

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
	assert_int_equal(helpers_ddt(&out, "estimate --scenario seed-b8-sglang --format csv"), 0);
	assert_memory_equal(out, "scenario,target,pipeline,block,budget,concurrency,M,accept,moe_ms,"
				 "nonmoe_ms,step_ms,tok_s",
			    strlen("scenario,target,pipeline,block,budget,concurrency,M,accept,"
				   "moe_ms,nonmoe_ms,step_ms,tok_s"));
	assert_true(csv_row(out, "seed-b8-sglang,", f, 32) >= 12);
	assert_true(atof(f[10]) > 14.5 * 0.99 && atof(f[10]) < 14.5 * 1.01);
	assert_true(atof(f[11]) > 303 * 0.99 && atof(f[11]) < 303 * 1.01);
	free(out);
	assert_int_equal(helpers_ddt(&out, "estimate --scenario seed-b8-native --format csv"), 0);
	assert_true(csv_row(out, "seed-b8-native,", f, 32) >= 12);
	assert_true(atof(f[11]) > 460 * 0.99 && atof(f[11]) < 460 * 1.01);
	free(out);
}

static void test_cli__estimate_adhoc_and_set(void **state)
{
	(void)state;
	char *out, f[32][32];
	assert_int_equal(helpers_ddt(&out, "estimate --target b300 --pipeline native --block 16 --budget 32 "
				   "--accept 12,14,16 --estimator seed --format csv --set native_cut=0.4"),
			 0);
	assert_true(csv_row(out, "adhoc,b300,native,16,32,1,33,14,", f, 32) >= 12);
	assert_true(atof(f[10]) > 14.7 * 0.99 && atof(f[10]) < 14.7 * 1.01);
	free(out);
	/* a lower cut leaves more non-MoE time: slower */
	assert_int_equal(helpers_ddt(&out, "estimate --scenario seed-b8-native --set native_cut=0.2 --format csv"), 0);
	assert_true(csv_row(out, "seed-b8-native,", f, 32) >= 12);
	assert_true(atof(f[11]) < 440);
	free(out);
}

/* The table marks an overridden input with the value it replaced and lists
 * every --set in order. */
static void test_cli__table_labels_overrides(void **state)
{
	(void)state;
	char *out;
	assert_int_equal(helpers_ddt(&out, "estimate --scenario seed-b8-native --samples 200 "
				   "--set anchors.sglang_b8.tok_s=290 --set law.attn_lmhead=0.2"),
			 0);
	assert_non_null(strstr(out, "\n  anchors.sglang_b8.step_ms                         15.17  "
				    "overridden (was 14.52)     set on the command line; before: "));
	assert_non_null(strstr(out, "\n  law.attn_lmhead                                     0.2  "
				    "overridden (was "));
	assert_non_null(strstr(out, "\noverrides (--set, in the order given)\n"
				    "  anchors.sglang_b8.tok_s=290  (was 303)\n  law.attn_lmhead=0.2\n"));
	free(out);
}

static void test_cli__usage_errors_exit_2_with_one_line(void **state)
{
	(void)state;
	char *out;
	assert_int_equal(helpers_ddt(&out, "estimate --set native_cutt=0.3"), 2);
	assert_string_equal(out, "ddt estimate: --set: no such key 'native_cutt'; did you mean "
				 "'native_cut'?\n");
	free(out);
	assert_int_equal(helpers_ddt(&out, "estimate --scenario nope"), 2);
	assert_non_null(strstr(out, "no scenario 'nope'"));
	free(out);
	assert_int_equal(helpers_ddt(&out, "estimate --format xml"), 2);
	free(out);
	/* --samples and --seed take what the template's projection.samples and
	 * seed take (their entries' ranges) */
	assert_int_equal(helpers_ddt(&out, "estimate --samples 1000001"), 2);
	assert_non_null(strstr(out, "--samples: expected a whole number from 100 to 1000000"));
	free(out);
	assert_int_equal(helpers_ddt(&out, "estimate --seed 9007199254740994"), 2);
	assert_non_null(strstr(out, "--seed: expected a whole number from 0 to 9007199254740992"));
	free(out);
	/* a seed past an int's largest, read back from the projection it made */
	assert_int_equal(helpers_ddt(&out, "estimate --scenario b300-b8-native --samples 100 "
					   "--seed 4294967296 --brief"),
			 0);
	assert_non_null(strstr(out, "(seed 4294967296)"));
	free(out);
	assert_int_equal(helpers_ddt(&out, "estimate --block 16"), 2);
	assert_non_null(strstr(out, "--accept is required"));
	free(out);
	assert_int_equal(helpers_ddt(&out, "frobnicate"), 2);
	free(out);
}

static void test_cli__accept_is_between_1_and_the_block(void **state)
{
	(void)state;
	char *out, dir[] = "/tmp/ddt-cli-accept-XXXXXX", path[64], cmd[256], *def = NULL;
	size_t len;
	assert_int_equal(helpers_ddt(&out, "estimate --block 8 --accept 0.5"), 2);
	assert_non_null(strstr(out, "--accept: 0.5 is below 1"));
	free(out);
	assert_int_equal(helpers_ddt(&out, "estimate --block 8 --accept 9"), 2);
	assert_non_null(strstr(out, "acceptance 9 exceeds the block size 8"));
	free(out);
	assert_int_equal(helpers_ddt(&out, "estimate --block 8 --accept 1,8 --format csv"), 0);
	free(out);
	/* a template's scenario: the same floor, at its file:line:column */
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/default.yaml", dir);
	assert_int_equal(fsx_read_all("templates/default.yaml", 1 << 20, &def, &len), 0);
	assert_int_equal(fsx_write_all(path, def, len), 0);
	free(def);
	snprintf(path, sizeof path, "%s/low.yaml", dir);
	const char y[] = "name: t\nextends: default.yaml\nscenarios:\n  - name: low\n"
			 "    estimator: seed\n    target: b300\n    pipeline: native\n"
			 "    block: 8\n    budget: 8\n    concurrency: 1\n    accept: [2, 0.9]\n";
	assert_int_equal(fsx_write_all(path, y, sizeof y - 1), 0);
	snprintf(cmd, sizeof cmd, "estimate --template %s", path);
	assert_int_equal(helpers_ddt(&out, cmd), 2);
	char want[128];
	snprintf(want, sizeof want, "%s:11:17: accept: 0.9 is below 1", path);
	if (!strstr(out, want))
		fail_msg("want '%s' in: %s", want, out);
	free(out);
	assert_int_equal(fsx_rm_rf(dir), 0);
}

static void test_cli__bad_calibration_exits_2_naming_file_line_column(void **state)
{
	(void)state;
	char *out;
	assert_int_equal(helpers_ddt(&out, "estimate --calibration tests/fixtures/bad/nan.yaml"), 2);
	assert_non_null(strstr(out, "tests/fixtures/bad/nan.yaml:6:14: bw_tbps: must be a finite number"));
	assert_ptr_equal(strchr(out, '\n'), out + strlen(out) - 1); /* one line */
	free(out);
}

/* --moe-reference: a good CSV becomes the reference (its rows' MoE band in
 * the CSV output); a bad one exits 2 with one line naming its file and line. */
static void test_cli__moe_reference_csv(void **state)
{
	(void)state;
	char *out, f[32][32];
	assert_int_equal(helpers_ddt(&out, "estimate --moe-reference tests/fixtures/moe_reference/good.csv "
				   "--budget 0 --format csv"),
			 0);
	assert_non_null(strstr(out, "moe_ms_p5,moe_ms_p50,moe_ms_p95"));
	assert_true(csv_row(out, "adhoc,b300,native,8,0,1,1,1,", f, 32) >= 12);
	free(out);
	assert_int_equal(helpers_ddt(&out, "estimate --moe-reference tests/fixtures/moe_reference/two_gpus.csv"),
			 2);
	assert_string_equal(out, "ddt estimate: tests/fixtures/moe_reference/two_gpus.csv:4: one GPU "
				 "per reference curve: 'b300' after 'h200'\n");
	free(out);
}

static void test_cli__check_lists_every_problem(void **state)
{
	(void)state;
	char *out;
	assert_int_equal(helpers_ddt(&out, "check"), 0);
	assert_non_null(strstr(out, "ok"));
	free(out);
	assert_int_equal(helpers_ddt(&out, "check --calibration tests/fixtures/bad/unknown_key.yaml"), 2);
	assert_non_null(strstr(out, "6:5: unknown key 'bw_tbsp'"));
	assert_non_null(strstr(out, "missing section 'model'"));
	assert_non_null(strstr(out, "missing section 'assumptions'"));
	free(out);
}

/* True when every line of text fits 80 columns. */
static int fits_80_columns(const char *text)
{
	for (const char *t = text; *t;) {
		size_t k = strcspn(t, "\n");
		if (k > 80)
			return 0;
		t += k + (t[k] == '\n');
	}
	return 1;
}

/* ddt links no CUDA library (the backend is opened at run time, when a
 * device is there): ldd of the binary names none of them. */
static void test_cli__ddt_links_no_cuda_library(void **state)
{
	(void)state;
	const char *bin = helpers_bin();
	char cmd[4200], line[512];
	int lines = 0;
	snprintf(cmd, sizeof cmd, "ldd %s 2>&1", bin);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof line, p)) {
		lines++;
		if (strstr(line, "libcuda") || strstr(line, "libcublas") || strstr(line, "libnccl"))
			fail_msg("ddt links a CUDA library: %s", line);
	}
	assert_int_equal(pclose(p), 0);
	assert_true(lines > 1); /* ldd did list libraries (libc at least) */
}

/* `ddt NAME --help` exits 0 with a usage line that fits 80 columns and
 * names every option of spec (NULL: only the first two). */
static void assert_help(const char *name, const struct cli_spec *spec)
{
	char *out, args[96], word[80];
	snprintf(args, sizeof args, "%s --help", name);
	assert_int_equal(helpers_ddt(&out, args), 0);
	assert_non_null(strstr(out, "usage: ddt"));
	assert_true(fits_80_columns(out));
	for (const struct cli_opt *o = spec ? spec->opts : NULL; o && o->kind != CLI_END; o++) {
		snprintf(word, sizeof word, "--%s", o->long_name);
		if (!strstr(out, word))
			fail_msg("ddt %s --help does not mention %s", name, word);
		snprintf(word, sizeof word, "-%c, ", o->short_name);
		if (o->short_name && !strstr(out, word))
			fail_msg("ddt %s --help does not mention %s", name, word);
	}
	free(out);
}

static void test_cli__every_command_answers_help(void **state)
{
	(void)state;
	char *out;
	assert_int_equal(helpers_ddt(&out, "--help"), 0);
	for (size_t i = 0; i < cmd_count; i++) {
		assert_non_null(strstr(out, cmd_list[i].name));
		assert_help(cmd_list[i].name, NULL);
		for (const struct cli_spec *const *s = cmd_list[i].specs; *s; s++)
			assert_help(!strcmp((*s)->name, "nightly") ? "nightly" : (*s)->name, *s);
	}
	free(out);
	assert_help("nightly --slurm", &cmd_fleet_submit_spec);
}

/* ---------------------------------------------------------------- the tables */

struct t_args {
	struct paths paths;
	int flag, n;
	double whole, num;
	const char *word, *str;
	char buf[8];
	struct cli_list list;
};

static int t_upper(void *field, const char *arg)
{
	if (arg[0] < 'A' || arg[0] > 'Z')
		return err_set(DDT_EINPUT, "--call: '%s' is not upper case", arg);
	*(const char **)field = arg;
	return 0;
}

typedef struct t_args T;
static const struct cli_opt t_opts[] = {
	CLI_OPT_FLAG(T, flag, 'f', "flag", "a flag"),
	CLI_OPT_INT(T, n, "n", "N", 1, 10, "a whole number from 1 to 10"),
	CLI_OPT_WHOLE(T, whole, "whole", "W", 0, 1e12, "a large whole number"),
	CLI_OPT_NUM(T, num, "num", "X", 0.5, 2, "a number from 0.5 to 2"),
	CLI_OPT_CHOICE(T, word, "word", "W", "one|two", "one or two"),
	CLI_OPT_STR(T, str, 's', "str", "S", "anything"),
	CLI_OPT_BUF(T, buf, "buf", "B", "at most 7 characters"),
	CLI_OPT_LIST(T, list, "item", "I", "repeatable"),
	CLI_OPT_CALL(T, str, "call", "C", t_upper, "upper case"),
	CLI_OPT_PATHS(T, paths),
	CLI_OPT_END,
};
static const struct cli_spec t_spec = {.name = "test", .usage = "test", .about = "A test.",
				       .opts = t_opts, .takes_args = 1};

/* cli_parse of the words of line into a (fresh); returns its result. */
static int parse_line(struct t_args *a, char *line, int *first)
{
	char *argv[32], *save = NULL;
	int argc = 0;
	argv[argc++] = "test";
	for (char *w = strtok_r(line, " ", &save); w && argc < 31; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	memset(a, 0, sizeof *a);
	paths_init(&a->paths, "default");
	return cli_parse(&t_spec, a, argc, argv, first);
}

static void test_cli__options_fill_their_fields(void **state)
{
	(void)state;
	struct t_args a;
	char line[] = "-f --n 7 --whole 1e9 --num 0.75 --word two -s x --buf 1234567 --item a POS --item b "
		      "--template cpu --runs /r --calibration=/c";
	int first;
	assert_int_equal(parse_line(&a, line, &first), -1);
	assert_int_equal(a.flag, 1);
	assert_int_equal(a.n, 7);
	assert_true(a.whole == 1e9);
	assert_true(a.num == 0.75);
	assert_string_equal(a.word, "two");
	assert_string_equal(a.str, "x");
	assert_string_equal(a.buf, "1234567");
	assert_int_equal(a.list.n, 2);
	assert_string_equal(a.list.v[1], "b");
	assert_true(a.paths.template_given);
	assert_non_null(strstr(a.paths.template_path, "/templates/cpu.yaml"));
	assert_string_equal(a.paths.runs, "/r");
	assert_string_equal(a.paths.calibration, "/c");
	(void)first;
}

static void test_cli__bad_values_are_usage_errors(void **state)
{
	(void)state;
	const char *bad[] = {"--n 11",         "--n 1.5",      "--n x",  "--word three", "--num 2.5",
			     "--buf 12345678", "--call lower", "--nope", "--n",          "-z"};
	struct t_args a;
	int first;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char line[64];
		snprintf(line, sizeof line, "%s", bad[i]);
		if (parse_line(&a, line, &first) != 2)
			fail_msg("'%s' was accepted", bad[i]);
	}
	char upper[] = "--call Yes", abbrev[] = "--wh 3";
	assert_int_equal(parse_line(&a, upper, &first), -1);
	assert_string_equal(a.str, "Yes");
	assert_int_equal(parse_line(&a, abbrev, &first), -1); /* getopt_long's unique prefixes */
	assert_true(a.whole == 3);
}

static void test_cli__positional_arguments_follow_the_options(void **state)
{
	(void)state;
	struct t_args a;
	char line[] = "A --flag B";
	int first;
	assert_int_equal(parse_line(&a, line, &first), -1);
	assert_int_equal(first, 2); /* argv permuted: test --flag A B */
	assert_int_equal(a.flag, 1);
	char *out;
	assert_int_equal(helpers_ddt(&out, "check extra"), 2); /* check takes none */
	assert_non_null(strstr(out, "unexpected argument 'extra'"));
	free(out);
}


/* ---------------------------------------------------------------- options from YAML keys */

/* A YAML mapping's struct and table (yschema.h), whose entries options take. */
struct t_conf {
	int width, count;
	double rate, share;
	int mode;
	char tag[8], how[8];
	uint64_t big; /* a whole number to 2^53 */
	int blob;     /* read by its own reader, no range */
};
static const struct yschema_name t_modes[] = {{"fast", 0}, {"slow", 1}, {NULL, 0}};
static const struct yschema_name t_hows[] = {{"up", 0}, {"down", 0}, {NULL, 0}};
static const struct yschema_range t_widths = {1, 64, 0, 0, "within [1, 64]"};
static const struct yschema_range t_pct = {0, 100, 1, 0, "within (0, 100]"};
static const struct yschema_field t_conf_fields[] = {
	YS_FIELD(struct t_conf, width, YS_INT, Y_POSITIVE, .range = &t_widths, .help = "the width"),
	YS_FIELD(struct t_conf, count, YS_INT, Y_NONNEG, .help = "how many"),
	YS_FIELD(struct t_conf, rate, YS_NUM, Y_POSITIVE, .help = "the rate"),
	YS_PCT(struct t_conf, "share_pct", share, 0, .range = &t_pct, .help = "the share"),
	YS_FIELD(struct t_conf, mode, YS_ENUM, 0, .names = t_modes, .help = "how it runs"),
	YS_FIELD(struct t_conf, tag, YS_STR, 0, .help = "a tag"),
	YS_FIELD(struct t_conf, how, YS_STR, YS_OMIT, .names = t_hows, .help = "which way"),
	YS_FIELD(struct t_conf, big, YS_U64, 0, .help = "a big whole number"),
	YS_FIELD(struct t_conf, blob, YS_CUSTOM, 0, .help = "read by hand"),
};
static const struct yschema t_conf_schema = YS_TABLE("conf", t_conf_fields, 0);

struct k_args {
	int width;
	double count, rate, share, big, blob;
	const char *mode;
	char tag[8], how[8], small[4];
	const char *label;
};

typedef struct k_args K;
static const struct cli_opt k_opts[] = {
	CLI_OPT_KEY(K, width, "width", "N", &t_conf_schema, "width", NULL),
	CLI_OPT_KEY(K, count, "count", "N", &t_conf_schema, "count", NULL),
	CLI_OPT_KEY(K, rate, "rate", "R", &t_conf_schema, "rate", "the option's own words"),
	CLI_OPT_KEY(K, share, "share", "P", &t_conf_schema, "share_pct", NULL),
	CLI_OPT_KEY(K, mode, "mode", "M", &t_conf_schema, "mode", NULL),
	CLI_OPT_KEY(K, tag, "tag", "T", &t_conf_schema, "tag", NULL),
	CLI_OPT_KEY(K, how, "how", "H", &t_conf_schema, "how", NULL),
	CLI_OPT_KEY(K, label, "label", "L", &t_conf_schema, "tag", "a label"),
	CLI_OPT_KEY(K, big, "big", "N", &t_conf_schema, "big", NULL),
	CLI_OPT_END,
};
static const struct cli_spec k_spec = {.name = "test", .usage = "test", .about = "A test.",
				       .opts = k_opts};

/* cli_parse of "test LINE" by spec into a (fresh), what it printed on
 * stderr into err[len]; returns its result. */
static int parse_key_line(const struct cli_spec *spec, struct k_args *a, const char *line,
			  char *err, size_t len)
{
	char words[256], *argv[32], *save = NULL;
	int argc = 0, first, rc, saved = dup(STDERR_FILENO);
	FILE *tmp = tmpfile();
	assert_non_null(tmp);
	snprintf(words, sizeof words, "%s", line);
	argv[argc++] = "test";
	for (char *w = strtok_r(words, " ", &save); w && argc < 31; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	memset(a, 0, sizeof *a);
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	rc = cli_parse(spec, a, argc, argv, &first);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	size_t n = fread(err, 1, len - 1, tmp);
	err[n] = '\0';
	fclose(tmp);
	return rc;
}

/* An option declared from a YAML key takes what the key takes: an int and a
 * double within the entry's flags and range, a percentage stored as the
 * struct's fraction, a word among the entry's names. */
static void test_cli__key_options_take_what_their_entry_takes(void **state)
{
	(void)state;
	struct k_args a;
	char err[512];
	assert_int_equal(parse_key_line(&k_spec, &a, "--width 64 --count 0 --rate 0.25 --share 100 "
						     "--mode slow --tag abcdefg --how down --label x",
					err, sizeof err), -1);
	assert_int_equal(a.width, 64);
	assert_true(a.count == 0);
	assert_true(a.rate == 0.25);
	assert_true(a.share == 1.0); /* the file's 100 % */
	assert_string_equal(a.mode, "slow");
	assert_string_equal(a.tag, "abcdefg");
	assert_string_equal(a.how, "down");
	assert_string_equal(a.label, "x");
	assert_string_equal(err, "");
	assert_int_equal(parse_key_line(&k_spec, &a, "--width 1 --share 0.5 --count 2147483647 "
						     "--big 9007199254740992",
					err, sizeof err), -1);
	assert_true(a.big == 9007199254740992.0); /* a YS_U64: a double's whole numbers */
	assert_int_equal(a.width, 1);
	assert_true(a.share == 0.005);
	assert_true(a.count == 2147483647.0);
}

/* What an entry refuses, the option refuses with one line naming the
 * accepted values as the entry describes them. */
static void test_cli__key_options_refuse_what_their_entry_refuses(void **state)
{
	(void)state;
	static const char *const bad[][2] = {
		{"--width 0", "--width: expected a whole number from 1 to 64, got '0'"},
		{"--width 65", "--width: expected a whole number from 1 to 64, got '65'"},
		{"--width 1.5", "--width: expected a whole number from 1 to 64, got '1.5'"},
		{"--count -1", "--count: expected a whole number from 0 to 2147483647, got '-1'"},
		{"--count 2.5", "--count: expected a whole number from 0 to 2147483647, got '2.5'"},
		{"--rate 0", "--rate: expected a number > 0, got '0'"},
		{"--rate x", "--rate: expected a number > 0, got 'x'"},
		{"--share 0", "--share: expected a number > 0 and <= 100, got '0'"},
		{"--share 100.5", "--share: expected a number > 0 and <= 100, got '100.5'"},
		{"--mode medium", "--mode: expected fast or slow, got 'medium'"},
		{"--tag abcdefgh", "--tag: too long (at most 7 characters)"},
		{"--how sideways", "--how: expected up or down, got 'sideways'"},
		{"--label abcdefgh", "--label: too long (at most 7 characters)"},
		{"--big 1.5", "--big: expected a whole number from 0 to 9007199254740992, got '1.5'"},
		{"--big 9007199254740994",
		 "--big: expected a whole number from 0 to 9007199254740992, got '9007199254740994'"},
	};
	struct k_args a;
	char err[512], want[256];
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_int_equal(parse_key_line(&k_spec, &a, bad[i][0], err, sizeof err), 2);
		snprintf(want, sizeof want, "ddt test: %s (see 'ddt test --help')\n", bad[i][1]);
		assert_string_equal(err, want);
	}
}

/* --help gives an option its own words, else its entry's help. */
static void test_cli__key_options_help_is_the_entry_s(void **state)
{
	(void)state;
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	assert_non_null(fp);
	cli_help(&k_spec, fp);
	fclose(fp);
	assert_non_null(strstr(text, "  --width N           the width\n"));
	assert_non_null(strstr(text, "  --share P           the share\n"));
	assert_non_null(strstr(text, "  --rate R            the option's own words\n"));
	assert_non_null(strstr(text, "  --how H             which way\n"));
	assert_null(strstr(text, "the rate"));
	free(text);
}

/* A key its table lacks, or an entry that does not fit the field, is an
 * internal error before any argument is read; every command's table fits. */
static void test_cli__key_options_are_checked(void **state)
{
	(void)state;
	static const struct cli_opt no_key[] = {
		CLI_OPT_KEY(K, width, "width", "N", &t_conf_schema, "wide", NULL),
		CLI_OPT_END,
	};
	static const struct cli_opt misfit[] = {
		CLI_OPT_KEY(K, width, "width", "N", &t_conf_schema, "rate", NULL),
		CLI_OPT_END,
	};
	static const struct cli_opt no_names[] = {
		CLI_OPT_KEY(K, mode, "mode", "M", &t_conf_schema, "width", NULL),
		CLI_OPT_END,
	};
	static const struct cli_opt no_range[] = {
		CLI_OPT_KEY(K, blob, "blob", "B", &t_conf_schema, "blob", NULL),
		CLI_OPT_END,
	};
	static const struct cli_opt too_small[] = {
		CLI_OPT_KEY(K, small, "small", "S", &t_conf_schema, "tag", NULL),
		CLI_OPT_END,
	};
	struct cli_spec bad = k_spec;
	struct k_args a;
	char err[512];

	bad.opts = no_key;
	assert_int_equal(cli_check(&bad), DDT_EGENERIC);
	assert_string_equal(err_msg(), "--width: conf has no key 'wide'");
	assert_int_equal(parse_key_line(&bad, &a, "--width 3", err, sizeof err), 1);
	assert_string_equal(err, "ddt test: --width: conf has no key 'wide'\n");
	assert_int_equal(a.width, 0);
	bad.opts = misfit;
	assert_int_equal(cli_check(&bad), DDT_EGENERIC);
	assert_string_equal(err_msg(), "--width: conf.rate: an int option needs a YS_INT entry");
	bad.opts = no_names;
	assert_int_equal(cli_check(&bad), DDT_EGENERIC);
	assert_string_equal(err_msg(), "--mode: conf.width: a text option needs a YS_STR entry or names");
	bad.opts = no_range; /* a YS_CUSTOM entry is no number, range or not */
	assert_int_equal(cli_check(&bad), DDT_EGENERIC);
	assert_string_equal(err_msg(), "--blob: conf.blob: a double option needs a number entry");
	bad.opts = too_small;
	assert_int_equal(cli_check(&bad), DDT_EGENERIC);
	assert_string_equal(err_msg(),
			    "--small: conf.tag: a char array option needs a YS_STR entry of its size");

	assert_int_equal(cli_check(&k_spec), 0);
	for (size_t i = 0; i < cmd_count; i++)
		for (const struct cli_spec *const *s = cmd_list[i].specs; *s; s++)
			if (cli_check(*s))
				fail_msg("ddt %s: %s", (*s)->name, err_msg());
}

/* Compares out with a docs page's block: each line as written, "  ..." for
 * any lines up to the next one given (or to the end). Returns NULL, or the
 * first line of the block not found. */
static const char *block_mismatch(const char *block, const char *out)
{
	static char want[1024];
	const char *b = block, *o = out;
	int skipping = 0;
	while (*b) {
		size_t k = strcspn(b, "\n");
		snprintf(want, sizeof want, "%.*s", (int)k, b);
		b += k + (b[k] == '\n');
		if (!strcmp(want, "  ...")) {
			skipping = 1;
			continue;
		}
		for (;;) {
			size_t n = strcspn(o, "\n");
			if (!*o)
				return want;
			int same = n == strlen(want) && !strncmp(o, want, n);
			o += n + (o[n] == '\n');
			if (same)
				break;
			if (!skipping)
				return want;
		}
		skipping = 0;
	}
	return skipping || !*o ? NULL : "(the block ends before the output)";
}

/* The estimate example of docs/projection.md (`ddt help projection`) runs
 * as shown: its command's output holds the block's lines in order. */
static void test_cli__docs_estimate_example_matches_the_output(void **state)
{
	(void)state;
	const char *home = getenv("DDT_HOME"), *tag = "```sh\n$ build/ddt ";
	char path[4096], *readme = NULL, *out;
	size_t len;
	snprintf(path, sizeof path, "%s/docs/projection.md", home && *home ? home : ".");
	assert_int_equal(fsx_read_all(path, 1 << 20, &readme, &len), 0);
	char *start = strstr(readme, tag);
	assert_non_null(start);
	char *cmd = start + strlen(tag), *eol = strchr(cmd, '\n'), *end = strstr(eol, "\n```");
	assert_non_null(end);
	*eol = '\0';
	end[1] = '\0';
	assert_non_null(strstr(cmd, "estimate"));
	assert_int_equal(helpers_ddt(&out, cmd), 0);
	const char *bad = block_mismatch(eol + 1, out);
	if (bad)
		fail_msg("docs/projection.md's example of 'ddt %s' differs from its output at:\n%s",
			 cmd, bad);
	free(out);
	free(readme);
}

/* A temporary file's path under $TMPDIR. */
static void tmp_path(char *buf, size_t len, const char *name)
{
	const char *t = getenv("TMPDIR");
	snprintf(buf, len, "%s/ddt-test-cli-%d-%s", t && *t ? t : "/tmp", (int)getpid(), name);
}

/* Writes a recorded estimate to a temporary file named name (its path into
 * path) and checks that --replay of it prints the same bytes. */
static void assert_replays(const char *record, const char *name, char *path, size_t len)
{
	char cmd[4200], *again;
	tmp_path(path, len, name);
	assert_int_equal(fsx_write_all(path, record, strlen(record)), 0);
	snprintf(cmd, sizeof cmd, "estimate --replay %s", path);
	assert_int_equal(helpers_ddt(&again, cmd), 0);
	assert_string_equal(again, record);
	free(again);
}

/* --grid and --sensitivity survive --format csv and yaml, each section with
 * its own header; both record the calibration hash and every override; and
 * --replay of either makes the same bytes again. */
static void test_cli__csv_and_yaml_carry_grid_tornado_and_replay(void **state)
{
	(void)state;
	char *csv, *yaml, *again, path[4096], cmd[4200];
	const char *args = "estimate --scenario seed-b16-native --accept 10,12 --set native_cut=0.3 "
			   "--set law.draft=0.1 --set allreduce.b300.step_ms_at_m9=0.5 --samples 500 "
			   "--grid --sensitivity";
	snprintf(cmd, sizeof cmd, "%s --format csv", args);
	assert_int_equal(helpers_ddt(&csv, cmd), 0);
	assert_non_null(strstr(csv, "\n\ntornado_scenario,accept,tok_s_point,assumption,"));
	assert_non_null(strstr(csv, "\n\ngrid_target,concurrency,budget,M,accept,"));
	assert_non_null(strstr(csv, "\ngb300,1,"));
	assert_non_null(strstr(csv, "\ncalibration_hash,fnv1a64:"));
	assert_non_null(strstr(csv, "\n\noverride,value,was\nnative_cut,0.3,0.4\nlaw.draft,0.1,\n"));
	/* what the table prints besides: notes, the fit, the backtest, the inputs */
	assert_non_null(strstr(csv, "\n\nnote\n\"weighting: "));
	assert_non_null(strstr(csv, "\n\nfit_param,value,se,held,unit\n"));
	assert_non_null(strstr(csv, "\n\nbacktest,measured_ms,predicted_ms,"));
	assert_non_null(strstr(csv, "\n\ninput,value,basis,was,source\n"));
	assert_non_null(strstr(csv, "\nnative_cut,0.3,overridden,0.4,"));
	assert_non_null(strstr(csv, "\nallreduce.b300.step_ms_at_m9,0.5,overridden,0.768"));
	assert_replays(csv, "replay.csv", path, sizeof path);
	unlink(path);
	snprintf(cmd, sizeof cmd, "%s --format yaml", args);
	assert_int_equal(helpers_ddt(&yaml, cmd), 0);
	assert_non_null(strstr(yaml, "\ntornado:\n"));
	assert_non_null(strstr(yaml, "\ngrid:\n"));
	assert_non_null(strstr(yaml, "  calibration_hash: \"fnv1a64:"));
	assert_non_null(strstr(yaml, "  - {key: native_cut, value: \"0.3\", was: \"0.4\"}\n"));
	assert_non_null(strstr(yaml, "\nweighting: "));
	assert_non_null(strstr(yaml, "\nfit:\n"));
	assert_non_null(strstr(yaml, "\nbacktest:\n"));
	assert_non_null(strstr(yaml, "\ninputs:\n"));
	assert_non_null(strstr(yaml, "  - {name: law.draft, value: 0.1, prov: overridden, was: "));
	assert_replays(yaml, "replay.yaml", path, sizeof path);
	snprintf(cmd, sizeof cmd, "estimate --replay %s", path);
	/* a changed input: refused, naming it */
	char *hacked = strstr(yaml, "calibration_hash: \"fnv1a64:") + 27;
	*hacked = *hacked == '0' ? '1' : '0';
	assert_int_equal(fsx_write_all(path, yaml, strlen(yaml)), 0);
	assert_int_equal(helpers_ddt(&again, cmd), 2);
	assert_non_null(strstr(again, "the calibration changed since it was written"));
	free(again);
	snprintf(cmd, sizeof cmd, "estimate --replay %s --set native_cut=0.2", path);
	assert_int_equal(helpers_ddt(&again, cmd), 2);
	free(again);
	unlink(path);
	free(csv);
	free(yaml);
}

/* --replay reads made_from by the record's table: a key it does not know
 * is refused at its line and column, a CSV value longer than its key holds
 * at its line, a missing one by name; and a record with an override
 * replays to the same bytes. */
static void test_cli__replay_reads_made_from_by_its_table(void **state)
{
	(void)state;
	char *rec, *bad, *out, path[4096], cmd[4200];
	const char *args = "estimate --scenario b300-b8-native --samples 100 --set native_cut=0.3";
	snprintf(cmd, sizeof cmd, "%s --format yaml", args);
	assert_int_equal(helpers_ddt(&rec, cmd), 0);
	assert_replays(rec, "table.yaml", path, sizeof path);
	assert_non_null(strstr(rec, "made_from:\n  calibration: "));
	bad = malloc(strlen(rec) + 32);
	assert_non_null(bad);
	sprintf(bad, "made_from:\n  extra: 1\n%s", strstr(rec, "made_from:\n") + 11);
	assert_int_equal(fsx_write_all(path, bad, strlen(bad)), 0);
	snprintf(cmd, sizeof cmd, "estimate --replay %s", path);
	assert_int_equal(helpers_ddt(&out, cmd), 2);
	assert_non_null(strstr(out, "table.yaml:2:3: unknown key 'extra'"));
	free(out);
	free(bad);
	free(rec);
	unlink(path);
	snprintf(cmd, sizeof cmd, "%s --format csv", args);
	assert_int_equal(helpers_ddt(&rec, cmd), 0);
	assert_replays(rec, "table.csv", path, sizeof path);
	char *hash = strstr(rec, "\ncalibration_hash,fnv1a64:");
	assert_non_null(hash);
	bad = malloc(strlen(rec) + 64);
	assert_non_null(bad);
	sprintf(bad, "%.*s%s%s", (int)(hash - rec), rec,
		"\ncalibration_hash,fnv1a64:0123456789abcdef0123456789abcdef0123456789",
		strchr(hash + 1, '\n'));
	assert_int_equal(fsx_write_all(path, bad, strlen(bad)), 0);
	snprintf(cmd, sizeof cmd, "estimate --replay %s", path);
	assert_int_equal(helpers_ddt(&out, cmd), 2);
	assert_non_null(strstr(out, ": calibration_hash is too long"));
	free(out);
	sprintf(bad, "%.*s%s", (int)(hash - rec), rec, strchr(hash + 1, '\n'));
	assert_int_equal(fsx_write_all(path, bad, strlen(bad)), 0);
	assert_int_equal(helpers_ddt(&out, cmd), 2);
	assert_non_null(strstr(out, "made_from has no calibration_hash"));
	free(out);
	free(bad);
	free(rec);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli__estimate_csv_reproduces_the_seed),
		cmocka_unit_test(test_cli__estimate_adhoc_and_set),
		cmocka_unit_test(test_cli__usage_errors_exit_2_with_one_line),
		cmocka_unit_test(test_cli__docs_estimate_example_matches_the_output),
		cmocka_unit_test(test_cli__table_labels_overrides),
		cmocka_unit_test(test_cli__csv_and_yaml_carry_grid_tornado_and_replay),
		cmocka_unit_test(test_cli__replay_reads_made_from_by_its_table),
		cmocka_unit_test(test_cli__accept_is_between_1_and_the_block),
		cmocka_unit_test(test_cli__bad_calibration_exits_2_naming_file_line_column),
		cmocka_unit_test(test_cli__moe_reference_csv),
		cmocka_unit_test(test_cli__check_lists_every_problem),
		cmocka_unit_test(test_cli__every_command_answers_help),
		cmocka_unit_test(test_cli__ddt_links_no_cuda_library),
		cmocka_unit_test(test_cli__options_fill_their_fields),
		cmocka_unit_test(test_cli__bad_values_are_usage_errors),
		cmocka_unit_test(test_cli__positional_arguments_follow_the_options),
		cmocka_unit_test(test_cli__key_options_take_what_their_entry_takes),
		cmocka_unit_test(test_cli__key_options_refuse_what_their_entry_refuses),
		cmocka_unit_test(test_cli__key_options_help_is_the_entry_s),
		cmocka_unit_test(test_cli__key_options_are_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
