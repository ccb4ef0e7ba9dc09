/* report_summary.c - summary.txt: headline, baseline, bands and the regression status. */
#include "report_summary.h"

#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- summary */

static void summary_row(const struct report_data *d, size_t i, FILE *fp)
{
	struct report_figure f;
	char tok[32], lo[32], hi[32], step[32];
	report_figure(d, i, &f);
	report_fmt_tok(tok, sizeof tok, f.tok_s);
	report_fmt_tok(lo, sizeof lo, f.tok_p5);
	report_fmt_tok(hi, sizeof hi, f.tok_p95);
	report_fmt_ms(step, sizeof step, f.step_ms);
	fprintf(fp, "  %-18s accept %-5g %8s tok/s  (p5-p95 %s-%s)  step %s ms%s\n",
		f.est->sc.name, f.est->accept, tok, lo, hi, step,
		f.est->runnable ? "" : "  [not runnable]");
}

void report_write_summary(const struct report_data *d, FILE *fp)
{
	const struct anchor *a = &d->cal.sglang_b8;
	char status[512];
	long b = report_scenario_row(d, d->spec.baseline);

	long h0 = d->spec.nheadline ? report_scenario_row(d, d->spec.headline[0]) : -1;

	fprintf(fp, "ddt report %s (%s)\n%s\n\n", d->rec.run_id, d->date_text, d->spec.title);
	if (h0 >= 0)
		fprintf(fp, "%s at C=%d", d->est.rows[h0].target->name,
			d->est.rows[h0].sc.concurrency);
	fprintf(fp, "%sheadline (point estimate, Monte Carlo p5-p95):\n", h0 >= 0 ? ", " : "");
	for (int h = 0; h < d->spec.nheadline; h++)
		for (size_t i = 0; i < d->est.n; i++)
			if (!strcmp(d->est.rows[i].sc.name, d->spec.headline[h]))
				summary_row(d, i, fp);
	if (!d->have_proj)
		fprintf(fp, "  (no projection stored with this run: no bands)\n");
	fprintf(fp, "\nmeasured baseline: %s, %s pipeline, block %g, budget %g, C=%g: ", a->gpu,
		pipeline_name(a->pipeline), a->block, a->budget, a->concurrency);
	if (isfinite(a->tok_s))
		fprintf(fp, "%.1f tok/s at acceptance %g, step %.3f ms\n", a->tok_s, a->accept,
			a->step_ms);
	else
		fprintf(fp, "step %.3f ms\n", a->step_ms);
	if (b >= 0)
		summary_row(d, (size_t)b, fp);
	report_regress_status(d, status, sizeof status);
	fprintf(fp, "\nregressions: %s\n", status);
	for (size_t i = 0; d->have_night && i < d->night.n; i++) {
		const struct regress_entry *e = &d->night.entries[i];
		if (e->verdict != REG_REGRESSION && e->verdict != REG_SUSPECT &&
		    e->verdict != REG_DRIFT && e->verdict != REG_ENV)
			continue;
		fprintf(fp, "  %s %s/%s %s: %.2f us vs baseline %.2f us (%+.1f%%)",
			regress_verdict_name(e->verdict), e->key.op, e->key.variant, e->key.params,
			e->median_us, e->baseline_us, 100 * e->delta_frac);
		if (e->commits[0])
			fprintf(fp, ", commits %s (first bad %s)", e->commits, e->bad_run_id);
		if (e->verdict == REG_DRIFT || e->verdict == REG_ENV)
			fprintf(fp, "; %s", e->reason);
		fputc('\n', fp);
	}
}
