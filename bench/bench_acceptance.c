/* bench_acceptance.c - drafter trace replay throughput (steps x budgets per second) beside the parse floor and a build-per-budget peer.
 *
 * A trace of block 16 and top-64 (the size the acceptance command is for:
 * 100k such steps, about 1.8 GB, replay in seconds) is written to a
 * temporary file, then timed three ways in the same run:
 *
 *   replay      ddt acceptance's stage, 11 budgets 1..1024, all threads and one
 *   parse only  the same file read and parsed, no tree: the floor of any replay
 *   per budget  the tree work alone, in memory: one build at the largest budget
 *               read at every budget (what the replay does) against one build
 *               per budget (the plain way)
 *
 *   1e6 steps   ddt acceptance's stage at its defaults on a trace of a million small
 *               steps (the shipped synthetic trace's shape, 50 steps a request), in
 *               CPU seconds beside the limit of 10 s a million steps
 *               (DDT_BENCH_BIG_STEPS: 0 skips; DDT_BENCH_BIG_KEEP=PATH keeps
 *               the trace there, to compare ddt acceptance's output before
 *               and after a change)
 *
 * DDT_BENCH_STEPS sets the steps (default 10000). Wall-clock figures on a
 * shared machine are noisy: compare the ratios, measured together. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acceptance.h"
#include "cpu/cpu.h"
#include "cpu/tree.h"
#include "cpu/walk.h"
#include "err.h"
#include "rng.h"
#include "trace.h"

#define L 15
#define K 64
#define V 163840
#define BIG_L 5            /* the 1e6-step trace: the shipped synthetic trace's shape */
#define BIG_K 5
#define BIG_LIMIT_CPU_S 10 /* the limit of 10 s of CPU a million steps */

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* One step like a confident drafter's: the first choice at 30-95%, the rest
 * of 90% of what is left falling off by a random 5-40% a rank; the target is the first
 * choice with its probability, else one of the others. */
static void write_step(FILE *fp, struct rng *r)
{
	int32_t ids[K], target[L];
	float lp[L][K];
	fputs("{\"topk_ids\":[", fp);
	for (int d = 0; d < L; d++) {
		double p1 = rng_uniform(r, 0.3f, 0.95f), w[K], sum = 0;
		w[0] = 1;
		for (int k = 1; k < K; k++)
			sum += w[k] = w[k - 1] * rng_uniform(r, 0.6f, 0.95f);
		lp[d][0] = logf((float)p1);
		for (int k = 1; k < K; k++)
			lp[d][k] = logf((float)((1 - p1) * 0.9 * w[k] / sum));
		for (int k = 0; k < K; k++) {
			int dup;
			do {
				ids[k] = (int32_t)rng_below(r, V);
				dup = 0;
				for (int i = 0; i < k; i++)
					dup |= ids[i] == ids[k];
			} while (dup);
			fprintf(fp, "%s%d", k ? "," : d ? "],[" : "[", ids[k]);
		}
		target[d] = rng_unit(r) < p1 ? ids[0] : ids[1 + rng_below(r, K - 1)];
	}
	fputs("]],\"topk_logprobs\":[", fp);
	for (int d = 0; d < L; d++)
		for (int k = 0; k < K; k++)
			fprintf(fp, "%s%.7g", k ? "," : d ? "],[" : "[", lp[d][k]);
	fputs("]],\"target\":[", fp);
	for (int d = 0; d < L; d++)
		fprintf(fp, "%s%d", d ? "," : "", target[d]);
	fputs("]}\n", fp);
}

/* A small step (BIG_L positions, top-BIG_K, the target from the drafter's
 * own law) of request req. */
static void write_small_step(FILE *fp, struct rng *r, long req)
{
	int32_t ids[BIG_L][BIG_K], target[BIG_L];
	float lp[BIG_L][BIG_K];
	for (int d = 0; d < BIG_L; d++) {
		double p1 = rng_uniform(r, 0.3f, 0.95f), w[BIG_K], sum = 0;
		w[0] = 1;
		for (int k = 1; k < BIG_K; k++)
			sum += w[k] = w[k - 1] * rng_uniform(r, 0.6f, 0.95f);
		lp[d][0] = logf((float)p1);
		for (int k = 1; k < BIG_K; k++)
			lp[d][k] = logf((float)((1 - p1) * 0.9 * w[k] / sum));
		for (int k = 0; k < BIG_K; k++)
			ids[d][k] = 1000 * k + (int32_t)rng_below(r, 1000); /* distinct: one block a rank */
		target[d] = rng_unit(r) < p1 ? ids[d][0] : ids[d][1 + rng_below(r, BIG_K - 1)];
	}
	fputs("{\"topk_ids\":[", fp);
	for (int d = 0; d < BIG_L; d++)
		for (int k = 0; k < BIG_K; k++)
			fprintf(fp, "%s%d", k ? "," : d ? "],[" : "[", ids[d][k]);
	fputs("]],\"topk_logprobs\":[", fp);
	for (int d = 0; d < BIG_L; d++)
		for (int k = 0; k < BIG_K; k++)
			fprintf(fp, "%s%.7g", k ? "," : d ? "],[" : "[", lp[d][k]);
	fputs("]],\"target\":[", fp);
	for (int d = 0; d < BIG_L; d++)
		fprintf(fp, "%s%d", d ? "," : "", target[d]);
	fprintf(fp, "],\"request_id\":%ld}\n", req);
}

