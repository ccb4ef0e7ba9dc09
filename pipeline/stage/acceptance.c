/* acceptance.c - drafter trace replay: each step's tree built once by the engine's heap at the largest budget, walked once, read at every budget; bootstrap over steps. */
#include "acceptance.h"

#include "accept_boot.h"
#include "cpu/cpu.h"
#include "cpu/tree.h"
#include "cpu/walk.h"
#include "err.h"
#include "rng.h"
#include "trace.h"

#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * One build serves every budget. The heap pops nodes in the same order
 * whatever B is (B only says when to stop, and K = min(B, V) never cuts a
 * rank the first B pops could reach: rank r needs r earlier pops under its
 * parent), so the tree at budget B is nodes 0..B of the tree at the largest
 * budget. Parents come first and sibling tokens are distinct, so the walk in
 * the smaller tree is the prefix of the big tree's path whose node indices
 * are <= B. test_acceptance checks this against one build per budget.
 */

#define BATCH_BYTES (8u << 20)
/* Lines a worker takes at a time: the threads take chunks until none is
 * left, so none waits long on another (a thread the machine has put aside
 * leaves its share to the others, where a fixed half would keep the caller
 * yielding until it came back). */
#define CHUNK_LINES 64
#define READ_MAX_L 64 /* deeper steps build the tree */
/* tree_sort_read's cut, a step's guess at its B-th log-prob less a margin
 * (struct cut_fit), and the one a step that misses it tries next (then
 * every prefix). The B-th log-prob follows the step's summed row means
 * closely (on bench_acceptance's trace a residual of 0.15 where the last
 * step's B-th is 0.77 off), so a line fitted over the last steps, less
 * CUT_SDS of its residual, keeps about 1,245 of the 3,905 prefixes a step
 * and misses one step in 800, where the last step's B-th times 1.05
 * kept 1,720 and missed one in four. */
#define CUT_BY 1.05f    /* until the line is fitted: the last step's B-th times this */
#define CUT_AGAIN 1.25f
#define CUT_SDS 3.0
#define CUT_MIN_SD 0.02 /* the residual's floor, in nats */
#define CUT_WINDOW 64.0 /* the fit's memory, in steps */
#define CUT_WARM 16     /* steps before the line is used */

void acceptance_opts_default(struct acceptance_opts *o)
{
	memset(o, 0, sizeof *o);
	for (int b = 1; b <= 1024; b *= 2)
		o->budgets[o->nbudgets++] = b;
	o->resamples = 2000;
	o->level = 0.95;
	o->seed = 1;
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Appends v to o's budgets (range-checked). */
static int budget_add(struct acceptance_opts *o, long v)
{
	if (v < 0 || v > ACCEPTANCE_MAX_BUDGET)
		return err_set(DDT_EINPUT, "--budgets: %ld is outside 0..%d", v, ACCEPTANCE_MAX_BUDGET);
	if (o->nbudgets == ACCEPTANCE_MAX_BUDGETS)
		return err_set(DDT_EINPUT, "--budgets: more than %d budgets", ACCEPTANCE_MAX_BUDGETS);
	o->budgets[o->nbudgets++] = (int)v;
	return 0;
}

/* Continues a, b (the two numbers before "...") up to end. */
static int budget_run(struct acceptance_opts *o, long a, long b, long end)
{
	int geometric = a > 0 && b >= 2 * a && b % a == 0;
	if (b <= a)
		return err_set(DDT_EINPUT, "--budgets: '%ld,%ld,...' must increase", a, b);
	for (long v = geometric ? b * (b / a) : 2 * b - a; v < end;
	     v = geometric ? v * (b / a) : v + (b - a)) {
		int rc = budget_add(o, v);
		if (rc)
			return rc;
	}
	return 0;
}

int acceptance_parse_budgets(struct acceptance_opts *o, const char *list)
{
	const char *p = list;
	int n = 0, rc;
	o->nbudgets = 0;
	while (*p) {
		if (!strncmp(p, "...", 3)) {
			char *end;
			long last = strtol(p + 4, &end, 10);
			if (n < 2 || p[3] != ',' || end == p + 4)
				return err_set(DDT_EINPUT, "--budgets: '...' needs two numbers before it and one after (1,2,4,...,1024)");
			if ((rc = budget_run(o, o->budgets[o->nbudgets - 2], o->budgets[o->nbudgets - 1], last)))
				return rc;
			p += 4;
			continue;
		}
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || (*end && *end != ','))
			return err_set(DDT_EINPUT, "--budgets: expected whole numbers separated by commas, got '%s'", list);
		if ((rc = budget_add(o, v)))
			return rc;
		n++;
		p = *end ? end + 1 : end;
	}
	if (!o->nbudgets)
		return err_set(DDT_EINPUT, "--budgets: no budget given");
	qsort(o->budgets, (size_t)o->nbudgets, sizeof *o->budgets, int_cmp);
	int k = 0;
	for (int i = 0; i < o->nbudgets; i++)
		if (!k || o->budgets[i] != o->budgets[k - 1])
			o->budgets[k++] = o->budgets[i];
	o->nbudgets = k;
	return 0;
}

