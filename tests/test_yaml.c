/* test_yaml.c - strict YAML: every bad-input class gives its message at its position;
 * every source of the calibration and templates cites calibration/SOURCES.md,
 * whose entries read back with their ids and public addresses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "calibrate.h"
#include "fit.h"
#include "err.h"
#include "fsx.h"
#include "model.h"
#include "sources.h"
#include "project.h"
#include "project_schema.h"
#include "ydoc.h"
#include "yschema.h"

#define BAD_DIR "tests/fixtures/bad"

/* Each fixture's first line is "# expect: LINE:COL: message"; loading it as a
 * calibration must report exactly that problem (other sections are missing,
 * so "missing section" problems come too and are ignored here). */
static void test_yaml__every_bad_fixture_reports_its_message_and_position(void **state)
{
	(void)state;
	struct dirent **list;
	int n = scandir(BAD_DIR, &list, NULL, alphasort), checked = 0, wrong = 0;
	assert_true(n > 0);
	for (int i = 0; i < n; i++) {
		char *path = fsx_join(BAD_DIR, list[i]->d_name), *text = NULL, want[512];
		struct ydiag diag = {0};
		struct calib cal;
		struct calibration cal_d;
		int found = 0;

		if (!strstr(list[i]->d_name, ".yaml"))
			goto next;
		assert_int_equal(fsx_read_all(path, 1 << 20, &text, NULL), 0);
		assert_int_equal(sscanf(text, "# expect: %511[^\n]", want), 1);
		assert_int_equal(calibrate_load(&cal, &cal_d, path, NULL, &diag), DDT_EINPUT);
		for (size_t k = 0; k < diag.n; k++) {
			const char *msg = diag.msgs[k] + strlen(path) + 1; /* after "path:" */
			found |= !strcmp(msg, want);
		}
		if (!found) {
			fprintf(stderr, "%s: wanted '%s', got:\n", path, want);
			ydiag_print(&diag, stderr);
		}
		wrong += !found;
		checked++;
		calib_free(&cal);
		ydiag_free(&diag);
	next:
		free(text);
		free(path);
		free(list[i]);
	}
	free(list);
	assert_int_equal(wrong, 0);
	assert_true(checked >= 12);
}

/* A figure the model refuses once the calibration has loaded (an anchor's
 * step shorter than the MoE and all-reduce time the model gives it) is blamed
 * on the figure's own file:line:column, not on the calibration folder. */
static void test_yaml__a_figure_the_model_refuses_names_its_line(void **state)
{
	(void)state;
	char dir[] = "/tmp/ddt-yaml-XXXXXX", *text = NULL, *at, want[256];
	static const char *const files[] = {"anchors.yaml", "assumptions.yaml", "gpus.yaml",
					    "kimi_k2.yaml", "measured.yaml", "transfer.yaml"};
	struct ydiag diag = {0};
	struct calib cal;
	struct calibration cal_d;
	struct model m;
	size_t len;

	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		char *src = fsx_join("calibration", files[i]), *dst = fsx_join(dir, files[i]);
		assert_int_equal(fsx_read_all(src, 1 << 20, &text, &len), 0);
		if (!strcmp(files[i], "anchors.yaml")) {
			/* "    tok_s: 303" -> "    tok_s: 303000" (0.0145 ms a step) */
			assert_non_null(at = strstr(text, "    tok_s: 303\n"));
			char *t2 = NULL;
			assert_true(asprintf(&t2, "%.*s    tok_s: 303000\n%s", (int)(at - text), text,
					     at + strlen("    tok_s: 303\n")) > 0);
			int line = 1;
			for (const char *p = text; p < at; p++)
				line += *p == '\n';
			snprintf(want, sizeof want, "%s:%d:12: anchor sglang_b8: its step", dst, line);
			free(text);
			text = t2;
			len = strlen(t2);
		}
		assert_int_equal(fsx_write_all(dst, text, len), 0);
		free(text);
		free(src);
		free(dst);
	}
	assert_int_equal(calibrate_load(&cal, &cal_d, dir, NULL, &diag), 0);
	assert_int_equal(model_prepare(&m, &cal, &cal_d, NULL), DDT_EINPUT);
	if (strncmp(err_msg(), want, strlen(want)))
		fail_msg("wanted '%s...', got '%s'", want, err_msg());
	calib_free(&cal);
	ydiag_free(&diag);
	fsx_rm_rf(dir);
}

static void test_yaml__first_problem_becomes_the_error_message(void **state)
{
	(void)state;
	struct ydiag diag = {0};
	struct ydoc *doc;
	const char *text = "a: 1\na: 2\n";
	assert_int_equal(ydoc_load_buf(&doc, "x.yaml", text, strlen(text), &diag), DDT_EINPUT);
	assert_string_equal(err_msg(), "x.yaml:2:1: duplicate key 'a' (first at line 1)");
	ydiag_free(&diag);
}

static void test_yaml__nesting_deeper_than_the_cap_is_refused(void **state)
{
	(void)state;
	struct ydiag diag = {0};
	struct ydoc *doc;
	char text[4 * YDOC_MAX_DEPTH + 16];
	size_t k = 0;
	for (int i = 0; i < YDOC_MAX_DEPTH + 1; i++)
		text[k++] = '[';
	for (int i = 0; i < YDOC_MAX_DEPTH + 1; i++)
		text[k++] = ']';
	text[k] = '\0';
	assert_int_equal(ydoc_load_buf(&doc, "deep.yaml", text, k, &diag), DDT_EINPUT);
	assert_non_null(strstr(diag.msgs[0], "nested too deeply"));
	ydiag_free(&diag);
}

