/* test_acceptance.c - drafter trace replay: expected acceptance from known distributions, exact cases, brute force, bad lines, gzip, the command. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "helpers.h"
#include "trace.h"
#include "accept_cache.h"
#include "accept_logs.h"
#include "acceptance.h"
#include "cpu/cpu.h"
#include "cpu/tree.h"
#include "cpu/walk.h"
#include "err.h"
#include "fsx.h"
#include "rng.h"

#define FIXTURE "tests/fixtures/acceptance/synthetic"

static char dir[] = "/tmp/ddt-acceptance-XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	fsx_rm_rf(dir);
	return 0;
}

static char *tmp_path(const char *name)
{
	char *p = fsx_join(dir, name);
	assert_non_null(p);
	return p;
}

/* ---- traces from known distributions ---- */

struct gen {
	int L, K, V;
	double p_first;  /* > 0: the target's token gets this probability and rank 1 */
};

struct tok_p {
	double p;
	int id;
};

static int tok_p_cmp(const void *a, const void *b)
{
	const struct tok_p *x = a, *y = b;
	if (x->p != y->p)
		return x->p > y->p ? -1 : 1;
	return x->id - y->id;
}

/* One position's distribution into t[V] (sorted best first); returns the
 * target's token, drawn from it. */
static int gen_position(struct rng *r, const struct gen *g, struct tok_p *t)
{
	double s = 0;
	for (int v = 0; v < g->V; v++) {
		t[v].id = v;
		t[v].p = exp(1.5 * rng_normal(r));
	}
	for (int h = 0; h < 3; h++)
		t[rng_below(r, (uint32_t)g->V)].p *= exp(rng_uniform(r, 4, 10));
	int first = (int)rng_below(r, (uint32_t)g->V);
	for (int v = 0; v < g->V; v++)
		s += v == first && g->p_first > 0 ? 0 : t[v].p;
	for (int v = 0; v < g->V; v++)
		t[v].p = g->p_first > 0 ? (v == first ? g->p_first : (1 - g->p_first) * t[v].p / s)
					: t[v].p / s;
	qsort(t, (size_t)g->V, sizeof *t, tok_p_cmp);
	if (g->p_first > 0)
		return first;
	double u = rng_unit(r), c = 0;
	for (int v = 0; v < g->V; v++)
		if ((c += t[v].p) > u)
			return t[v].id;
	return t[g->V - 1].id;
}

/* Writes steps lines to fp. */
static void gen_trace(FILE *fp, const struct gen *g, int steps, uint64_t seed)
{
	struct rng r;
	struct tok_p *t = malloc((size_t)g->L * g->V * sizeof *t);
	int target[256];
	assert_non_null(t);
	rng_seed(&r, seed);
	for (int s = 0; s < steps; s++) {
		for (int d = 0; d < g->L; d++)
			target[d] = gen_position(&r, g, t + (size_t)d * g->V);
		for (int pass = 0; pass < 2; pass++) {
			fprintf(fp, pass ? ",\"topk_logprobs\":[" : "{\"topk_ids\":[");
			for (int d = 0; d < g->L; d++)
				for (int k = 0; k < g->K; k++) {
					const struct tok_p *e = &t[(size_t)d * g->V + k];
					fprintf(fp, "%s%s", k ? "," : d ? "],[" : "[", "");
					if (pass)
						fprintf(fp, "%.9g", (double)(float)log(e->p));
					else
						fprintf(fp, "%d", e->id);
				}
			fputs("]]", fp);
		}
		fputs(",\"target\":[", fp);
		for (int d = 0; d < g->L; d++)
			fprintf(fp, "%s%d", d ? "," : "", target[d]);
		fputs("]}\n", fp);
	}
	free(t);
}

static char *gen_file(const char *name, const struct gen *g, int steps, uint64_t seed)
{
	char *path = tmp_path(name);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	gen_trace(fp, g, steps, seed);
	assert_int_equal(fclose(fp), 0);
	return path;
}

static void replay_ok(struct acceptance_result *r, const char *path, const struct acceptance_opts *o)
{
	int rc = acceptance_replay(r, path, o);
	if (rc)
		fail_msg("%s", err_msg());
}

/* ---- the acceptance list ---- */

/* The target drawn from the drafter's own distributions: the expected
 * acceptance of a tree is 1 + the sum of its nodes' prefix probabilities
 * (the drafter column), and the replayed mean must hold it inside its
 * interval at every budget. 99% intervals, 13 budgets: a correct replay
 * misses one by chance rarely, and the seeds are fixed. */
static void test_acceptance__mean_matches_prefix_probabilities(void **state)
{
	(void)state;
	const struct gen gens[] = {{7, 64, 200, 0}, {15, 32, 1000, 0}};
	for (size_t i = 0; i < sizeof gens / sizeof *gens; i++) {
		struct acceptance_opts o;
		struct acceptance_result r;
		char *path = gen_file("known.jsonl", &gens[i], 3000, 7 + i);
		acceptance_opts_default(&o);
		assert_int_equal(acceptance_parse_budgets(&o, "1,2,3,4,6,8,12,16,24,32,48,64"), 0);
		o.level = 0.99;
		replay_ok(&r, path, &o);
		assert_int_equal(r.steps, 3000);
		for (int j = 0; j < r.nb; j++) {
			const struct acceptance_budget *b = &r.b[j];
			if (b->drafter < b->lo || b->drafter > b->hi)
				fail_msg("L %d, budget %d: expected %.4f outside [%.4f, %.4f] (mean %.4f)",
					 gens[i].L, b->budget, b->drafter, b->lo, b->hi, b->mean);
			assert_true(b->lo <= b->mean && b->mean <= b->hi);
			assert_true(b->k_limited == 0 || b->budget > gens[i].K);
		}
		if (!(r.b[r.nb - 1].mean > r.b[0].mean + 1)) /* not a flat curve */
			fail_msg("L %d: flat curve %.3f .. %.3f", gens[i].L, r.b[0].mean, r.b[r.nb - 1].mean);
		acceptance_free(&r);
		free(path);
	}
}

/* The target always the drafter's first choice, with probability high enough
 * that the rank-1 chain's L prefixes are the L most probable: acceptance is
 * 1 + B below L and the whole block from B = L on, also when a smaller block
 * is replayed. */
static void test_acceptance__target_ranked_first_accepts_the_block(void **state)
{
	(void)state;
	const struct gen g = {7, 8, 50, 0.9}; /* 0.9^7 = 0.48 > 0.1, any other prefix */
	char *path = gen_file("first.jsonl", &g, 200, 3);
	for (int block = 0; block <= 4; block += 4) {
		struct acceptance_opts o;
		struct acceptance_result r;
		acceptance_opts_default(&o);
		assert_int_equal(acceptance_parse_budgets(&o, "0,1,2,...,64"), 0);
		o.block = block;
		replay_ok(&r, path, &o);
		int b = block ? block : g.L + 1;
		assert_int_equal(r.block, b);
		for (int j = 0; j < r.nb; j++) {
			double want = r.b[j].budget >= b - 1 ? b : 1 + r.b[j].budget;
			assert_float_equal(r.b[j].mean, want, 0);
			assert_float_equal(r.b[j].lo, want, 0);
			assert_float_equal(r.b[j].capped, r.b[j].budget >= b - 1 ? 1 : 0, 0);
		}
		acceptance_free(&r);
	}
	free(path);
}

struct bad {
	const char *line;
	int col;
	const char *says;
};

