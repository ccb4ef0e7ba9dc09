/* report_summary.c - summary.txt: page one in plain text (baseline and tonight's measurements, projection bands, backtest coverage, caveats). */
#include "report_summary.h"

#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- summary */

/* The measured baseline and the MoE reference the projection rests on. */
static void summary_baseline(const struct report_data *d, FILE *fp)
{
	const struct anchor *a = &d->cal.sglang_b8;
	const struct gpu *g = calib_gpu(&d->cal, a->gpu);
	const struct moe_reference *mr = &d->cal.moe_ref;
	const struct gpu *rg = calib_gpu(&d->cal, mr->gpu);

	fprintf(fp, "measured baseline: %s pipeline on %s, block %g, budget %g, C=%g: ",
		a->pipeline == PIPE_NATIVE ? "native" : "SGLang", g ? g->name : a->gpu, a->block,
		a->budget, a->concurrency);
	if (isfinite(a->tok_s))
		fprintf(fp, "%.1f tok/s at acceptance %g, step %.3f ms\n", a->tok_s, a->accept,
			a->step_ms);
	else
		fprintf(fp, "step %.3f ms\n", a->step_ms);
	fprintf(fp, "  source: %s\n", a->source);
	fprintf(fp, "  MoE reference on %s at TP-%g:", rg ? rg->name : mr->gpu, mr->tp);
	for (int i = 0; i < mr->npoints; i++)
		fprintf(fp, "%s %.3g ms at M=%g", i ? "," : "", mr->points[i].step_ms,
			mr->points[i].m);
	fputc('\n', fp);
}

/* Tonight's own measurements, one row per op, with the machine they ran on. */
static void summary_tonight(const struct report_data *d, FILE *fp)
{
	size_t idx[24], n = report_tonight_rows(d, idx, 24);
	char dev[256];

	for (size_t i = 0; i < d->rec.ndevices; i++)
		fprintf(fp, "%s %s", i ? "," : "tonight on", report_device_text(d, i, dev, sizeof dev));
	if (!d->rec.ndevices)
		fprintf(fp, "tonight on an unrecorded device");
	fprintf(fp, ", host %s, build %s, project %s:\n", d->rec.prov.host, d->rec.prov.build,
		d->rec.prov.git_rev);
	if (!n)
		fprintf(fp, "  no kernels measured\n");
	for (size_t j = 0; j < n; j++) {
		const struct rec_row *w = &d->rec.rows[idx[j]];
		char raw[256], params[320], med[24], lo[24], hi[24], label[400];
		report_fmt_params(params, sizeof params, rec_row_params_str(w, raw, sizeof raw));
		snprintf(label, sizeof label, "%s/%s", w->op, w->variant);
		if (w->status != REC_OK) {
			fprintf(fp, "  %-22s %s%s%s%s%s\n", label, params, params[0] ? ": " : "",
				rec_status_name(w->status), w->reason[0] ? ": " : "", w->reason);
			continue;
		}
		report_fmt_us(med, sizeof med, w->median_us);
		report_fmt_us(lo, sizeof lo, w->p10_us);
		report_fmt_us(hi, sizeof hi, w->p90_us);
		fprintf(fp, "  %-22s %9s us (p10-p90 %s-%s)  %s\n", label, med, lo, hi, params);
	}
}

/* One headline row: median and band beside the seed's estimate. */
static void summary_row(const struct report_data *d, size_t i, FILE *fp)
{
	struct report_figure f;
	char med[32], lo[32], hi[32], seed[32], step[32], at[24] = "";
	double pct, s;

	report_figure(d, i, &f);
	s = report_seed_tok(&f, &pct);
	report_fmt_tok(med, sizeof med, isfinite(f.tok_p50) ? f.tok_p50 : f.tok_s);
	report_fmt_tok(lo, sizeof lo, f.tok_p5);
	report_fmt_tok(hi, sizeof hi, f.tok_p95);
	report_fmt_tok(seed, sizeof seed, isfinite(s) ? s : f.est->out.tok_s);
	report_fmt_ms(step, sizeof step, isfinite(f.step_p50) ? f.step_p50 : f.step_ms);
	if (isfinite(pct))
		snprintf(at, sizeof at, " (at p%.0f)", pct);
	fprintf(fp, "  %-18s accept %-5g median %7s tok/s  p5-p95 %s-%s  seed %s%s  step %s ms%s\n",
		f.est->sc.name, f.est->accept, med, lo, hi, seed, at, step,
		f.est->runnable ? "" : "  [not runnable]");
}