static void test_yaml__numbers_parse_strictly(void **state)
{
	(void)state;
	double v;
	assert_int_equal(yget_parse_num("8.0", &v), 0);
	assert_true(v == 8.0);
	assert_int_equal(yget_parse_num("-1.5e3", &v), 0);
	assert_true(v == -1500);
	const char *bad[] = {"", "0x10", "1e999", "nan", "inf", ".inf", "1,5", "1.2.3", "e5", "5e"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_int_equal(yget_parse_num(bad[i], &v), -1);
}

static void test_yaml__emitter_output_reads_back(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct yout y;
	struct ydiag diag = {0};
	struct ydoc *doc;

	yout_init(&y, fp);
	yout_map(&y);
	yout_kv_str(&y, "plain", "moe_w4a16");
	yout_kv_str(&y, "tricky", "yes: \"quoted\" # not a comment\n2nd line");
	yout_kv_str(&y, "numberish", "1.5");
	yout_kv_num(&y, "num", 0.1);
	yout_key(&y, "list");
	yout_seq(&y);
	yout_map(&y);
	yout_kv_int(&y, "a", 1);
	yout_key(&y, "p");
	yout_map_flow(&y);
	yout_kv_num(&y, "M", 9);
	yout_kv_num(&y, "ctx", 4096);
	yout_end(&y);
	yout_end(&y);
	yout_str(&y, "second");
	yout_end(&y);
	yout_key(&y, "empty");
	yout_seq(&y);
	yout_end(&y);
	yout_end(&y);
	fclose(fp);

	assert_int_equal(ydoc_load_buf(&doc, "out.yaml", buf, len, &diag), 0);
	struct ydoc_node *r = doc->root;
	assert_string_equal(ydoc_get(r, "tricky")->str, "yes: \"quoted\" # not a comment\n2nd line");
	assert_false(ydoc_get(r, "numberish")->plain);
	struct ydoc_node *l = ydoc_get(r, "list");
	assert_int_equal(l->n, 2);
	assert_string_equal(ydoc_get(ydoc_get(l->items[0], "p"), "ctx")->str, "4096");
	assert_string_equal(l->items[1]->str, "second");
	assert_int_equal(ydoc_get(r, "empty")->n, 0);
	ydoc_free(doc);
	free(buf);
}


/* ---------------------------------------------------------------- schema tables */

struct sample_pair {
	double lo, hi;
};
struct sample {
	double rate, opt, nullable, frac;
	int count;
	char name[8];
	int kind, on;
	struct sample_pair pair;
};

static const struct yschema_field pair_fields[] = {
	YS_FIELD(struct sample_pair, lo, YS_NUM, Y_REQUIRED),
	YS_FIELD(struct sample_pair, hi, YS_NUM, Y_REQUIRED),
};
static const struct yschema pair_schema = YS_TABLE("pair", pair_fields, 1);
static const struct yschema_range open_unit = {0, 1, 1, 0, "within (0, 1]"};
static const struct yschema_name kinds[] = {{"low", 0}, {"high", 7}, {NULL, 0}};
static const struct yschema_field sample_fields[] = {
	YS_FIELD(struct sample, rate, YS_NUM, Y_REQUIRED | Y_POSITIVE, .unit = "GB/s",
		 .help = "a rate", .source = "datasheet"),
	YS_FIELD(struct sample, opt, YS_NUM, 0),
	YS_FIELD(struct sample, nullable, YS_NUM, Y_REQUIRED | Y_NULLABLE),
	YS_FIELD(struct sample, frac, YS_NUM, Y_REQUIRED, .range = &open_unit),
	YS_FIELD(struct sample, count, YS_INT, Y_REQUIRED | Y_NONNEG),
	YS_FIELD(struct sample, name, YS_STR, Y_REQUIRED),
	YS_FIELD(struct sample, kind, YS_ENUM, Y_REQUIRED, .names = kinds),
	YS_FIELD(struct sample, on, YS_BOOL, Y_REQUIRED),
	YS_FIELD(struct sample, pair, YS_MAP, Y_REQUIRED, .sub = &pair_schema),
};
static const struct yschema sample_schema = YS_TABLE("sample", sample_fields, 0);

/* Equal, or both NaN. */
static int same_num(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

/* obj's entries of s as a YAML mapping (malloc'd text). */
static char *schema_text(const struct yschema *s, const void *obj)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct yout y;
	yout_init(&y, fp);
	yout_map(&y);
	yschema_write_fields(&y, s, obj);
	yout_end(&y);
	fclose(fp);
	return buf;
}

/* Reads text with s into obj; returns the problems found (diag). */
static size_t schema_read_text(const struct yschema *s, const char *text, void *obj,
			       struct ydiag *diag)
{
	struct ydoc *doc;
	assert_int_equal(ydoc_load_buf(&doc, "t.yaml", text, strlen(text), diag), 0);
	struct yctx c = {"t.yaml", diag, NULL};
	int rc = yschema_read(&c, doc->root, s, obj);
	assert_int_equal(rc != 0, diag->n != 0);
	ydoc_free(doc);
	return diag->n;
}

static void test_yaml__a_schema_table_writes_what_it_reads_back(void **state)
{
	(void)state;
	struct sample cases[2] = {
		{2.5, NAN, NAN, 0.25, 3, "abc", 7, 1, {1.5, -2}},
		{1e-3, 4, 12.125, 1, 0, "", 0, 0, {0, 1e9}},
	};
	for (int i = 0; i < 2; i++) {
		struct sample back;
		struct ydiag diag = {0};
		char *text = schema_text(&sample_schema, &cases[i]);
		memset(&back, 0, sizeof back);
		back.opt = 99; /* absent on write (NaN): read back as NaN */
		assert_int_equal(schema_read_text(&sample_schema, text, &back, &diag), 0);
		assert_true(i ? strstr(text, "opt: 4") != NULL : strstr(text, "opt") == NULL);
		assert_non_null(strstr(text, i ? "nullable: 12.125" : "nullable: null"));
		assert_non_null(strstr(text, i ? "pair: {lo: 0, hi: 1e+09}" : "pair: {lo: 1.5, hi: -2}"));
		assert_non_null(strstr(text, i ? "kind: low" : "kind: high"));
		const struct sample *w = &cases[i];
		assert_true(same_num(back.rate, w->rate) && same_num(back.opt, w->opt) &&
			    same_num(back.nullable, w->nullable) && same_num(back.frac, w->frac) &&
			    same_num(back.pair.lo, w->pair.lo) && same_num(back.pair.hi, w->pair.hi));
		assert_int_equal(back.count, w->count);
		assert_string_equal(back.name, w->name);
		assert_int_equal(back.kind, w->kind);
		assert_int_equal(back.on, w->on);
		free(text);
	}
}

static void test_yaml__a_projection_row_reads_back_through_its_table(void **state)
{
	(void)state;
	struct project_row r, back;
	struct ydiag diag = {0};
	memset(&r, 0, sizeof r);
	memset(&back, 0, sizeof back);
	snprintf(r.scenario, sizeof r.scenario, "b8-native");
	snprintf(r.target, sizeof r.target, "rtx_pro_6000");
	r.pipeline = PIPE_NATIVE;
	r.block = 8, r.budget = 16, r.concurrency = 4, r.context = 4096;
	snprintf(r.context_from, sizeof r.context_from, "trace");
	r.M = 68, r.accept = 4.5, r.accept_lo = 4.25, r.accept_hi = NAN;
	snprintf(r.accept_from, sizeof r.accept_from, "typed");
	r.estimator = EST_SEED;
	r.runnable = 1;
	snprintf(r.note, sizeof r.note, "a note: with \"quotes\"");
	for (int k = 0; k < COMP_COUNT; k++)
		r.ms[k] = 0.5 * (k + 1);
	r.moe_ms = 3.75, r.nonmoe_ms = NAN;
	r.step_ms = (struct band){10.5, 9, 10.25, 12};
	r.tok_s = (struct band){381, 320, 390, NAN};
	r.moe_band = (struct band){3.75, 3.5, 3.75, 4};
	r.lean_pct = -1.5, r.lean_by_pct = 0.125, r.point_pctile = 48;
	snprintf(r.lean_by, sizeof r.lean_by, "native_cut");
	r.moe_xfer = 1;
	r.other_tok_s = 300, r.other_pctile = 2, r.extrap_pct = 0;
	r.xfer_cover_pct = 90, r.xfer_err_pct = 6.5, r.xfer_gap_pct = NAN;
	char *text = schema_text(&project_schema_row, &r);
	assert_int_equal(schema_read_text(&project_schema_row, text, &back, &diag), 0);
	assert_memory_equal(&back, &r, sizeof r);
	assert_non_null(strstr(text, "step_ms: {point: 10.5, p5: 9, p50: 10.25, p95: 12}"));
	free(text);
}

/* Each class of problem at its file:line:column, in the getters' words. */
static void test_yaml__a_schema_table_names_each_problem_at_its_place(void **state)
{
	(void)state;
	static const char text[] = "rate: -1\n"
				   "frac: 0\n"
				   "count: many\n"
				   "name: abcdefghij\n"
				   "kind: middle\n"
				   "on: yes\n"
				   "pair: {lo: 1}\n"
				   "colour: red\n";
	const char *want[] = {
		"t.yaml:1:7: rate must be greater than zero, got -1",
		"t.yaml:1:1: missing required key 'nullable'",
		"t.yaml:2:7: frac must be within (0, 1], got 0",
		"t.yaml:3:8: count: expected a number, got 'many'",
		"t.yaml:4:7: name: longer than 7 characters",
		"t.yaml:5:7: kind: expected low or high, got 'middle'",
		"t.yaml:6:5: on: expected true or false, got 'yes'",
		"t.yaml:7:7: missing required key 'hi'",
		"t.yaml:8:1: unknown key 'colour'",
	};
	struct sample back = {0};
	struct ydiag diag = {0};
	size_t n = schema_read_text(&sample_schema, text, &back, &diag);
	if (n != sizeof want / sizeof *want)
		for (size_t i = 0; i < n; i++)
			printf("  %s\n", diag.msgs[i]);
	assert_int_equal(n, sizeof want / sizeof *want);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(diag.msgs[i], want[i]);
	ydiag_free(&diag);
}

/* A whole number's range is read as a number's: a value outside it is a
 * problem at the value, an absent key keeps the struct's value. */
struct sized {
	int n, m;
};
static const struct yschema_range one_to_ten = {1, 10, 0, 0, "within [1, 10]"};
static const struct yschema_field sized_fields[] = {
	YS_FIELD(struct sized, n, YS_INT, 0, .range = &one_to_ten),
	YS_FIELD(struct sized, m, YS_INT, Y_POSITIVE, .range = &one_to_ten),
};
static const struct yschema sized_schema = YS_TABLE("sized", sized_fields, 0);

static void test_yaml__a_whole_number_keeps_its_range(void **state)
{
	(void)state;
	struct sized z = {0, 7};
	struct ydiag diag = {0};
	assert_int_equal(schema_read_text(&sized_schema, "n: 10\n", &z, &diag), 0);
	assert_int_equal(z.n, 10);
	assert_int_equal(z.m, 7);
	assert_int_equal(schema_read_text(&sized_schema, "n: 11\nm: 0\n", &z, &diag), 2);
	assert_string_equal(diag.msgs[0], "t.yaml:1:4: n must be within [1, 10], got 11");
	assert_string_equal(diag.msgs[1], "t.yaml:2:4: m must be greater than zero, got 0");
	ydiag_free(&diag);
}

/* Overrides keep the reader's checks; the keys listed are the settable
 * numbers; what an entry takes reads from its table. */
static int key_line_fn(void *ctx, const char *key, const char *value)
{
	fprintf(ctx, "%s=%s\n", key, value);
	return 0;
}

static void test_yaml__a_schema_table_sets_and_lists_its_numbers(void **state)
{
	(void)state;
	struct sample s = {2.5, NAN, 1, 0.5, 3, "x", 0, 0, {0, 0}};
	assert_int_equal(yschema_set_num(&sample_schema, &s, "rate", 0, "--set rate"), DDT_EINPUT);
	assert_string_equal(err_msg(), "--set rate: must be greater than zero");
	assert_int_equal(yschema_set_num(&sample_schema, &s, "frac", 1.5, "--set frac"), DDT_EINPUT);
	assert_string_equal(err_msg(), "--set frac: must be within (0, 1]");
	assert_int_equal(yschema_set_num(&sample_schema, &s, "count", 2.5, "--set count"),
			 DDT_EINPUT);
	assert_string_equal(err_msg(), "--set count: must be a whole number");
	assert_int_equal(yschema_set_num(&sample_schema, &s, "name", 1, "x"), YSCHEMA_NOKEY);
	assert_int_equal(yschema_set_num(&sample_schema, &s, "nope", 1, "x"), YSCHEMA_NOKEY);
	assert_int_equal(yschema_set_num(&sample_schema, &s, "count", 4, "x"), 0);
	assert_int_equal(s.count, 4);
	assert_int_equal(yschema_set_num(&sample_schema, &s, "frac", 1, "x"), 0);
	assert_true(s.frac == 1);

	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	assert_int_equal(yschema_keys(&sample_schema, &s, "s", key_line_fn, fp), 0);
	fclose(fp);
	assert_string_equal(buf, "s.rate=2.5\ns.opt=\ns.nullable=1\ns.frac=1\ns.count=4\n");
	free(buf);

	char d[80];
	assert_string_equal(yschema_describe(&sample_fields[0], d, sizeof d), "number > 0, GB/s");
	assert_string_equal(yschema_describe(&sample_fields[3], d, sizeof d),
			    "number, within (0, 1]");
	assert_string_equal(yschema_describe(&sample_fields[4], d, sizeof d), "whole number >= 0");
	assert_string_equal(yschema_describe(&sample_fields[6], d, sizeof d), "low or high");
}

/* A fraction in the struct, a percentage in the file (.scale): the flags and
 * the range speak of the file's value, in its words; NaN is null when the
 * entry takes null, absent otherwise; overrides and the keys listed are in
 * the file's units. */
struct share {
	double part, gap;
};
static const struct yschema_range share_range = {0, 100, 1, 0, "within (0, 100]"};
static const struct yschema_field share_fields[] = {
	YS_PCT(struct share, "part_pct", part, Y_REQUIRED, .range = &share_range),
	YS_PCT(struct share, "gap_pct", gap, Y_REQUIRED | Y_NULLABLE | Y_NONNEG),
};
static const struct yschema share_schema = YS_TABLE("share", share_fields, 0);

static void test_yaml__a_scaled_number_is_a_percentage_in_its_file(void **state)
{
	(void)state;
	struct share s = {0.125, NAN}, back = {0, 0};
	struct ydiag diag = {0};
	char *text = schema_text(&share_schema, &s);
	assert_string_equal(text, "part_pct: 12.5\ngap_pct: null\n");
	assert_int_equal(schema_read_text(&share_schema, text, &back, &diag), 0);
	assert_true(back.part == 0.125 && isnan(back.gap));
	free(text);

	static const char bad[] = "part_pct: 150\ngap_pct: -5\n";
	assert_int_equal(schema_read_text(&share_schema, bad, &back, &diag), 2);
	assert_string_equal(diag.msgs[0], "t.yaml:1:11: part_pct must be within (0, 100], got 150");
	assert_string_equal(diag.msgs[1], "t.yaml:2:10: gap_pct must not be negative, got -5");
	ydiag_free(&diag);

	assert_int_equal(yschema_set_num(&share_schema, &s, "part_pct", 0, "--set p"), DDT_EINPUT);
	assert_string_equal(err_msg(), "--set p: must be within (0, 100]");
	assert_int_equal(yschema_set_num(&share_schema, &s, "part_pct", 40, "--set p"), 0);
	assert_true(s.part == 0.4);
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	assert_int_equal(yschema_keys(&share_schema, &s, "", key_line_fn, fp), 0);
	fclose(fp);
	assert_string_equal(buf, "part_pct=40\ngap_pct=\n");
	free(buf);
	char d[80];
	assert_string_equal(yschema_describe(&share_fields[0], d, sizeof d),
			    "number, within (0, 100], %");
}

/* A one-way table: a custom entry with no reader (or no writer) is an
 * internal error naming the key, never a crash; the other keys still go. */
static void share_gap_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	(void)f;
	yout_kv_num(y, "gap", ((const struct share *)obj)->gap);
}
static const struct yschema_field write_only_fields[] = {
	YS_PCT(struct share, "part_pct", part, Y_REQUIRED),
	YS_KEYED(struct share, "gap", gap, YS_CUSTOM, 0, .write = share_gap_write),
};
static const struct yschema write_only = YS_TABLE("write_only", write_only_fields, 0);
static const struct yschema_field read_only_fields[] = {
	YS_KEYED(struct share, "gap", gap, YS_CUSTOM, 0),
	YS_PCT(struct share, "part_pct", part, Y_REQUIRED),
};
static const struct yschema read_only = YS_TABLE("read_only", read_only_fields, 0);

