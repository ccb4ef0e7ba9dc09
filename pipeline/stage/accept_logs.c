/* accept_logs.c - serving-engine logs to mean acceptance, per-position rates and a tree estimate per budget (accept_logs.h says how). */
#include "accept_logs.h"

#include "err.h"
#include "ydoc.h"
#include "yschema.h"

#include <gsl/gsl_cdf.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FRAC(T, k, m, h) YS_KEYED(T, k, m, YS_NUM, Y_REQUIRED | Y_FRACTION, .help = (h))
/* calibration/acceptance/logs.yaml: second_choice_share and rank_tree_gap. */
static const struct yschema_field share_fields[] = {
	FRAC(struct accept_logs_prior, "min", s_lo, "the share's low end"),
	FRAC(struct accept_logs_prior, "max", s_hi, "its high end"),
	YS_FIELD(struct accept_logs_prior, source, YS_STR, Y_REQUIRED,
		 .help = "who states the range"),
};
static const struct yschema share_schema = YS_TABLE("second_choice_share", share_fields, 0);
static const struct yschema_field gap_fields[] = {
	FRAC(struct accept_logs_prior, "max", rank_gap,
	     "how far above the rank law's tree DDTree's may be"),
};
static const struct yschema gap_schema = YS_TABLE("rank_tree_gap", gap_fields, 0);

int accept_logs_prior_load(struct accept_logs_prior *p, const char *path)
{
	struct ydoc *doc = NULL;
	struct ydiag diag = {0};
	struct yctx c = {path, &diag, NULL};
	int rc = ydoc_load_file(&doc, path, &diag);
	if (rc)
		goto done;
	struct ydoc_node *s = ydoc_get(doc->root, "second_choice_share");
	if (!s || s->kind != YDOC_MAP) {
		rc = err_set(DDT_EINPUT, "%s: no second_choice_share mapping", path);
		goto done;
	}
	p->s_lo = p->s_hi = NAN;
	if ((rc = yschema_read_fields(&c, s, &share_schema, p)) != 0)
		goto done;
	struct ydoc_node *g = ydoc_get(doc->root, "rank_tree_gap");
	if (!g || g->kind != YDOC_MAP || (rc = yschema_read_fields(&c, g, &gap_schema, p))) {
		rc = rc ? rc : err_set(DDT_EINPUT, "%s: no rank_tree_gap mapping", path);
		goto done;
	}
	if (!(p->s_lo <= p->s_hi))
		rc = err_set(DDT_EINPUT, "%s: second_choice_share: min above max", path);
done:
	if (rc && diag.n)
		err_set(rc, "%s", diag.msgs[0]);
	ydiag_free(&diag);
	ydoc_free(doc);
	return rc;
}

/* ---- the tree from rank probabilities ---- */

/* Position d's rank probabilities in the drafter's rank order, n of them:
 * the first choice c, then the misses' geometric law of share s. A tree
 * takes a sibling only after the one the drafter ranks above it (DDTree's
 * heap does), so a rank that the target's law favours over the first choice
 * still comes after it. */
static void ranks_in_order(double c, double s, int n, double *p)
{
	double g = (1 - c) * s;
	p[0] = c;
	for (int i = 1; i < n; i++, g *= 1 - s)
		p[i] = g;
}

struct node {
	double prob, parent;
	int d, i;
};

static void heap_push(struct node *h, int *n, struct node x)
{
	int i = (*n)++;
	while (i > 0 && h[(i - 1) / 2].prob < x.prob) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = x;
}

static struct node heap_pop(struct node *h, int *n)
{
	struct node top = h[0], last = h[--*n];
	int i = 0;
	for (;;) {
		int c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1].prob > h[c].prob)
			c++;
		if (h[c].prob <= last.prob)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = last;
	return top;
}