/* ---- one step ---- */

/* A worker's buffers: the parsed line and the tree at up to cap nodes. */
struct ws {
	struct trace_step step;
	int cap;                 /* budget the buffers below hold */
	struct tree_build_out out;
	void *heap;              /* [2 cap + 2] heap entries */
	int32_t *node_target;    /* [1 + cap] the target's token after each node */
	float *lp;               /* [L][K'] top-K cut to the budget */
	int32_t *tok;
	size_t cap_lk;
	void *sort;              /* tree_sort_build's scratch */
	size_t cap_sort;
	struct cut_fit {         /* the B-th log-prob against the summed row means */
		int L, K, B, n;  /* the steps' shape, and how many were fitted */
		double f, b, ff, fb, ee; /* moving means: f, B-th, f^2, f B-th, residual^2 */
		float last;      /* the last step's B-th log-prob */
	} fit;
	int32_t path[TRACE_MAX_L + 2];
	int32_t qrank[2 * READ_MAX_L * READ_MAX_L]; /* tree_sort_read's prefixes */
};

static void ws_free_tree(struct ws *w)
{
	free(w->out.parent);
	free(w->out.depth);
	free(w->out.rank);
	free(w->out.token);
	free(w->out.logp);
	free(w->out.mask);
	free(w->heap);
	free(w->node_target);
	memset(&w->out, 0, sizeof w->out);
	w->heap = w->node_target = NULL;
	w->cap = 0;
}

static void ws_free(struct ws *w)
{
	ws_free_tree(w);
	trace_step_free(&w->step);
	free(w->lp);
	free(w->tok);
	free(w->sort);
}

/* Room for a tree of budget B (grows only). */
static int ws_reserve(struct ws *w, int B)
{
	if (B <= w->cap)
		return 0;
	ws_free_tree(w);
	size_t n = (size_t)B + 1, mw = (size_t)(B + 1 + 31) / 32;
	struct tree_build_out *o = &w->out;
	o->parent = malloc(n * 4);
	o->depth = malloc(n * 4);
	o->rank = malloc(n * 4);
	o->token = malloc(n * 4);
	o->logp = malloc(n * 4);
	o->mask = malloc(n * mw * 4);
	w->heap = malloc((2 * n) * TREE_HEAP_ENTRY);
	w->node_target = malloc(n * 4);
	if (!o->parent || !o->depth || !o->rank || !o->token || !o->logp || !o->mask || !w->heap ||
	    !w->node_target) {
		ws_free_tree(w);
		return DDT_ENOMEM;
	}
	w->cap = B;
	return 0;
}

/* Room for need bytes of tree_sort_build's scratch. Returns 0 or -1. */
static int ws_sort_reserve(struct ws *w, size_t need)
{
	if (need <= w->cap_sort)
		return 0;
	free(w->sort);
	w->cap_sort = 0;
	if (!(w->sort = malloc(need)))
		return -1;
	w->cap_sort = need;
	return 0;
}