static void test_yaml__a_custom_entry_without_its_function_is_an_internal_error(void **state)
{
	(void)state;
	struct share s = {0.5, 2}, back = {0, 0};
	struct ydiag diag = {0};
	char *text = schema_text(&write_only, &s);
	assert_string_equal(text, "part_pct: 50\ngap: 2\n");
	assert_int_equal(schema_read_text(&write_only, text, &back, &diag), 1);
	assert_string_equal(diag.msgs[0],
			    "t.yaml:2:6: gap: internal error: the table has no reader for this key");
	assert_true(back.part == 0.5);
	ydiag_free(&diag);
	free(text);

	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct yout y;
	yout_init(&y, fp);
	assert_int_equal(yschema_write_item(&y, &read_only, &s), DDT_EGENERIC);
	fclose(fp);
	assert_string_equal(err_msg(), "gap: internal error: the table has no writer for this key");
	assert_string_equal(buf, "part_pct: 50\n");
	free(buf);
}

/* YS_OMIT: an empty text or a NaN number is left out (even where null is
 * taken); a text with names also takes the empty text, the others theirs. */
struct later {
	char rev[8], stop[8];
	double figure;
};
static const struct yschema_name stop_names[] = {{"rsd", 0}, {"timeout", 1}, {NULL, 0}};
static const struct yschema_field later_fields[] = {
	YS_FIELD(struct later, rev, YS_STR, YS_OMIT),
	YS_FIELD(struct later, stop, YS_STR, YS_OMIT, .names = stop_names),
	YS_FIELD(struct later, figure, YS_NUM, Y_NULLABLE | YS_OMIT),
};
static const struct yschema later_schema = YS_TABLE("later", later_fields, 0);

static void test_yaml__an_omitted_entry_is_written_only_when_it_says_something(void **state)
{
	(void)state;
	struct later empty = {"", "", NAN}, full = {"abc", "timeout", 2}, back;
	struct ydiag diag = {0};
	char *text = schema_text(&later_schema, &empty);
	assert_string_equal(text, " {}\n");
	free(text);
	text = schema_text(&later_schema, &full);
	assert_string_equal(text, "rev: abc\nstop: timeout\nfigure: 2\n");
	memset(&back, 0, sizeof back);
	assert_int_equal(schema_read_text(&later_schema, text, &back, &diag), 0);
	assert_string_equal(back.rev, "abc");
	assert_string_equal(back.stop, "timeout");
	free(text);
	assert_int_equal(schema_read_text(&later_schema, "stop: \"\"\nfigure: null\n", &back,
					  &diag), 0);
	assert_string_equal(back.stop, "");
	assert_true(isnan(back.figure));
	static const char bad[] = "stop: side\nrev: abcdefghij\n";
	assert_int_equal(schema_read_text(&later_schema, bad, &back, &diag), 2);
	assert_string_equal(diag.msgs[0], "t.yaml:2:6: rev: longer than 7 characters");
	assert_string_equal(diag.msgs[1], "t.yaml:1:7: stop: expected rsd or timeout, got 'side'");
	ydiag_free(&diag);
	assert_int_equal(schema_read_text(&later_schema, "stop: toolongtext\n", &back, &diag), 1);
	assert_string_equal(diag.msgs[0], "t.yaml:1:7: stop: longer than 7 characters");
	ydiag_free(&diag);
}

/* YS_LIST, YS_NUMS and YS_INTS: arrays with their count, read and written
 * by one entry each; more items than the array holds is a problem at the
 * first one too many, a bad item one at its own place. */
struct point {
	double m, ms;
};
struct curve {
	struct point pts[3];
	int npts;
	double xs[2];
	int nxs;
	int bs[4];
	int nbs;
};
static const struct yschema_field point_fields[] = {
	YS_FIELD(struct point, m, YS_NUM, Y_REQUIRED | Y_POSITIVE),
	YS_FIELD(struct point, ms, YS_NUM, Y_REQUIRED),
};
static const struct yschema point_schema = YS_TABLE("point", point_fields, 1);
static const struct yschema_range pct_range = {0, 100, 0, 0, "within [0, 100]"};
static const struct yschema_field curve_fields[] = {
	YS_LIST_OF(struct curve, "points", pts, npts, &point_schema, Y_REQUIRED),
	YS_NUMS_OF(struct curve, "xs", xs, nxs, 0, .scale = 100, .range = &pct_range),
	YS_INTS_OF(struct curve, "budgets", bs, nbs, Y_POSITIVE | YS_OMIT),
};
static const struct yschema curve_schema = YS_TABLE("curve", curve_fields, 0);

static void test_yaml__a_list_entry_reads_and_writes_its_items_and_count(void **state)
{
	(void)state;
	struct curve c = {{{1, 0.5}, {8, 2.25}}, 2, {0.25, 0.5}, 2, {0}, 0}, back;
	struct ydiag diag = {0};
	char *text = schema_text(&curve_schema, &c);
	assert_string_equal(text, "points:\n  - {m: 1, ms: 0.5}\n  - {m: 8, ms: 2.25}\n"
				  "xs: [25, 50]\n");
	memset(&back, 0, sizeof back);
	assert_int_equal(schema_read_text(&curve_schema, text, &back, &diag), 0);
	assert_int_equal(back.npts, 2);
	assert_true(back.pts[1].m == 8 && back.pts[1].ms == 2.25 && back.pts[0].ms == 0.5);
	assert_int_equal(back.nxs, 2);
	assert_true(back.xs[0] == 0.25 && back.xs[1] == 0.5);
	free(text);
	assert_int_equal(schema_read_text(&curve_schema, "points: []\nbudgets: [1, 4, 16]\n",
					  &back, &diag), 0);
	assert_int_equal(back.npts, 0);
	assert_int_equal(back.nbs, 3);
	assert_int_equal(back.bs[2], 16);
	text = schema_text(&curve_schema, &back);
	assert_string_equal(text, "points: []\nxs: [25, 50]\nbudgets: [1, 4, 16]\n");
	free(text);
}

static void test_yaml__a_list_entry_names_each_bad_item_at_its_place(void **state)
{
	(void)state;
	struct curve back;
	struct ydiag diag = {0};
	static const char bad[] = "points:\n  - {m: 0, ms: 1}\n  - 3\n"
				  "xs: [10, 150, 20]\nbudgets: [1, 2.5, 3, 4, 5]\n";
	memset(&back, 0, sizeof back);
	assert_int_equal(schema_read_text(&curve_schema, bad, &back, &diag), 4);
	assert_string_equal(diag.msgs[0], "t.yaml:2:9: m must be greater than zero, got 0");
	assert_string_equal(diag.msgs[1], "t.yaml:3:5: points: expected a mapping, got a value");
	assert_string_equal(diag.msgs[2], "t.yaml:4:15: xs: at most 2 items, got 3");
	assert_string_equal(diag.msgs[3], "t.yaml:5:25: budgets: at most 4 items, got 5");
	ydiag_free(&diag);
	assert_int_equal(schema_read_text(&curve_schema, "points: {m: 1}\nxs: [150]\n"
					  "budgets: [2.5]\n", &back, &diag), 3);
	assert_string_equal(diag.msgs[0], "t.yaml:1:9: points: expected a list, got a mapping");
	assert_string_equal(diag.msgs[1], "t.yaml:2:6: xs must be within [0, 100], got 150");
	assert_string_equal(diag.msgs[2], "t.yaml:3:11: budgets must be a whole number, got 2.5");
	ydiag_free(&diag);
	char d[64];
	assert_string_equal(yschema_describe(&curve_fields[0], d, sizeof d), "list of mappings");
	assert_string_equal(yschema_describe(&curve_fields[2], d, sizeof d),
			    "list of whole numbers");
}