double accept_logs_tree_law(const double *p, int k, int n, int B)
{
	int hn = 0;
	double sum = 0;
	if (B <= 0 || k <= 0 || n <= 0)
		return 1;
	struct node *h = malloc((size_t)(2 * B + 2) * sizeof *h);
	if (!h)
		return NAN;
	heap_push(h, &hn, (struct node){p[0], 1, 0, 0});
	for (int b = 0; b < B && hn; b++) {
		struct node x = heap_pop(h, &hn);
		sum += x.prob;
		if (x.d + 1 < k)
			heap_push(h, &hn, (struct node){x.prob * p[(size_t)(x.d + 1) * n], x.prob, x.d + 1, 0});
		if (x.i + 1 < n)
			heap_push(h, &hn, (struct node){x.parent * p[(size_t)x.d * n + x.i + 1], x.parent,
							x.d, x.i + 1});
	}
	free(h);
	return 1 + sum;
}

double accept_logs_tree(const double *rate, int k, double s, int B)
{
	if (B <= 0 || k <= 0)
		return 1;
	int n = B + 1;
	double *p = malloc((size_t)k * n * sizeof *p);
	if (!p)
		return NAN;
	for (int d = 0; d < k; d++) {
		double prev = d ? rate[d - 1] : 1, c = prev > 0 ? rate[d] / prev : 0;
		ranks_in_order(c < 0 ? 0 : c > 1 ? 1 : c, s, n, p + (size_t)d * n);
	}
	double v = accept_logs_tree_law(p, k, n, B);
	free(p);
	return v;
}

/* ---- over the log's intervals ---- */

/* The weighted mean of x over the intervals and its t interval at level
 * (the intervals as the units; one interval: [lo0, hi0]). */
static void over_intervals(const struct spec_log *l, int d, double level, double lo0, double hi0,
			   double *m, double *lo, double *hi)
{
	double sw = 0, sx = 0, ss = 0;
	size_t n = l->n;
	for (size_t i = 0; i < n; i++) {
		double x = d < 0 ? l->iv[i].mean : l->iv[i].rate[d];
		sw += l->iv[i].weight;
		sx += l->iv[i].weight * x;
	}
	*m = sx / sw;
	if (n < 2) {
		*lo = lo0;
		*hi = hi0;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		double x = d < 0 ? l->iv[i].mean : l->iv[i].rate[d], e = l->iv[i].weight * (x - *m);
		ss += e * e;
	}
	double se = sqrt((double)n / (n - 1) * ss) / sw;
	double t = gsl_cdf_tdist_Pinv((1 + level) / 2, (double)(n - 1));
	*lo = fmax(lo0, *m - t * se);
	*hi = fmin(hi0, *m + t * se);
}

/* c with 1 + c + c^2 + ... + c^k = mean (c in [0, 1]). */
static double solve_c(double mean, int k)
{
	double a = 0, b = 1;
	for (int it = 0; it < 60; it++) {
		double c = (a + b) / 2, s = 1, p = 1;
		for (int d = 0; d < k; d++)
			s += p *= c;
		*(s < mean ? &a : &b) = c;
	}
	return (a + b) / 2;
}

static void rates_from_mean(double mean, int k, double *rate)
{
	double c = solve_c(mean, k), p = 1;
	for (int d = 0; d < k; d++)
		rate[d] = p *= c;
}

/* Per budget: the point, the rates' interval alone, and with s over its range. */
static void per_budget(struct accept_logs_result *r)
{
	const double *rates[3] = {r->rate_lo, r->rate, r->rate_hi};
	double s_mid = (r->prior.s_lo + r->prior.s_hi) / 2, s3[3] = {r->prior.s_lo, s_mid, r->prior.s_hi};
	for (int j = 0; j < r->nb; j++) {
		int B = r->budget[j];
		r->est[j] = accept_logs_tree(r->rate, r->k, s_mid, B);
		r->samp_lo[j] = r->samp_hi[j] = r->lo[j] = r->hi[j] = r->est[j];
		for (int a = 0; a < 3; a++)
			for (int b = 0; b < 3; b++) {
				double v = accept_logs_tree(rates[a], r->k, s3[b], B);
				r->lo[j] = fmin(r->lo[j], v);
				r->hi[j] = fmax(r->hi[j], v);
				if (b == 1) {
					r->samp_lo[j] = fmin(r->samp_lo[j], v);
					r->samp_hi[j] = fmax(r->samp_hi[j], v);
				}
			}
	}
}