/* The tree at budget B: without a heap when its prefixes are few (the same
 * tree, node for node), else the heap. Returns 0 or DDT_ENOMEM. */
static int ws_build(struct ws *w, const float *lp, const int32_t *tok, int L, int K, int B)
{
	size_t need = tree_sort_scratch_bytes(L, K, B);
	if (ws_sort_reserve(w, need))
		return DDT_ENOMEM;
	if (!need || tree_sort_build(lp, tok, L, K, B, -1, w->sort, &w->out))
		tree_heap_build(lp, tok, L, K, B, -1, (B + 1 + 31) / 32, w->heap, &w->out);
	return 0;
}

/* What one line gave, for the in-order reduction. */
struct line_res {
	int rc;                  /* 0, DDT_EINPUT (err filled) or DDT_ENOMEM */
	int blank;
	struct trace_err err;
	int L, K;
	int engine;              /* 1 compared, -1 recorded but not comparable, 0 none */
	int engine_accepted, engine_replayed;
	long long context;
	int has_request;
	uint64_t request;
	uint64_t k_limited;      /* bit j: budget j's figure is a lower bound */
};

struct job {
	const struct acceptance_opts *o;
	int bmax;                /* largest budget */
	struct ws *ws;           /* [threads] */
	const struct trace_batch *batch;
	struct line_res *res;    /* [batch] */
	uint16_t *acc;           /* [batch][nb] acceptance */
	double *drafter;         /* [batch][nb] 1 + sum of prefix probabilities */
	atomic_size_t next;      /* the batch's first line no thread has taken */
};

static int blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return 0;
	return 1;
}

/* The top-K lists the heap reads: the line's own, or cut to K' ranks. */
static int step_lists(struct ws *w, int L, int K, const float **lp, const int32_t **tok)
{
	const struct trace_step *s = &w->step;
	if (K == s->K) {
		*lp = s->logp;
		*tok = s->tok;
		return 0;
	}
	size_t need = (size_t)L * K;
	if (need > w->cap_lk) {
		float *a = realloc(w->lp, need * 4);
		if (a)
			w->lp = a;
		int32_t *b = a ? realloc(w->tok, need * 4) : NULL;
		if (!b)
			return DDT_ENOMEM;
		w->tok = b;
		w->cap_lk = need;
	}
	for (int d = 0; d < L; d++) {
		memcpy(w->lp + (size_t)d * K, s->logp + (size_t)d * s->K, (size_t)K * 4);
		memcpy(w->tok + (size_t)d * K, s->tok + (size_t)d * s->K, (size_t)K * 4);
	}
	*lp = w->lp;
	*tok = w->tok;
	return 0;
}

/* Reads the built tree and its path at every budget. */
static void step_budgets(const struct job *jb, struct ws *w, int len, struct line_res *r,
			 uint16_t *acc, double *drafter)
{
	const struct tree_build_out *o = &w->out;
	const struct acceptance_opts *op = jb->o;
	int k_edge = INT32_MAX; /* budgets above the first node of the trace's last rank */
	if (w->step.K < jb->bmax)
		for (int i = 1; i < o->n; i++)
			if (o->rank[i] == w->step.K - 1) {
				k_edge = i;
				break;
			}
	double cum = 0;
	int node = 1, on_path = 1;
	for (int j = 0; j < op->nbudgets; j++) {
		int B = op->budgets[j];
		for (; node < o->n && node <= B; node++)
			cum += exp((double)o->logp[node]);
		while (on_path < len && w->path[on_path] <= B)
			on_path++;
		acc[j] = (uint16_t)on_path;
		drafter[j] = 1 + cum;
		if (B > k_edge)
			r->k_limited |= 1ull << j;
	}
}

/* The path and budgets from the built tree (the heap's, or tree_sort_build's).
 * Returns the path's length, or -2 (no memory). */
