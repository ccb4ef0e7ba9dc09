/* test_cuda_sim.c - the CUDA kernels' own sources run on the CPU (engine/cuda/sim) against the C references at every small edge size, under two thread orders that must agree bit for bit, and on a small device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cuda/sim/sim_api.h"
#include "cuda_cases.h"
#include "cuda_check.h"

static void order(int sms, enum sim_order o)
{
	struct sim_conf c;
	sim_conf_default(&c);
	c.sms = sms;
	c.order = o;
	sim_configure(&c);
}

static void reverse_order(void)
{
	order(132, SIM_REVERSE);
}

/* Every simulator-sized case of op: on an H200-sized device forward, then
 * reversed (the same error to the last bit: a race would move it), then on
 * a 5-SM device in a shuffled order (persistent loops wrap, splits change). */
static void check_op(const char *name)
{
	const struct op_desc *op = op_find(name);
	const struct op_cuda *cu = sim_op_path(name);
	int n = 0;

	assert_non_null(op);
	assert_non_null(cu);
	for (const struct cuda_case *c = cuda_cases; c->op; c++) {
		struct op_params p;
		double e[2], small[2];
		if (strcmp(c->op, name) || !c->sim)
			continue;
		assert_int_equal(cuda_case_params(c, &p), 0);
		order(132, SIM_FORWARD);
		int rc = cuda_check(op, cu, &p, c->seed, reverse_order, e);
		if (!rc) {
			order(5, SIM_SHUFFLE);
			rc = cuda_check(op, cu, &p, c->seed + 1000, NULL, small);
		}
		if (rc && sim_fault()[0])
			fprintf(stderr, "  simulator: %s\n", sim_fault());
		assert_int_equal(rc, 0);
		fprintf(stderr, "  %-10s %-62.62s error %.3g (tolerance %.3g), 5 SMs %.3g\n", name,
			c->params, e[0], op->tol, small[0]);
		if (e[1] != e[0])
			fprintf(stderr, "%s %s: reversed thread order gives error %.9g, forward "
				"%.9g: a race\n", name, c->params, e[1], e[0]);
		assert_true(e[0] <= op->tol);
		assert_true(e[1] == e[0]);
		assert_true(small[0] <= op->tol && small[1] == small[0]);
		n++;
	}
	assert_true(n > 0);
}

static void test_cuda_sim__moe_w4a16_matches_reference(void **state)
{
	(void)state;
	check_op("moe_w4a16");
}

static void test_cuda_sim__tree_attn_matches_reference(void **state)
{
	(void)state;
	check_op("tree_attn");
}

static void test_cuda_sim__tree_build_matches_reference(void **state)
{
	(void)state;
	check_op("tree_build");
}

static void test_cuda_sim__accept_matches_reference(void **state)
{
	(void)state;
	check_op("accept");
}

static void test_cuda_sim__memcpy_copies_every_byte(void **state)
{
	(void)state;
	check_op("memcpy");
}

/* Nothing leaks: every device buffer a setup made is gone after teardown. */
static void test_cuda_sim__teardown_frees_every_buffer(void **state)
{
	(void)state;
	struct sim_stats s;
	sim_stats_get(&s);
	assert_int_equal(s.live_buffers, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cuda_sim__memcpy_copies_every_byte),
		cmocka_unit_test(test_cuda_sim__accept_matches_reference),
		cmocka_unit_test(test_cuda_sim__tree_build_matches_reference),
		cmocka_unit_test(test_cuda_sim__tree_attn_matches_reference),
		cmocka_unit_test(test_cuda_sim__moe_w4a16_matches_reference),
		cmocka_unit_test(test_cuda_sim__teardown_frees_every_buffer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