/* ---- rank records: the law counted, a jackknife over groups of requests ---- */

/* The rank law p[k][n] and chain rates rate[k] from every group but skip. */
static void law_from(const struct spec_log *l, int skip, int n, double *p, double *rate)
{
	double N = 0;
	for (int g = 0; g < SPEC_LOG_GROUPS; g++)
		N += g == skip ? 0 : l->group_steps[g];
	for (int d = 0; d < l->k; d++) {
		for (int i = 0; i < n; i++) {
			double c = 0;
			for (int g = 0; g < SPEC_LOG_GROUPS; g++)
				if (g != skip)
					c += l->rank_cnt[((size_t)g * SPEC_LOG_MAX_K + d) * SPEC_LOG_MAX_RANK + i];
			p[(size_t)d * n + i] = N > 0 ? c / N : 0;
		}
		rate[d] = p[(size_t)d * n] * (d ? rate[d - 1] : 1);
	}
}

/* The figures (nb tree estimates, the chain's mean, k rates) of a law. */
static void law_figures(struct accept_logs_result *r, const double *p, const double *rate, int n,
			double *out)
{
	double mean = 1;
	for (int j = 0; j < r->nb; j++)
		out[j] = accept_logs_tree_law(p, r->k, n, r->budget[j]);
	for (int d = 0; d < r->k; d++)
		mean += out[r->nb + 1 + d] = rate[d];
	out[r->nb] = mean;
}

/* Each figure's jackknife interval over the groups (fewer than two: none). */
static void jackknife(struct accept_logs_result *r, const struct spec_log *l, int n, double *p,
		      double *rate, const double *full, double *lo, double *hi)
{
	int nf = r->nb + 1 + r->k, G = 0;
	double sum[ACCEPTANCE_MAX_BUDGETS + 1 + SPEC_LOG_MAX_K] = {0},
	       ss[ACCEPTANCE_MAX_BUDGETS + 1 + SPEC_LOG_MAX_K] = {0},
	       th[SPEC_LOG_GROUPS][ACCEPTANCE_MAX_BUDGETS + 1 + SPEC_LOG_MAX_K];
	for (int g = 0; g < SPEC_LOG_GROUPS; g++) {
		if (!(l->group_steps[g] > 0))
			continue;
		law_from(l, g, n, p, rate);
		law_figures(r, p, rate, n, th[G]);
		for (int f = 0; f < nf; f++)
			sum[f] += th[G][f];
		G++;
	}
	double t = G > 1 ? gsl_cdf_tdist_Pinv((1 + r->level) / 2, G - 1) : 0;
	for (int f = 0; f < nf; f++) {
		for (int g = 0; g < G; g++)
			ss[f] += (th[g][f] - sum[f] / G) * (th[g][f] - sum[f] / G);
		double se = G > 1 ? sqrt((G - 1.0) / G * ss[f]) : INFINITY;
		lo[f] = full[f] - t * se;
		hi[f] = full[f] + t * se;
	}
}