static int step_build(const struct job *jb, struct ws *w, const float *lp, const int32_t *tok,
		      int L, int K, int B, const int32_t *by_depth, struct line_res *r,
		      uint16_t *acc, double *drafter)
{
	if (B > 0) {
		if (ws_build(w, lp, tok, L, K, B))
			return -2;
	} else
		w->out.n = 1, w->out.parent[0] = -1, w->out.depth[0] = 0;
	for (int i = 0; i < w->out.n; i++)
		w->node_target[i] = by_depth[w->out.depth[i]];
	int32_t bonus;
	int len = accept_walk(w->out.parent, w->out.token, w->node_target, w->out.n, L, w->path,
			      &bonus);
	step_budgets(jb, w, len, r, acc, drafter);
	return len;
}

/* The summed row means of a step's log-probs: what its B-th log-prob is
 * fitted against. */
static double cut_feature(const float *lp, int L, int K)
{
	double f = 0;
	for (int i = 0; i < L * K; i++)
		f += lp[i];
	return f / K;
}

/* The cut for a step of feature f: the fitted B-th log-prob less CUT_SDS
 * residuals (a log-prob; 0: every prefix). The cut only changes the time. */
static float cut_guess(const struct cut_fit *c, double f, double *pred)
{
	*pred = 0;
	if (c->n < CUT_WARM)
		return c->last * CUT_BY;
	double var = c->ff - c->f * c->f, cov = c->fb - c->f * c->b;
	*pred = c->b + (var > 1e-12 ? cov / var : 0) * (f - c->f);
	double sd = sqrt(c->ee), cut = *pred - CUT_SDS * (sd > CUT_MIN_SD ? sd : CUT_MIN_SD);
	return cut < 0 && cut > -1e30 ? (float)cut : 0;
}

/* Moves the fit by a step (feature f, B-th log-prob bth, guessed pred). */
static void cut_learn(struct cut_fit *c, int L, int K, int B, double f, double pred, float bth)
{
	if (c->L != L || c->K != K || c->B != B)
		*c = (struct cut_fit){.L = L, .K = K, .B = B};
	double a = c->n + 1 < CUT_WINDOW ? 1.0 / (c->n + 1) : 1.0 / CUT_WINDOW, e = bth - pred;
	if (c->n >= CUT_WARM)
		c->ee += a * (e * e - c->ee);
	else
		c->ee = 0.25; /* until the residual is measured: half a nat */
	c->f += a * (f - c->f);
	c->b += a * (bth - c->b);
	c->ff += a * (f * f - c->ff);
	c->fb += a * (f * bth - c->fb);
	c->last = bth;
	c->n++;
}

/* The same as step_build without the tree (tree_sort_read): the target's
 * path by its ranks, where each of its prefixes and the last rank's first
 * node sit, and the summed probabilities at every budget. Returns the
 * path's length, -1 (build the tree instead) or -2 (no memory). */