/* A bad line stops the replay with path:line:column and what is wrong. */
static void test_acceptance__malformed_line_reports_its_line_number(void **state)
{
	(void)state;
	static const char good[] =
		"{\"topk_ids\":[[5,9],[3,4]],\"topk_logprobs\":[[-0.1,-2.5],[-0.2,-1.9]],\"target\":[5,3]}";
	static const struct bad bad[] = {
		{"{\"topk_ids\":[[5,9],[3,4]],\"topk_logprobs\":[[-0.1,-2.5],[-0.2,-1.9]],\"target\":[5,3]", 83, "expected ',' or '}', found the end of the line"},
		{"[1,2]", 1, "one JSON object"},
		{"{\"topk_ids\":[[5,9],[3,4]],\"topk_logprobs\":[[-0.1,-2.5],[-0.2,-1.9]]}", 1, "no \"target\""},
		{"{\"topk_ids\":[[5,5],[3,4]],\"topk_logprobs\":[[-0.1,-2.5],[-0.2,-1.9]],\"target\":[5,3]}", 14, "token 5 twice"},
		{"{\"topk_ids\":[[5,9],[3,4]],\"topk_logprobs\":[[-2.5,-0.1],[-0.2,-1.9]],\"target\":[5,3]}", 44, "position 1 is not in descending order"},
		{"{\"topk_ids\":[[5,9],[3,4]],\"topk_logprobs\":[[3.1,2.5],[-0.2,-1.9]],\"target\":[5,3]}", 44, "position 1 sums to more than 1"},
		{"{\"topk_ids\":[[5,9],[3,4]],\"topk_logprobs\":[[-0.1,-2.5,-3],[-0.2,-1.9,-3]],\"target\":[5,3]}", 1, "is 2 x 3 but topk_ids is 2 x 2"},
		{"{\"topk_ids\":[[5,9],[3,4,7]],\"topk_logprobs\":[[-0.1,-2.5],[-0.2,-1.9]],\"target\":[5,3]}", 20, "position 2 has 3 entries"},
		{"{\"topk_ids\":[[5,,9],[3,4]],\"topk_logprobs\":[[-0.1,-2.5],[-0.2,-1.9]],\"target\":[5,3]}", 17, "expected a number, found ','"},
		{"{\"topk_ids\":[[5,9.5],[3,4]],\"topk_logprobs\":[[-0.1,-2.5],[-0.2,-1.9]],\"target\":[5,3]}", 17, "whole number"},
		{"{\"topk_ids\":[[5,9],[3,4]],\"topk_logprobs\":[[-0.1,NaN],[-0.2,-1.9]],\"target\":[5,3]}", 50, "expected a number, found 'N'"},
		{"{\"topk_ids\":[[5,9],[3,4]],\"topk_logprobs\":[[-0.1,-2.5],[-0.2,-1.9]],\"target\":[5]}", 1, "target has 1 tokens"},
		{"{\"topk_ids\":[[5,9],[3,4]],\"topk_logprobs\":[[-0.1,-2.5],[-0.2,-1.9]],\"target\":[5,3],\"block\":8}", 1, "block 8 but 2 positions"},
		{"{\"topk_ids\":[[5,9]],\"topk_logprobs\":[[-0.1,-2.5]],\"target\":[5]}", 1, "one block per trace"},
		{"{\"target\":[5,3],\"target\":[5,3]}", 17, "appears twice"},
		{"{\"topk_ids\":[[5,9],[3,4]],\"topk_logprobs\":[[-0.1,-2.5],[-0.2,-1.9]],\"target\":[5,3]} x", 85, "text after the object"},
		{"{\"topk_ids\":[[5,9],[3,4]],\"topk_logprobs\":[[-0.1,-2.5],[-0.2,-1.9]],\"target\":[5,3],\"accepted\":4}", 1, "more than the block"},
		{"{\"topk_ids\":[[5,9],[3,4]],\"topk_logprobs\":[[-0.1,-2.5],[-0.2,-1.9]],\"target\":[5,3],\"note\":\"a\\qb\"}", 93, "unknown escape '\\q'"},
	};
	char *path = tmp_path("bad.jsonl");
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct acceptance_opts o;
		struct acceptance_result r;
		char want[512];
		FILE *fp = fopen(path, "w");
		assert_non_null(fp);
		fprintf(fp, "%s\n\n%s\n%s\n", good, bad[i].line, good); /* line 2 is blank */
		assert_int_equal(fclose(fp), 0);
		acceptance_opts_default(&o);
		assert_int_equal(acceptance_replay(&r, path, &o), DDT_EINPUT);
		snprintf(want, sizeof want, "%s:3:%d: ", path, bad[i].col);
		if (strncmp(err_msg(), want, strlen(want)) || !strstr(err_msg(), bad[i].says))
			fail_msg("case %zu: got \"%s\", want \"%s...%s\"", i, err_msg(), want, bad[i].says);
		acceptance_free(&r);
	}
	free(path);
}

/* ---- the replay against independent computations ---- */

static int read_list(const char *text, const char *key, double *v, int max)
{
	const char *p = strstr(text, key);
	int n = 0;
	assert_non_null(p);
	p = strchr(p, '[') + 1;
	while (n < max && *p && *p != ']') {
		char *end;
		v[n++] = strtod(p, &end);
		p = *end == ',' ? end + 1 : end;
	}
	return n;
}

/* The shipped trace against its expected curve, which tools/synth-trace
 * computed by brute force over every prefix: the replayed means exactly,
 * the drafter's expectation to float precision, the engine lines all agree. */
static void test_acceptance__fixture_matches_brute_force(void **state)
{
	(void)state;
	char *text, list[512] = "";
	size_t len;
	double budgets[64], drafter[64], replay[64];
	struct acceptance_opts o;
	struct acceptance_result r;

	assert_int_equal(fsx_read_all(FIXTURE ".expected.yaml", 1 << 16, &text, &len), 0);
	int n = read_list(text, "budgets:", budgets, 64);
	assert_int_equal(read_list(text, "drafter:", drafter, 64), n);
	assert_int_equal(read_list(text, "replay:", replay, 64), n);
	for (int j = 0; j < n; j++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", j ? "," : "",
			 (int)budgets[j]);
	acceptance_opts_default(&o);
	assert_int_equal(acceptance_parse_budgets(&o, list), 0);
	replay_ok(&r, FIXTURE ".jsonl", &o);
	assert_int_equal(r.steps, 400);
	for (int j = 0; j < n; j++) {
		assert_float_equal(r.b[j].mean, replay[j], 1e-9);
		assert_float_equal(r.b[j].drafter, drafter[j], 1e-6);
		assert_true(r.b[j].lo <= drafter[j] && drafter[j] <= r.b[j].hi);
	}
	assert_int_equal(r.engine_steps, 100);
	assert_int_equal(r.engine_agree, 100);
	assert_int_equal(r.context_steps, 100);
	acceptance_free(&r);
	free(text);
}

/* Mean acceptance at B with a tree built for B alone (the engine's heap and
 * walk, one build per budget), for the check below. */
static double per_budget_mean(const char *path, int L, int K, int B)
{
	struct trace_step_buf {
		int32_t tok[16 * 64];
		float lp[16 * 64];
		int32_t target[17];
	} *s = calloc(1, sizeof *s);
	struct tree_build_out o;
	int n = B + 1, mw = (B + 1 + 31) / 32, steps = 0;
	long sum = 0;
	int32_t path_buf[64], bonus, *node_target = malloc((size_t)n * 4);
	void *heap = malloc((size_t)(2 * n + 2) * TREE_HEAP_ENTRY);
	o.parent = malloc((size_t)n * 4), o.depth = malloc((size_t)n * 4), o.rank = malloc((size_t)n * 4);
	o.token = malloc((size_t)n * 4), o.logp = malloc((size_t)n * 4), o.mask = malloc((size_t)n * mw * 4);
	FILE *fp = fopen(path, "r");
	assert_non_null(fp);
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, fp) > 0) {
		char *p = strstr(line, "[[") + 1;
		for (int i = 0; i < L * K; i++) {
			while (*p < '0' || *p > '9')
				p++;
			s->tok[i] = (int32_t)strtol(p, &p, 10);
		}
		p = strstr(p, "[[") + 1;
		for (int i = 0; i < L * K; i++) {
			while (*p != '-' && (*p < '0' || *p > '9'))
				p++;
			s->lp[i] = strtof(p, &p);
		}
		p = strstr(p, "\"target\":[") + 10;
		for (int d = 0; d < L; d++, p++)
			s->target[d] = (int32_t)strtol(p, &p, 10);
		int k = K < B ? K : B;
		for (int d = 0; d < L; d++) /* cut each position to K' = min(B, K) ranks */
			memmove(s->lp + d * k, s->lp + d * K, (size_t)k * 4),
				memmove(s->tok + d * k, s->tok + d * K, (size_t)k * 4);
		tree_heap_build(s->lp, s->tok, L, k, B, -1, mw, heap, &o);
		for (int i = 0; i < o.n; i++)
			node_target[i] = o.depth[i] < L ? s->target[o.depth[i]] : -1;
		sum += accept_walk(o.parent, o.token, node_target, o.n, L, path_buf, &bonus);
		steps++;
	}
	free(line);
	fclose(fp);
	free(o.parent), free(o.depth), free(o.rank), free(o.token), free(o.logp), free(o.mask);
	free(node_target), free(heap), free(s);
	return (double)sum / steps;
}

/* One build at the largest budget, read at every budget, equals one build
 * per budget (the heap's order does not depend on where it stops). */
static void test_acceptance__one_build_serves_every_budget(void **state)
{
	(void)state;
	const struct gen g = {7, 24, 60, 0};
	char *path = gen_file("builds.jsonl", &g, 300, 11);
	struct acceptance_opts o;
	struct acceptance_result r;
	acceptance_opts_default(&o);
	assert_int_equal(acceptance_parse_budgets(&o, "1,2,3,5,8,13,21,34,55"), 0);
	replay_ok(&r, path, &o);
	for (int j = 0; j < r.nb; j++)
		assert_float_equal(r.b[j].mean, per_budget_mean(path, g.L, g.K, r.b[j].budget), 0);
	acceptance_free(&r);
	free(path);
}

/* ---- the reader, the options, the command ---- */