static int ranks_estimate(struct accept_logs_result *r, const struct spec_log *l)
{
	int n = l->max_rank > 0 ? l->max_rank : 1, nf = r->nb + 1 + r->k;
	double *p = malloc((size_t)l->k * n * sizeof *p), rate[SPEC_LOG_MAX_K];
	double full[ACCEPTANCE_MAX_BUDGETS + 1 + SPEC_LOG_MAX_K], lo[ACCEPTANCE_MAX_BUDGETS + 1 + SPEC_LOG_MAX_K],
	       hi[ACCEPTANCE_MAX_BUDGETS + 1 + SPEC_LOG_MAX_K];
	if (!p)
		return err_nomem();
	law_from(l, -1, n, p, rate);
	law_figures(r, p, rate, n, full);
	jackknife(r, l, n, p, rate, full, lo, hi);
	for (int j = 0; j < r->nb; j++) {
		double cap = r->budget[j] + 1 < r->k + 1 ? r->budget[j] + 1 : r->k + 1;
		r->est[j] = full[j];
		r->lo[j] = r->samp_lo[j] = fmax(1, fmin(lo[j], full[j]));
		r->samp_hi[j] = fmin(cap, fmax(hi[j], full[j]));
		r->hi[j] = r->budget[j] > 1 ? fmin(cap, r->samp_hi[j] * (1 + r->prior.rank_gap))
					    : r->samp_hi[j];
	}
	r->mean = full[r->nb];
	r->mean_lo = fmax(1, lo[r->nb]);
	r->mean_hi = fmin(r->k + 1, hi[r->nb]);
	for (int d = 0; d < r->k; d++) {
		r->rate[d] = full[r->nb + 1 + d];
		r->rate_lo[d] = fmax(0, lo[r->nb + 1 + d]);
		r->rate_hi[d] = fmin(1, hi[r->nb + 1 + d]);
	}
	(void)nf;
	free(p);
	return 0;
}

int accept_logs_estimate(struct accept_logs_result *r, const char *path, const struct spec_log *l,
			 const struct acceptance_opts *o, const struct accept_logs_prior *p)
{
	memset(r, 0, sizeof *r);
	if (!(r->path = strdup(path)))
		return err_nomem();
	r->kind = l->kind;
	r->k = l->k;
	r->n = l->n;
	r->skipped = l->skipped;
	r->level = o->level;
	r->prior = *p;
	r->rates_logged = l->has_rates || l->kind == SPEC_LOG_RANKS;
	r->nb = o->nbudgets;
	memcpy(r->budget, o->budgets, sizeof r->budget);
	if (l->kind == SPEC_LOG_RANKS) {
		r->weight = (double)l->steps;
		return ranks_estimate(r, l);
	}
	for (size_t i = 0; i < l->n; i++)
		r->weight += l->iv[i].weight;
	over_intervals(l, -1, o->level, 1, l->k + 1, &r->mean, &r->mean_lo, &r->mean_hi);
	for (int d = 0; d < l->k; d++) {
		if (l->has_rates)
			over_intervals(l, d, o->level, 0, 1, &r->rate[d], &r->rate_lo[d], &r->rate_hi[d]);
	}
	if (!l->has_rates) {
		rates_from_mean(r->mean, l->k, r->rate);
		rates_from_mean(r->mean_lo, l->k, r->rate_lo);
		rates_from_mean(r->mean_hi, l->k, r->rate_hi);
	}
	per_budget(r);
	return 0;
}

void accept_logs_free(struct accept_logs_result *r)
{
	free(r->path);
	memset(r, 0, sizeof *r);
}

/* ---- output ---- */

static const char *kind_name(enum spec_log_kind k)
{
	return k == SPEC_LOG_VLLM	  ? "vllm-log"
	       : k == SPEC_LOG_VLLM_METRICS ? "vllm-metrics"
	       : k == SPEC_LOG_SGLANG	  ? "sglang-log"
					  : "ranks";
}

static double chain_at(const struct accept_logs_result *r, int B)
{
	double a = 1;
	for (int d = 0; d < r->k && d < B; d++)
		a += r->rate[d];
	return a;
}

/* A rank record's table: the law is logged, the per-step confidence is not. */
static void text_ranks(const struct accept_logs_result *r, FILE *fp)
{
	fprintf(fp, "%s: ranks, %.0f steps, %d positions (block %d); intervals: jackknife over %d "
		    "groups of requests\n", r->path, r->weight, r->k, r->k + 1, SPEC_LOG_GROUPS);
	fprintf(fp, "first-choice chain: %.3f [%.3f, %.3f]\n", r->mean, r->mean_lo, r->mean_hi);
	fputs("\ntree estimate from the logged rank law (each position's share of each rank), "
	      "positions independent and\nthe same law every step: the drafter's per-step "
	      "confidence, which DDTree's tree follows, is not\nin the record, so the tree here is "
	      "the one the law ranks best for every step\n", fp);
	fprintf(fp, "\n budget   tree  %2.0f%% interval    with the per-step tree (up to +%.0f%%)\n",
		100 * r->level, 100 * r->prior.rank_gap);
	for (int j = 0; j < r->nb; j++)
		fprintf(fp, " %6d  %6.3f  [%6.3f, %6.3f]  [%6.3f, %6.3f]\n", r->budget[j], r->est[j],
			r->samp_lo[j], r->samp_hi[j], r->lo[j], r->hi[j]);
	fputs("\nranks past the logged top-K are not in the record: budgets whose tree would use "
	      "them are lower bounds\n", fp);
}

