/* report_data.c - one run's documents' data: the stored run loaded once, its figures and the shared formats. */
#include "report_data.h"

#include "backtest.h"
#include "err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- formats */

void report_fmt_tok(char *buf, size_t len, double tok_s)
{
	if (isfinite(tok_s))
		snprintf(buf, len, "%.1f", tok_s);
	else
		snprintf(buf, len, "-");
}

void report_fmt_ms(char *buf, size_t len, double ms)
{
	if (isfinite(ms))
		snprintf(buf, len, "%.3f", ms);
	else
		snprintf(buf, len, "-");
}

void report_fmt_us(char *buf, size_t len, double us)
{
	if (!isfinite(us))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f", fabs(us) >= 1000 ? 0 : fabs(us) >= 10 ? 1 : 2, us);
}

void report_fmt_params(char *buf, size_t len, const char *params)
{
	size_t o = 0;
	for (const char *p = params; *p && o + 2 < len; p++) {
		buf[o++] = *p;
		if (*p == ',')
			buf[o++] = ' ';
	}
	buf[o] = '\0';
}

void report_fmt_dist(char *buf, size_t len, const struct dist *d)
{
	switch (d->kind) {
	case DIST_FIXED:
		snprintf(buf, len, "fixed");
		break;
	case DIST_UNIFORM:
		snprintf(buf, len, "uniform %g - %g", d->min, d->max);
		break;
	case DIST_TRIANGULAR:
		snprintf(buf, len, "triangular %g / %g / %g", d->min, d->mode, d->max);
		break;
	case DIST_NORMAL:
		snprintf(buf, len, "normal %g sd %g", d->mean, d->sd);
		break;
	case DIST_LOGNORMAL:
		snprintf(buf, len, "lognormal median %g sigma %g", d->median, d->sigma);
		break;
	}
}

const struct dist *report_find_dist(const struct report_data *d, const char *label)
{
	int n = calib_nassumptions(&d->der.xt);
	for (int i = 0; i < n; i++) {
		char buf[160];
		calib_assumption_label(&d->der.xt, i, buf, sizeof buf);
		if (!strcmp(buf, label))
			return calib_asm(&d->cal, &d->der.xt, i);
	}
	return NULL;
}

/* ---------------------------------------------------------------- since the previous night */

double report_baseline_tok(const struct report_data *d)
{
	const struct anchor *a = &d->cal.sglang_b8;
	return isfinite(a->tok_s) ? a->tok_s : a->concurrency * a->accept * 1000.0 / a->step_ms;
}

/* A projection's row of scenario (its first acceptance), or NULL. */
static const struct project_row *scenario_row(const struct projection *p, const char *scenario)
{
	for (size_t i = 0; i < p->nrows; i++)
		if (!strcmp(p->rows[i].scenario, scenario))
			return &p->rows[i];
	return NULL;
}

/* Appends "name a -> b" for the (up to three) inputs that moved most
 * between the previous projection and tonight's; returns how many moved. */
static int changed_inputs(const struct report_data *d, char *buf, size_t len)
{
	const struct project_input *top[3] = {0};
	const struct project_input *was[3] = {0};
	double rel[3] = {0};
	int moved = 0;
	for (size_t i = 0; i < d->proj.ninputs; i++) {
		const struct project_input *in = &d->proj.inputs[i], *old = NULL;
		for (size_t j = 0; j < d->prev.ninputs && !old; j++)
			old = !strcmp(d->prev.inputs[j].name, in->name) ? &d->prev.inputs[j] : NULL;
		double r = old ? fabs(in->value - old->value) / fmax(fabs(old->value), 1e-12) : 1;
		if (!(r > 1e-9))
			continue;
		moved++;
		for (int k = 0; k < 3; k++)
			if (r > rel[k]) {
				for (int m = 2; m > k; m--)
					top[m] = top[m - 1], was[m] = was[m - 1], rel[m] = rel[m - 1];
				top[k] = in, was[k] = old, rel[k] = r;
				break;
			}
	}
	for (int k = 0; k < 3 && top[k]; k++) {
		size_t at = strlen(buf);
		if (was[k])
			snprintf(buf + at, len - at, "%s%s %.4g -> %.4g", k ? ", " : "", top[k]->name,
				 was[k]->value, top[k]->value);
		else
			snprintf(buf + at, len - at, "%s%s new (%.4g)", k ? ", " : "", top[k]->name,
				 top[k]->value);
	}
	return moved;
}