/* A table's rule across keys runs once every entry read without a
 * problem, with the caller's context. */
static int pair_ordered(struct yctx *c, struct ydoc_node *map, void *obj)
{
	const struct sample_pair *p = obj;
	const double *limit = c->ctx;
	if (p->lo <= p->hi && p->hi <= *limit)
		return 0;
	ydiag_add(c->diag, c->file, map->line, map->col, "lo must not exceed hi, nor hi %g", *limit);
	return 1;
}
static const struct yschema ordered_schema = YS_TABLE_CHECKED("pair", pair_fields, 1,
							       pair_ordered);

static void test_yaml__a_table_rule_runs_after_its_entries_read_cleanly(void **state)
{
	(void)state;
	struct sample_pair p;
	struct ydiag diag = {0};
	double limit = 10;
	const char *texts[] = {"lo: 1\nhi: 2\n", "lo: 3\nhi: 2\n", "lo: 3\nhi: 20\n",
			       "lo: x\nhi: 1\n"};
	const char *want[] = {NULL, "t.yaml:1:1: lo must not exceed hi, nor hi 10",
			      "t.yaml:1:1: lo must not exceed hi, nor hi 10",
			      "t.yaml:1:5: lo: expected a number, got 'x'"};
	for (int i = 0; i < 4; i++) {
		struct ydoc *doc;
		assert_int_equal(ydoc_load_buf(&doc, "t.yaml", texts[i], strlen(texts[i]), &diag), 0);
		struct yctx c = {"t.yaml", &diag, &limit};
		assert_int_equal(yschema_read(&c, doc->root, &ordered_schema, &p) != 0, want[i] != NULL);
		assert_int_equal(diag.n, want[i] != NULL);
		if (want[i])
			assert_string_equal(diag.msgs[0], want[i]);
		ydoc_free(doc);
		ydiag_free(&diag);
	}
}

/* Texts and a mapping keyed by data: a fleet of named machines, each
 * with its GPUs and the tags it takes. */
struct machine {
	char name[8];
	double gpus;
	char tags[2][8];
	int ntags;
};
struct fleet_t {
	struct machine m[2];
	int nm;
	char names[3][6];
	int nnames;
};
static const struct yschema_name tag_names[] = {{"fast", 0}, {"slow", 0}, {NULL, 0}};
static const struct yschema_field machine_fields[] = {
	YS_FIELD(struct machine, gpus, YS_NUM, Y_REQUIRED | Y_POSITIVE | Y_INTEGER),
	YS_STRS_OF(struct machine, "tags", tags, ntags, YS_OMIT, .names = tag_names),
};
static const struct yschema machine_schema = YS_TABLE("machine", machine_fields, 1);
static const struct yschema_field fleet_fields[] = {
	YS_DICT_OF(struct fleet_t, "machines", m, nm, struct machine, name, &machine_schema,
		   Y_REQUIRED),
	YS_STRS_OF(struct fleet_t, "names", names, nnames, YS_BLOCK),
};
static const struct yschema fleet_schema = YS_TABLE("fleet", fleet_fields, 0);

static void test_yaml__texts_and_a_mapping_keyed_by_data_read_back(void **state)
{
	(void)state;
	struct fleet_t f, back;
	struct ydiag diag = {0};
	memset(&f, 0, sizeof f);
	f.nm = 2;
	snprintf(f.m[0].name, sizeof f.m[0].name, "node-a");
	f.m[0].gpus = 8;
	snprintf(f.m[0].tags[0], sizeof f.m[0].tags[0], "fast");
	f.m[0].ntags = 1;
	snprintf(f.m[1].name, sizeof f.m[1].name, "node-b");
	f.m[1].gpus = 4;
	f.nnames = 2;
	snprintf(f.names[0], sizeof f.names[0], "x");
	snprintf(f.names[1], sizeof f.names[1], "y y");
	char *text = schema_text(&fleet_schema, &f);
	assert_string_equal(text, "machines:\n  node-a: {gpus: 8, tags: [fast]}\n"
				  "  node-b: {gpus: 4}\nnames:\n  - x\n  - \"y y\"\n");
	memset(&back, 0, sizeof back);
	assert_int_equal(schema_read_text(&fleet_schema, text, &back, &diag), 0);
	assert_int_equal(back.nm, 2);
	assert_string_equal(back.m[1].name, "node-b");
	assert_true(back.m[0].gpus == 8 && back.m[1].gpus == 4);
	assert_int_equal(back.m[0].ntags, 1);
	assert_string_equal(back.m[0].tags[0], "fast");
	assert_int_equal(back.nnames, 2);
	assert_string_equal(back.names[1], "y y");
	free(text);
	static const char bad[] = "machines:\n  a: {gpus: 0, tags: [fast, quick]}\n  b: 3\n"
				  "  c: {gpus: 1}\nnames: [toolong, [x]]\n";
	memset(&back, 0, sizeof back);
	assert_int_equal(schema_read_text(&fleet_schema, bad, &back, &diag), 5);
	assert_string_equal(diag.msgs[0], "t.yaml:2:13: gpus must be greater than zero, got 0");
	assert_string_equal(diag.msgs[1], "t.yaml:2:29: tags: expected fast or slow, got 'quick'");
	assert_string_equal(diag.msgs[2], "t.yaml:3:6: b: expected a mapping, got a value");
	assert_string_equal(diag.msgs[3], "t.yaml:5:9: names: longer than 5 characters");
	assert_string_equal(diag.msgs[4], "t.yaml:5:18: names: expected a value, got a list");
	ydiag_free(&diag);
	assert_int_equal(schema_read_text(&fleet_schema, "machines:\n  a: {gpus: 1}\n  b: {gpus: 1}\n"
					  "  c: {gpus: 1}\n", &back, &diag), 1);
	assert_string_equal(diag.msgs[0], "t.yaml:4:3: machines: at most 2 items, got 3");
	ydiag_free(&diag);
	char d[64];
	assert_string_equal(yschema_describe(&fleet_fields[0], d, sizeof d), "mapping of names");
	assert_string_equal(yschema_describe(&machine_fields[1], d, sizeof d),
			    "list of fast or slow");
}

/* A list's items start as their table's start value: an absent key keeps
 * it, whatever the array held before. */
struct tagged {
	int weight;
	double at;
};
struct tagged_list {
	struct tagged t[3];
	int nt;
};
static const struct tagged tagged_start = {.weight = -1, .at = 0};
static const struct yschema_field tagged_fields[] = {
	YS_FIELD(struct tagged, weight, YS_INT, 0),
	YS_FIELD(struct tagged, at, YS_NUM, Y_REQUIRED),
};
static const struct yschema tagged_schema =
	YS_TABLE_INIT("tagged", tagged_fields, 1, &tagged_start);
static const struct yschema_field tagged_list_fields[] = {
	YS_LIST_OF(struct tagged_list, "t", t, nt, &tagged_schema, Y_REQUIRED),
};
static const struct yschema tagged_list_schema = YS_TABLE("tagged list", tagged_list_fields, 0);

static void test_yaml__a_list_item_starts_as_its_tables_start_value(void **state)
{
	(void)state;
	struct tagged_list l;
	struct ydiag diag = {0};
	memset(&l, 0x5a, sizeof l);
	assert_int_equal(schema_read_text(&tagged_list_schema, "t: [{at: 1}, {at: 2, weight: 7}]\n",
					  &l, &diag), 0);
	assert_int_equal(l.nt, 2);
	assert_int_equal(l.t[0].weight, -1);
	assert_int_equal(l.t[1].weight, 7);
	assert_true(l.t[1].at == 2);
}

/* A seed: a whole number from 0 to 2^53 in a uint64_t, written whole. */
struct seeded {
	uint64_t seed;
};
static const struct yschema_field seeded_fields[] = {
	YS_FIELD(struct seeded, seed, YS_U64, 0),
};
static const struct yschema seeded_schema = YS_TABLE("seeded", seeded_fields, 0);

static void test_yaml__a_seed_takes_a_doubles_whole_numbers(void **state)
{
	(void)state;
	struct seeded sd = {7};
	struct ydiag diag = {0};
	assert_int_equal(schema_read_text(&seeded_schema, "{}\n", &sd, &diag), 0);
	assert_true(sd.seed == 7); /* absent: kept */
	assert_int_equal(schema_read_text(&seeded_schema, "seed: 9007199254740992\n", &sd, &diag), 0);
	assert_true(sd.seed == 9007199254740992ull);
	char *text = schema_text(&seeded_schema, &sd);
	assert_string_equal(text, "seed: 9007199254740992\n");
	free(text);
	const char *bad[] = {"seed: 9007199254740994\n", "seed: 1.5\n", "seed: -1\n"};
	const char *want[] = {"t.yaml:1:7: seed must be a whole number from 0 to 2^53, got "
			      "9007199254740994",
			      "t.yaml:1:7: seed must be a whole number from 0 to 2^53, got 1.5",
			      "t.yaml:1:7: seed must not be negative, got -1"};
	for (int i = 0; i < 3; i++) {
		assert_int_equal(schema_read_text(&seeded_schema, bad[i], &sd, &diag), 1);
		assert_string_equal(diag.msgs[0], want[i]);
		ydiag_free(&diag);
	}
	assert_true(sd.seed == 9007199254740992ull);
}

/* A list of numbers takes null items (NaN) only when its entry is
 * Y_NULLABLE, and writes them null. */
struct gaps {
	double v[3];
	int nv;
	double w[3];
	int nw;
};
static const struct yschema_field gaps_fields[] = {
	YS_NUMS_OF(struct gaps, "v", v, nv, Y_NULLABLE | Y_NONNEG),
	YS_NUMS_OF(struct gaps, "w", w, nw, Y_NONNEG | YS_OMIT),
};
static const struct yschema gaps_schema = YS_TABLE("gaps", gaps_fields, 0);