/* A gzip trace replays as the plain one; a truncated one is an error. */
static void test_acceptance__gzip_reads_like_plain(void **state)
{
	(void)state;
	char *text, *gz = tmp_path("synthetic.jsonl.gz");
	size_t len;
	struct acceptance_opts o;
	struct acceptance_result a, b;
	assert_int_equal(fsx_read_all(FIXTURE ".jsonl", 1 << 24, &text, &len), 0);
	gzFile f = gzopen(gz, "wb");
	assert_non_null(f);
	assert_int_equal(gzwrite(f, text, (unsigned)len), (int)len);
	assert_int_equal(gzclose(f), Z_OK);
	acceptance_opts_default(&o);
	replay_ok(&a, FIXTURE ".jsonl", &o);
	replay_ok(&b, gz, &o);
	for (int j = 0; j < a.nb; j++) {
		assert_float_equal(a.b[j].mean, b.b[j].mean, 0);
		assert_float_equal(a.b[j].hi, b.b[j].hi, 0);
	}
	acceptance_free(&a);
	acceptance_free(&b);

	char *gzdata;
	assert_int_equal(fsx_read_all(gz, 1 << 24, &gzdata, &len), 0);
	assert_int_equal(fsx_write_all(gz, gzdata, len / 2), 0);
	assert_int_equal(acceptance_replay(&a, gz, &o), DDT_EINPUT);
	assert_non_null(strstr(err_msg(), "gzip"));
	acceptance_free(&a);
	free(gzdata);
	free(text);
	free(gz);
}

/* Writes text[len] to path as gzip members of part bytes each (0: one member). */
static void gz_members(const char *path, const char *text, size_t len, size_t part)
{
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	for (size_t at = 0; at < len;) {
		size_t n = part && len - at > part ? part : len - at;
		uLong cap = compressBound((uLong)n) + 64;
		unsigned char *out = malloc(cap);
		z_stream z = {0};
		assert_non_null(out);
		assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY), Z_OK);
		z.next_in = (Bytef *)(text + at);
		z.avail_in = (uInt)n;
		z.next_out = out;
		z.avail_out = (uInt)cap;
		assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
		assert_int_equal(fwrite(out, 1, z.total_out, fp), z.total_out);
		deflateEnd(&z);
		free(out);
		at += n;
	}
	assert_int_equal(fclose(fp), 0);
}

/* Every gzip member is read to its end: members read like the plain text;
 * bytes after the last member, or a file cut inside one, are refused by
 * name, not read as a shorter trace. */
