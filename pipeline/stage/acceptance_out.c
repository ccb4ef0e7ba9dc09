/* acceptance_out.c - a replay's result as text and CSV (acceptance.h; the YAML curve:
 * acceptance_curve.c). */
#include "acceptance.h"

#include "csv.h"

#include <math.h>
#include <stdio.h>

/* ---- output ---- */

static void text_table(const struct acceptance_result *r, FILE *fp)
{
	int any_k = 0;
	for (int j = 0; j < r->nb; j++)
		any_k |= r->b[j].k_limited > 0;
	fprintf(fp, "\n budget  accept  %2.0f%% interval     drafter  capped%s\n", 100 * r->level,
		any_k ? "  K-limited" : "");
	for (int j = 0; j < r->nb; j++) {
		const struct acceptance_budget *b = &r->b[j];
		fprintf(fp, " %6d  %6.3f  [%6.3f, %6.3f]  %7.3f  %5.1f%%", b->budget, b->mean, b->lo,
			b->hi, b->drafter, 100 * b->capped);
		if (b->k_limited > 0)
			fprintf(fp, "  %8.1f%%  lower bound", 100 * b->k_limited);
		fputc('\n', fp);
	}
	fputs("\naccept: mean acceptance length, root included (1 + drafted tokens accepted)\n"
	      "drafter: 1 + the tree's summed prefix probabilities, what the drafter expects\n"
	      "capped: steps that accepted the whole block\n",
	      fp);
	if (any_k)
		fprintf(fp, "K-limited: steps whose tree wanted a rank beyond the trace's top-K (%d);\n"
			    "  there the replay is a lower bound\n",
			r->k_min);
}

/* How much the requests widen the interval: the design effect's range over
 * the budgets, and what it means. */
static void text_design(const struct acceptance_result *r, FILE *fp)
{
	double lo = INFINITY, hi = -INFINITY;
	for (int j = 0; j < r->nb; j++)
		if (isfinite(r->b[j].deff))
			lo = fmin(lo, r->b[j].deff), hi = fmax(hi, r->b[j].deff);
	if (r->request_steps)
		fprintf(fp, "requests: %lld of %lld steps record a request_id (the others are a request "
			    "each)\n", r->request_steps, r->steps);
	else
		fputs("requests: no step records a request_id: each step is a request of its own, and "
		      "the interval is too narrow\n  by the square root of the design effect if steps "
		      "of one request share their luck\n", fp);
	if (r->requests < 2)
		fputs("interval: one request, nothing to resample: the interval is all a step can "
		      "accept\n", fp);
	else if (lo <= hi)
		fprintf(fp, "design effect: %.2f to %.2f over the budgets (the mean's variance over "
			    "requests / steps taken as independent)\n", lo, hi);
}

/* The acceptance-length histogram, 16 lengths a band. */
static void text_hist(const struct acceptance_result *r, FILE *fp)
{
	fputs("\nacceptance length, share of steps (%; '.' none, '0' under 0.5%)\n", fp);
	for (int a0 = 1; a0 <= r->block; a0 += 16) {
		int a1 = a0 + 15 < r->block ? a0 + 15 : r->block;
		fputs(" budget", fp);
		for (int a = a0; a <= a1; a++)
			fprintf(fp, "%4d", a);
		fputc('\n', fp);
		for (int j = 0; j < r->nb; j++) {
			fprintf(fp, " %6d", r->b[j].budget);
			for (int a = a0; a <= a1; a++) {
				long long c = r->b[j].hist[a];
				if (c)
					fprintf(fp, "%4.0f", 100.0 * (double)c / (double)r->steps);
				else
					fputs("   .", fp);
			}
			fputc('\n', fp);
		}
	}
}

