/* regress_impact.c - what a kernel's confirmed change costs the projected tok/s. */
#include "regress.h"

#include "err.h"
#include "project.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


static int impact_comp(const struct regress_conf *c, const char *op)
{
	for (int i = 0; i < c->nimpact; i++)
		if (!strcmp(c->impact[i].op, op))
			return (int)c->impact[i].comp;
	return -1;
}

static int impact_push(struct regress_impacts *out, size_t *cap, const struct regress_impact *im)
{
	if (out->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct regress_impact *v = realloc(out->v, ncap * sizeof *v);
		if (!v)
			return err_nomem();
		out->v = v;
		*cap = ncap;
	}
	out->v[out->n++] = *im;
	return 0;
}

/* The impact of point p of series s on scenario sc (comp >= 0). */
static void impact_eval(struct regress_impact *im, const struct model *m,
			const struct scenario *sc, const struct gpu *g)
{
	struct model_in in = {g,	  sc->pipeline,	   sc->block,
			      sc->budget, sc->concurrency, sc->accept[0], sc->context};
	struct model_out out;

	model_eval(m, &in, &out);
	double step_after = out.step_ms + out.ms[im->comp] * im->delta_frac;
	snprintf(im->scenario, sizeof im->scenario, "%s", sc->name);
	snprintf(im->target, sizeof im->target, "%s", g->id);
	im->accept = sc->accept[0];
	im->tok_s = out.tok_s;
	im->tok_s_after = sc->concurrency * sc->accept[0] / step_after * 1000.0;
	im->change_frac = out.step_ms / step_after - 1;
}

int regress_impact(struct regress_impacts *out, const struct regress_conf *c,
		   const struct history *h, size_t run, const struct model *m,
		   const struct scenario *scs, size_t nscs)
{
	size_t cap = 0;

	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < h->n; i++) {
		const struct hist_point *p = history_point_at(&h->series[i], run);
		if (!p ||
		    (p->verdict_night != REG_REGRESSION && p->verdict_night != REG_IMPROVEMENT))
			continue;
		struct regress_impact im = {.key = h->series[i].key, .verdict = p->verdict_night,
					    .delta_frac = p->delta_frac,
					    .comp = impact_comp(c, h->series[i].key.op),
					    .accept = NAN, .tok_s = NAN, .tok_s_after = NAN,
					    .change_frac = NAN};
		if (im.comp < 0 || !m) {
			im.comp = -1;
			if (impact_push(out, &cap, &im))
				goto nomem;
			continue;
		}
		for (size_t k = 0; k < nscs; k++) {
			const struct gpu *g = calib_gpu(m->cal, scs[k].target);
			if (!g || !scs[k].naccept)
				continue;
			impact_eval(&im, m, &scs[k], g);
			if (impact_push(out, &cap, &im))
				goto nomem;
		}
	}
	return 0;
nomem:
	regress_impacts_free(out);
	return DDT_ENOMEM;
}

void regress_impacts_free(struct regress_impacts *im)
{
	free(im->v);
	memset(im, 0, sizeof *im);
}

/* "+9.0%" with a true minus sign for negative numbers. */
static void pct_str(char *buf, size_t len, double frac)
{
	double pct = frac * 100;
	if (pct < 0)
		snprintf(buf, len, "\u2212%.1f%%", -pct);
	else
		snprintf(buf, len, "+%.1f%%", pct);
}

char *regress_impact_line(const struct regress_impact *im, char *buf, size_t len)
{
	char d[16], t[16];
	pct_str(d, sizeof d, im->delta_frac);
	if (im->comp < 0) {
		snprintf(buf, len,
			 "%s/%s %s %s \u2192 no model component (add the op to regress.impact)",
			 im->key.op, im->key.variant, im->key.params, d);
		return buf;
	}
	pct_str(t, sizeof t, im->change_frac);
	snprintf(buf, len, "%s %s \u2192 %s %s tok/s (%s, %.0f \u2192 %.0f tok/s)", im->key.op, d,
		 im->scenario, t, im->target, im->tok_s, im->tok_s_after);
	return buf;
}

/* The projection row of scenario name in p (calibrated: its one row at the
 * acceptance range's middle), or NULL. */
static const struct project_row *row_of(const struct projection *p, const char *name)
{
	for (size_t i = 0; i < p->nrows; i++)
		if (!strcmp(p->rows[i].scenario, name))
			return &p->rows[i];
	return NULL;
}

/* Im again from row r: the scenario's own estimator's step, components and
 * tok/s. */
static void impact_from_row(struct regress_impact *im, const struct project_row *r)
{
	double step = r->step_ms.point, after = step + r->ms[im->comp] * im->delta_frac;
	im->accept = r->accept;
	im->tok_s = r->tok_s.point;
	im->tok_s_after = r->tok_s.point * step / after;
	im->change_frac = step / after - 1;
}

/* The calibrated scenarios of t projected at their calibrated point (the
 * template's samples and seed, no tornado, no grid) into p; *n how many. */
static int project_calibrated(struct projection *p, const struct model *m, const struct tmpl *t,
			      const struct run_record *measured, size_t *n)
{
	struct project_config cfg;
	struct ydiag diag = {0};
	struct scenario *scs = calloc(t->nscenarios + 1, sizeof *scs);
	int rc;

	memset(p, 0, sizeof *p);
	*n = 0;
	if (!scs)
		return err_nomem();
	for (size_t k = 0; k < t->nscenarios; k++)
		if (t->scenarios[k].estimator == EST_CALIBRATED)
			scs[(*n)++] = t->scenarios[k];
	rc = project_config_load(&cfg, t, &diag);
	if (!rc && *n) {
		cfg.sensitivity = cfg.grid = 0;
		rc = project_scenarios(p, m->cal, m->der, scs, *n, measured, &cfg);
	}
	if (rc && diag.n)
		err_set(rc, "%s", diag.msgs[0]);
	ydiag_free(&diag);
	free(scs);
	return rc;
}

int regress_impact_own(struct regress_impacts *out, const struct regress_conf *c,
		       const struct history *h, size_t run, const struct model *m,
		       const struct tmpl *t, const struct run_record *measured)
{
	struct projection p;
	size_t ncal = 0;
	int rc = regress_impact(out, c, h, run, m, t->scenarios, t->nscenarios);
	if (rc || !m || !out->n)
		return rc;
	rc = project_calibrated(&p, m, t, measured, &ncal);
	for (size_t i = 0; !rc && ncal && i < out->n; i++) {
		struct regress_impact *im = &out->v[i];
		const struct scenario *s = tmpl_scenario(t, im->scenario);
		const struct project_row *r = s && s->estimator == EST_CALIBRATED && im->comp >= 0
						      ? row_of(&p, im->scenario)
						      : NULL;
		if (r)
			impact_from_row(im, r);
	}
	project_free(&p);
	if (rc)
		regress_impacts_free(out);
	return rc;
}
