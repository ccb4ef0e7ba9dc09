/* test_ops.c - every op's fast CPU path against its C reference on fresh seeded inputs, poisoned outputs, every element compared. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/moe_w4a16_cpu.h"
#include "cpu/opkit.h"
#include "err.h"
#include "op.h"
#include "ops/accept.h"
#include "ops/dense_gemv.h"
#include "ops/memcpy.h"
#include "ops/tree_attn.h"

/* Builds params from "key=val" pairs ending at NULL (keys are literals). */
static struct op_params params_of(const char *k0, ...)
{
	struct op_params p = {0};
	va_list ap;
	va_start(ap, k0);
	for (const char *k = k0; k; k = va_arg(ap, const char *))
		op_param_set(&p, k, va_arg(ap, double));
	va_end(ap);
	return p;
}

/* Setup, reference, poison, fast path, compare; returns the error. Also
 * checks that the poison alone fails validation, so a fast path that writes
 * nothing cannot pass. */
static double check_op(const char *name, const struct op_params *p, uint64_t seed)
{
	const struct op_desc *op = op_find(name);
	void *inst = NULL;
	assert_non_null(op);
	int rc = op->setup(&inst, p, seed);
	if (rc)
		fprintf(stderr, "%s\n", err_msg());
	assert_int_equal(rc, 0);
	assert_int_equal(op->reference(inst), 0);
	op->poison(inst);
	assert_true(op->max_error(inst) > op->tol);
	assert_int_equal(op->run_cpu(inst), 0);
	double err = op->max_error(inst);
	if (!(err <= op->tol))
		fprintf(stderr, "%s seed %llu: max error %g over tolerance %g\n", name,
			(unsigned long long)seed, err, op->tol);
	assert_true(err <= op->tol);
	/* a second run over a poisoned output must write everything again */
	op->poison(inst);
	assert_int_equal(op->run_cpu(inst), 0);
	assert_true(op->max_error(inst) <= op->tol);
	op->teardown(inst);
	return err;
}

static void for_threads(void (*body)(void))
{
	int saved = cpu_threads();
	cpu_threads_set(1);
	body();
	cpu_threads_set(3); /* more threads than this machine may have: uneven splits */
	body();
	cpu_threads_set(saved);
}

static void memcpy_cases(void)
{
	struct op_params p = params_of("mib", 0.3, NULL);
	for (uint64_t s = 1; s <= 2; s++)
		assert_true(check_op("memcpy", &p, s) == 0);
}

/* Fills of n elements from one seed: the same on one thread and on three
 * (a megabyte or more is drawn on the pool, in blocks of their own), and a
 * short fill is the start of a long one. */
static void test_ops__fills_are_the_same_for_any_thread_count(void **state)
{
	(void)state;
	size_t n = (3u << 20) + 12345; /* bytes: uneven blocks and splits */
	uint8_t *a = malloc(n), *b = malloc(n), *c = malloc(1000);
	bf16_t *h1 = malloc(n), *h3 = malloc(n);
	float *f1 = malloc(n * 2), *f3 = malloc(n * 2);
	struct rng r;
	int saved = cpu_threads();
	assert_true(a && b && c && h1 && h3 && f1 && f3);
	for (int pass = 0; pass < 2; pass++) {
		cpu_threads_set(pass ? 3 : 1);
		rng_seed(&r, 42);
		opkit_fill_bytes(pass ? b : a, n, &r);
		opkit_fill_bf16(pass ? h3 : h1, n / 2, &r, -1, 1);
		opkit_fill_f32(pass ? f3 : f1, n / 2, &r, 0, 2);
	}
	cpu_threads_set(saved);
	assert_memory_equal(a, b, n);
	assert_memory_equal(h1, h3, n / 2 * sizeof *h1);
	assert_memory_equal(f1, f3, n / 2 * sizeof *f1);
	for (size_t i = 0; i < n / 2; i += 997)
		assert_true(f1[i] >= 0 && f1[i] < 2);
	rng_seed(&r, 42);
	opkit_fill_bytes(c, 1000, &r);
	assert_memory_equal(a, c, 1000);
	size_t same = 0;
	for (size_t i = 0; i + 1 < n; i += 2)
		same += a[i] == a[i + 1];
	assert_true(same < n / 2 / 100); /* about 1 in 256: the bytes are drawn */
	free(a);
	free(b);
	free(c);
	free(h1);
	free(h3);
	free(f1);
	free(f3);
}