/* Under a headline scenario's rows: its ratio to the measured baseline
 * and its change since the previous night, as page one says them. */
static void summary_since(const struct report_data *d, size_t i, FILE *fp)
{
	struct report_figure f;
	char since[1200];
	double prev;
	report_figure(d, i, &f);
	report_prev_change(d, f.est->sc.name, &prev, since, sizeof since);
	fprintf(fp, "    x%.2f vs the %.0f tok/s baseline; since the previous night: %s\n",
		(isfinite(f.tok_p50) ? f.tok_p50 : f.tok_s) / report_baseline_tok(d),
		report_baseline_tok(d), since);
}

static void summary_projection(const struct report_data *d, FILE *fp)
{
	long h0 = d->spec.nheadline ? report_scenario_row(d, d->spec.headline[0]) : -1;
	char cover[1200];

	fprintf(fp, "\nprojection");
	if (h0 >= 0)
		fprintf(fp, ", %s at C=%d", d->est.rows[h0].target->name,
			d->est.rows[h0].sc.concurrency);
	if (d->have_proj)
		fprintf(fp, ": median tok/s and p5-p95 of %d Monte Carlo draws (seed %llu), beside "
			"the seed estimator's figure\n", d->proj.samples,
			(unsigned long long)d->proj.seed);
	else
		fprintf(fp, ": no projection stored with this run, point estimates only\n");
	for (int h = 0; h < d->spec.nheadline; h++) {
		long last = -1;
		for (size_t i = 0; i < d->est.n; i++)
			if (!strcmp(d->est.rows[i].sc.name, d->spec.headline[h]))
				summary_row(d, i, fp), last = (long)i;
		if (last >= 0)
			summary_since(d, (size_t)last, fp);
	}
	report_coverage_text(d, cover, sizeof cover);
	fprintf(fp, "\nbacktest coverage: %s\n", cover);
}

struct caveat_out {
	FILE *fp;
	int k;
};

static void summary_caveat(void *arg, const char *line)
{
	struct caveat_out *o = arg;
	fprintf(o->fp, "  %d. %s\n", ++o->k, line);
}

/* Every alert as of this night, open ones first, with its age. */
static void summary_alerts(const struct report_data *d, FILE *fp)
{
	if (!d->have_night)
		return;
	fprintf(fp, "\nalerts: %d open, %zu answered (ddt ack SERIES|ALERT answers one)\n",
		d->night.open_alerts, d->night.nalerts - (size_t)d->night.open_alerts);
	for (int open = 1; open >= 0; open--)
		for (size_t i = 0, k; i < d->night.nalerts; i += k) {
			const struct regress_alert *a = &d->night.alerts[i];
			k = d->ntext.group[i];
			if ((a->state == ALERT_OPEN) != open)
				continue;
			fprintf(fp, "  %s\n", d->ntext.group_line[i]);
			for (size_t j = 0; j < k; j++)
				fprintf(fp, "    %s\n", d->ntext.series_line[i + j]);
		}
}

void report_summary_write(const struct report_data *d, FILE *fp)
{
	struct caveat_out o = {fp, 0};
	char status[512];

	fprintf(fp, "ddt report %s (%s)\n%s\n\n", d->rec.run_id, d->date_text, d->spec.title);
	summary_baseline(d, fp);
	summary_tonight(d, fp);
	summary_projection(d, fp);
	report_regress_status(d, status, sizeof status);
	fprintf(fp, "\ncaveats tonight:\n");
	report_caveats(d, summary_caveat, &o);
	if (!o.k)
		fprintf(fp, "  none\n");
	fprintf(fp, "\nregressions: %s\n", status);
	summary_alerts(d, fp);
}