static void test_yaml__a_nullable_list_of_numbers_takes_null_items(void **state)
{
	(void)state;
	struct gaps g;
	struct ydiag diag = {0};
	memset(&g, 0, sizeof g);
	assert_int_equal(schema_read_text(&gaps_schema, "v: [1, null, 2]\n", &g, &diag), 0);
	assert_int_equal(g.nv, 3);
	assert_true(g.v[0] == 1 && isnan(g.v[1]) && g.v[2] == 2);
	char *text = schema_text(&gaps_schema, &g);
	assert_string_equal(text, "v: [1, null, 2]\n");
	free(text);
	assert_int_equal(schema_read_text(&gaps_schema, "v: [-1]\nw: [null]\n", &g, &diag), 2);
	assert_string_equal(diag.msgs[0], "t.yaml:1:5: v must not be negative, got -1");
	assert_string_equal(diag.msgs[1], "t.yaml:2:5: w: expected a number, got 'null'");
	ydiag_free(&diag);
}

/* A section over the one it extends: only its own keys, nested ones too. */
struct layered {
	double a;
	int n;
	struct sample_pair p;
	int bs[4];
	int nbs;
};
static const struct yschema_field layered_fields[] = {
	YS_FIELD(struct layered, a, YS_NUM, Y_REQUIRED),
	YS_FIELD(struct layered, n, YS_INT, Y_REQUIRED),
	YS_FIELD(struct layered, p, YS_MAP, Y_REQUIRED, .sub = &pair_schema),
	YS_INTS_OF(struct layered, "budgets", bs, nbs, Y_REQUIRED),
};
static const struct yschema layered_schema = YS_TABLE("layered", layered_fields, 0);

static void test_yaml__a_section_reads_over_the_one_it_extends(void **state)
{
	(void)state;
	struct layered l;
	struct ydiag diag = {0};
	struct ydoc *base, *own;
	static const char base_text[] = "a: 1.5\nn: 3\np: {lo: 1, hi: 2}\nbudgets: [1, 2]\n";
	static const char own_text[] = "n: 4\np: {hi: 9}\nbudgets: [8]\n";
	memset(&l, 0, sizeof l);
	assert_int_equal(ydoc_load_buf(&base, "b.yaml", base_text, strlen(base_text), &diag), 0);
	assert_int_equal(ydoc_load_buf(&own, "o.yaml", own_text, strlen(own_text), &diag), 0);
	struct yctx cb = {"b.yaml", &diag, NULL}, co = {"o.yaml", &diag, NULL};
	assert_int_equal(yschema_read(&cb, base->root, &layered_schema, &l), 0);
	assert_int_equal(yschema_read_given(&co, own->root, &layered_schema, &l), 0);
	assert_true(l.a == 1.5 && l.n == 4 && l.p.lo == 1 && l.p.hi == 9);
	assert_int_equal(l.nbs, 1);
	assert_int_equal(l.bs[0], 8);
	ydoc_free(own);
	static const char bad_text[] = "n: x\np: {hj: 1}\n";
	assert_int_equal(ydoc_load_buf(&own, "o.yaml", bad_text, strlen(bad_text), &diag), 0);
	assert_int_not_equal(yschema_read_given(&co, own->root, &layered_schema, &l), 0);
	assert_int_equal(diag.n, 2);
	assert_string_equal(diag.msgs[0], "o.yaml:1:4: n: expected a number, got 'x'");
	assert_string_equal(diag.msgs[1], "o.yaml:2:5: unknown key 'hj'");
	ydiag_free(&diag);
	ydoc_free(own);
	/* read strictly, the same own section misses what it leaves to its base */
	assert_int_equal(ydoc_load_buf(&own, "o.yaml", own_text, strlen(own_text), &diag), 0);
	assert_int_not_equal(yschema_read(&co, own->root, &layered_schema, &l), 0);
	assert_string_equal(diag.msgs[0], "o.yaml:1:1: missing required key 'a'");
	ydiag_free(&diag);
	ydoc_free(own);
	ydoc_free(base);
}

/* Checks every [id] of one source text against SOURCES.md; returns the
 * number of ids cited (0: none), or -1 after printing an unknown one. */
static int cited_ids(const char *where, int line, const char *text, const struct sources *src)
{
	size_t pos = 0, start, len;
	int n = 0;
	while (sources_next_id(text, &pos, &start, &len)) {
		if (!sources_find(src, text + start, len)) {
			fprintf(stderr, "%s:%d: [%.*s] is not in calibration/SOURCES.md\n", where, line,
				(int)len, text + start);
			return -1;
		}
		n++;
	}
	return n;
}

/* Walks node for keys source and error_source; counts the fields and the
 * bad ones (no id, or an id SOURCES.md does not list). */
static void walk_sources(const char *file, const struct ydoc_node *node,
			 const struct sources *src, int *fields, int *bad)
{
	for (size_t i = 0; node->kind != YDOC_SCALAR && i < node->n; i++) {
		const struct ydoc_node *v = node->items[i];
		const char *key = node->keys ? node->keys[i]->str : "";
		if ((!strcmp(key, "source") || !strcmp(key, "error_source")) && v->kind == YDOC_SCALAR) {
			int n = cited_ids(file, v->line, v->str, src);
			(*fields)++;
			if (n == 0)
				fprintf(stderr, "%s:%d: %s cites no id of calibration/SOURCES.md\n", file,
					v->line, key);
			*bad += n <= 0;
		} else
			walk_sources(file, v, src, fields, bad);
	}
}

/* Every source: of calibration/ and templates/ cites an id that
 * calibration/SOURCES.md lists, and none cites FACTS.md, which is not part
 * of the project. */
static void test_yaml__every_source_cites_a_listed_id(void **state)
{
	(void)state;
	static const char *const dirs[] = {"calibration", "templates"};
	struct sources src;
	int fields = 0, bad = 0;
	assert_int_equal(sources_load(&src, "calibration/" SOURCES_FILE), 0);
	assert_true(src.n >= 30);
	for (size_t d = 0; d < 2; d++) {
		struct dirent **list;
		int n = scandir(dirs[d], &list, NULL, alphasort);
		assert_true(n > 0);
		for (int i = 0; i < n; i++) {
			size_t len = strlen(list[i]->d_name);
			char *path = fsx_join(dirs[d], list[i]->d_name), *text = NULL;
			struct ydoc *doc = NULL;
			struct ydiag diag = {0};
			if (len > 5 && !strcmp(list[i]->d_name + len - 5, ".yaml")) {
				assert_int_equal(fsx_read_all(path, 1 << 20, &text, NULL), 0);
				if (strstr(text, "FACTS.md")) {
					fprintf(stderr, "%s cites FACTS.md\n", path);
					bad++;
				}
				assert_int_equal(ydoc_load_file(&doc, path, &diag), 0);
				walk_sources(path, doc->root, &src, &fields, &bad);
			}
			ydoc_free(doc);
			ydiag_free(&diag);
			free(text);
			free(path);
			free(list[i]);
		}
		free(list);
	}
	sources_free(&src);
	printf("%d source fields, %d without a listed id\n", fields, bad);
	assert_true(fields >= 80);
	assert_int_equal(bad, 0);
}

/* Every entry of SOURCES.md has a public https:// address, except ddt's
 * own choices and the seed document, which have none to give. */
static void test_yaml__every_public_source_has_an_address(void **state)
{
	(void)state;
	static const char *const own[] = {"ddt-assumed", "ddt-derived", "ddt-setting",
					  "seed-estimator", "mad-sigma"};
	struct sources src;
	int missing = 0;
	assert_int_equal(sources_load(&src, "calibration/" SOURCES_FILE), 0);
	for (size_t i = 0; i < src.n; i++) {
		int is_own = 0;
		for (size_t k = 0; k < sizeof own / sizeof *own; k++)
			is_own |= !strcmp(src.v[i].id, own[k]);
		if (!is_own && strncmp(src.v[i].url, "https://", 8)) {
			fprintf(stderr, "calibration/SOURCES.md:%d: [%s] has no https:// address\n",
				src.v[i].line, src.v[i].id);
			missing++;
		}
	}
	sources_free(&src);
	assert_int_equal(missing, 0);
}

/* An entry reads back as its id, its first address without the sentence's
 * punctuation, and its text before "Facts:"; continuation lines join it; a
 * line that starts no entry is not one; an id listed twice is refused with
 * both lines. */
static void test_yaml__sources_entries_read_back(void **state)
{
	(void)state;
	static const char text[] =
		"# Sources\n\nIntro [not-an-entry] text.\n\n## Papers\n\n"
		"- **[paper-1]** A. Author, \"Title\", `code/x.c`,\n"
		"  https://example.org/abs/1. Facts: a fact,\n  https://example.org/other.\n"
		"- **[own]** ddt's own choice, no address.\n"
		"not an entry\n"
		"- **[repo-2]** A repository (https://github.com/a/b), commit 1234567.\n";
	struct sources s;
	assert_int_equal(sources_parse(&s, text, "S.md"), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.v[0].id, "paper-1");
	assert_int_equal(s.v[0].line, 7);
	assert_string_equal(s.v[0].url, "https://example.org/abs/1");
	assert_string_equal(s.v[0].about, "A. Author, \"Title\", code/x.c, https://example.org/abs/1.");
	assert_string_equal(s.v[1].url, "");
	assert_string_equal(s.v[1].about, "ddt's own choice, no address.");
	assert_string_equal(s.v[2].url, "https://github.com/a/b");
	assert_ptr_equal(sources_find(&s, "own", 3), &s.v[1]);
	assert_null(sources_find(&s, "ow", 2));
	sources_free(&s);

	static const char twice[] = "- **[a]** one\n- **[b]** two\n- **[a]** three\n";
	assert_int_equal(sources_parse(&s, twice, "S.md"), DDT_EINPUT);
	assert_string_equal(err_msg(), "S.md:3: [a] is listed twice, first at line 1");
	sources_free(&s);

	size_t pos = 0, start, len;
	const char *cite = "x [Not] [a-1.b] [] [c";
	assert_true(sources_next_id(cite, &pos, &start, &len));
	assert_int_equal(start, 9);
	assert_int_equal(len, 5);
	assert_false(sources_next_id(cite, &pos, &start, &len));
}