static void test_acceptance__gzip_members_and_trailing_data(void **state)
{
	(void)state;
	char *text, *gz = tmp_path("members.jsonl.gz");
	size_t len;
	struct acceptance_opts o;
	struct acceptance_result a, b;
	assert_int_equal(fsx_read_all(FIXTURE ".jsonl", 1 << 24, &text, &len), 0);
	acceptance_opts_default(&o);
	gz_members(gz, text, len, 10000);
	replay_ok(&a, FIXTURE ".jsonl", &o);
	replay_ok(&b, gz, &o);
	assert_int_equal(a.steps, b.steps);
	for (int j = 0; j < a.nb; j++)
		assert_float_equal(a.b[j].mean, b.b[j].mean, 0);
	acceptance_free(&a);
	acceptance_free(&b);

	FILE *fp = fopen(gz, "ab");
	assert_non_null(fp);
	fputs("junk after the gzip data\n", fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(acceptance_replay(&a, gz, &o), DDT_EINPUT);
	assert_non_null(strstr(err_msg(), "bytes of something else after the gzip data"));
	acceptance_free(&a);

	gz_members(gz, text, len, 0);
	char *data;
	size_t glen;
	assert_int_equal(fsx_read_all(gz, 1 << 24, &data, &glen), 0);
	assert_int_equal(fsx_write_all(gz, data, glen - 4), 0); /* its size trailer cut */
	assert_int_equal(acceptance_replay(&a, gz, &o), DDT_EINPUT);
	assert_non_null(strstr(err_msg(), "ends inside a gzip member"));
	acceptance_free(&a);
	free(data);
	free(text);
	free(gz);
}

/* Blank lines never reach a batch (its arrays do not grow with them, and
 * the next line keeps its number); a gzip of blank lines that inflates past
 * the budget stops early with why. */
static void test_acceptance__blank_line_gzip_bomb(void **state)
{
	(void)state;
	size_t nblank = 3u << 20, big = (size_t)TRACE_GZIP_ALLOW_BYTES + (8u << 20);
	const char *step = "{\"topk_ids\":[[1,2]],\"topk_logprobs\":[[-0.1,-3]],\"target\":[1]}\n";
	char *text = malloc(big + 128), *gz = tmp_path("blank.jsonl.gz");
	assert_non_null(text);
	memset(text, '\n', nblank);
	strcpy(text + nblank, step);
	gz_members(gz, text, nblank + strlen(step), 0);
	struct trace_reader *tr;
	struct trace_batch b;
	assert_int_equal(trace_open(&tr, gz), 0);
	assert_int_equal(trace_read(tr, &b, 1u << 20), 0);
	assert_int_equal(b.n, 1);
	assert_int_equal(b.no[0], (long long)nblank + 1);
	assert_int_equal(trace_read(tr, &b, 1u << 20), 0);
	assert_int_equal(b.n, 0);
	trace_close(tr);

	struct acceptance_opts o;
	struct acceptance_result r;
	acceptance_opts_default(&o);
	memset(text, '\n', big);
	gz_members(gz, text, big, 0);
	assert_int_equal(acceptance_replay(&r, gz, &o), DDT_EINPUT);
	assert_non_null(strstr(err_msg(), "inflates to more than 50 times its size"));
	acceptance_free(&r);
	free(text);
	free(gz);
}

/* A line whose recorded acceptance the replay does not reproduce is counted
 * and named. */
static void test_acceptance__engine_mismatch_is_named(void **state)
{
	(void)state;
	char *text, *path = tmp_path("mismatch.jsonl");
	size_t len;
	struct acceptance_opts o;
	struct acceptance_result r;
	assert_int_equal(fsx_read_all(FIXTURE ".jsonl", 1 << 24, &text, &len), 0);
	char *line5 = text; /* lines 1, 5, 9, ... record accepted */
	for (int i = 0; i < 4; i++)
		line5 = strchr(line5, '\n') + 1;
	char *acc = strstr(line5, "\"accepted\":") + 11;
	*acc = *acc == '1' ? '2' : '1';
	assert_int_equal(fsx_write_all(path, text, len), 0);
	acceptance_opts_default(&o);
	replay_ok(&r, path, &o);
	assert_int_equal(r.engine_steps, 100);
	assert_int_equal(r.engine_agree, 99);
	assert_int_equal(r.first_disagree, 5);
	acceptance_free(&r);
	free(text);
	free(path);
}

/* A trace whose steps record contexts 10, 20, ..., 1010 (and one that
 * records none): their distribution, quantiles linear between order
 * statistics. */
static void test_acceptance__context_distribution_is_reported(void **state)
{
	(void)state;
	const struct gen g = {3, 4, 20, 0};
	char *buf = NULL, *path = tmp_path("context.jsonl"), *out;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	assert_non_null(fp);
	gen_trace(fp, &g, 101, 5);
	assert_int_equal(fclose(fp), 0);
	fp = fopen(path, "w");
	assert_non_null(fp);
	int i = 0;
	for (char *l = buf, *e; (e = strchr(l, '\n')) != NULL; l = e + 1) /* "...}\n" */
		fprintf(fp, "%.*s,\"context\":%d}\n", (int)(e - l - 1), l, 10 * (101 - i++));
	assert_int_equal(fclose(fp), 0);
	struct acceptance_opts o;
	struct acceptance_result r;
	acceptance_opts_default(&o);
	replay_ok(&r, path, &o);
	assert_int_equal(r.context_steps, 101);
	assert_float_equal(r.context_mean, 510, 1e-9);
	assert_float_equal(r.context_sd, 10 * sqrt(101 * 102 / 12.0), 1e-9);
	static const double want[5] = {60, 260, 510, 760, 960};
	for (int k = 0; k < 5; k++)
		assert_float_equal(r.context_q[k], want[k], 1e-9);
	assert_int_equal(r.context_min, 10);
	assert_int_equal(r.context_max, 1010);
	acceptance_free(&r);
	char args[600];
	snprintf(args, sizeof args, "acceptance %s --budgets 1,2", path);
	assert_int_equal(helpers_ddt(&out, args), 0);
	assert_non_null(strstr(out, "context: 101 of 101 steps record it: mean 510 tokens (sd 293); "
				    "p5 60, p25 260, median 510, p75 760, p95 960; 10 to 1010\n"));
	free(out);
	/* none recorded: said so */
	fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(fwrite(buf, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(helpers_ddt(&out, args), 0);
	assert_non_null(strstr(out, "context: no step records it"));
	free(out);
	free(buf);
	free(path);
}

static void test_acceptance__budget_lists(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} ok[] = {
		{"1,2,4,...,64", "1,2,4,8,16,32,64"},
		{"8,12,...,32", "8,12,16,20,24,28,32"},
		{"1,2,3,...,6", "1,2,3,4,5,6"},
		{"32,8,8,0", "0,8,32"},
		{"1,2,4,...,1000", "1,2,4,8,16,32,64,128,256,512,1000"},
	};
	static const char *const bad[] = {"", "1,...,4", "a", "1,,2", "9000", "-1", "4,2,...,8"};
	struct acceptance_opts o;
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		char got[512] = "";
		assert_int_equal(acceptance_parse_budgets(&o, ok[i].in), 0);
		for (int j = 0; j < o.nbudgets; j++)
			snprintf(got + strlen(got), sizeof got - strlen(got), "%s%d", j ? "," : "",
				 o.budgets[j]);
		assert_string_equal(got, ok[i].out);
	}
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (acceptance_parse_budgets(&o, bad[i]) != DDT_EINPUT)
			fail_msg("'%s' was taken", bad[i]);
}

/* Threads split lines and resamples; the figures do not move. */
static void test_acceptance__same_figures_on_any_thread_count(void **state)
{
	(void)state;
	struct acceptance_opts o;
	struct acceptance_result a, b;
	int saved = cpu_threads();
	acceptance_opts_default(&o);
	cpu_threads_set(1);
	replay_ok(&a, FIXTURE ".jsonl", &o);
	cpu_threads_set(3);
	replay_ok(&b, FIXTURE ".jsonl", &o);
	cpu_threads_set(saved);
	for (int j = 0; j < a.nb; j++) {
		assert_float_equal(a.b[j].lo, b.b[j].lo, 0);
		assert_float_equal(a.b[j].hi, b.b[j].hi, 0);
		assert_float_equal(a.b[j].drafter, b.b[j].drafter, 0);
	}
	acceptance_free(&a);
	acceptance_free(&b);
}

/* ---- request-clustered traces ---- */

/*
 * Each request has its own luck: the target takes the drafter's first choice
 * with probability q, q uniform on [0.1, 0.9] per request; otherwise its
 * second (half the rest) or a token outside the top-4. The drafter's
 * probabilities are fixed (0.6, 0.2, 0.1, 0.05 at every position), so the
 * trees of budget 1, 2 and 3 are the first-choice chain of that length, and
 * the true mean at budget B is 1 + E[q] + ... + E[q^B], with E[q^k] =
 * (0.9^(k+1) - 0.1^(k+1)) / (0.8 (k + 1)). Requests of 20 to 80 steps,
 * interleaved two at a time; ids as strings, or left out (with_ids 0).
 */
#define CL_L 3
#define CL_K 4

static double cluster_true_mean(int B)
{
	double m = 1;
	for (int k = 1; k <= B; k++)
		m += (pow(0.9, k + 1) - pow(0.1, k + 1)) / (0.8 * (k + 1));
	return m;
}

static void cluster_step(FILE *fp, struct rng *r, double q, int request, int with_ids)
{
	static const double p[CL_K] = {0.6, 0.2, 0.1, 0.05};
	int ids[CL_L][CL_K], target[CL_L];
	for (int d = 0; d < CL_L; d++) {
		for (int k = 0; k < CL_K; k++)
			ids[d][k] = 10 * k + (int)rng_below(r, 10); /* distinct: one decade a rank */
		double u = rng_unit(r);
		target[d] = u < q ? ids[d][0] : u < q + (1 - q) / 2 ? ids[d][1] : 1000 + d;
	}
	fputs("{\"topk_ids\":[", fp);
	for (int d = 0; d < CL_L; d++)
		fprintf(fp, "%s[%d,%d,%d,%d]", d ? "," : "", ids[d][0], ids[d][1], ids[d][2], ids[d][3]);
	fputs("],\"topk_logprobs\":[", fp);
	for (int d = 0; d < CL_L; d++) {
		fputs(d ? ",[" : "[", fp);
		for (int k = 0; k < CL_K; k++)
			fprintf(fp, "%s%.9g", k ? "," : "", (double)(float)log(p[k]));
		fputc(']', fp);
	}
	fprintf(fp, "],\"target\":[%d,%d,%d]", target[0], target[1], target[2]);
	if (with_ids)
		fprintf(fp, ",\"request_id\":\"req-%d\"", request);
	fputs("}\n", fp);
}

/* A trace of nreq requests; returns its path. */
static char *cluster_trace(int nreq, uint64_t seed, int with_ids)
{
	char *path = tmp_path("clustered.jsonl");
	FILE *fp = fopen(path, "w");
	struct rng r;
	assert_non_null(fp);
	rng_seed(&r, seed);
	for (int i = 0; i < nreq; i += 2) { /* two requests at a time, their steps alternating */
		double q[2] = {rng_uniform(&r, 0.1f, 0.9f), rng_uniform(&r, 0.1f, 0.9f)};
		int left[2] = {20 + (int)rng_below(&r, 61), 20 + (int)rng_below(&r, 61)};
		while (left[0] || left[1])
			for (int k = 0; k < 2; k++)
				if (left[k] && i + k < nreq)
					cluster_step(fp, &r, q[k], i + k, with_ids), left[k]--;
				else
					left[k] = 0;
	}
	assert_int_equal(fclose(fp), 0);
	return path;
}

/* Of 12 traces (seeds 1..12), how many 95% intervals hold the true mean at
 * budget B = 1, 2, 3; the design effect's smallest value over those budgets. */
static void cluster_coverage(int with_ids, int held[3], double *deff_min)
{
	*deff_min = INFINITY;
	held[0] = held[1] = held[2] = 0;
	for (uint64_t seed = 1; seed <= 12; seed++) {
		struct acceptance_opts o;
		struct acceptance_result r;
		char *path = cluster_trace(40, seed, with_ids);
		acceptance_opts_default(&o);
		assert_int_equal(acceptance_parse_budgets(&o, "1,2,3"), 0);
		replay_ok(&r, path, &o);
		assert_int_equal(r.requests, with_ids ? 40 : r.steps);
		for (int j = 0; j < 3; j++) {
			double t = cluster_true_mean(j + 1);
			held[j] += r.b[j].lo <= t && t <= r.b[j].hi;
			*deff_min = fmin(*deff_min, r.b[j].deff);
		}
		acceptance_free(&r);
		free(path);
	}
}

/* With request ids the bootstrap resamples requests: the 95% intervals hold
 * the true mean in at least 10 of 12 traces at each budget, and the design
 * effect says how far apart the steps of a request are not. Without the ids
 * the same traces are resampled by step: the intervals are too narrow and
 * miss (the generator is clustered enough to tell the two apart). */
static void test_acceptance__bootstrap_over_requests_covers(void **state)
{
	(void)state;
	int held[3];
	double deff;
	cluster_coverage(1, held, &deff);
	print_message("clustered traces, by request: 95%% intervals held the truth in %d, %d, %d "
		      "of 12 (B = 1, 2, 3); design effect >= %.1f\n", held[0], held[1], held[2], deff);
	for (int j = 0; j < 3; j++)
		assert_true(held[j] >= 10);
	assert_true(deff > 3);
	cluster_coverage(0, held, &deff);
	print_message("the same traces by step: %d, %d, %d of 12\n", held[0], held[1], held[2]);
	assert_true(held[0] + held[1] + held[2] < 30);
}

/* One request (or one step): no zero-width interval, but all a step can
 * accept at each budget. */
static void test_acceptance__one_request_has_no_interval(void **state)
{
	(void)state;
	struct acceptance_opts o;
	struct acceptance_result r;
	char *path = tmp_path("one.jsonl");
	const char *line = "{\"topk_ids\":[[1,2]],\"topk_logprobs\":[[-0.1,-3]],\"target\":[1]}\n";
	assert_int_equal(fsx_write_all(path, line, strlen(line)), 0);
	acceptance_opts_default(&o);
	assert_int_equal(acceptance_parse_budgets(&o, "0,1,4"), 0);
	replay_ok(&r, path, &o);
	assert_int_equal(r.requests, 1);
	assert_float_equal(r.b[0].lo, 1, 0);
	assert_float_equal(r.b[0].hi, 1, 0);
	assert_float_equal(r.b[1].lo, 1, 0);
	assert_float_equal(r.b[1].hi, 2, 0);
	assert_true(r.b[1].se > 0);
	acceptance_free(&r);
	free(path);
}

/* ---- serving-engine logs ---- */

#define LOGS "tests/fixtures/acceptance/logs/"

static void logs_estimate(struct accept_logs_result *r, const char *path, enum spec_log_kind kind)
{
	struct spec_log l;
	struct acceptance_opts o;
	struct accept_logs_prior prior;
	acceptance_opts_default(&o);
	assert_int_equal(acceptance_parse_budgets(&o, "1,2,4,...,256"), 0);
	if (accept_logs_prior_load(&prior, "calibration/acceptance/logs.yaml") ||
	    spec_log_read(&l, path, kind) || accept_logs_estimate(r, path, &l, &o, &prior))
		fail_msg("%s", err_msg());
	spec_log_free(&l);
}

/* The band holds the point, widens with the budget past the chain, and
 * budget 1 is the first position's rate exactly. */
static void logs_curve_sane(const struct accept_logs_result *r)
{
	assert_int_equal(r->budget[0], 1);
	assert_float_equal(r->est[0], 1 + r->rate[0], 1e-12);
	for (int j = 0; j < r->nb; j++) {
		assert_true(r->lo[j] <= r->samp_lo[j] && r->samp_lo[j] <= r->est[j]);
		assert_true(r->est[j] <= r->samp_hi[j] && r->samp_hi[j] <= r->hi[j]);
		assert_true(r->est[j] <= r->k + 1 + 1e-12);
		if (j)
			assert_true(r->est[j] >= r->est[j - 1] - 1e-12);
	}
	assert_true(r->hi[r->nb - 1] - r->lo[r->nb - 1] > r->samp_hi[r->nb - 1] - r->samp_lo[r->nb - 1]);
}

/* Real lines pasted in public threads (tests/fixtures/acceptance/logs/README.md
 * cites each): vLLM's SpecDecoding lines (two intervals, six positions) and
 * SGLang's decode-batch lines (five intervals, three drafted tokens) give
 * a mean with an interval over the intervals and a tree curve with a band. */
static void test_acceptance__engine_logs_give_a_curve(void **state)
{
	(void)state;
	struct accept_logs_result r;
	logs_estimate(&r, LOGS "vllm-club-3090-105.log", SPEC_LOG_VLLM);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.k, 6);
	assert_float_equal(r.weight, (1572 + 1590) / 6.0, 1e-9);
	assert_float_equal(r.mean, 1 + (489.0 + 455) / ((1572 + 1590) / 6.0), 1e-9);
	assert_float_equal(r.rate[0], (0.740 * 262 + 0.728 * 265) / 527, 1e-9);
	assert_true(r.mean_lo < r.mean && r.mean < r.mean_hi);
	logs_curve_sane(&r);
	print_message("vllm-log (club-3090#105): chain %.3f [%.3f, %.3f]; tree at B=64 %.3f [%.3f, %.3f]\n",
		      r.mean, r.mean_lo, r.mean_hi, r.est[6], r.lo[6], r.hi[6]);
	accept_logs_free(&r);

	logs_estimate(&r, LOGS "sglang-11948.log", SPEC_LOG_SGLANG);
	assert_int_equal(r.n, 5);
	assert_int_equal(r.k, 3);
	assert_float_equal(r.mean, (2.17 + 1.95 + 1.80 + 2.05 + 1.80) / 5, 1e-9);
	assert_true(r.mean_lo < r.mean && r.mean < r.mean_hi);
	assert_false(r.rates_logged);
	logs_curve_sane(&r);
	print_message("sglang-log (sglang#11948): chain %.3f [%.3f, %.3f]; tree at B=64 %.3f [%.3f, %.3f]\n",
		      r.mean, r.mean_lo, r.mean_hi, r.est[6], r.lo[6], r.hi[6]);
	accept_logs_free(&r);
}