static void test_ops__memcpy_copies_every_byte(void **state)
{
	(void)state;
	for_threads(memcpy_cases);
}

static void moe_cases(void)
{
	/* TP slices, uniform routing, shared expert */
	struct op_params tp = params_of("M", 9.0, "hidden", 256.0, "moe_inter", 512.0, "experts",
					16.0, "topk", 4.0, "tp", 8.0, "route_seed", 3.0, NULL);
	for (int m = 1; m <= 9; m += 4) {
		op_param_set(&tp, "M", m);
		for (uint64_t s = 1; s <= 2; s++) {
			op_param_set(&tp, "route_seed", (double)s);
			check_op("moe_w4a16", &tp, s * 7 + (uint64_t)m);
		}
	}
	/* many tokens per expert (blocks of 4 and a tail), full overlap */
	op_param_set(&tp, "M", 11);
	op_param_set(&tp, "overlap", 1);
	check_op("moe_w4a16", &tp, 5);
	op_param_set(&tp, "overlap", 0.5);
	op_param_set(&tp, "group", 64);
	check_op("moe_w4a16", &tp, 6);
	/* EP: whole experts, slots on other GPUs marked -1, no shared expert */
	struct op_params ep = params_of("M", 6.0, "hidden", 128.0, "moe_inter", 96.0, "experts",
					12.0, "topk", 3.0, "tp", 1.0, "ep", 4.0, "shared", 0.0,
					NULL);
	check_op("moe_w4a16", &ep, 11);
	/* whole experts longer than kern_q4_rows4 takes (the down projection
	 * then goes a row pair at a time), with an odd number of chunks */
	struct op_params big = params_of("M", 5.0, "hidden", 64.0, "moe_inter", 1056.0, "experts",
					 8.0, "topk", 2.0, "tp", 1.0, "ep", 2.0, "shared", 0.0,
					 "overlap", 0.5, NULL);
	check_op("moe_w4a16", &big, 12);
	/* a hidden size with an odd number of chunks: x's lone last chunk goes
	 * into kernel order on its own */
	struct op_params odd = params_of("M", 3.0, "hidden", 224.0, "moe_inter", 128.0, "experts",
					 8.0, "topk", 2.0, "tp", 1.0, "shared", 1.0, NULL);
	check_op("moe_w4a16", &odd, 13);
}

static void test_ops__moe_w4a16_matches_reference(void **state)
{
	(void)state;
	for_threads(moe_cases);
}

static void test_ops__moe_w4a16_ep_marks_remote_slots(void **state)
{
	(void)state;
	struct op_params ep = params_of("M", 8.0, "hidden", 64.0, "moe_inter", 64.0, "experts",
					16.0, "topk", 4.0, "tp", 1.0, "ep", 4.0, NULL);
	const struct op_desc *op = op_find("moe_w4a16");
	void *inst;
	assert_int_equal(op->setup(&inst, &ep, 1), 0);
	struct moe_w4a16_inst *in = inst;
	int local = 0, remote = 0;
	assert_int_equal(in->experts, 4);
	assert_int_equal(in->inter, 64);
	for (int i = 0; i < in->M * in->topk; i++) {
		assert_true(in->topk_ids[i] >= -1 && in->topk_ids[i] < 4);
		local += in->topk_ids[i] >= 0;
		remote += in->topk_ids[i] < 0;
	}
	assert_true(local > 0 && remote > 0);
	op->teardown(inst);
}