/* YS_VEC: lists the reader allocates, their number an int or a size_t;
 * items start as their table's start value; texts when there is no
 * table. */
struct vec_pt {
	double m;
	int tag;
};
struct vec_doc {
	struct vec_pt *pts;
	int npts;
	char (*names)[6];
	size_t nnames;
};
static const struct vec_pt vec_pt_start = {.m = 0, .tag = -1};
static const struct yschema_field vec_pt_fields[] = {
	YS_FIELD(struct vec_pt, m, YS_NUM, Y_REQUIRED | Y_POSITIVE),
	YS_FIELD(struct vec_pt, tag, YS_INT, 0),
};
static const struct yschema vec_pt_schema = YS_TABLE_INIT("point", vec_pt_fields, 1, &vec_pt_start);
static const struct yschema_field vec_doc_fields[] = {
	YS_VEC_OF(struct vec_doc, "points", pts, npts, &vec_pt_schema, 3, Y_REQUIRED,
		  .help = "the points"),
	YS_VEC_OF(struct vec_doc, "names", names, nnames, NULL, 4, YS_OMIT),
};
static const struct yschema vec_doc_schema = YS_TABLE("vec", vec_doc_fields, 0);

static void vec_doc_free(struct vec_doc *d)
{
	free(d->pts);
	free(d->names);
	memset(d, 0, sizeof *d);
}

static void test_yaml__an_allocated_list_reads_and_writes_its_items_and_count(void **state)
{
	(void)state;
	static const char text[] = "points:\n  - {m: 1, tag: -1}\n  - {m: 2.5, tag: 7}\n"
				   "names:\n  - ab\n  - cde\n";
	struct vec_doc d = {0}, back = {0};
	struct ydiag diag = {0};
	assert_int_equal(schema_read_text(&vec_doc_schema,
					  "points:\n  - {m: 1}\n  - {m: 2.5, tag: 7}\n"
					  "names: [ab, cde]\n", &d, &diag), 0);
	assert_int_equal(d.npts, 2);
	assert_true(d.pts[0].m == 1 && d.pts[0].tag == -1); /* the table's start value */
	assert_true(d.pts[1].m == 2.5 && d.pts[1].tag == 7);
	assert_int_equal(d.nnames, 2);
	assert_string_equal(d.names[1], "cde");
	char *out = schema_text(&vec_doc_schema, &d);
	assert_string_equal(out, text);
	assert_int_equal(schema_read_text(&vec_doc_schema, out, &back, &diag), 0);
	assert_int_equal(back.npts, 2);
	assert_int_equal(back.nnames, 2);
	assert_true(back.pts[1].tag == 7 && !strcmp(back.names[0], "ab"));
	free(out);
	vec_doc_free(&back);
	vec_doc_free(&d);

	/* empty: an array of its own all the same; an empty YS_OMIT list left out */
	assert_int_equal(schema_read_text(&vec_doc_schema, "points: []\n", &d, &diag), 0);
	assert_int_equal(d.npts, 0);
	assert_non_null(d.pts);
	assert_null(d.names);
	out = schema_text(&vec_doc_schema, &d);
	assert_string_equal(out, "points: []\n");
	free(out);
	vec_doc_free(&d);
	char w[64];
	assert_string_equal(yschema_describe(&vec_doc_fields[0], w, sizeof w), "list of mappings");
	assert_string_equal(yschema_describe(&vec_doc_fields[1], w, sizeof w), "list of texts");
}

static void test_yaml__an_allocated_list_names_each_bad_item_at_its_place(void **state)
{
	(void)state;
	struct vec_doc d = {0};
	struct ydiag diag = {0};
	assert_int_equal(schema_read_text(&vec_doc_schema,
					  "points:\n  - {m: 1}\n  - 3\n  - {m: 0}\n"
					  "names: [abcdef, {a: 1}, ok]\n", &d, &diag), 4);
	assert_string_equal(diag.msgs[0], "t.yaml:3:5: points: expected a mapping, got a value");
	assert_string_equal(diag.msgs[1], "t.yaml:4:9: m must be greater than zero, got 0");
	assert_string_equal(diag.msgs[2], "t.yaml:5:9: names: longer than 5 characters");
	assert_string_equal(diag.msgs[3], "t.yaml:5:17: names: expected a value, got a mapping");
	/* the arrays are the caller's, bad items and all */
	assert_int_equal(d.npts, 3);
	assert_int_equal(d.nnames, 3);
	assert_string_equal(d.names[2], "ok");
	vec_doc_free(&d);
	ydiag_free(&diag);

	assert_int_equal(schema_read_text(&vec_doc_schema,
					  "points:\n  - {m: 1}\n  - {m: 2}\n  - {m: 3}\n  - {m: 4}\n",
					  &d, &diag), 1);
	assert_string_equal(diag.msgs[0], "t.yaml:5:5: points: at most 3 items, got 4");
	assert_null(d.pts);
	assert_int_equal(d.npts, 0);
	ydiag_free(&diag);

	assert_int_equal(schema_read_text(&vec_doc_schema, "points: {m: 1}\nnames: ab\n", &d,
					  &diag), 2);
	assert_string_equal(diag.msgs[0], "t.yaml:1:9: points: expected a list, got a mapping");
	assert_string_equal(diag.msgs[1], "t.yaml:2:8: names: expected a list, got a value");
	assert_null(d.pts);
	ydiag_free(&diag);
}

/* Read over a base, a list given replaces the base's whole: a new array
 * in the pointer's place, the old one left to whoever holds it (the base
 * it was copied from shares it). */
static void test_yaml__an_allocated_list_given_over_a_base_replaces_it(void **state)
{
	(void)state;
	struct vec_doc base = {0}, over;
	struct ydiag diag = {0};
	struct ydoc *doc;
	static const char given[] = "points: [{m: 9}]\n";
	assert_int_equal(schema_read_text(&vec_doc_schema, "points: [{m: 1}, {m: 2}]\n"
					  "names: [a]\n", &base, &diag), 0);
	over = base;
	assert_int_equal(ydoc_load_buf(&doc, "t.yaml", given, strlen(given), &diag), 0);
	struct yctx c = {"t.yaml", &diag, NULL};
	assert_int_equal(yschema_read_given(&c, doc->root, &vec_doc_schema, &over), 0);
	ydoc_free(doc);
	assert_int_equal(over.npts, 1);
	assert_true(over.pts != base.pts && over.pts[0].m == 9);
	assert_ptr_equal(over.names, base.names); /* not given: the base's */
	assert_int_equal(over.nnames, 1);
	assert_true(base.pts[1].m == 2); /* the base's array is untouched */
	free(over.pts);
	vec_doc_free(&base);
}

/* An entry's own reader takes its sequence from yschema_read_seq: the
 * entry's flags and its length checked as a list's are. */
struct seq_seen {
	int n, rc;
};
static void seq_count_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
			   void *obj)
{
	struct seq_seen *s = obj;
	struct ydoc_node *seq = (struct ydoc_node *)&seq; /* overwritten */
	s->rc = yschema_read_seq(c, m, f, &seq);
	s->n = seq ? (int)seq->n : -1;
}
static const struct yschema_field seq_seen_fields[] = {
	{.key = "xs", .type = YS_CUSTOM, .flags = Y_REQUIRED, .max = 2, .read = seq_count_read},
};
static const struct yschema seq_seen_schema = YS_TABLE("seen", seq_seen_fields, 0);

static void test_yaml__an_entrys_own_reader_takes_a_checked_sequence(void **state)
{
	(void)state;
	struct seq_seen s;
	struct ydiag diag = {0};
	assert_int_equal(schema_read_text(&seq_seen_schema, "xs: [1, 2]\n", &s, &diag), 0);
	assert_true(s.rc == 0 && s.n == 2);
	assert_int_equal(schema_read_text(&seq_seen_schema, "xs: [1, 2, 3]\n", &s, &diag), 1);
	assert_true(s.rc == DDT_EINPUT && s.n == 3);
	assert_string_equal(diag.msgs[0], "t.yaml:1:12: xs: at most 2 items, got 3");
	ydiag_free(&diag);
	assert_int_equal(schema_read_text(&seq_seen_schema, "ys: 1\n", &s, &diag), 2);
	assert_true(s.rc == DDT_EINPUT && s.n == -1);
	assert_string_equal(diag.msgs[0], "t.yaml:1:1: missing required key 'xs'");
	ydiag_free(&diag);
}

/* A Y_NULLABLE enum: null reads as the value of its names' end and that
 * value writes as null; without the flag null is a word like any other. */
struct picked {
	int kind, strict;
};
static const struct yschema_name picked_names[] = {{"low", 0}, {"high", 1}, {NULL, -1}};
static const struct yschema_field picked_fields[] = {
	YS_FIELD(struct picked, kind, YS_ENUM, Y_REQUIRED | Y_NULLABLE, .names = picked_names),
	YS_FIELD(struct picked, strict, YS_ENUM, 0, .names = picked_names),
};
static const struct yschema picked_schema = YS_TABLE("picked", picked_fields, 0);

static void test_yaml__a_nullable_enum_reads_null_as_its_names_end(void **state)
{
	(void)state;
	struct picked p = {1, 1};
	struct ydiag diag = {0};
	char d[64];
	static const char *const nulls[] = {"kind: null\n", "kind: ~\n", "kind:\n"};
	for (int i = 0; i < 3; i++) {
		p.kind = 1;
		assert_int_equal(schema_read_text(&picked_schema, nulls[i], &p, &diag), 0);
		assert_int_equal(p.kind, -1);
	}
	char *text = schema_text(&picked_schema, &p);
	assert_string_equal(text, "kind: null\nstrict: high\n");
	free(text);
	assert_int_equal(schema_read_text(&picked_schema, "kind: high\n", &p, &diag), 0);
	assert_int_equal(p.kind, 1);
	assert_int_equal(schema_read_text(&picked_schema, "kind: mid\nstrict: null\n", &p, &diag),
			 2);
	assert_string_equal(diag.msgs[0], "t.yaml:1:7: kind: expected low or high, got 'mid'");
	assert_string_equal(diag.msgs[1], "t.yaml:2:9: strict: expected low or high, got 'null'");
	ydiag_free(&diag);
	assert_int_equal(schema_read_text(&picked_schema, "kind: 'null'\n", &p, &diag), 1);
	assert_string_equal(diag.msgs[0], "t.yaml:1:7: kind: expected low or high, got 'null'");
	ydiag_free(&diag);
	assert_string_equal(yschema_describe(&picked_fields[0], d, sizeof d),
			    "low or high, or null");
	assert_string_equal(yschema_describe(&picked_fields[1], d, sizeof d), "low or high");
}