/* Prometheus counters, one interval per engine; the real fragment pasted in
 * vllm#24049 is cut short and is refused by name, not read as zeros. */
static void test_acceptance__engine_metrics(void **state)
{
	(void)state;
	struct spec_log l;
	char *path = tmp_path("metrics.txt");
	const char *text =
		"# HELP vllm:spec_decode_num_drafts Number of spec decoding drafts.\n"
		"# TYPE vllm:spec_decode_num_drafts counter\n"
		"vllm:spec_decode_num_drafts_total{engine=\"0\",model_name=\"m\"} 100.0\n"
		"vllm:spec_decode_num_drafts_total{engine=\"1\",model_name=\"m\"} 300.0\n"
		"vllm:spec_decode_num_accepted_tokens_total{engine=\"0\",model_name=\"m\"} 150.0\n"
		"vllm:spec_decode_num_accepted_tokens_total{engine=\"1\",model_name=\"m\"} 390.0\n"
		"vllm:spec_decode_num_accepted_tokens_per_pos_total{engine=\"0\",model_name=\"m\",position=\"0\"} 90.0\n"
		"vllm:spec_decode_num_accepted_tokens_per_pos_total{engine=\"0\",model_name=\"m\",position=\"1\"} 60.0\n"
		"vllm:spec_decode_num_accepted_tokens_per_pos_total{engine=\"1\",model_name=\"m\",position=\"0\"} 240.0\n"
		"vllm:spec_decode_num_accepted_tokens_per_pos_total{engine=\"1\",model_name=\"m\",position=\"1\"} 150.0\n";
	assert_int_equal(fsx_write_all(path, text, strlen(text)), 0);
	assert_int_equal(spec_log_read(&l, path, SPEC_LOG_VLLM_METRICS), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.k, 2);
	assert_float_equal(l.iv[1].mean, 1 + 390.0 / 300, 1e-12);
	assert_float_equal(l.iv[1].rate[1], 0.5, 1e-12);
	spec_log_free(&l);
	free(path);

	assert_int_equal(spec_log_read(&l, LOGS "vllm-metrics-pr-24049.txt", SPEC_LOG_VLLM_METRICS),
			 DDT_EINPUT);
	assert_non_null(strstr(err_msg(), "vllm-metrics-pr-24049.txt: engine '1' has no "
					  "num_accepted_tokens_per_pos"));
	spec_log_free(&l);
	assert_int_equal(spec_log_read(&l, LOGS "sglang-11948.log", SPEC_LOG_VLLM), DDT_EINPUT);
	assert_non_null(strstr(err_msg(), "no 'SpecDecoding metrics:' line"));
	spec_log_free(&l);
}

/* The tree from rates: with s = 0 (misses never on a listed rank) it is the
 * chain; a certain first choice fills the block at budget k; more budget
 * never accepts less. */
static void test_acceptance__tree_from_rates(void **state)
{
	(void)state;
	const double rate[4] = {0.8, 0.6, 0.4, 0.2}, one[4] = {1, 1, 1, 1};
	for (int B = 1; B <= 4; B++) {
		double chain = 1;
		for (int d = 0; d < B; d++)
			chain += rate[d];
		assert_float_equal(accept_logs_tree(rate, 4, 0, B), chain, 1e-12);
	}
	assert_float_equal(accept_logs_tree(one, 4, 0.3, 4), 5, 1e-12);
	for (int B = 1; B < 300; B++)
		assert_true(accept_logs_tree(rate, 4, 0.3, B + 1) >= accept_logs_tree(rate, 4, 0.3, B));
	assert_true(accept_logs_tree(rate, 4, 0.3, 256) > accept_logs_tree(rate, 4, 0.1, 256));
}

/* A replay is kept by the hash of the trace's bytes and the options: the
 * second call reads the same figures back; changed bytes, other options or
 * a damaged entry replay again. */
static void test_acceptance__cache_by_content_hash(void **state)
{
	(void)state;
	char *cache = tmp_path("cache"), *trace = tmp_path("cached.jsonl"), *text;
	size_t len;
	int hit;
	struct acceptance_opts o;
	struct acceptance_result a, b;
	assert_int_equal(fsx_read_all(FIXTURE ".jsonl", 1 << 24, &text, &len), 0);
	assert_int_equal(fsx_write_all(trace, text, len), 0);
	acceptance_opts_default(&o);
	assert_int_equal(accept_cache_replay(&a, trace, &o, cache, &hit), 0);
	assert_false(hit);
	assert_int_equal(accept_cache_replay(&b, trace, &o, cache, &hit), 0);
	assert_true(hit);
	assert_string_equal(b.trace, trace);
	assert_int_equal(a.steps, b.steps);
	for (int j = 0; j < a.nb; j++) {
		assert_float_equal(a.b[j].mean, b.b[j].mean, 0);
		assert_float_equal(a.b[j].lo, b.b[j].lo, 0);
		assert_int_equal(a.b[j].hist[2], b.b[j].hist[2]);
		assert_float_equal(a.cov[j], b.cov[j], 0);
	}
	acceptance_free(&b);
	o.seed = 2;
	assert_int_equal(accept_cache_replay(&b, trace, &o, cache, &hit), 0);
	assert_false(hit);
	acceptance_free(&b);
	o.seed = 1;
	text[len - 4] = text[len - 4] == '1' ? '2' : '1'; /* the bonus token: other bytes */
	assert_int_equal(fsx_write_all(trace, text, len), 0);
	assert_int_equal(accept_cache_replay(&b, trace, &o, cache, &hit), 0);
	assert_false(hit);
	acceptance_free(&b);

	struct dirent **list; /* every entry damaged: replayed again, not read */
	int n = scandir(cache, &list, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (list[i]->d_name[0] != '.') {
			char *e = fsx_join(cache, list[i]->d_name), *data;
			size_t elen;
			assert_int_equal(fsx_read_all(e, 1 << 24, &data, &elen), 0);
			data[elen / 2] ^= 1;
			assert_int_equal(fsx_write_all(e, data, elen), 0);
			free(data);
			free(e);
		}
		free(list[i]);
	}
	free(list);
	assert_int_equal(accept_cache_replay(&b, trace, &o, cache, &hit), 0);
	assert_false(hit);
	acceptance_free(&b);
	acceptance_free(&a);
	free(text);
	free(trace);
	free(cache);
}