int report_prev_change(const struct report_data *d, const char *scenario, double *prev_tok,
		       char *buf, size_t len)
{
	const struct project_row *now = d->have_proj ? scenario_row(&d->proj, scenario) : NULL;
	const struct project_row *old = d->have_prev ? scenario_row(&d->prev, scenario) : NULL;
	char why[600] = "";
	*prev_tok = NAN;
	if (!now || !old || !isfinite(old->tok_s.p50) || !isfinite(now->tok_s.p50)) {
		snprintf(buf, len, "no previous night to compare with (%s)",
			 d->have_prev ? "its projection lacks this scenario"
				      : "no earlier run with a stored projection");
		return 0;
	}
	*prev_tok = old->tok_s.p50;
	double pct = 100 * (now->tok_s.p50 / old->tok_s.p50 - 1);
	int moved = changed_inputs(d, why, sizeof why);
	if (fabs(pct) < 0.05)
		pct = 0;
	char chg[32];
	snprintf(chg, sizeof chg, pct == 0 ? "unchanged" : "%+.1f%%", pct);
	snprintf(buf, len, "%s (%.1f -> %.1f tok/s) since run %s: %s%s%s", chg, old->tok_s.p50,
		 now->tok_s.p50, d->prev_id, moved ? "inputs moved: " : "",
		 moved ? why : "the same inputs",
		 moved > 3 ? " and more" : now->tok_s.p50 != old->tok_s.p50 && !moved
			   ? " (the Monte Carlo's draws differ: samples or seed)" : "");
	return 1;
}

/* ---------------------------------------------------------------- inputs */

void report_each_input(const struct report_data *d, report_input_fn fn, void *arg)
{
	const struct calib *c = &d->cal;
	char key[160];

	if (d->have_proj && d->proj.ninputs) {
		for (size_t i = 0; i < d->proj.ninputs; i++) {
			const struct project_input *in = &d->proj.inputs[i];
			fn(arg, in->name, in->value, d->input_basis[i], in->source);
		}
		return;
	}
	fn(arg, "anchors.sglang_b8.step_ms", c->sglang_b8.step_ms,
	   calib_provenance_name(PROV_MEASURED), c->sglang_b8.source);
	fn(arg, "anchors.sglang_b16.step_ms", c->sglang_b16.step_ms,
	   calib_provenance_name(PROV_CALIBRATION), c->sglang_b16.source);
	for (int i = 0; i < c->moe_ref.npoints; i++) {
		snprintf(key, sizeof key, "moe_reference.%s.m%g_ms", c->moe_ref.gpu,
			 c->moe_ref.points[i].m);
		fn(arg, key, c->moe_ref.points[i].step_ms, calib_provenance_name(PROV_MEASURED),
		   c->moe_ref.points[i].source);
	}
	for (int i = 0; i < calib_nassumptions(&d->der.xt); i++) {
		const struct dist *a = calib_asm(c, &d->der.xt, i);
		calib_assumption_label(&d->der.xt, i, key, sizeof key);
		fn(arg, key, a->point, calib_provenance_name(a->overridden ? PROV_OVERRIDE : PROV_ASSUMED),
		   a->source);
	}
}

struct cited {
	const struct sources *src;
	const struct source **v;
	size_t n, max;
};

static void cite(void *arg, const char *key, double value, const char *basis, const char *source)
{
	struct cited *c = arg;
	size_t pos = 0, start, len;
	(void)key, (void)value, (void)basis;
	while (sources_next_id(source, &pos, &start, &len)) {
		const struct source *e = sources_find(c->src, source + start, len);
		int seen = !e;
		for (size_t k = 0; k < c->n && !seen; k++)
			seen = c->v[k] == e;
		if (!seen && c->n < c->max)
			c->v[c->n++] = e;
	}
}

