/* whatif.c - the What-if sheet's configurations and values (whatif.h). */
#include "whatif.h"

#include "err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* cal: m put at the projection's calibrated point (project_central); 0
 * when p kept none. */
static int cal_point(struct model *cal, const struct calib *c, const struct model *m,
		     const struct projection *p)
{
	const struct project_central *k = p ? &p->central : NULL;
	char label[96];
	if (!k || !k->have)
		return 0;
	*cal = *m;
	for (int i = 0; i < calib_nassumptions(&m->der->xt); i++) {
		calib_assumption_label(&m->der->xt, i, label, sizeof label);
		for (int j = 0; j < k->n; j++)
			if (!strcmp(k->name[j], label))
				cal->v[i] = k->v[j];
	}
	cal->a8_step_ms = k->a8_step_ms;
	cal->b16_step_ms = isfinite(k->b16_step_ms) ? k->b16_step_ms : c->sglang_b16.step_ms;
	cal->growth_set = isfinite(k->b16_step_ms) ? NAN : k->growth;
	cal->form = k->form;
	cal->moe_scale = k->moe_scale;
	cal->z_x = k->z_x;
	cal->xfer_curve = 1;
	cal->tree_kernels = 1;
	cal->ar_uncut = 1;
	return 1;
}

/* Appends row r, its terms and inputs computed on model m. Returns 0, the
 * formulas' error or DDT_ENOMEM. */
static int add_row(struct whatif *w, const struct model *m, const struct whatif_row *r)
{
	struct whatif_row *n = realloc(w->rows, (w->n + 1) * sizeof *n);
	if (!n)
		return err_nomem();
	w->rows = n;
	n += w->n++;
	*n = *r;
	struct model_in in = {r->target, r->pipeline, r->block, r->budget, r->C, r->accept, 0};
	n->xfer = calib_xfer_index(&m->der->xt, m->ref_gpu, r->target, r->C * (r->budget + 1));
	model_row_vars(m, &in, n->v);
	return model_row_eval(m, &in, n->t);
}

/* The two anchors as rows of m (cal: the calibrated point's). */
static int anchor_rows(struct whatif *w, const struct calib *c, const struct model *m, int cal)
{
	const struct anchor *a[2] = {&c->sglang_b8, &c->sglang_b16};
	static const char *const name[2][2] = {
		{"anchor sglang_b8 (measured)", "anchor sglang_b16"},
		{"anchor sglang_b8 (calibrated point)", "anchor sglang_b16 (calibrated point)"}};
	int rc = 0;
	for (int i = 0; i < 2 && !rc; i++) {
		struct whatif_row r = {.name = name[cal][i], .target = calib_gpu(c, a[i]->gpu),
				       .pipeline = a[i]->pipeline, .block = a[i]->block,
				       .budget = a[i]->budget, .C = a[i]->concurrency,
				       .accept = a[i]->accept,
				       .ddt_tok_s = isfinite(a[i]->tok_s) && !cal ? a[i]->tok_s : NAN,
				       .is_anchor = 1, .est = -1, .cal = cal};
		rc = add_row(w, m, &r);
	}
	return rc;
}

/* The seed's rows: its anchors, its scenarios, and the autoregressive
 * baseline on the b8 anchor's GPU (`ddt estimate --budget 0 --estimator
 * seed`: M = C, no drafter, no tree, the MoE on its per-call floor). */
static int seed_rows(struct whatif *w, const struct calib *c, const struct model *m,
		     const struct estimate *est)
{
	int rc = anchor_rows(w, c, m, 0);
	for (size_t i = 0; i < est->n && !rc; i++) {
		const struct estimate_row *e = &est->rows[i];
		if (e->sc.estimator == EST_CALIBRATED)
			continue;
		struct whatif_row r = {.name = e->sc.name, .target = e->target,
				       .pipeline = e->sc.pipeline, .block = e->sc.block,
				       .budget = e->sc.budget, .C = e->sc.concurrency,
				       .accept = e->accept, .ddt_tok_s = e->out.tok_s, .est = (long)i};
		rc = add_row(w, m, &r);
	}
	if (rc)
		return rc;
	struct model_in in0 = {calib_gpu(c, c->sglang_b8.gpu), PIPE_NATIVE, 1, 0, 1, 1, 0};
	struct model_out o0;
	model_eval(m, &in0, &o0);
	struct whatif_row r0 = {.name = WHATIF_AUTOREGRESSIVE, .target = in0.target,
				.pipeline = PIPE_NATIVE, .block = 1, .budget = 0, .C = 1, .accept = 1,
				.ddt_tok_s = o0.tok_s, .est = -1};
	return add_row(w, m, &r0);
}

/* ddt's calibrated scenarios at the calibrated point cal: the acceptance
 * the stored point was taken at (one typed acceptance is itself; a range's
 * is its central one). */
static int cal_rows(struct whatif *w, const struct calib *c, const struct model *cal,
		    const struct estimate *est, const struct projection *p)
{
	int rc = anchor_rows(w, c, cal, 1);
	for (size_t i = 0; i < est->n && !rc; i++) {
		const struct estimate_row *e = &est->rows[i];
		const struct project_row *pr;
		if (e->sc.estimator != EST_CALIBRATED)
			continue;
		pr = project_find_row(p, e->sc.name, e->accept);
		if (!pr || !isfinite(pr->tok_s.point))
			continue;
		double acc = pr->accept_lo == pr->accept_hi && !strcmp(pr->accept_from, "typed")
				     ? pr->accept_lo
				     : pr->tok_s.point * pr->step_ms.point / (1000.0 * e->sc.concurrency);
		struct whatif_row r = {.name = e->sc.name, .target = e->target,
				       .pipeline = e->sc.pipeline, .block = e->sc.block,
				       .budget = e->sc.budget, .C = e->sc.concurrency, .accept = acc,
				       .ddt_tok_s = pr->tok_s.point, .est = (long)i, .cal = 1};
		rc = add_row(w, cal, &r);
	}
	return rc;
}

/* The values of model m the sheet derives once into k. */
static int model_values(struct whatif_model *k, const struct calib *c, const struct model *m)
{
	const struct anchor *a8 = &c->sglang_b8;
	struct model_in in8 = {m->anchor_gpu, a8->pipeline, a8->block, a8->budget, a8->concurrency,
			       1, 0};
	memcpy(k->v, m->v, sizeof k->v);
	return model_row_eval(m, &in8, k->at);
}

int whatif_make(struct whatif *w, const struct calib *c, const struct model *m,
		const struct estimate *est, const struct projection *p)
{
	struct model cal;
	int rc;

	memset(w, 0, sizeof *w);
	w->ref_bw = m->ref_gpu->bw_tbps;
	w->moe_tp = model_moe_tp(c);
	w->curve = m->curve;
	w->cal_growth_set = NAN;
	model_terms_eval(c, m->ref_gpu, m->der->moe_fit.value, w->terms);
	if ((rc = model_values(&w->seed, c, m)) != 0 || (rc = seed_rows(w, c, m, est)) != 0)
		return rc;
	w->nseed = w->n;
	if (!(w->have_cal = cal_point(&cal, c, m, p)))
		return 0;
	w->cal_a8_step_ms = cal.a8_step_ms;
	w->cal_b16_step_ms = cal.b16_step_ms;
	w->cal_growth_set = cal.growth_set;
	if ((rc = model_values(&w->cal, c, &cal)) != 0)
		return rc;
	return cal_rows(w, c, &cal, est, p);
}

void whatif_free(struct whatif *w)
{
	free(w->rows);
	w->rows = NULL;
	w->n = 0;
}
