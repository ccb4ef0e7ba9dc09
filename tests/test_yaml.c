/* test_yaml.c - strict YAML: every bad-input class gives its message at its position. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "err.h"
#include "fsx.h"
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
		assert_int_equal(calib_load(&cal, path, &diag), DDT_EINPUT);
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
	assert_int_equal(ynum_parse("8.0", &v), 0);
	assert_true(v == 8.0);
	assert_int_equal(ynum_parse("-1.5e3", &v), 0);
	assert_true(v == -1500);
	const char *bad[] = {"", "0x10", "1e999", "nan", "inf", ".inf", "1,5", "1.2.3", "e5", "5e"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_int_equal(ynum_parse(bad[i], &v), -1);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_yaml__every_bad_fixture_reports_its_message_and_position),
		cmocka_unit_test(test_yaml__first_problem_becomes_the_error_message),
		cmocka_unit_test(test_yaml__nesting_deeper_than_the_cap_is_refused),
		cmocka_unit_test(test_yaml__numbers_parse_strictly),
		cmocka_unit_test(test_yaml__emitter_output_reads_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