void accept_logs_write_text(const struct accept_logs_result *r, FILE *fp)
{
	if (r->kind == SPEC_LOG_RANKS) {
		text_ranks(r, fp);
		return;
	}
	fprintf(fp, "%s: %s, %zu interval%s%s, %d drafted positions (block %d)\n", r->path,
		kind_name(r->kind), r->n, r->n == 1 ? "" : "s", r->kind == SPEC_LOG_SGLANG ? "" : " (weighted by drafts)",
		r->k, r->k + 1);
	if (r->skipped)
		fprintf(fp, "  %lld intervals without drafts skipped\n", r->skipped);
	fprintf(fp, "mean acceptance of the engine's chain: %.3f [%.3f, %.3f] (%.0f%%, t over the "
		    "intervals%s)\n", r->mean, r->mean_lo, r->mean_hi, 100 * r->level,
		r->n < 2 ? "; one interval: no interval, all a step can accept" : "");
	fputs(r->rates_logged ? "per-position acceptance:" : "per-position acceptance (not logged: "
	      "the same rate c at every position, c^d, from the mean):", fp);
	for (int d = 0; d < r->k; d++)
		fprintf(fp, "%s %.3f [%.3f, %.3f]", d ? "," : "", r->rate[d], r->rate_lo[d], r->rate_hi[d]);
	fprintf(fp, "\n\ntree estimate: the target's rank at each position taken from the rates (first "
		    "choice) and, for the misses,\n  a share s on the second choice, s of the rest on the "
		    "third, ...; s is not logged: %.2f to %.2f\n  (calibration/acceptance/logs.yaml: %s)\n",
		r->prior.s_lo, r->prior.s_hi, r->prior.source);
	fprintf(fp, "\n budget   chain   tree  %2.0f%% rates alone   with s unknown\n", 100 * r->level);
	for (int j = 0; j < r->nb; j++)
		fprintf(fp, " %6d  %6.3f %6.3f  [%6.3f, %6.3f]  [%6.3f, %6.3f]\n", r->budget[j],
			chain_at(r, r->budget[j]), r->est[j], r->samp_lo[j], r->samp_hi[j], r->lo[j],
			r->hi[j]);
	fputs("\nchain: the engine's own chain of that many positions (exact); tree: DDTree's tree of "
	      "that budget\nunder the rank law above (budget 1 exact); the band adds the "
	      "unknown second-choice share s\n", fp);
}

/* The --yaml document: the result's figures under `acceptance:`, its lists
 * one figure per budget (nb of each). */
struct logs_doc {
	int schema;
	char log[4096], from[32], source[1024];
	int intervals, block;
	double chain_mean, chain_ci_lo, chain_ci_hi;
	char doubt[256];
	int nb;
	int budgets[ACCEPTANCE_MAX_BUDGETS];
	double mean[ACCEPTANCE_MAX_BUDGETS], ci_lo[ACCEPTANCE_MAX_BUDGETS],
		ci_hi[ACCEPTANCE_MAX_BUDGETS], rates_ci_lo[ACCEPTANCE_MAX_BUDGETS],
		rates_ci_hi[ACCEPTANCE_MAX_BUDGETS];
};

#define DOC(m, ty, fl, u, h)                                                              \
	YS_FIELD(struct logs_doc, m, ty, Y_REQUIRED | (fl), .unit = (u), .help = (h))