static int step_read(const struct job *jb, struct ws *w, const float *lp, const int32_t *tok,
		     int L, int K, int B, const int32_t *by_depth, struct line_res *r,
		     uint16_t *acc, double *drafter)
{
	const struct acceptance_opts *op = jb->o;
	int depth = 0, nq, qdepth[2 * READ_MAX_L];
	int32_t qpos[2 * READ_MAX_L];
	double mass[ACCEPTANCE_MAX_BUDGETS];
	if (B <= 0 || L > READ_MAX_L)
		return -1;
	if (ws_sort_reserve(w, tree_sort_scratch_bytes(L, K, B)))
		return -2;
	for (; depth < L; depth++) { /* the target's ranks: a path while they are in the top-K */
		int at = 0;
		while (at < K && tok[(size_t)depth * K + at] != by_depth[depth])
			at++;
		if (at == K)
			break;
		for (int q = depth; q < L; q++)
			w->qrank[(size_t)q * L + depth] = at;
		qdepth[depth] = depth + 1;
	}
	nq = depth;
	int edge = w->step.K < jb->bmax; /* the first node of the trace's last rank */
	for (int d = 1; edge && d <= L; d++, nq++) {
		for (int i = 0; i < d; i++)
			w->qrank[(size_t)nq * L + i] = i + 1 < d ? 0 : K - 1;
		qdepth[nq] = d;
	}
	struct tree_sort_ask ask = {op->nbudgets, op->budgets, mass, nq, qdepth, w->qrank, qpos, 0, 0, 0};
	int fits = B == jb->bmax && w->fit.L == L && w->fit.K == K && w->fit.B == B;
	double f = B == jb->bmax ? cut_feature(lp, L, K) : 0, pred = 0;
	float cut = fits ? cut_guess(&w->fit, f, &pred) : 0;
	int rc = tree_sort_read(lp, L, K, B, cut, &ask, w->sort);
	if (rc == 1) /* the cut was too high: a lower one, then every prefix */
		rc = tree_sort_read(lp, L, K, B, cut * CUT_AGAIN, &ask, w->sort);
	if (rc == 1)
		rc = tree_sort_read(lp, L, K, B, 0, &ask, w->sort);
	if (rc)
		return -1;
	if (B == jb->bmax) /* the cut only saves time: the next steps' guess learns from this one */
		cut_learn(&w->fit, L, K, B, f, fits ? pred : ask.bth, ask.bth);
	int len = 1, k_edge = INT32_MAX;
	w->path[0] = 0;
	while (len <= depth && qpos[len - 1])
		w->path[len] = qpos[len - 1], len++;
	for (int q = depth; q < nq; q++)
		if (qpos[q] && qpos[q] < k_edge)
			k_edge = qpos[q];
	for (int j = 0, on_path = 1; j < op->nbudgets; j++) {
		while (on_path < len && w->path[on_path] <= op->budgets[j])
			on_path++;
		acc[j] = (uint16_t)on_path;
		drafter[j] = 1 + mass[j];
		if (op->budgets[j] > k_edge)
			r->k_limited |= 1ull << j;
	}
	return len;
}

/* Parses, builds and walks one line. */
static void step_replay(const struct job *jb, struct ws *w, const char *line, size_t n,
			struct line_res *r, uint16_t *acc, double *drafter)
{
	struct trace_step *s = &w->step;
	memset(r, 0, sizeof *r);
	if ((r->blank = blank(line, n)))
		return;
	if ((r->rc = trace_step_parse(s, line, n, &r->err)))
		return;
	r->L = s->L;
	r->K = s->K;
	r->context = s->context;
	r->has_request = s->has_request;
	r->request = s->request;
	int L = jb->o->block ? jb->o->block - 1 : s->L;
	if (L > s->L) {
		r->rc = DDT_EINPUT;
		r->err.col = 1;
		snprintf(r->err.msg, sizeof r->err.msg,
			 "the step drafts %d positions; --block %d needs %d", s->L, jb->o->block, L);
		return;
	}
	int compare = s->accepted > 0 && s->budget_used >= 0;
	if (compare && (L != s->L || s->budget_used > ACCEPTANCE_MAX_BUDGET))
		compare = 0, r->engine = -1;
	int B = compare && s->budget_used > jb->bmax ? s->budget_used : jb->bmax;
	int K = s->K < B ? s->K : B;
	const float *lp;
	const int32_t *tok;
	if ((r->rc = ws_reserve(w, B > 0 ? B : 1)) || (r->rc = step_lists(w, L, K, &lp, &tok)))
		return;
	int ntarget = L < s->L ? L + 1 : s->ntarget;
	int32_t by_depth[TRACE_MAX_L + 2]; /* a table, not a branch a node */
	for (int d = 0; d <= L; d++)
		by_depth[d] = d < ntarget ? s->target[d] : -1;
	int len = step_read(jb, w, lp, tok, L, K, B, by_depth, r, acc, drafter);
	if (len == -1)
		len = step_build(jb, w, lp, tok, L, K, B, by_depth, r, acc, drafter);
	if (len < 0) {
		r->rc = DDT_ENOMEM;
		return;
	}
	if (compare) {
		int got = 1;
		while (got < len && w->path[got] <= s->budget_used)
			got++;
		r->engine = 1;
		r->engine_accepted = s->accepted;
		r->engine_replayed = got;
	}
}