static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* ddt acceptance's stage on a 1e6-step trace (DDT_BENCH_BIG_STEPS; 0 skips
 * it) at its defaults, in CPU seconds beside the limit. Returns 0 or 1. */
static int big_trace(void)
{
	const char *env = getenv("DDT_BENCH_BIG_STEPS");
	long steps = env ? atol(env) : 1000000;
	char path[] = "/tmp/ddt-bench-big-XXXXXX";
	int fd = steps > 0 ? mkstemp(path) : -1;
	FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
	struct rng r;
	struct acceptance_opts o;
	struct acceptance_result res;
	if (steps <= 0)
		return 0;
	if (!fp)
		return 1;
	rng_seed(&r, 7);
	for (long s = 0; s < steps; s++)
		write_small_step(fp, &r, s / 50);
	long bytes = ftell(fp);
	if (fclose(fp))
		return unlink(path), 1;
	acceptance_opts_default(&o);
	double c0 = cpu_s(), w0 = now_s();
	int rc = acceptance_replay(&res, path, &o);
	double cpu = cpu_s() - c0, wall = now_s() - w0;
	const char *keep = getenv("DDT_BENCH_BIG_KEEP");
	if (!keep || rename(path, keep))
		unlink(path);
	if (rc) {
		fprintf(stderr, "bench_acceptance: %s\n", err_msg());
		acceptance_free(&res);
		return 1;
	}
	printf("bench_acceptance: %ld steps (block %d, top-%d, %d budgets 1..1024, %d resamples over "
	       "%lld requests; %.0f MB): %.1f s CPU, %.1f s a million steps (limit %d s: %s), %.1f s "
	       "wall; bootstrap %.2f s CPU\n",
	       steps, BIG_L + 1, BIG_K, o.nbudgets, o.resamples, res.requests, bytes / 1e6, cpu,
	       cpu * 1e6 / steps, BIG_LIMIT_CPU_S,
	       cpu * 1e6 / steps < BIG_LIMIT_CPU_S ? "met" : "NOT met", wall, res.boot_cpu_s);
	acceptance_free(&res);
	return 0;
}

/* Reads and parses every line; returns the steps, or -1. */
static long parse_only(const char *path, struct trace_step *keep, long nkeep)
{
	struct trace_reader *tr;
	struct trace_batch b;
	struct trace_step s = {0};
	struct trace_err e;
	long n = 0;
	if (trace_open(&tr, path))
		return -1;
	while (!trace_read(tr, &b, 8u << 20) && b.n)
		for (size_t i = 0; i < b.n; i++, n++)
			if (trace_step_parse(n < nkeep ? &keep[n] : &s, b.line[i], b.len[i], &e))
				return -1;
	trace_close(tr);
	trace_step_free(&s);
	return n;
}

/* The tree work of the replay on parsed steps: per step either one build at
 * the largest budget read at every budget, or one build per budget. Returns
 * the summed acceptance (a checksum: both ways must agree). */