static void test_ops__moe_route_overlap_shares_experts(void **state)
{
	(void)state;
	int32_t a[64 * 8], b[64 * 8];
	int seen_a[384] = {0}, seen_b[384] = {0}, da = 0, db = 0;
	moe_route(a, 64, 8, 384, 0.0, 9);
	moe_route(b, 64, 8, 384, 0.9, 9);
	for (int i = 0; i < 64 * 8; i++) {
		da += !seen_a[a[i]]++;
		db += !seen_b[b[i]]++;
	}
	for (int m = 0; m < 64; m++)
		for (int i = 0; i < 8; i++)
			for (int j = 0; j < i; j++)
				assert_int_not_equal(b[m * 8 + i], b[m * 8 + j]);
	/* uniform: about 384 (1 - (1 - 8/384)^64) = 283 experts; overlap: far fewer */
	assert_true(da > 240);
	assert_true(db < da / 2);
}

static void test_ops__moe_w4a16_counts_touched_experts(void **state)
{
	(void)state;
	const struct op_desc *op = op_find("moe_w4a16");
	struct op_params p = params_of("M", 1.0, "hidden", 256.0, "moe_inter", 256.0, "experts",
				       64.0, "topk", 8.0, "tp", 1.0, "shared", 0.0, NULL);
	double expert = 3.0 * 256 * 256 / 2 + 3.0 * 256 * (256 / 32) * 2;
	/* one token touches exactly topk experts */
	assert_float_equal(moe_w4a16_weight_bytes(&p), 8 * expert, 0.5);
	assert_true(op->bytes(&p) > 8 * expert);
	op_param_set(&p, "overlap", 1);
	op_param_set(&p, "M", 33);
	assert_float_equal(moe_w4a16_weight_bytes(&p), 8 * expert, 0.5);
}

static void dense_cases(void)
{
	struct op_params p = params_of("M", 5.0, "K", 264.0, "N", 37.0, NULL);
	check_op("dense_gemv", &p, 1);
	op_param_set(&p, "M", 1);
	op_param_set(&p, "K", 512);
	op_param_set(&p, "N", 100);
	check_op("dense_gemv", &p, 2);
	/* a full block of eight tokens and a tail of three, odd N (a lone last
	 * row), K with a short last step */
	struct op_params q = params_of("M", 11.0, "K", 200.0, "N", 23.0, NULL);
	check_op("dense_gemv", &q, 3);
	op_param_set(&q, "M", 16);
	check_op("dense_gemv", &q, 4);
}

/* setup_from(prev at M = 2) to M = 5: the same inputs as a fresh setup at
 * M = 5, the weights kept (the same buffers, not drawn again) and checked
 * like any instance; another width of the weights draws them anew. */