static void job_part(void *ctx, int tid, int nthreads)
{
	struct job *jb = ctx;
	size_t n = jb->batch->n, nb = (size_t)jb->o->nbudgets;
	(void)nthreads;
	for (;;) {
		size_t lo = atomic_fetch_add_explicit(&jb->next, CHUNK_LINES, memory_order_relaxed);
		size_t hi = lo + CHUNK_LINES < n ? lo + CHUNK_LINES : n;
		if (lo >= n)
			return;
		for (size_t i = lo; i < hi; i++)
			step_replay(jb, &jb->ws[tid], jb->batch->line[i], jb->batch->len[i],
				    &jb->res[i], jb->acc + i * nb, jb->drafter + i * nb);
	}
}

/* ---- adding the lines up, in order ---- */

/* Running totals while the trace goes by. */
struct tally {
	struct accept_boot boot; /* the steps gathered by request */
	double drafter[ACCEPTANCE_MAX_BUDGETS];
	long long capped[ACCEPTANCE_MAX_BUDGETS], k_limited[ACCEPTANCE_MAX_BUDGETS];
	double engine_sum, replay_sum;
	double *ctx;             /* [context_steps] the contexts recorded, in line order */
	size_t ctx_cap;
	int L;                   /* the trace's positions; 0 before the first step */
};

/* Takes a step's context into r and t. Returns 0 or -1 (no memory). */
static int tally_context(struct acceptance_result *r, struct tally *t, long long context)
{
	if ((size_t)r->context_steps == t->ctx_cap) {
		size_t c = t->ctx_cap ? 2 * t->ctx_cap : 4096;
		double *a = realloc(t->ctx, c * sizeof *a);
		if (!a)
			return -1;
		t->ctx = a;
		t->ctx_cap = c;
	}
	if (!r->context_steps || context < r->context_min)
		r->context_min = context;
	if (!r->context_steps || context > r->context_max)
		r->context_max = context;
	t->ctx[r->context_steps++] = (double)context;
	return 0;
}

/* Takes line i of the batch into r and t; fails on a bad line. */
static int tally_line(struct acceptance_result *r, struct tally *t, const struct job *jb, size_t i,
		      long long line_no)
{
	const struct line_res *lr = &jb->res[i];
	int nb = r->nb;
	if (lr->blank)
		return 0;
	if (lr->rc == DDT_ENOMEM)
		return err_nomem();
	if (lr->rc)
		return err_set(lr->rc, "%s:%lld:%d: %s", r->trace, line_no, lr->err.col, lr->err.msg);
	if (!t->L) {
		t->L = lr->L;
		r->trace_block = lr->L + 1;
		r->block = jb->o->block ? jb->o->block : lr->L + 1;
		r->k_min = r->k_max = lr->K;
		for (int j = 0; j < nb; j++)
			if (!(r->b[j].hist = calloc((size_t)r->block + 1, sizeof *r->b[j].hist)))
				return err_nomem();
	} else if (lr->L != t->L) {
		return err_set(DDT_EINPUT, "%s:%lld:1: the step drafts %d positions, the lines before %d (one block per trace)",
			       r->trace, line_no, lr->L, t->L);
	}
	const uint16_t *acc = jb->acc + i * (size_t)nb;
	int rc = accept_boot_add(&t->boot, acc, lr->has_request, lr->request);
	if (rc)
		return rc == DDT_EINPUT ? err_set(rc, "%s:%lld:1: %s", r->trace, line_no, err_msg()) : rc;
	for (int j = 0; j < nb; j++) {
		t->drafter[j] += jb->drafter[i * (size_t)nb + j];
		t->capped[j] += acc[j] == r->block;
		t->k_limited[j] += (lr->k_limited >> j) & 1;
		r->b[j].hist[acc[j]]++;
	}
	r->k_min = lr->K < r->k_min ? lr->K : r->k_min;
	r->k_max = lr->K > r->k_max ? lr->K : r->k_max;
	if (lr->engine < 0)
		r->engine_skipped++;
	if (lr->engine > 0) {
		r->engine_steps++;
		r->engine_agree += lr->engine_accepted == lr->engine_replayed;
		t->engine_sum += lr->engine_accepted;
		t->replay_sum += lr->engine_replayed;
		if (!r->first_disagree && lr->engine_accepted != lr->engine_replayed)
			r->first_disagree = line_no;
	}
	if (lr->context >= 0 && tally_context(r, t, lr->context))
		return err_nomem();
	r->steps++;
	return 0;
}