static long trees(const struct trace_step *st, long n, const int *budgets, int nb, int per_budget)
{
	int bmax = budgets[nb - 1], mw = (bmax + 1 + 31) / 32;
	struct tree_build_out o;
	int32_t *tgt = malloc((size_t)(bmax + 1) * 4), path[L + 2], bonus;
	void *heap = malloc((size_t)(2 * bmax + 2) * TREE_HEAP_ENTRY);
	float *lp = malloc(sizeof(float) * L * K);
	int32_t *tok = malloc(sizeof(int32_t) * L * K);
	size_t nn = (size_t)bmax + 1;
	o.parent = malloc(nn * 4), o.depth = malloc(nn * 4), o.rank = malloc(nn * 4);
	o.token = malloc(nn * 4), o.logp = malloc(nn * 4), o.mask = malloc(nn * mw * 4);
	long sum = 0;
	for (long s = 0; s < n; s++)
		for (int j = per_budget ? 0 : nb - 1; j < nb; j++) {
			int B = budgets[j], k = B < K ? B : K;
			for (int d = 0; d < L; d++)
				memcpy(lp + d * k, st[s].logp + d * K, (size_t)k * 4),
					memcpy(tok + d * k, st[s].tok + d * K, (size_t)k * 4);
			tree_heap_build(lp, tok, L, k, B, -1, (B + 1 + 31) / 32, heap, &o);
			for (int i = 0; i < o.n; i++)
				tgt[i] = o.depth[i] < L ? st[s].target[o.depth[i]] : -1;
			int len = accept_walk(o.parent, o.token, tgt, o.n, L, path, &bonus);
			if (per_budget) {
				sum += len;
				continue;
			}
			for (int b = 0; b < nb; b++) { /* the path's prefix within each budget */
				int a = 1;
				while (a < len && path[a] <= budgets[b])
					a++;
				sum += a;
			}
		}
	free(o.parent), free(o.depth), free(o.rank), free(o.token), free(o.logp), free(o.mask);
	free(tgt), free(heap), free(lp), free(tok);
	return sum;
}

static int replay(const char *path, const struct acceptance_opts *o, double *secs)
{
	struct acceptance_result r;
	double t0 = now_s();
	int rc = acceptance_replay(&r, path, o);
	*secs = now_s() - t0;
	acceptance_free(&r);
	if (rc)
		fprintf(stderr, "bench_acceptance: %s\n", err_msg());
	return rc;
}

int main(void)
{
	const char *env = getenv("DDT_BENCH_STEPS");
	long steps = env && atol(env) > 0 ? atol(env) : 10000, nkeep = steps < 2000 ? steps : 2000;
	char path[] = "/tmp/ddt-bench-trace-XXXXXX";
	int fd = mkstemp(path), threads = cpu_threads(), rc = 1;
	FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
	struct rng r;
	struct acceptance_opts o;
	struct trace_step *keep = calloc((size_t)nkeep, sizeof *keep);
	double t_all, t_one, t0;

	if (!fp || !keep)
		return 1;
	rng_seed(&r, 42);
	for (long s = 0; s < steps; s++)
		write_step(fp, &r);
	long bytes = ftell(fp);
	if (fclose(fp))
		goto done;
	acceptance_opts_default(&o);
	o.resamples = 200;
	printf("bench_acceptance: %ld steps x %d budgets (1..1024), block %d, top-%d: %.0f MB\n",
	       steps, o.nbudgets, L + 1, K, bytes / 1e6);
	if (replay(path, &o, &t_all))
		goto done;
	cpu_threads_set(1);
	if (replay(path, &o, &t_one))
		goto done;
	t0 = now_s();
	if (parse_only(path, keep, nkeep) != steps)
		goto done;
	double t_parse = now_s() - t0;
	cpu_threads_set(0);

	t0 = now_s();
	long once = trees(keep, nkeep, o.budgets, o.nbudgets, 0);
	double t_once = now_s() - t0;
	t0 = now_s();
	long each = trees(keep, nkeep, o.budgets, o.nbudgets, 1);
	double t_each = now_s() - t0;

	double sb = (double)steps * o.nbudgets;
	printf("bench_acceptance: replay, %d threads  %7.2f M steps x budgets/s  (%.0f steps/s; 100k steps: %.1f s)\n",
	       threads, sb / t_all / 1e6, steps / t_all, 1e5 / (steps / t_all));
	printf("bench_acceptance: replay, 1 thread    %7.2f M steps x budgets/s  (%.0f steps/s; 100k steps: %.1f s)\n",
	       sb / t_one / 1e6, steps / t_one, 1e5 / (steps / t_one));
	printf("bench_acceptance: parse only, 1 thread %6.0f MB/s: the replay on one thread takes %.2fx the parse\n",
	       bytes / t_parse / 1e6, t_one / t_parse);
	printf("bench_acceptance: trees, one build per step vs one per budget: %.1fx faster (%.0f vs %.0f us/step)%s\n",
	       t_each / t_once, t_once / nkeep * 1e6, t_each / nkeep * 1e6,
	       once == each ? "" : "  CHECKSUMS DIFFER");
	rc = once == each ? 0 : 1;
	rc |= big_trace();
done:
	for (long i = 0; i < nkeep; i++)
		trace_step_free(&keep[i]);
	free(keep);
	unlink(path);
	return rc;
}