static void text_engine(const struct acceptance_result *r, FILE *fp)
{
	if (r->engine_steps) {
		fprintf(fp, "\nengine: the replay matches the recorded acceptance on %lld of %lld steps "
			    "(%.1f%%) at their budget_used;\n  mean %.3f recorded, %.3f replayed",
			r->engine_agree, r->engine_steps,
			100.0 * (double)r->engine_agree / (double)r->engine_steps, r->engine_mean,
			r->replay_mean);
		if (r->first_disagree)
			fprintf(fp, "; first mismatch at line %lld", r->first_disagree);
		fputc('\n', fp);
	}
	if (r->engine_skipped)
		fprintf(fp, "engine: %lld steps record accepted but were not compared (replayed at "
			    "another block, or budget_used over %d)\n",
			r->engine_skipped, ACCEPTANCE_MAX_BUDGET);
	if (r->context_steps)
		fprintf(fp, "context: %lld of %lld steps record it: mean %.0f tokens (sd %.0f); "
			    "p5 %.0f, p25 %.0f, median %.0f, p75 %.0f, p95 %.0f; %lld to %lld\n",
			r->context_steps, r->steps, r->context_mean, r->context_sd, r->context_q[0],
			r->context_q[1], r->context_q[2], r->context_q[3], r->context_q[4],
			r->context_min, r->context_max);
	else
		fprintf(fp, "context: no step records it (a projection's scenarios keep their "
			    "own, or the anchors')\n");
}

/* What a reader must not miss: a small trace, a replay that disagrees with
 * the engine. Printed first. */
static void text_warnings(const struct acceptance_result *r, FILE *fp)
{
	if (r->requests < ACCEPTANCE_FEW_REQUESTS || r->steps < ACCEPTANCE_FEW_STEPS)
		fprintf(fp, "WARNING: a small trace (%lld steps in %lld requests; under %d requests or "
			    "%d steps): its intervals rest on little\n", r->steps, r->requests,
			ACCEPTANCE_FEW_REQUESTS, ACCEPTANCE_FEW_STEPS);
	if (r->engine_steps && r->engine_agree < r->engine_steps)
		fprintf(fp, "WARNING: the replay disagrees with the engine's recorded acceptance on %lld "
			    "of %lld steps (first at line %lld): the trace and the engine differ\n",
			r->engine_steps - r->engine_agree, r->engine_steps, r->first_disagree);
}

void acceptance_write_text(const struct acceptance_result *r, FILE *fp)
{
	text_warnings(r, fp);
	fprintf(fp, "%s: %lld steps, block %d", r->trace, r->steps, r->block);
	if (r->block != r->trace_block)
		fprintf(fp, " (the trace's is %d)", r->trace_block);
	if (r->k_min == r->k_max)
		fprintf(fp, ", top-%d\n", r->k_min);
	else
		fprintf(fp, ", top-%d to top-%d\n", r->k_min, r->k_max);
	fprintf(fp, "replayed with the engine's tree_build heap and accept walk; intervals: "
		    "bootstrap over %lld requests (%d resamples)\n",
		r->requests, r->resamples);
	text_design(r, fp);
	text_table(r, fp);
	text_hist(r, fp);
	text_engine(r, fp);
}

void acceptance_write_csv(const struct acceptance_result *r, FILE *fp)
{
	fputs("budget,mean,ci_lo,ci_hi,se,drafter,capped,k_limited,steps,requests,design_effect", fp);
	for (int a = 1; a <= r->block; a++)
		fprintf(fp, ",accept_%d", a);
	fputc('\n', fp);
	for (int j = 0; j < r->nb; j++) {
		const struct acceptance_budget *b = &r->b[j];
		fprintf(fp, "%d", b->budget);
		csv_num(fp, b->mean);
		csv_num(fp, b->lo);
		csv_num(fp, b->hi);
		csv_num(fp, b->se);
		csv_num(fp, b->drafter);
		csv_num(fp, b->capped);
		csv_num(fp, b->k_limited);
		fprintf(fp, ",%lld,%lld", r->steps, r->requests);
		csv_num(fp, b->deff);
		for (int a = 1; a <= r->block; a++)
			fprintf(fp, ",%lld", b->hist[a]);
		fputc('\n', fp);
	}
}