/* ---- the bootstrap over requests (accept_boot.h) ---- */

static int bootstrap(struct acceptance_result *r, const struct tally *t)
{
	struct accept_boot_out o;
	double mean[ACCEPTANCE_MAX_BUDGETS], cap[ACCEPTANCE_MAX_BUDGETS];
	for (int j = 0; j < r->nb; j++) {
		mean[j] = r->b[j].mean;
		cap[j] = r->b[j].budget + 1 < r->block ? r->b[j].budget + 1 : r->block;
	}
	r->requests = (long long)t->boot.n;
	r->request_steps = t->boot.id_steps;
	struct timespec t0, t1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	int rc = accept_boot_run(&t->boot, r->resamples, r->level, r->seed, mean, cap, &o);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	r->boot_cpu_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	if (rc)
		return rc;
	r->cov = o.cov;
	for (int j = 0; j < r->nb; j++) {
		r->b[j].lo = o.lo[j];
		r->b[j].hi = o.hi[j];
		r->b[j].se = o.se[j];
		r->b[j].deff = o.deff[j];
	}
	return 0;
}

/* ---- the replay ---- */

static int opts_check(const struct acceptance_opts *o)
{
	if (o->nbudgets < 1 || o->nbudgets > ACCEPTANCE_MAX_BUDGETS)
		return err_set(DDT_EINPUT, "give 1 to %d budgets", ACCEPTANCE_MAX_BUDGETS);
	for (int j = 0; j < o->nbudgets; j++)
		if (o->budgets[j] < 0 || o->budgets[j] > ACCEPTANCE_MAX_BUDGET ||
		    (j && o->budgets[j] <= o->budgets[j - 1]))
			return err_set(DDT_EINPUT, "budgets must rise from 0 to at most %d",
				       ACCEPTANCE_MAX_BUDGET);
	if (o->block && (o->block < 2 || o->block > TRACE_MAX_L + 1))
		return err_set(DDT_EINPUT, "--block %d: expected 2 to %d", o->block, TRACE_MAX_L + 1);
	return acceptance_boot_check(o->resamples, o->level);
}

/* Room for a batch of n lines in the job's per-line arrays. */
static int job_reserve(struct job *jb, size_t n, size_t *cap)
{
	if (n <= *cap)
		return 0;
	size_t nb = (size_t)jb->o->nbudgets;
	free(jb->res);
	free(jb->acc);
	free(jb->drafter);
	jb->res = malloc(n * sizeof *jb->res);
	jb->acc = malloc(n * nb * sizeof *jb->acc);
	jb->drafter = malloc(n * nb * sizeof *jb->drafter);
	*cap = jb->res && jb->acc && jb->drafter ? n : 0;
	return *cap ? 0 : err_nomem();
}

static void progress(const struct trace_reader *tr, long long steps)
{
	long long total = trace_bytes_total(tr);
	if (total > 0)
		fprintf(stderr, "\r  replaying: %lld steps, %3.0f%%", steps,
			100.0 * (double)trace_bytes_read(tr) / (double)total);
}

/* Every batch through the workers, then into the tally in line order. */
static int replay_all(struct acceptance_result *r, struct tally *t, struct job *jb,
		      struct trace_reader *tr)
{
	size_t cap = 0;
	struct trace_batch batch;
	int rc;
	jb->batch = &batch;
	for (;;) {
		if ((rc = trace_read(tr, &batch, BATCH_BYTES)) || !batch.n)
			break;
		if ((rc = job_reserve(jb, batch.n, &cap)))
			break;
		atomic_store(&jb->next, 0);
		cpu_parallel(job_part, jb);
		for (size_t i = 0; i < batch.n && !rc; i++)
			rc = tally_line(r, t, jb, i, batch.no[i]);
		if (rc)
			break;
		if (jb->o->progress)
			progress(tr, r->steps);
	}
	if (jb->o->progress)
		fputs("\r\033[K", stderr);
	return rc;
}

