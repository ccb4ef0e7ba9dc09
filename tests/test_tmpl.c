/* test_tmpl.c - job templates: scenarios read through their schema table,
 * their problems in order and in the reader's words, the enum names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "err.h"
#include "tmpl.h"

/* Loads text as the template /tmp/t.yaml (no parent: nothing is read from disk). */
static int load_text(struct tmpl *t, const char *text, struct ydiag *diag)
{
	return tmpl_load_buf(t, "/tmp/t.yaml", text, strlen(text), diag);
}

static void test_tmpl__scenario_reads_every_key(void **state)
{
	(void)state;
	struct tmpl t;
	struct ydiag diag = {0};
	const char *text = "name: t\nscenarios:\n"
			   "  - {name: a, target: b300, pipeline: native, block: 16, budget: 32,"
			   " concurrency: 4, context: 8192, accept: [12, 14], estimator: seed,"
			   " runnable: false, note: why}\n"
			   "  - {name: b, target: h200, pipeline: sglang, block: 8, budget: 8,"
			   " accept: curve}\n";
	assert_int_equal(load_text(&t, text, &diag), 0);
	assert_int_equal(t.nscenarios, 2);
	const struct scenario *a = tmpl_scenario(&t, "a"), *b = tmpl_scenario(&t, "b");
	assert_int_equal(a->pipeline, PIPE_NATIVE);
	assert_int_equal(a->block, 16);
	assert_int_equal(a->budget, 32);
	assert_int_equal(a->concurrency, 4);
	assert_int_equal(a->context, 8192);
	assert_int_equal(a->naccept, 2);
	assert_true(a->accept[1] == 14);
	assert_int_equal(a->estimator, EST_SEED);
	assert_int_equal(a->runnable, 0);
	assert_string_equal(a->note, "why");
	/* the defaults of the keys left out */
	assert_int_equal(b->pipeline, PIPE_SGLANG);
	assert_int_equal(b->concurrency, 1);
	assert_int_equal(b->context, 0);
	assert_int_equal(b->accept_curve, 1);
	assert_int_equal(b->naccept, 0);
	assert_int_equal(b->estimator, EST_CALIBRATED);
	assert_int_equal(b->runnable, 1);
	tmpl_free(&t);
}

/* Every problem of a scenario in the order of its keys, then the
 * acceptance past the block, then the keys no schema has. */
static void test_tmpl__scenario_problems_in_order_and_words(void **state)
{
	(void)state;
	struct tmpl t;
	struct ydiag diag = {0};
	const char *text = "name: t\nscenarios:\n"
			   "  - name: a\n    target: b300\n    pipeline: bus\n    block: 4\n"
			   "    budget: 0\n    accept: [3, 9]\n    estimator: guess\n"
			   "    colour: red\n";
	assert_int_equal(load_text(&t, text, &diag), DDT_EINPUT);
	assert_int_equal(diag.n, 5);
	assert_string_equal(diag.msgs[0],
			    "/tmp/t.yaml:5:15: pipeline: expected sglang or native, got 'bus'");
	assert_string_equal(diag.msgs[1], "/tmp/t.yaml:7:13: budget must be greater than zero, got 0");
	assert_string_equal(diag.msgs[2],
			    "/tmp/t.yaml:9:16: estimator: expected seed or calibrated, got 'guess'");
	assert_string_equal(diag.msgs[3], "/tmp/t.yaml:3:5: a: acceptance 9 exceeds the block size 4");
	assert_string_equal(diag.msgs[4], "/tmp/t.yaml:10:5: unknown key 'colour'");
	tmpl_free(&t);
	ydiag_free(&diag);
}

/* A block, budget or concurrency is at most a million, as ddt estimate's
 * ad hoc options take it. */
static void test_tmpl__sizes_are_at_most_a_million(void **state)
{
	(void)state;
	struct tmpl t;
	struct ydiag diag = {0};
	const char *text = "name: t\nscenarios:\n"
			   "  - {name: a, target: b300, pipeline: native, block: 1000001,"
			   " budget: 2000000, concurrency: 1000001, accept: 2}\n"
			   "  - {name: b, target: b300, pipeline: native, block: 1000000,"
			   " budget: 1000000, concurrency: 1000000, accept: 2}\n";
	assert_int_equal(load_text(&t, text, &diag), DDT_EINPUT);
	assert_int_equal(diag.n, 3);
	assert_string_equal(diag.msgs[0],
			    "/tmp/t.yaml:3:54: block must be within [1, 1000000], got 1000001");
	assert_string_equal(diag.msgs[1],
			    "/tmp/t.yaml:3:71: budget must be within [1, 1000000], got 2000000");
	assert_string_equal(diag.msgs[2], "/tmp/t.yaml:3:93: concurrency must be within "
					  "[1, 1000000], got 1000001");
	tmpl_free(&t);
	ydiag_free(&diag);
}

/* The names the tables give are the ones parsed back; an unknown one is
 * refused. */
static void test_tmpl__enum_names_round_trip(void **state)
{
	(void)state;
	enum pipeline_kind p;
	enum estimator_kind e;
	for (int i = 0; tmpl_pipeline_names[i].name; i++) {
		assert_int_equal(tmpl_pipeline_parse(tmpl_pipeline_names[i].name, &p), 0);
		assert_int_equal(p, tmpl_pipeline_names[i].value);
		assert_string_equal(tmpl_pipeline_name(p), tmpl_pipeline_names[i].name);
	}
	for (int i = 0; tmpl_estimator_names[i].name; i++) {
		assert_int_equal(tmpl_estimator_parse(tmpl_estimator_names[i].name, &e), 0);
		assert_int_equal(e, tmpl_estimator_names[i].value);
		assert_string_equal(tmpl_estimator_name(e), tmpl_estimator_names[i].name);
	}
	assert_int_equal(tmpl_pipeline_parse("vllm", &p), -1);
	assert_int_equal(tmpl_estimator_parse("Seed", &e), -1);
	assert_string_equal(tmpl_pipeline_name(PIPE_NATIVE), "native");
	assert_string_equal(tmpl_estimator_name(EST_SEED), "seed");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tmpl__scenario_reads_every_key),
		cmocka_unit_test(test_tmpl__scenario_problems_in_order_and_words),
		cmocka_unit_test(test_tmpl__sizes_are_at_most_a_million),
		cmocka_unit_test(test_tmpl__enum_names_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