/* A list of names into a bit set, written in the names' order; an empty
 * list is a problem, an empty set of a YS_OMIT entry is left out. */
struct chosen {
	unsigned set, opt;
};
static const struct yschema_name chosen_names[] = {{"cold", 1}, {"hot", 2}, {"warm", 4},
						   {NULL, 0}};
static const struct yschema_field chosen_fields[] = {
	YS_FLAGS_OF(struct chosen, "set", set, chosen_names, Y_REQUIRED),
	YS_FLAGS_OF(struct chosen, "opt", opt, chosen_names, YS_OMIT),
};
static const struct yschema chosen_schema = YS_TABLE("chosen", chosen_fields, 0);

static void test_yaml__a_list_of_names_reads_into_a_bit_set(void **state)
{
	(void)state;
	struct chosen ch = {0, 0};
	struct ydiag diag = {0};
	char d[64];
	assert_int_equal(schema_read_text(&chosen_schema, "set: [warm, cold, warm]\n", &ch, &diag),
			 0);
	assert_int_equal(ch.set, 5);
	assert_int_equal(ch.opt, 0);
	char *text = schema_text(&chosen_schema, &ch);
	assert_string_equal(text, "set: [cold, warm]\n");
	free(text);
	ch.opt = 2;
	text = schema_text(&chosen_schema, &ch);
	assert_string_equal(text, "set: [cold, warm]\nopt: [hot]\n");
	free(text);
	assert_int_equal(schema_read_text(&chosen_schema, "set: []\nopt: [cold, frozen, [hot]]\n",
					  &ch, &diag), 3);
	assert_string_equal(diag.msgs[0], "t.yaml:1:6: set: empty list");
	assert_string_equal(diag.msgs[1],
			    "t.yaml:2:13: opt: expected cold, hot or warm, got 'frozen'");
	assert_non_null(strstr(diag.msgs[2], "t.yaml:2:21: opt: expected a value, got a list"));
	ydiag_free(&diag);
	assert_int_equal(schema_read_text(&chosen_schema, "set: cold\n", &ch, &diag), 1);
	assert_non_null(strstr(diag.msgs[0], "t.yaml:1:6: set: expected a list, got a value"));
	ydiag_free(&diag);
	assert_string_equal(yschema_describe(&chosen_fields[0], d, sizeof d),
			    "list of cold, hot or warm");
}

/* A list of true or false, one int each, written on one line. */
struct marks {
	int on[3];
	int non;
};
static const struct yschema_field marks_fields[] = {
	YS_BOOLS_OF(struct marks, "seen", on, non, Y_REQUIRED),
};
static const struct yschema marks_schema = YS_TABLE("marks", marks_fields, 0);

static void test_yaml__a_list_of_booleans_reads_back(void **state)
{
	(void)state;
	struct marks m;
	struct ydiag diag = {0};
	char d[64];
	memset(&m, 0, sizeof m);
	assert_int_equal(schema_read_text(&marks_schema, "seen: [true, false, true]\n", &m, &diag),
			 0);
	assert_int_equal(m.non, 3);
	assert_true(m.on[0] == 1 && m.on[1] == 0 && m.on[2] == 1);
	char *text = schema_text(&marks_schema, &m);
	assert_string_equal(text, "seen: [true, false, true]\n");
	free(text);
	assert_int_equal(schema_read_text(&marks_schema, "seen: [true, yes, 'false']\n", &m, &diag),
			 2);
	assert_string_equal(diag.msgs[0], "t.yaml:1:14: seen: expected true or false, got 'yes'");
	assert_string_equal(diag.msgs[1], "t.yaml:1:19: seen: expected true or false, got 'false'");
	ydiag_free(&diag);
	assert_int_equal(schema_read_text(&marks_schema, "seen: [true, true, true, false]\n", &m,
					  &diag), 1);
	assert_string_equal(diag.msgs[0], "t.yaml:1:26: seen: at most 3 items, got 4");
	ydiag_free(&diag);
	assert_string_equal(yschema_describe(&marks_fields[0], d, sizeof d),
			    "list of true or false");
}

/* A long long: whole numbers exact past a double's, with the flags' and
 * the range's checks. */
struct counted {
	long long steps, line;
};
static const struct yschema_range line_range = {0, 1e6, 0, 0, "within [0, 1000000]"};
static const struct yschema_field counted_fields[] = {
	YS_FIELD(struct counted, steps, YS_LONG, Y_REQUIRED | Y_POSITIVE),
	YS_FIELD(struct counted, line, YS_LONG, Y_NONNEG, .range = &line_range),
};
static const struct yschema counted_schema = YS_TABLE("counted", counted_fields, 0);

static void test_yaml__a_long_count_is_exact_past_a_doubles_whole_numbers(void **state)
{
	(void)state;
	struct counted k = {0, 7};
	struct ydiag diag = {0};
	char d[64];
	assert_int_equal(schema_read_text(&counted_schema, "steps: 9007199254740993\n", &k, &diag),
			 0);
	assert_true(k.steps == 9007199254740993ll && k.line == 7);
	char *text = schema_text(&counted_schema, &k);
	assert_string_equal(text, "steps: 9007199254740993\nline: 7\n");
	free(text);
	assert_int_equal(schema_read_text(&counted_schema, "steps: 1e3\nline: 500.0\n", &k, &diag),
			 0);
	assert_true(k.steps == 1000 && k.line == 500);
	static const char *const bad[] = {"steps: 1.5\n", "steps: 0\n", "steps: [1]\n",
					  "steps: 1\nline: 2000000\n"};
	static const char *const want[] = {
		"t.yaml:1:8: steps must be a whole number, got 1.5",
		"t.yaml:1:8: steps must be greater than zero, got 0",
		"t.yaml:1:8: steps: expected a value, got a list",
		"t.yaml:2:7: line must be within [0, 1000000], got 2000000"};
	for (int i = 0; i < 4; i++) {
		assert_int_equal(schema_read_text(&counted_schema, bad[i], &k, &diag), 1);
		assert_string_equal(diag.msgs[0], want[i]);
		ydiag_free(&diag);
	}
	assert_string_equal(yschema_describe(&counted_fields[0], d, sizeof d), "whole number > 0");
}

/* A whole document: a table's entries as the top mapping, or a section
 * under its key (one YS_MAP entry at offset 0 holding the struct itself). */
static const struct yschema_field counted_doc_fields[] = {
	{.key = "counted", .type = YS_MAP, .flags = Y_REQUIRED, .sub = &counted_schema},
};
static const struct yschema counted_doc = YS_TABLE("counted file", counted_doc_fields, 0);

static char *doc_text(const struct yschema *s, const void *obj)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	assert_non_null(fp);
	assert_int_equal(yschema_write_doc(fp, s, obj), 0);
	fclose(fp);
	return buf;
}

/* Reads text as a whole document with s into obj; returns the problems
 * found (diag). */
static size_t doc_read_text(const struct yschema *s, const char *text, void *obj,
			    struct ydiag *diag)
{
	struct ydoc *doc;
	assert_int_equal(ydoc_load_buf(&doc, "t.yaml", text, strlen(text), diag), 0);
	struct yctx c = {"t.yaml", diag, NULL};
	int rc = yschema_read_doc(&c, doc, s, obj, s->name);
	assert_int_equal(rc != 0, diag->n != 0);
	ydoc_free(doc);
	return diag->n;
}

static void test_yaml__a_whole_document_reads_back_through_its_table(void **state)
{
	(void)state;
	struct counted k = {12, 3}, back = {0, 0};
	struct ydiag diag = {0};
	char *text = doc_text(&counted_schema, &k), *framed = schema_text(&counted_schema, &k);
	assert_string_equal(text, framed); /* the bytes of a mapping opened by hand */
	assert_string_equal(text, "steps: 12\nline: 3\n");
	free(framed);
	free(text);
	text = doc_text(&counted_doc, &k);
	assert_string_equal(text, "counted:\n  steps: 12\n  line: 3\n");
	assert_int_equal(doc_read_text(&counted_doc, text, &back, &diag), 0);
	assert_true(back.steps == 12 && back.line == 3);
	free(text);
	static const char *const bad[] = {"", "- 1\n", "counted: {steps: 1}\nother: 2\n",
					  "counted: [1]\n", "counted: {steps: 0}\n"};
	static const char *const want[] = {
		"t.yaml: empty counted file",
		"t.yaml:1:1: counted file: expected a mapping, got a list",
		"t.yaml:2:1: unknown key 'other'",
		"t.yaml:1:10: counted: expected a mapping, got a list",
		"t.yaml:1:18: steps must be greater than zero, got 0"};
	for (int i = 0; i < 5; i++) {
		assert_int_equal(doc_read_text(&counted_doc, bad[i], &back, &diag), 1);
		assert_string_equal(diag.msgs[0], want[i]);
		ydiag_free(&diag);
	}
}

/* A mapping keyed by data whose values are plain: numbers on one line,
 * names of an enum and lists of numbers one a line; each value read with
 * its entry's checks and named by its NAME, the items' rule on each. */