/* The contexts' mean, standard deviation and quantiles (x sorted here). */
static void finish_context(struct acceptance_result *r, double *x)
{
	static const double q[5] = {0.05, 0.25, 0.5, 0.75, 0.95};
	int n = (int)r->context_steps;
	double s = 0, ss = 0;
	for (int i = 0; i < n; i++)
		s += x[i];
	r->context_mean = s / n;
	for (int i = 0; i < n; i++)
		ss += (x[i] - r->context_mean) * (x[i] - r->context_mean);
	r->context_sd = n > 1 ? sqrt(ss / (n - 1)) : 0;
	qsort(x, (size_t)n, sizeof *x, accept_boot_dbl_cmp);
	for (int k = 0; k < 5; k++)
		r->context_q[k] = accept_boot_quantile(x, n, q[k]);
}

/* Means and shares from the totals. */
static void finish(struct acceptance_result *r, const struct tally *t)
{
	double n = (double)r->steps;
	for (int j = 0; j < r->nb; j++) {
		struct acceptance_budget *b = &r->b[j];
		double s = 0;
		for (int a = 1; a <= r->block; a++)
			s += (double)a * (double)b->hist[a];
		b->mean = s / n;
		b->drafter = t->drafter[j] / n;
		b->capped = (double)t->capped[j] / n;
		b->k_limited = (double)t->k_limited[j] / n;
	}
	if (r->engine_steps) {
		r->engine_mean = t->engine_sum / (double)r->engine_steps;
		r->replay_mean = t->replay_sum / (double)r->engine_steps;
	}
	if (r->context_steps)
		finish_context(r, t->ctx);
}

int acceptance_replay(struct acceptance_result *r, const char *path, const struct acceptance_opts *o)
{
	struct tally t = {0};
	struct job jb = {.o = o, .bmax = o->budgets[o->nbudgets > 0 ? o->nbudgets - 1 : 0]};
	struct trace_reader *tr = NULL;
	int rc, threads = cpu_threads();

	memset(r, 0, sizeof *r);
	if ((rc = opts_check(o)))
		return rc;
	r->nb = o->nbudgets;
	accept_boot_init(&t.boot, r->nb);
	r->resamples = o->resamples;
	r->level = o->level;
	r->seed = o->seed;
	for (int j = 0; j < r->nb; j++)
		r->b[j].budget = o->budgets[j];
	if (!(r->trace = strdup(path)) || !(jb.ws = calloc((size_t)threads, sizeof *jb.ws))) {
		rc = err_nomem();
		goto done;
	}
	if ((rc = trace_open(&tr, path)) || (rc = replay_all(r, &t, &jb, tr)))
		goto done;
	if (!r->steps) {
		rc = err_set(DDT_EINPUT, "%s: no steps: the trace has no lines (ddt help acceptance, \"Trace format\")", path);
		goto done;
	}
	if (r->steps > UINT32_MAX) {
		rc = err_set(DDT_EINPUT, "%s: more than %u steps", path, UINT32_MAX);
		goto done;
	}
	finish(r, &t);
	rc = bootstrap(r, &t);
done:
	trace_close(tr);
	for (int i = 0; jb.ws && i < threads; i++)
		ws_free(&jb.ws[i]);
	free(jb.ws);
	free(jb.res);
	free(jb.acc);
	free(jb.drafter);
	accept_boot_free(&t.boot);
	free(t.ctx);
	return rc;
}

void acceptance_free(struct acceptance_result *r)
{
	for (int j = 0; j < ACCEPTANCE_MAX_BUDGETS; j++)
		free(r->b[j].hist);
	free(r->cov);
	free(r->trace);
	memset(r, 0, sizeof *r);
}