/* What a reader must not miss reaches the table and the projection's notes
 * (page one's caveats): budgets past the trace's top-K are lower bounds, a
 * small trace, a replay that disagrees with the engine. */
static void test_acceptance__lower_bounds_and_small_traces_are_warned(void **state)
{
	(void)state;
	char *out;
	assert_int_equal(helpers_ddt(&out, "acceptance tests/fixtures/acceptance/kjv-ngram.jsonl.gz "
				     "--budgets 32,64 --yaml -"), 0);
	assert_non_null(strstr(out, "lower_bound: [false, true]"));
	free(out);
	assert_int_equal(helpers_ddt(&out, "acceptance tests/fixtures/acceptance/kjv-ngram.jsonl.gz "
				     "--budgets 32,64"), 0);
	assert_non_null(strstr(out, "WARNING: a small trace (500 steps in 500 requests"));
	assert_non_null(strstr(out, "83.4%  lower bound"));
	assert_null(strstr(out, "0.0%  lower bound"));
	free(out);
	assert_int_equal(helpers_ddt(&out, "estimate --acceptance "
				     "tests/fixtures/acceptance/kjv-ngram.jsonl.gz --accept curve "
				     "--block 16 --budget 256"), 0);
	assert_non_null(strstr(out, "logs top-32: at budget 256 the tree wanted ranks past it"));
	assert_non_null(strstr(out, "kjv-ngram.jsonl.gz is small: 500 steps in 500 requests"));
	free(out);
	/* the grid's cells past top-32 carry the mark, the ones within it do not */
	assert_int_equal(helpers_ddt(&out, "estimate --acceptance "
				     "tests/fixtures/acceptance/kjv-ngram.jsonl.gz --accept curve "
				     "--block 16 --budget 256 --grid --format csv"), 0);
	assert_non_null(strstr(out, ",accept_capped,accept_lower_bound,"));
	int seen[2] = {0, 0};
	for (char *line = strstr(out, "\ngrid_target,") + 1; (line = strchr(line, '\n')) && line[1] &&
							      line[1] != '\n';) {
		int C, B;
		char *f = strchr(++line, ','); /* after the target */
		assert_non_null(f);
		assert_int_equal(sscanf(f, ",%d,%d,", &C, &B), 2);
		for (int k = 0; k < 5; k++) /* to the 7th field: accept_lower_bound */
			f = strchr(f + 1, ',');
		if (B <= 32 || B >= 64) /* top-32: none at or below 32; at 64, 83% of steps */
			assert_memory_equal(f + 1, B >= 64 ? "yes," : "no,", B >= 64 ? 4 : 3);
		seen[B >= 64] += B <= 32 || B >= 64;
	}
	assert_true(seen[0] > 0 && seen[1] > 0);
	free(out);

	char *text, *path = tmp_path("disagree.jsonl"), args[1200];
	size_t len;
	assert_int_equal(fsx_read_all(FIXTURE ".jsonl", 1 << 24, &text, &len), 0);
	char *acc = strstr(text, "\"accepted\":") + 11;
	*acc = *acc == '1' ? '2' : '1';
	assert_int_equal(fsx_write_all(path, text, len), 0);
	snprintf(args, sizeof args, "estimate --acceptance %s --accept curve --block 6 --budget 4", path);
	assert_int_equal(helpers_ddt(&out, args), 0);
	assert_non_null(strstr(out, "the replay disagrees with the engine's recorded acceptance on 1 "
				    "of 100 steps (first at line 1"));
	free(out);
	free(text);
	free(path);
}

/* A trace's target_rank record (where the target ranked at each position),
 * written from the trace itself. Returns its path. */
static char *ranks_of(const char *trace, const char *name)
{
	struct trace_reader *tr;
	struct trace_batch b;
	struct trace_step st = {0};
	struct trace_err e;
	char *path = tmp_path(name);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(trace_open(&tr, trace), 0);
	while (!trace_read(tr, &b, 1u << 20) && b.n)
		for (size_t i = 0; i < b.n; i++) {
			assert_int_equal(trace_step_parse(&st, b.line[i], b.len[i], &e), 0);
			fputs("{\"target_rank\": [", fp);
			for (int d = 0; d < st.L; d++) {
				int r = -1;
				for (int k = 0; k < st.K && r < 0; k++)
					r = st.tok[(size_t)d * st.K + k] == st.target[d] ? k : -1;
				fprintf(fp, "%s%d", d ? ", " : "", r);
			}
			fputs("]}\n", fp);
		}
	trace_close(tr);
	trace_step_free(&st);
	assert_int_equal(fclose(fp), 0);
	return path;
}

/* The rank record predicts the replayed tree: budget 1 exactly, every
 * budget within the rank_tree_gap (7%) and inside its band, on both
 * shipped traces (the figures calibration/acceptance/logs.yaml cites). */
static void test_acceptance__rank_record_tracks_the_replay(void **state)
{
	(void)state;
	static const char *const traces[] = {"tests/fixtures/acceptance/kjv-ngram.jsonl.gz",
					     FIXTURE ".jsonl"};
	for (int t = 0; t < 2; t++) {
		struct acceptance_opts o;
		struct acceptance_result rep;
		struct accept_logs_result est;
		char *ranks = ranks_of(traces[t], "trace.ranks");
		acceptance_opts_default(&o);
		assert_int_equal(acceptance_parse_budgets(&o, "1,2,4,...,256"), 0);
		replay_ok(&rep, traces[t], &o);
		logs_estimate(&est, ranks, SPEC_LOG_RANKS);
		assert_int_equal(est.nb, rep.nb);
		assert_float_equal(est.est[0], rep.b[0].mean, 1e-12);
		for (int j = 0; j < rep.nb; j++) {
			double gap = est.est[j] / rep.b[j].mean - 1;
			print_message("%s B=%d: replay %.3f, ranks %.3f (%+.1f%%) [%.3f, %.3f]\n", traces[t],
				      rep.b[j].budget, rep.b[j].mean, est.est[j], 100 * gap, est.lo[j], est.hi[j]);
			assert_true(fabs(gap) <= 0.07);
			assert_true(est.lo[j] <= rep.b[j].mean && rep.b[j].mean <= est.hi[j]);
		}
		acceptance_free(&rep);
		accept_logs_free(&est);
		free(ranks);
	}
}

/* The command: the table, YAML and CSV files, one-line errors with exit 2. */
static void test_acceptance__command(void **state)
{
	(void)state;
	char *out, args[1024], *yaml = tmp_path("curve.yaml"), *csv = tmp_path("curve.csv");
	snprintf(args, sizeof args, "acceptance " FIXTURE ".jsonl --budgets 1,2,4 --yaml %s --csv %s",
		 yaml, csv);
	assert_int_equal(helpers_ddt(&out, args), 0);
	assert_non_null(strstr(out, "400 steps, block 6"));
	assert_non_null(strstr(out, "100 of 100 steps"));
	free(out);
	char *text;
	size_t len;
	assert_int_equal(fsx_read_all(csv, 1 << 20, &text, &len), 0);
	assert_non_null(strstr(text, "budget,mean,ci_lo,ci_hi,se,drafter,capped,k_limited,steps,requests,design_effect,accept_1"));
	assert_non_null(strstr(text, "\n4,2.19,"));
	free(text);
	assert_int_equal(fsx_read_all(yaml, 1 << 20, &text, &len), 0);
	assert_non_null(strstr(text, "  budgets: [1, 2, 4]\n  mean: [1.5375, 1.8225, 2.19]\n"));
	free(text);

	assert_int_equal(helpers_ddt(&out, "acceptance tests/fixtures/acceptance/none.jsonl"), 1);
	assert_non_null(strstr(out, "cannot open"));
	free(out);
	assert_int_equal(helpers_ddt(&out, "acceptance tests/test_acceptance.c"), 2);
	assert_non_null(strstr(out, "tests/test_acceptance.c:1:1: a line must be one JSON object"));
	assert_null(strchr(out, '\n') + 1 == out + strlen(out) ? NULL : "more than one line");
	free(out);
	assert_int_equal(helpers_ddt(&out, "acceptance " FIXTURE ".jsonl --budgets 1,x"), 2);
	free(out);
	assert_int_equal(helpers_ddt(&out, "acceptance --help"), 0);
	assert_non_null(strstr(out, "--budgets"));
	free(out);
	free(yaml);
	free(csv);
}