size_t report_cited_sources(const struct report_data *d, const struct source **v, size_t max)
{
	struct cited c = {&d->sources, v, 0, max};
	report_each_input(d, cite, &c);
	return c.n;
}

/* ---------------------------------------------------------------- figures */

long report_scenario_row(const struct report_data *d, const char *scenario)
{
	for (size_t i = 0; i < d->est.n; i++)
		if (!strcmp(d->est.rows[i].sc.name, scenario))
			return (long)i;
	return -1;
}

void report_figure(const struct report_data *d, size_t i, struct report_figure *f)
{
	const struct estimate_row *r = &d->est.rows[i];
	const struct project_row *p;

	memset(f, 0, sizeof *f);
	f->est = r;
	p = f->proj = d->have_proj ? d->row_proj[i] : NULL;
	f->tok_p5 = f->tok_p50 = f->tok_p95 = NAN;
	f->step_p5 = f->step_p50 = f->step_p95 = NAN;
	if (!p) {
		f->M = r->out.M;
		memcpy(f->ms, r->out.ms, sizeof f->ms);
		f->moe_ms = r->out.ms[COMP_MOE];
		f->nonmoe_ms = r->out.nonmoe_ms;
		f->step_ms = r->out.step_ms;
		f->tok_s = r->out.tok_s;
		return;
	}
	f->M = p->M;
	memcpy(f->ms, p->ms, sizeof f->ms);
	f->moe_ms = p->moe_ms;
	f->nonmoe_ms = p->nonmoe_ms;
	f->step_ms = p->step_ms.point;
	f->step_p5 = p->step_ms.p5;
	f->step_p50 = p->step_ms.p50;
	f->step_p95 = p->step_ms.p95;
	f->tok_s = p->tok_s.point;
	f->tok_p5 = p->tok_s.p5;
	f->tok_p50 = p->tok_s.p50;
	f->tok_p95 = p->tok_s.p95;
}

/* ---------------------------------------------------------------- status */

void report_regress_status(const struct report_data *d, char *buf, size_t len)
{
	const struct regress_night *n = &d->night;
	const int *k = n->count;
	size_t off = 0;

	if (!d->have_night || n->n == 0 || (n->nruns <= 1 && k[REG_UNJUDGED] == 0)) {
		snprintf(buf, len, "no history yet: tonight is the first night of its series");
		return;
	}
	if (k[REG_REGRESSION] == 0 && k[REG_SUSPECT] == 0 && k[REG_OK] == 0 &&
	    k[REG_IMPROVEMENT] == 0 && k[REG_OUTLIER] == 0 && k[REG_DRIFT] == 0 &&
	    k[REG_ENV] == 0 && k[REG_UNJUDGED] == 0) {
		off = (size_t)snprintf(buf, len, "%zu nights of history, not yet judged: %d series "
				       "new, %d with not enough history", n->nruns, k[REG_NEW],
				       k[REG_SHORT]);
		if (d->have_rconf && off < len)
			snprintf(buf + off, len - off, " (a series is judged from %d good nights on)",
				 d->rconf.min_good_nights);
		return;
	}
	if (k[REG_REGRESSION])
		off += (size_t)snprintf(buf + off, len - off, "%d regression%s", k[REG_REGRESSION],
					k[REG_REGRESSION] == 1 ? "" : "s");
	else
		off += (size_t)snprintf(buf + off, len - off, "no regressions");
	static const enum regress_verdict rest[] = {
		REG_DRIFT, REG_SUSPECT, REG_ENV,   REG_IMPROVEMENT, REG_OK,     REG_OUTLIER,
		REG_NEW,   REG_SHORT,   REG_FAILED, REG_SKIPPED,    REG_UNJUDGED};
	const char *sep = ": ";
	for (size_t i = 0; i < sizeof rest / sizeof *rest && off < len; i++)
		if (k[rest[i]]) {
			off += (size_t)snprintf(buf + off, len - off, "%s%d %s", sep, k[rest[i]],
						regress_verdict_names[rest[i]]);
			sep = ", ";
		}
}