struct knob {
	char key[4];
	double v;
};
struct role {
	char who[8];
	int level;
};
struct sweep {
	char key[4];
	double vals[3];
	int nvals;
};
struct knobs {
	struct knob k[3];
	int nk;
	struct role r[2];
	int nr;
	struct sweep s[2];
	int ns;
};
static const struct yschema_name level_names[] = {{"low", 1}, {"high", 2}, {NULL, 0}};
static int check_knob(struct yctx *c, struct ydoc_node *map, void *obj)
{
	const struct knob *k = obj;
	struct ydoc_node *n = ydoc_get(map, k->key);
	if (strcmp(k->key, "no"))
		return 0;
	ydiag_add(c->diag, c->file, n->line, n->col, "no: not a knob (%d before it)",
		  ((const struct knobs *)c->ctx)->nk);
	return 1;
}
static const struct yschema_field knob_value[] = {
	YS_VALUE(struct knob, v, YS_NUM, Y_POSITIVE, .unit = "us"),
};
static const struct yschema knob_schema = YS_TABLE_CHECKED("knob", knob_value, 1, check_knob);
static const struct yschema_field role_value[] = {
	YS_VALUE(struct role, level, YS_ENUM, 0, .names = level_names),
};
static const struct yschema role_schema = YS_TABLE("role", role_value, 0);
static const struct yschema_field sweep_value[] = {
	YS_NUMS_OF(struct sweep, NULL, vals, nvals, YS_BLOCK | Y_NONNEG),
};
static const struct yschema sweep_schema = YS_TABLE("sweep", sweep_value, 0);
static const struct yschema_field knobs_fields[] = {
	YS_DICT_OF(struct knobs, "knobs", k, nk, struct knob, key, &knob_schema, Y_REQUIRED),
	YS_DICT_OF(struct knobs, "roles", r, nr, struct role, who, &role_schema, YS_OMIT),
	YS_DICT_OF(struct knobs, "sweeps", s, ns, struct sweep, key, &sweep_schema, 0),
};
static const struct yschema knobs_schema = YS_TABLE("knobs", knobs_fields, 0);

static void test_yaml__a_mapping_keyed_by_data_takes_plain_values(void **state)
{
	(void)state;
	static const char text[] = "knobs: {M: 9, k: 64.5}\nroles:\n  ann: high\n  bo: low\n"
				   "sweeps:\n  w:\n    - 1\n    - 2\n";
	struct knobs k, back;
	struct ydiag diag = {0};
	char d[96];
	memset(&k, 0, sizeof k);
	assert_int_equal(schema_read_text(&knobs_schema, text, &k, &diag), 0);
	assert_true(k.nk == 2 && k.nr == 2 && k.ns == 1);
	assert_string_equal(k.k[1].key, "k");
	assert_true(k.k[0].v == 9 && k.k[1].v == 64.5);
	assert_string_equal(k.r[0].who, "ann");
	assert_true(k.r[0].level == 2 && k.r[1].level == 1);
	assert_true(k.s[0].nvals == 2 && k.s[0].vals[1] == 2);
	char *out = schema_text(&knobs_schema, &k);
	assert_string_equal(out, text);
	free(out);
	memset(&back, 0, sizeof back);
	back.nk = 1; /* an empty YS_OMIT dict is left out; an empty other one is {} */
	snprintf(back.k[0].key, sizeof back.k[0].key, "z");
	back.k[0].v = 1;
	out = schema_text(&knobs_schema, &back);
	assert_string_equal(out, "knobs: {z: 1}\nsweeps: {}\n");
	free(out);
	static const char *const bad[] = {
		"knobs: {a: 1, b: 2, c: 3, d: 4, e: 5}\n",
		"knobs: {long: 1, M: 0, k: x, j: [1]}\n",
		"knobs: {M: 1, no: 1}\nroles: {ann: middle}\nsweeps: {w: [1, -1], m: 2}\n",
		"knobs: {M: 1}\nsweeps: {w: [1, 2, 3, 4]}\n",
	};
	static const char *const want[][4] = {
		{"t.yaml:1:27: knobs: at most 3 items, got 5"},
		{"t.yaml:1:9: knobs: 'long' is longer than 3 characters",
		 "t.yaml:1:21: M must be greater than zero, got 0",
		 "t.yaml:1:27: k: expected a number, got 'x'",
		 "t.yaml:1:33: j: expected a number, got a list"},
		{"t.yaml:1:19: no: not a knob (1 before it)",
		 "t.yaml:2:14: ann: expected low or high, got 'middle'",
		 "t.yaml:3:17: w must not be negative, got -1",
		 "t.yaml:3:25: m: expected a list, got a value"},
		{"t.yaml:2:23: w: at most 3 items, got 4"},
	};
	static const size_t nwant[] = {1, 4, 4, 1};
	for (int i = 0; i < 4; i++) {
		memset(&back, 0, sizeof back);
		assert_int_equal(schema_read_text(&knobs_schema, bad[i], &back, &diag), nwant[i]);
		for (size_t j = 0; j < nwant[i]; j++)
			assert_string_equal(diag.msgs[j], want[i][j]);
		ydiag_free(&diag);
	}
	assert_string_equal(yschema_describe(&knobs_fields[0], d, sizeof d),
			    "mapping of names to number > 0, us");
	assert_string_equal(yschema_describe(&knobs_fields[1], d, sizeof d),
			    "mapping of names to low or high");
	assert_null(yschema_find(&knob_schema, "v"));
}

/* A list that takes a lone number for a list of one and writes it so. */
struct lone {
	int n[3];
	int nn;
};
static const struct yschema_field lone_fields[] = {
	YS_INTS_OF(struct lone, "w", n, nn, Y_REQUIRED | YS_LONE),
};
static const struct yschema lone_schema = YS_TABLE("lone", lone_fields, 0);

static void test_yaml__a_lone_number_is_a_list_of_one(void **state)
{
	(void)state;
	static const char *const texts[] = {"w: 4\n", "w: [1, 2]\n"};
	struct ydiag diag = {0};
	struct lone l;
	for (int i = 0; i < 2; i++) {
		memset(&l, 0, sizeof l);
		assert_int_equal(schema_read_text(&lone_schema, texts[i], &l, &diag), 0);
		assert_int_equal(l.nn, i + 1);
		char *out = schema_text(&lone_schema, &l);
		assert_string_equal(out, texts[i]);
		free(out);
	}
	assert_int_equal(l.n[1], 2);
	assert_int_equal(schema_read_text(&lone_schema, "w: 1.5\n", &l, &diag), 1);
	assert_string_equal(diag.msgs[0], "t.yaml:1:4: w must be a whole number, got 1.5");
	ydiag_free(&diag);
	assert_int_equal(schema_read_text(&lone_schema, "w: {a: 1}\n", &l, &diag), 1);
	assert_string_equal(diag.msgs[0], "t.yaml:1:4: w: expected a list, got a mapping");
	ydiag_free(&diag);
	char d[64];
	assert_string_equal(yschema_describe(&lone_fields[0], d, sizeof d),
			    "whole number or list of them");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_yaml__every_bad_fixture_reports_its_message_and_position),
		cmocka_unit_test(test_yaml__a_figure_the_model_refuses_names_its_line),
		cmocka_unit_test(test_yaml__first_problem_becomes_the_error_message),
		cmocka_unit_test(test_yaml__nesting_deeper_than_the_cap_is_refused),
		cmocka_unit_test(test_yaml__numbers_parse_strictly),
		cmocka_unit_test(test_yaml__emitter_output_reads_back),
		cmocka_unit_test(test_yaml__a_schema_table_writes_what_it_reads_back),
		cmocka_unit_test(test_yaml__a_projection_row_reads_back_through_its_table),
		cmocka_unit_test(test_yaml__a_schema_table_names_each_problem_at_its_place),
		cmocka_unit_test(test_yaml__a_schema_table_sets_and_lists_its_numbers),
		cmocka_unit_test(test_yaml__a_whole_number_keeps_its_range),
		cmocka_unit_test(test_yaml__a_scaled_number_is_a_percentage_in_its_file),
		cmocka_unit_test(test_yaml__a_custom_entry_without_its_function_is_an_internal_error),
		cmocka_unit_test(test_yaml__an_omitted_entry_is_written_only_when_it_says_something),
		cmocka_unit_test(test_yaml__a_list_entry_reads_and_writes_its_items_and_count),
		cmocka_unit_test(test_yaml__a_list_entry_names_each_bad_item_at_its_place),
		cmocka_unit_test(test_yaml__a_table_rule_runs_after_its_entries_read_cleanly),
		cmocka_unit_test(test_yaml__texts_and_a_mapping_keyed_by_data_read_back),
		cmocka_unit_test(test_yaml__a_section_reads_over_the_one_it_extends),
		cmocka_unit_test(test_yaml__a_seed_takes_a_doubles_whole_numbers),
		cmocka_unit_test(test_yaml__a_nullable_list_of_numbers_takes_null_items),
		cmocka_unit_test(test_yaml__a_list_item_starts_as_its_tables_start_value),
		cmocka_unit_test(test_yaml__every_source_cites_a_listed_id),
		cmocka_unit_test(test_yaml__every_public_source_has_an_address),
		cmocka_unit_test(test_yaml__sources_entries_read_back),
		cmocka_unit_test(test_yaml__an_allocated_list_reads_and_writes_its_items_and_count),
		cmocka_unit_test(test_yaml__an_allocated_list_names_each_bad_item_at_its_place),
		cmocka_unit_test(test_yaml__an_allocated_list_given_over_a_base_replaces_it),
		cmocka_unit_test(test_yaml__an_entrys_own_reader_takes_a_checked_sequence),
		cmocka_unit_test(test_yaml__a_nullable_enum_reads_null_as_its_names_end),
		cmocka_unit_test(test_yaml__a_list_of_names_reads_into_a_bit_set),
		cmocka_unit_test(test_yaml__a_list_of_booleans_reads_back),
		cmocka_unit_test(test_yaml__a_long_count_is_exact_past_a_doubles_whole_numbers),
		cmocka_unit_test(test_yaml__a_whole_document_reads_back_through_its_table),
		cmocka_unit_test(test_yaml__a_mapping_keyed_by_data_takes_plain_values),
		cmocka_unit_test(test_yaml__a_lone_number_is_a_list_of_one),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