static void test_ops__a_sweep_of_m_keeps_the_weights(void **state)
{
	(void)state;
	const struct op_desc *op = op_find("moe_w4a16");
	struct op_params p2 = params_of("M", 2.0, "hidden", 128.0, "moe_inter", 128.0, "experts",
					16.0, "topk", 4.0, "tp", 2.0, NULL);
	struct op_params p5 = p2, wide = p2;
	void *prev, *kept, *fresh, *other;
	op_param_set(&p5, "M", 5);
	op_param_set(&wide, "hidden", 256);
	assert_int_equal(op->setup(&prev, &p2, 3), 0);
	const uint8_t *w13 = ((struct moe_w4a16_inst *)prev)->w13;
	unsigned long long drawn = opkit_drawn_bytes();
	assert_int_equal(op->setup_from(&kept, prev, &p5, 3), 0);
	unsigned long long reshaped = opkit_drawn_bytes() - drawn;
	assert_int_equal(op->setup(&fresh, &p5, 3), 0);
	unsigned long long whole = opkit_drawn_bytes() - drawn - reshaped;
	assert_true(reshaped < whole / 10); /* only the tokens were drawn */
	const struct moe_w4a16_inst *a = kept, *b = fresh;
	size_t E = 16, R = 2 * 64, H = 128;
	assert_ptr_equal(a->w13, w13);
	assert_int_equal(a->M, 5);
	assert_memory_equal(a->x, b->x, 5 * H * 2);
	assert_memory_equal(a->topk_ids, b->topk_ids, 5 * 4 * 4);
	assert_memory_equal(a->topk_w, b->topk_w, 5 * 4 * 4);
	assert_memory_equal(a->w13, b->w13, E * R * H / 2);
	assert_memory_equal(a->s13, b->s13, E * R * (H / 32) * 2);
	assert_memory_equal(a->w2, b->w2, E * H * 64 / 2);
	assert_memory_equal(a->sh_w2, b->sh_w2, H * 64 * 2);
	assert_int_equal(op->reference(kept), 0);
	op->poison(kept);
	assert_int_equal(op->run_cpu(kept), 0);
	assert_true(op->max_error(kept) <= op->tol);
	assert_int_equal(op->setup_from(&other, kept, &wide, 3), 0);
	assert_int_equal(((struct moe_w4a16_inst *)other)->hidden, 256);
	op->teardown(other);
	op->teardown(fresh);
	/* dense_gemv keeps its weights the same way */
	const struct op_desc *g = op_find("dense_gemv");
	struct op_params g1 = params_of("M", 1.0, "K", 64.0, "N", 96.0, NULL), g3 = g1;
	op_param_set(&g3, "M", 3);
	assert_int_equal(g->setup(&prev, &g1, 2), 0);
	const bf16_t *w = ((struct dense_gemv_inst *)prev)->w;
	assert_int_equal(g->setup_from(&kept, prev, &g3, 2), 0);
	assert_int_equal(g->setup(&fresh, &g3, 2), 0);
	assert_ptr_equal(((struct dense_gemv_inst *)kept)->w, w);
	assert_memory_equal(((struct dense_gemv_inst *)kept)->x, ((struct dense_gemv_inst *)fresh)->x,
			    3 * 64 * 2);
	assert_memory_equal(w, ((struct dense_gemv_inst *)fresh)->w, 96 * 64 * 2);
	g->teardown(kept);
	g->teardown(fresh);
}

static void test_ops__dense_gemv_matches_reference(void **state)
{
	(void)state;
	for_threads(dense_cases);
}

static void attn_cases(void)
{
	struct op_params p = params_of("B", 6.0, "ctx", 70.0, "L", 3.0, "heads", 8.0, "tp", 4.0,
				       "kv_lora", 64.0, "rope", 16.0, "qk_dim", 48.0, NULL);
	check_op("tree_attn", &p, 1);
	op_param_set(&p, "ctx", 0); /* only the tree: the root sees itself alone */
	check_op("tree_attn", &p, 2);
	op_param_set(&p, "B", 40); /* mask rows over two words */
	op_param_set(&p, "ctx", 129);
	op_param_set(&p, "L", 7);
	check_op("tree_attn", &p, 3);
}

static void test_ops__tree_attn_matches_reference(void **state)
{
	(void)state;
	for_threads(attn_cases);
}

static void accept_cases(void)
{
	struct op_params p = params_of("B", 20.0, "L", 6.0, "layers", 3.0, "row", 40.0, NULL);
	for (int s = 1; s <= 6; s++) {
		op_param_set(&p, "tree_seed", s);
		check_op("accept", &p, (uint64_t)s);
	}
	op_param_set(&p, "accept_p", 1.0);
	check_op("accept", &p, 9);
	/* a compaction of 4 MB or more is split over the threads */
	struct op_params big = params_of("B", 8.0, "L", 4.0, "layers", 128.0, "row", 16384.0,
					 "accept_p", 1.0, NULL);
	check_op("accept", &big, 12);
	op_param_set(&p, "accept_p", 0.0);
	check_op("accept", &p, 10);
}

static void test_ops__accept_matches_reference(void **state)
{
	(void)state;
	for_threads(accept_cases);
}