/* The KJV trace's own chain written as vLLM would log it: per interval of
 * 25 steps, the share of drafts whose first d choices all held the target.
 * Returns its path. */
static char *kjv_as_vllm_log(void)
{
	char *path = tmp_path("kjv.vllm.log");
	FILE *fp = fopen(path, "w");
	struct trace_reader *tr;
	struct trace_batch b;
	struct trace_step st = {0};
	struct trace_err e;
	long long got[TRACE_MAX_L + 1] = {0}, n = 0;
	assert_non_null(fp);
	assert_int_equal(trace_open(&tr, "tests/fixtures/acceptance/kjv-ngram.jsonl.gz"), 0);
	while (!trace_read(tr, &b, 1 << 20) && b.n)
		for (size_t i = 0; i < b.n; i++) {
			assert_int_equal(trace_step_parse(&st, b.line[i], b.len[i], &e), 0);
			for (int d = 0; d < st.L && st.tok[(size_t)d * st.K] == st.target[d]; d++)
				got[d]++;
			if (++n % 25)
				continue;
			long long acc = 0;
			for (int d = 0; d < st.L; d++)
				acc += got[d];
			fprintf(fp, "INFO [metrics.py:101] SpecDecoding metrics: Mean acceptance length: "
				    "%.2f, Accepted: %lld tokens, Drafted: %lld tokens, Per-position "
				    "acceptance rate: ", 1 + acc / 25.0, acc, 25LL * st.L);
			for (int d = 0; d < st.L; d++)
				fprintf(fp, "%s%.3f", d ? ", " : "", got[d] / 25.0), got[d] = 0;
			fputs(", Avg Draft acceptance rate: 1.0%\n", fp);
		}
	trace_close(tr);
	trace_step_free(&st);
	assert_int_equal(fclose(fp), 0);
	return path;
}

/* The width of "acceptance: M (LO-HI)" in an estimate's table. */
static double accept_band(const char *out)
{
	double m, lo, hi;
	const char *a = strstr(out, "\n  acceptance: ");
	assert_non_null(a);
	assert_int_equal(sscanf(a, "\n  acceptance: %lf (%lf-%lf)", &m, &lo, &hi), 3);
	assert_true(lo <= m && m <= hi);
	return hi - lo;
}

/* A template whose acceptance source is a log (from: KIND beside trace:).
 * Returns its path (default.yaml copied beside it). */
static char *log_template(const char *name, const char *log, const char *from)
{
	char *def, *path = tmp_path("default.yaml"), y[2048];
	size_t len;
	assert_int_equal(fsx_read_all("templates/default.yaml", 1 << 20, &def, &len), 0);
	assert_int_equal(fsx_write_all(path, def, len), 0);
	free(def);
	free(path);
	path = tmp_path(name);
	int n = snprintf(y, sizeof y, "name: t\nextends: default.yaml\nprojection:\n"
			 "  acceptance_curve:\n    trace: %s\n    from: %s\n", log, from);
	assert_int_equal(fsx_write_all(path, y, (size_t)n), 0);
	return path;
}

/* A log as the projection's acceptance source: `accept: curve` takes the
 * tree estimated from the log's chain, the band drawn with the unknown
 * second-choice share and named on page one; the KJV trace's own chain as
 * a log gets a wider band than the trace replayed; the real fixtures give
 * a curve; an unknown kind is one line at its file:line:column. */
static void test_acceptance__log_as_projection_source(void **state)
{
	(void)state;
	char *out, args[2048], *log = kjv_as_vllm_log(), *t = log_template("kjv.yaml", log, "vllm-log");
	assert_int_equal(helpers_ddt(&out, "estimate --acceptance "
				     "tests/fixtures/acceptance/kjv-ngram.jsonl.gz --accept curve "
				     "--block 16 --budget 16 --samples 2000"), 0);
	double trace_w = accept_band(out);
	free(out);
	snprintf(args, sizeof args, "estimate --template %s --accept curve --block 16 --budget 16 "
		 "--samples 2000", t);
	assert_int_equal(helpers_ddt(&out, args), 0);
	double log_w = accept_band(out);
	assert_non_null(strstr(out, "from the vllm-log "));
	assert_non_null(strstr(out, "a log holds the engine's chain, not the tree"));
	assert_non_null(strstr(out, "drawn over 0.10-0.40"));
	if (!(log_w > 2 * trace_w))
		fail_msg("the log's band %.3f is not wider than the trace's %.3f", log_w, trace_w);
	free(out);
	/* budget 1 is the log's first rate; the draws spread the band, not the point */
	snprintf(args, sizeof args, "estimate --template %s --accept curve --block 16 --budget 1 "
		 "--samples 2000 --brief", t);
	assert_int_equal(helpers_ddt(&out, args), 0);
	assert_non_null(strstr(out, "accept 1.49 "));
	free(out);
	free(t);

	/* the real fixtures: vLLM's two intervals, SGLang's five (no positions) */
	t = log_template("club.yaml", "tests/fixtures/acceptance/logs/vllm-club-3090-105.log",
			 "vllm-log");
	snprintf(args, sizeof args, "estimate --template %s --accept curve --block 7 --budget 64", t);
	assert_int_equal(helpers_ddt(&out, args), 0);
	assert_non_null(strstr(out, "\n  acceptance: 4.11 (2.9-5.35) from the vllm-log "));
	free(out);
	snprintf(args, sizeof args, "estimate --template %s --accept curve --block 8 --budget 4", t);
	assert_int_equal(helpers_ddt(&out, args), 2);
	assert_non_null(strstr(out, "drafts 6 positions (block 7); block 8 is beyond it"));
	free(out);
	free(t);
	t = log_template("sglang.yaml", "tests/fixtures/acceptance/logs/sglang-11948.log", "sglang-log");
	snprintf(args, sizeof args, "estimate --template %s --accept curve --block 4 --budget 16", t);
	assert_int_equal(helpers_ddt(&out, args), 0);
	assert_non_null(strstr(out, "from the sglang-log "));
	assert_non_null(strstr(out, "no per-position rates logged: one rate at every position"));
	free(out);
	free(t);

	t = log_template("bad.yaml", log, "vllm-lgo");
	snprintf(args, sizeof args, "estimate --template %s --accept curve --block 16 --budget 16", t);
	assert_int_equal(helpers_ddt(&out, args), 2);
	char want[1024];
	snprintf(want, sizeof want, "%s:6:11: from: expected vllm-log, vllm-metrics or sglang-log", t);
	if (!strstr(out, want) || strchr(out, '\n') != out + strlen(out) - 1)
		fail_msg("want one line '%s...' in: %s", want, out);
	assert_non_null(strstr(out, "got 'vllm-lgo'"));
	free(out);
	free(t);
	free(log);
}

/* The real trace shipped beside its curve: the replay writes that curve
 * again, byte for byte (acceptance_read_yaml reads it back). */
static void test_acceptance__real_trace_reproduces_its_curve(void **state)
{
	(void)state;
	struct acceptance_opts o;
	struct acceptance_result r;
	char *want, *got = NULL;
	size_t wlen, glen = 0;
	acceptance_opts_default(&o);
	replay_ok(&r, "tests/fixtures/acceptance/kjv-ngram.jsonl.gz", &o);
	FILE *fp = open_memstream(&got, &glen);
	acceptance_write_yaml(&r, fp);
	fclose(fp);
	assert_int_equal(fsx_read_all("tests/fixtures/acceptance/kjv-ngram.curve.yaml", 1 << 20,
				      &want, &wlen), 0);
	assert_string_equal(got, want);
	for (int j = 1; j < r.nb; j++) /* acceptance never falls as the budget grows */
		assert_true(r.b[j].mean >= r.b[j - 1].mean);
	acceptance_free(&r);
	free(want);
	free(got);
}

#define KJV_CURVE "tests/fixtures/acceptance/kjv-ngram.curve.yaml"

/* r written to a string (malloc'd). */
static char *curve_text(const struct acceptance_result *r)
{
	char *got = NULL;
	size_t glen = 0;
	FILE *fp = open_memstream(&got, &glen);
	assert_non_null(fp);
	acceptance_write_yaml(r, fp);
	fclose(fp);
	return got;
}

/* The shipped curve reads back into the figures it was written from and
 * writes the same bytes again; a seed past a double's whole numbers and a
 * design effect of null (one request: no spread) read exactly. */