#define PER_BUDGET(m, h)                                                                  \
	YS_NUMS_OF(struct logs_doc, #m, m, nb, Y_REQUIRED | Y_NULLABLE, .unit = "tokens",     \
		   .help = (h))
/* In the order written (written only). */
static const struct yschema_field doc_fields[] = {
	DOC(schema, YS_INT, Y_POSITIVE, NULL, "the document's layout"),
	DOC(log, YS_STR, 0, NULL, "the log read"),
	DOC(from, YS_STR, 0, NULL, "the log's kind"),
	DOC(source, YS_STR, 0, NULL, "how the figures were made and the prior's source"),
	DOC(intervals, YS_INT, Y_NONNEG, "intervals", "logged intervals with drafts"),
	DOC(block, YS_INT, Y_POSITIVE, "tokens", "the engine's block k + 1"),
	DOC(chain_mean, YS_NUM, Y_NULLABLE, "tokens", "mean acceptance of the engine's chain"),
	DOC(chain_ci_lo, YS_NUM, Y_NULLABLE, "tokens", "its interval, low end"),
	DOC(chain_ci_hi, YS_NUM, Y_NULLABLE, "tokens", "its interval, high end"),
	DOC(doubt, YS_STR, 0, NULL, "what the log cannot tell"),
	YS_INTS_OF(struct logs_doc, "budgets", budgets, nb, Y_REQUIRED | Y_NONNEG,
		   .unit = "nodes", .help = "the tree budgets estimated"),
	PER_BUDGET(mean, "the tree at the prior's middle"),
	PER_BUDGET(ci_lo, "with s over its range, low end"),
	PER_BUDGET(ci_hi, "with s over its range, high end"),
	PER_BUDGET(rates_ci_lo, "the rates' interval alone, low end"),
	PER_BUDGET(rates_ci_hi, "the rates' interval alone, high end"),
};
static const struct yschema doc_schema = YS_TABLE("acceptance", doc_fields, 0);

/* The document itself: one mapping, `acceptance:` the figures. */
struct logs_top {
	struct logs_doc doc;
};
static const struct yschema_field top_fields[] = {
	YS_KEYED(struct logs_top, "acceptance", doc, YS_MAP, Y_REQUIRED, .sub = &doc_schema,
		 .help = "an engine log's acceptance: the chain and the tree per budget"),
};
static const struct yschema top_schema = YS_TABLE("acceptance --from", top_fields, 0);

void accept_logs_write_yaml(const struct accept_logs_result *r, FILE *fp)
{
	struct logs_top t = {.doc = {
		.schema = 1, .intervals = (int)r->n, .block = r->k + 1, .chain_mean = r->mean,
		.chain_ci_lo = r->mean_lo, .chain_ci_hi = r->mean_hi, .nb = r->nb}};
	struct logs_doc *d = &t.doc;
	snprintf(d->log, sizeof d->log, "%s", r->path);
	snprintf(d->from, sizeof d->from, "%s", kind_name(r->kind));
	snprintf(d->source, sizeof d->source, "ddt acceptance --from %s %s: the logged chain's "
		 "rates, the tree from an assumed rank law; second_choice_share %g-%g (%s)",
		 kind_name(r->kind), r->path, r->prior.s_lo, r->prior.s_hi, r->prior.source);
	snprintf(d->doubt, sizeof d->doubt, "second_choice_share: how often the target took the "
		 "drafter's 2nd choice when it missed the 1st is not logged (drawn in ci_lo..ci_hi)");
	memcpy(d->budgets, r->budget, sizeof d->budgets);
	memcpy(d->mean, r->est, sizeof d->mean);
	memcpy(d->ci_lo, r->lo, sizeof d->ci_lo);
	memcpy(d->ci_hi, r->hi, sizeof d->ci_hi);
	memcpy(d->rates_ci_lo, r->samp_lo, sizeof d->rates_ci_lo);
	memcpy(d->rates_ci_hi, r->samp_hi, sizeof d->rates_ci_hi);
	yschema_write_doc(fp, &top_schema, &t);
}
