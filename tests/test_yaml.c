/* test_yaml.c - strict YAML: every bad-input class gives its message at its position;
 * every source of the calibration and templates cites calibration/SOURCES.md,
 * whose entries read back with their ids and public addresses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <ctype.h>
#include <dirent.h>
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
#include "ydoc.h"

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
		int found = 0;

		if (!strstr(list[i]->d_name, ".yaml"))
			goto next;
		assert_int_equal(fsx_read_all(path, 1 << 20, &text, NULL), 0);
		assert_int_equal(sscanf(text, "# expect: %511[^\n]", want), 1);
		assert_int_equal(calibrate_load(&cal, path, &diag), DDT_EINPUT);
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
	assert_int_equal(calibrate_load(&cal, dir, &diag), 0);
	assert_int_equal(model_prepare(&m, &cal, NULL), DDT_EINPUT);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_yaml__every_bad_fixture_reports_its_message_and_position),
		cmocka_unit_test(test_yaml__a_figure_the_model_refuses_names_its_line),
		cmocka_unit_test(test_yaml__first_problem_becomes_the_error_message),
		cmocka_unit_test(test_yaml__nesting_deeper_than_the_cap_is_refused),
		cmocka_unit_test(test_yaml__numbers_parse_strictly),
		cmocka_unit_test(test_yaml__emitter_output_reads_back),
		cmocka_unit_test(test_yaml__every_source_cites_a_listed_id),
		cmocka_unit_test(test_yaml__every_public_source_has_an_address),
		cmocka_unit_test(test_yaml__sources_entries_read_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