static void test_acceptance__curve_reads_back(void **state)
{
	(void)state;
	struct acceptance_result r, w;
	struct acceptance_opts o;
	char *want, *got, *path = tmp_path("seed.curve.yaml");
	size_t wlen;
	assert_int_equal(fsx_read_all(KJV_CURVE, 1 << 20, &want, &wlen), 0);
	if (acceptance_read_yaml(&r, KJV_CURVE))
		fail_msg("%s", err_msg());
	assert_int_equal(r.steps, 500);
	assert_int_equal(r.nb, 11);
	assert_int_equal(r.block, 16);
	assert_int_equal(r.b[10].budget, 1024);
	assert_float_equal(r.b[0].mean, 1.492, 0);
	assert_float_equal(r.b[6].k_limited, 0.834, 0);
	assert_float_equal(r.cov[0], 0.000523753783, 0);
	assert_float_equal(r.cov[10 * 11 + 9], 0.00199904531, 0);
	assert_int_equal(r.b[10].hist[5], 8);
	assert_true(isnan(r.engine_mean));
	assert_int_equal(r.context_min, 210);
	assert_float_equal(r.context_q[4], 77531.6, 0);
	got = curve_text(&r);
	assert_string_equal(got, want);
	free(got);

	r.seed = 9007199254740993u; /* 2^53 + 1 */
	got = curve_text(&r);
	assert_int_equal(fsx_write_all(path, got, strlen(got)), 0);
	if (acceptance_read_yaml(&w, path))
		fail_msg("%s", err_msg());
	assert_true(w.seed == 9007199254740993u);
	acceptance_free(&w);
	free(got);
	acceptance_free(&r);

	char *one = tmp_path("one-request.jsonl");
	const char *line = "{\"topk_ids\":[[1,2]],\"topk_logprobs\":[[-0.1,-3]],\"target\":[1]}\n";
	assert_int_equal(fsx_write_all(one, line, strlen(line)), 0);
	acceptance_opts_default(&o);
	assert_int_equal(acceptance_parse_budgets(&o, "0,1,4"), 0);
	replay_ok(&r, one, &o);
	assert_true(isnan(r.b[1].deff));
	got = curve_text(&r);
	assert_non_null(strstr(got, "design_effect: [null, null, null]"));
	assert_int_equal(fsx_write_all(path, got, strlen(got)), 0);
	if (acceptance_read_yaml(&w, path))
		fail_msg("%s", err_msg());
	assert_true(isnan(w.b[1].deff));
	free(got);
	got = curve_text(&w);
	char *again = curve_text(&r);
	assert_string_equal(got, again);
	free(again);
	free(got);
	acceptance_free(&w);
	acceptance_free(&r);

	/* options whose curve would not read back are refused before the replay,
	 * in the words of the curve's bootstrap keys */
	o.level = 0.3;
	assert_int_equal(acceptance_replay(&r, one, &o), DDT_EINPUT);
	assert_string_equal(err_msg(), "level: must be within [0.5, 0.999]");
	acceptance_free(&r);
	o.level = 0.95, o.resamples = 0;
	assert_int_equal(acceptance_replay(&r, one, &o), DDT_EINPUT);
	assert_string_equal(err_msg(), "resamples: must be within [1, 1000000]");
	acceptance_free(&r);
	free(one);
	free(path);
	free(want);
}

/* The shipped curve with from replaced by to, read back: the first problem,
 * which must hold want (its file, line and column). */
static void bad_curve(const char *from, const char *to, const char *want)
{
	struct acceptance_result r;
	char *text, *path = tmp_path("bad.curve.yaml"), *edited;
	size_t len;
	assert_int_equal(fsx_read_all(KJV_CURVE, 1 << 20, &text, &len), 0);
	char *at = strstr(text, from);
	if (!at)
		fail_msg("no '%s' in the curve", from);
	assert_non_null(edited = malloc(len + strlen(to) + 1));
	snprintf(edited, len + strlen(to) + 1, "%.*s%s%s", (int)(at - text), text, to,
		 at + strlen(from));
	assert_int_equal(fsx_write_all(path, edited, strlen(edited)), 0);
	err_clear();
	assert_int_equal(acceptance_read_yaml(&r, path), DDT_EINPUT);
	if (!strstr(err_msg(), path) || !strstr(err_msg(), want))
		fail_msg("want '%s' in: %s", want, err_msg());
	acceptance_free(&r);
	free(edited);
	free(text);
	free(path);
}

/* A curve that breaks its table or a rule across its keys is refused at the
 * key or item that breaks it. */
static void test_acceptance__bad_curve_is_named_at_its_place(void **state)
{
	(void)state;
	bad_curve("mean: [1.492,", "mean: [1.3,", ":14:10: mean: 1.3 at budget 1 is outside its "
		  "interval [1.44383511, 1.53615115] (ci_lo, ci_hi)");
	bad_curve("budgets: [1, 2, 4,", "budgets: [1, 4, 4,", ":13:19: budgets: must increase, "
		  "got 4 after 4");
	bad_curve("lower_bound: [false,", "lower_bound: [true,", ":22:17: lower_bound: true at "
		  "budget 1, where k_limited is 0");
	bad_curve("[254, 246,", "[254, 245,", ":36:7: hist: the row of budget 1 counts 499 steps, "
		  "not the 500 replayed");
	bad_curve("  steps: 500\n", "  steps: 500\n  step: 1\n", ":6:3: unknown key 'step'");
	bad_curve("capped: [0,", "capped: [2,", ":20:12: capped must be between 0 and 1, got 2");
	bad_curve("mean: [1.492, ", "mean: [", ":14:9: mean: 11 items (one per budget), got 10");
	bad_curve("agree: 0", "agree: 3", ":47:29: agree: 3 is more than the steps compared (0)");
	/* the bootstrap's keys take what ddt acceptance's options take (one table) */
	bad_curve("level: 0.95", "level: 0.3", ":12:39: level must be within [0.5, 0.999], got 0.3");
	bad_curve("resamples: 2000", "resamples: 0",
		  ":12:26: resamples must be within [1, 1000000], got 0");
	bad_curve("- [0.000523753783, ", "- [", ":24:7: cov: 11 items a row, got 10");
	bad_curve("steps: 500\n", "steps: 500.5\n", ":5:10: steps must be a whole number, got 500.5");
	bad_curve("p25: 20887", "p25: 2088", ":48:92: p25: 2088 is below p5 (3331.2)");
}

/* Every input of the committed fuzz corpus (fuzz/corpus/trace: seeds and
 * what the fuzzer found) replays or is refused with a message. */
static void test_acceptance__fuzz_corpus_replays_cleanly(void **state)
{
	(void)state;
	struct dirent **list;
	int n = scandir("fuzz/corpus/trace", &list, NULL, alphasort), replayed = 0;
	assert_true(n > 2);
	for (int i = 0; i < n; i++) {
		char *path = fsx_join("fuzz/corpus/trace", list[i]->d_name);
		if (list[i]->d_name[0] != '.') {
			struct acceptance_opts o;
			struct acceptance_result r;
			acceptance_opts_default(&o);
			err_clear();
			int rc = acceptance_replay(&r, path, &o);
			if (rc && (rc != DDT_EINPUT || !strstr(err_msg(), path)))
				fail_msg("%s: error %d: %s", path, rc, err_msg());
			acceptance_free(&r);
			replayed++;
		}
		free(path);
		free(list[i]);
	}
	free(list);
	assert_true(replayed >= 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_acceptance__mean_matches_prefix_probabilities),
		cmocka_unit_test(test_acceptance__target_ranked_first_accepts_the_block),
		cmocka_unit_test(test_acceptance__malformed_line_reports_its_line_number),
		cmocka_unit_test(test_acceptance__fixture_matches_brute_force),
		cmocka_unit_test(test_acceptance__one_build_serves_every_budget),
		cmocka_unit_test(test_acceptance__gzip_reads_like_plain),
		cmocka_unit_test(test_acceptance__gzip_members_and_trailing_data),
		cmocka_unit_test(test_acceptance__blank_line_gzip_bomb),
		cmocka_unit_test(test_acceptance__engine_mismatch_is_named),
		cmocka_unit_test(test_acceptance__context_distribution_is_reported),
		cmocka_unit_test(test_acceptance__budget_lists),
		cmocka_unit_test(test_acceptance__same_figures_on_any_thread_count),
		cmocka_unit_test(test_acceptance__bootstrap_over_requests_covers),
		cmocka_unit_test(test_acceptance__one_request_has_no_interval),
		cmocka_unit_test(test_acceptance__log_as_projection_source),
		cmocka_unit_test(test_acceptance__engine_logs_give_a_curve),
		cmocka_unit_test(test_acceptance__engine_metrics),
		cmocka_unit_test(test_acceptance__tree_from_rates),
		cmocka_unit_test(test_acceptance__cache_by_content_hash),
		cmocka_unit_test(test_acceptance__lower_bounds_and_small_traces_are_warned),
		cmocka_unit_test(test_acceptance__rank_record_tracks_the_replay),
		cmocka_unit_test(test_acceptance__command),
		cmocka_unit_test(test_acceptance__real_trace_reproduces_its_curve),
		cmocka_unit_test(test_acceptance__curve_reads_back),
		cmocka_unit_test(test_acceptance__bad_curve_is_named_at_its_place),
		cmocka_unit_test(test_acceptance__fuzz_corpus_replays_cleanly),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