/* ---------------------------------------------------------------- page one */

static int key_eq(const struct hist_key *a, const struct hist_key *b)
{
	return !strcmp(a->op, b->op) && !strcmp(a->variant, b->variant) &&
	       !strcmp(a->params, b->params) && !strcmp(a->device, b->device) &&
	       !strcmp(a->backend, b->backend);
}

static int is_headline(const struct report_data *d, const char *scenario)
{
	for (int h = 0; h < d->spec.nheadline; h++)
		if (!strcmp(d->spec.headline[h], scenario))
			return 1;
	return 0;
}

/* A flagged series' line with its cost on each headline scenario. */
static void regression_caveat(const struct report_data *d, const struct regress_entry *e,
			      report_line_fn fn, void *arg)
{
	char line[1400], *p;
	size_t off;
	int ncost = 0;

	snprintf(line, sizeof line, "%s", d->ntext.entry[e - d->night.entries]);
	off = strlen(line);
	for (size_t i = 0; i < d->night.impacts.n && off + 1 < sizeof line; i++) {
		const struct regress_impact *im = &d->night.impacts.v[i];
		if (!key_eq(&im->key, &e->key) || im->comp < 0 ||
		    (d->spec.nheadline && !is_headline(d, im->scenario)))
			continue;
		p = line + off;
		off += (size_t)snprintf(p, sizeof line - off, "%s%s %+.1f%% tok/s (%.0f -> %.0f)",
					ncost++ ? ", " : "; cost: ", im->scenario,
					100 * im->change_frac, im->tok_s, im->tok_s_after);
	}
	fn(arg, line);
}

int report_caveats(const struct report_data *d, report_line_fn fn, void *arg)
{
	char line[1200];
	int k = 0;

	for (size_t i = 0; i < d->rec.nrows; i++) {
		const struct rec_row *w = &d->rec.rows[i];
		char raw[256];
		if (w->status != REC_FAILED)
			continue;
		snprintf(line, sizeof line, "kernel %s/%s %s failed validation: %s", w->op,
			 w->variant, rec_row_params_str(w, raw, sizeof raw), w->reason);
		fn(arg, line), k++;
	}
	for (size_t i = 0; d->have_night && i < d->night.n; i++) {
		enum regress_verdict v = d->night.entries[i].verdict;
		if (v == REG_REGRESSION || v == REG_DRIFT || v == REG_SUSPECT || v == REG_ENV)
			regression_caveat(d, &d->night.entries[i], fn, arg), k++;
	}
	for (size_t i = 0; d->have_night && d->night.count[REG_UNJUDGED] && i < d->night.n; i++)
		if (d->night.entries[i].verdict == REG_UNJUDGED) {
			snprintf(line, sizeof line, "%d kernel series not judged tonight: %s",
				 d->night.count[REG_UNJUDGED], d->night.entries[i].reason);
			fn(arg, line), k++;
			break;
		}
	if (!d->have_proj)
		fn(arg, "no projection is stored with this run: point estimates without bands"), k++;
	for (size_t i = 0; d->have_proj && i < d->proj.nnotes; i++)
		fn(arg, d->proj.notes[i]), k++;
	if (d->have_proj && d->proj.weighting[0]) {
		snprintf(line, sizeof line, "%s%s", d->proj.conflict ? "anchor conflict: " : "",
			 d->proj.weighting);
		fn(arg, line), k++;
	}
	for (size_t i = 0; i < d->est.n; i++) {
		const struct estimate_row *r = &d->est.rows[i];
		if (r->runnable || !is_headline(d, r->sc.name) ||
		    (i && !strcmp(d->est.rows[i - 1].sc.name, r->sc.name)))
			continue;
		snprintf(line, sizeof line, "%s is not runnable: %s", r->sc.name,
			 r->note[0] ? r->note : "see its scenario");
		fn(arg, line), k++;
	}
	if (d->model.growth_clamped) {
		snprintf(line, sizeof line, "the sglang_b16 anchor cannot be met with these shares: "
			 "the growth of attention and draft is clamped to %g", d->model.growth);
		fn(arg, line), k++;
	}
	return k;
}