static void test_ops__accept_walk_follows_targets(void **state)
{
	(void)state;
	struct op_params p = params_of("B", 30.0, "L", 8.0, "layers", 2.0, "row", 8.0, "accept_p",
				       1.0, NULL);
	const struct op_desc *op = op_find("accept");
	void *inst;
	assert_int_equal(op->setup(&inst, &p, 3), 0);
	struct accept_inst *in = inst;
	assert_int_equal(op->run_cpu(inst), 0);
	/* always matching a child: the walk ends only at a leaf */
	int last = in->out.path[in->out.len - 1];
	for (int c = 0; c < in->n; c++)
		assert_int_not_equal(in->parent[c], last);
	for (int i = 1; i < in->out.len; i++) {
		assert_int_equal(in->parent[in->out.path[i]], in->out.path[i - 1]);
		assert_int_equal(in->token[in->out.path[i]], in->target[in->out.path[i - 1]]);
	}
	assert_int_equal(in->out.bonus, in->target[last]);
	/* bytes follow the accepted length */
	double want = 2.0 * 2 * in->out.len * 2 * 8 + 3.0 * 4 * 31 + 4.0 * 9;
	assert_float_equal(op->bytes(&p), want, 0.5);
	op->teardown(inst);
}

static void test_ops__a_wrong_element_fails_validation(void **state)
{
	(void)state;
	struct op_params p = params_of("M", 3.0, "K", 64.0, "N", 16.0, NULL);
	const struct op_desc *op = op_find("dense_gemv");
	void *inst;
	assert_int_equal(op->setup(&inst, &p, 4), 0);
	assert_int_equal(op->reference(inst), 0);
	assert_int_equal(op->run_cpu(inst), 0);
	assert_true(op->max_error(inst) <= op->tol);
	struct dense_gemv_inst *in = inst;
	in->out[3 * 16 - 1] += 0.05f * fabsf(in->ref[3 * 16 - 1]) + 0.05f;
	assert_true(op->max_error(inst) > op->tol);
	op->teardown(inst);
}

/* The row-sampled check of moe_w4a16, tree_attn and dense_gemv: the
 * reference of some rows is the full reference's on those rows; a wrong
 * element in a checked row fails it, and so does an element left poisoned
 * in a row it does not compare. */
static void sampled_case(const char *name, const struct op_params *p, float *(*out)(void *),
			 float *(*ref)(void *), size_t row_stride, size_t elem_stride)
{
	const struct op_desc *op = op_find(name);
	void *inst;
	assert_int_equal(op->setup(&inst, p, 5), 0);
	size_t total = op->check_rows(inst), rows[2] = {0, total - 1};
	assert_true(total > 3);
	assert_int_equal(op->reference(inst), 0);
	float first = ref(inst)[0], last = ref(inst)[(total - 1) * row_stride];
	op->poison(inst); /* the reference must write the checked rows again */
	for (size_t i = 0; i < total * row_stride; i++)
		ref(inst)[i] = NAN;
	assert_int_equal(op->reference_rows(inst, rows, 2), 0);
	assert_float_equal(ref(inst)[0], first, 0);
	assert_float_equal(ref(inst)[(total - 1) * row_stride], last, 0);
	assert_true(op->max_error_rows(inst, rows, 2) > op->tol); /* all poison */
	assert_int_equal(op->run_cpu(inst), 0);
	assert_true(op->max_error_rows(inst, rows, 2) <= op->tol);
	/* a wrong element of a checked row */
	float *o = out(inst) + (total - 1) * row_stride + elem_stride, keep = *o;
	*o += 0.05f * fabsf(ref(inst)[(total - 1) * row_stride + elem_stride]) + 0.05f;
	assert_true(op->max_error_rows(inst, rows, 2) > op->tol);
	*o = keep;
	/* one element of an unchecked row never written */
	out(inst)[1 * row_stride] = NAN;
	assert_true(isinf(op->max_error_rows(inst, rows, 2)));
	op->teardown(inst);
}

static float *moe_out(void *i) { return ((struct moe_w4a16_inst *)i)->out; }
static float *moe_ref(void *i) { return ((struct moe_w4a16_inst *)i)->ref; }
static float *gemv_out(void *i) { return ((struct dense_gemv_inst *)i)->out; }
static float *gemv_ref(void *i) { return ((struct dense_gemv_inst *)i)->ref; }
static float *attn_out(void *i) { return ((struct tree_attn_inst *)i)->out; }
static float *attn_ref(void *i) { return ((struct tree_attn_inst *)i)->ref; }