/* |log(M / m)| of row w, or INFINITY when it has no M. */
static double row_m_distance(const struct rec_row *w, double m)
{
	for (int i = 0; i < w->nparams; i++)
		if (!strcmp(w->params[i].key, "M") && w->params[i].val > 0 && m > 0)
			return fabs(log(w->params[i].val / m));
	return INFINITY;
}

size_t report_tonight_rows(const struct report_data *d, size_t *idx, size_t max)
{
	long h0 = d->spec.nheadline ? report_scenario_row(d, d->spec.headline[0]) : -1;
	double m = h0 >= 0 ? d->est.rows[h0].out.M : 9;
	size_t n = 0;

	for (size_t i = 0; i < d->rec.nrows; i++) {
		const struct rec_row *w = &d->rec.rows[i];
		size_t j = 0;
		while (j < n && strcmp(d->rec.rows[idx[j]].op, w->op))
			j++;
		if (j == n) {
			if (n < max)
				idx[n++] = i;
			continue;
		}
		const struct rec_row *b = &d->rec.rows[idx[j]];
		int ok_w = w->status == REC_OK, ok_b = b->status == REC_OK;
		if (ok_w > ok_b || (ok_w == ok_b && row_m_distance(w, m) < row_m_distance(b, m)))
			idx[j] = i;
	}
	return n;
}

char *report_device_text(const struct report_data *d, size_t i, char *buf, size_t len)
{
	const struct rec_device *v = &d->rec.devices[i];
	int cuda = !strcmp(v->kind, "cuda");
	snprintf(buf, len, "%s (%s, %s, %d %s, %.0f GB)", v->name, v->kind, v->arch, v->cores,
		 cuda ? "SMs" : "cores", v->mem_gb);
	return buf;
}

double report_seed_tok(const struct report_figure *f, double *pctile)
{
	*pctile = NAN;
	if (!f->proj)
		return NAN;
	if (f->proj->estimator == EST_SEED) {
		*pctile = f->proj->point_pctile;
		return f->proj->tok_s.point;
	}
	*pctile = f->proj->other_pctile;
	return f->proj->other_tok_s;
}

/* The implementation-held-out figure into buf (nothing when the run has
 * none); returns its length. */
static size_t report_impl_text(const struct report_data *d, char *buf, size_t len)
{
	int n;
	if (d->proj.iback_n <= 0 || !len)
		return 0;
	n = snprintf(buf, len, "implementations held out whole, each with its build's other "
		     "layouts: %.1f%% of %d measured points inside p5-p95 (target 80%%), median "
		     "|error| of p50 %.1f%% (target 12%%), median band width %.0f%% of p50 "
		     "(target 50%%), median signed error %+.1f%%",
		     d->proj.iback_cover_pct, d->proj.iback_n, d->proj.iback_err_pct,
		     d->proj.iback_width_pct, d->proj.iback_bias_pct);
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

int report_coverage_text(const struct report_data *d, char *buf, size_t len)
{
	long h0 = d->spec.nheadline ? report_scenario_row(d, d->spec.headline[0]) : -1;
	struct report_figure f;
	size_t off;

	if (!d->have_proj || d->proj.xback_n <= 0) {
		snprintf(buf, len, "no cross-GPU backtest is stored with this run: the bands are "
			 "untested");
		return 0;
	}
	off = report_impl_text(d, buf, len);
	if (off < len)
		off += (size_t)snprintf(buf + off, len - off,
					"%s%.1f%% of %d held-out measured points fell inside p5-p95 "
					"(target 80%%), median |error| of p50 %.1f%% (target 10%%)",
					off ? "; GPUs held out (twins together): " : "",
					d->proj.xback_cover_pct, d->proj.xback_n,
					d->proj.xback_err_pct);
	if (h0 >= 0 && off < len) {
		report_figure(d, (size_t)h0, &f);
		if (f.proj && isfinite(f.proj->xfer_cover_pct))
			off += (size_t)snprintf(buf + off, len - off,
						"; the pair the headline takes (%s -> %s): %.0f%% "
						"inside, %.1f%% error",
						d->cal.moe_ref.gpu, f.proj->target,
						f.proj->xfer_cover_pct, f.proj->xfer_err_pct);
		if (f.proj && f.proj->xfer_gap_pct > BACKTEST_HONEST_PCT && off < len)
			snprintf(buf + off, len - off,
				 ". Implementations disagree: the headline's MoE transfer is known "
				 "only to -%.0f%%..+%.0f%% (90%%); no band honest at 90%% is narrower "
				 "than +-%d%%",
				 100 - 100 / (1 + f.proj->xfer_gap_pct / 100), f.proj->xfer_gap_pct,
				 BACKTEST_HONEST_PCT);
	}
	return 1;
}

/* ---------------------------------------------------------------- % of peak */

/* The catalog GPU of row w's device, or NULL (a CPU, an unknown GPU). */
static const struct gpu *row_gpu(const struct report_data *d, const struct rec_row *w)
{
	if (w->device < 0 || (size_t)w->device >= d->rec.ndevices)
		return NULL;
	return d->device_gpu[w->device];
}

double report_row_pct(const struct report_data *d, const struct rec_row *w,
		      enum report_bw_basis *basis)
{
	const struct gpu *g = row_gpu(d, w);
	*basis = REPORT_BW_NONE;
	if (!isfinite(w->gbps) || w->gbps <= 0)
		return NAN;
	if (g && isfinite(g->bw_tbps) && g->bw_tbps > 0) {
		*basis = REPORT_BW_DATASHEET;
		return w->gbps / (g->bw_tbps * 1000) * 100;
	}
	if (!isfinite(w->pct_peak))
		return NAN;
	*basis = REPORT_BW_COPY;
	return w->pct_peak;
}

void report_fmt_pct(char *buf, size_t len, double pct)
{
	if (!isfinite(pct))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, pct > 100 ? "%.0f%% cache" : pct < 9.95 ? "%.1f%%" : "%.0f%%", pct);
}

void report_pct_legend(const struct report_data *d, char *title, size_t tlen, char *note,
		       size_t nlen)
{
	int seen[3] = {0}, over = 0;
	size_t off = 0;

	for (size_t i = 0; i < d->rec.nrows; i++) {
		enum report_bw_basis b;
		double p = report_row_pct(d, &d->rec.rows[i], &b);
		seen[b] = 1;
		over |= p > 100;
	}
	snprintf(title, tlen, "%s", seen[REPORT_BW_DATASHEET] && seen[REPORT_BW_COPY]
					  ? "% of BW (see note)"
				  : seen[REPORT_BW_DATASHEET] ? "% of datasheet BW"
							      : "% of copy BW measured tonight");
	note[0] = '\0';
	for (size_t i = 0; i < d->rec.ndevices && off < nlen; i++) {
		const struct rec_device *v = &d->rec.devices[i];
		const struct gpu *g = d->device_gpu[i];
		if (g && isfinite(g->bw_tbps))
			off += (size_t)snprintf(note + off, nlen - off, "%s%s: of the datasheet memory "
						"bandwidth of the %s, %.2f TB/s (%s).", off ? " " : "",
						v->name, g->name, g->bw_tbps, g->source);
		else if (isfinite(v->copy_gbps))
			off += (size_t)snprintf(note + off, nlen - off, "%s%s: of the copy bandwidth "
						"measured on it tonight, %.1f GB/s (no datasheet "
						"figure in the catalog).", off ? " " : "", v->name,
						v->copy_gbps);
	}
	if (over && off < nlen)
		snprintf(note + off, nlen - off, "%sAbove 100%% (\"cache\"): the op's working set "
			 "stayed in cache, so it moved its bytes faster than device memory can; the "
			 "share is not a measure of DRAM use.", off ? " " : "");
}