static void test_ops__a_sampled_check_still_fails_wrong_or_unwritten_output(void **state)
{
	(void)state;
	struct op_params moe = params_of("M", 6.0, "hidden", 128.0, "moe_inter", 128.0, "experts",
					 16.0, "topk", 4.0, "tp", 2.0, NULL);
	sampled_case("moe_w4a16", &moe, moe_out, moe_ref, 128, 1);
	struct op_params gemv = params_of("M", 3.0, "K", 64.0, "N", 16.0, NULL);
	sampled_case("dense_gemv", &gemv, gemv_out, gemv_ref, 1, 16);
	struct op_params attn = params_of("B", 6.0, "ctx", 70.0, "L", 3.0, "heads", 8.0, "tp", 4.0,
					  "kv_lora", 64.0, "rope", 16.0, "qk_dim", 48.0, NULL);
	sampled_case("tree_attn", &attn, attn_out, attn_ref, 64, 1);
}

static void test_ops__bad_sizes_are_input_errors(void **state)
{
	(void)state;
	void *inst = (void *)1;
	struct op_params p = params_of("tp", 3.0, NULL); /* 2048 % 3 != 0 */
	assert_int_equal(op_find("moe_w4a16")->setup(&inst, &p, 1), DDT_EINPUT);
	assert_null(inst);
	assert_non_null(strstr(err_msg(), "tp"));
	p = params_of("M", 0.0, NULL);
	assert_int_equal(op_find("dense_gemv")->setup(&inst, &p, 1), DDT_EINPUT);
	p = params_of("B", 2.5, NULL);
	assert_int_equal(op_find("tree_build")->setup(&inst, &p, 1), DDT_EINPUT);
}

static void test_ops__table_rows_are_complete(void **state)
{
	(void)state;
	int n = 0;
	for (int i = 0; op_table[i]; i++, n++) {
		const struct op_desc *op = op_table[i];
		assert_non_null(op->setup);
		assert_non_null(op->teardown);
		assert_non_null(op->reference);
		assert_non_null(op->run_cpu);
		assert_non_null(op->poison);
		assert_non_null(op->max_error);
		assert_non_null(op->bytes);
		assert_non_null(op->flops);
		assert_non_null(op->params);
		assert_ptr_equal(op_find(op->name), op);
		/* defaults are valid sizes: bytes are finite and positive */
		struct op_params none = {0}, full;
		assert_int_equal(op_params_complete(op, &none, &full), 0);
		assert_true(full.n >= 1);
		assert_true(isfinite(op->bytes(&full)) && op->bytes(&full) > 0);
	}
	assert_int_equal(n, 6);
	struct op_params bad = params_of("bogus", 1.0, NULL), out;
	assert_int_equal(op_params_complete(op_find("memcpy"), &bad, &out), DDT_EINPUT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ops__fills_are_the_same_for_any_thread_count),
		cmocka_unit_test(test_ops__memcpy_copies_every_byte),
		cmocka_unit_test(test_ops__moe_w4a16_matches_reference),
		cmocka_unit_test(test_ops__moe_w4a16_ep_marks_remote_slots),
		cmocka_unit_test(test_ops__moe_route_overlap_shares_experts),
		cmocka_unit_test(test_ops__moe_w4a16_counts_touched_experts),
		cmocka_unit_test(test_ops__a_sweep_of_m_keeps_the_weights),
		cmocka_unit_test(test_ops__dense_gemv_matches_reference),
		cmocka_unit_test(test_ops__tree_attn_matches_reference),
		cmocka_unit_test(test_ops__accept_matches_reference),
		cmocka_unit_test(test_ops__accept_walk_follows_targets),
		cmocka_unit_test(test_ops__a_wrong_element_fails_validation),
		cmocka_unit_test(test_ops__a_sampled_check_still_fails_wrong_or_unwritten_output),
		cmocka_unit_test(test_ops__bad_sizes_are_input_errors),
		cmocka_unit_test(test_ops__table_rows_are_complete),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
