/* project_read.c - projection.yaml's strict reader (the writer and the text
 * form: project_yaml.c), and the normal form both go by. */
#include "project.h"
#include "project_schema.h"

#include "err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- reader */

#define NUM (Y_REQUIRED | Y_NULLABLE)

/* key's string into dst[len]; too long is a problem at its line:col. */
static void str_in(struct yctx *c, struct ydoc_node *m, const char *key, char *dst, size_t len)
{
	(void)yget_strcpy(c, m, key, Y_REQUIRED, dst, len);
}

static void int_in(struct yctx *c, struct ydoc_node *m, const char *key, int *out)
{
	yget_int(c, m, key, Y_REQUIRED, out);
}

/* A sequence under key (required) with at most max items; NULL on a problem. */
static struct ydoc_node *seq_in(struct yctx *c, struct ydoc_node *m, const char *key, size_t max)
{
	struct ydoc_node *n = NULL;
	if (yget_node(c, m, key, YDOC_SEQ, Y_REQUIRED, &n) || !n)
		return NULL;
	if (n->n > max) {
		ydiag_add(c->diag, c->file, n->line, n->col, "%s: at most %zu items", key, max);
		return NULL;
	}
	return n;
}

static void row_in(struct yctx *c, struct ydoc_node *m, struct project_row *r)
{
	yschema_read(c, m, &project_schema_row, r);
}

static int tornado_in(struct yctx *c, struct ydoc_node *m, struct project_tornado *t)
{
	struct ydoc_node *bars;
	yschema_read_fields(c, m, &project_schema_tornado, t);
	if ((bars = seq_in(c, m, "bars", CALIB_MAX_ASM)) != NULL) {
		t->bars = calloc(bars->n ? bars->n : 1, sizeof *t->bars);
		if (!t->bars)
			return err_nomem();
		for (size_t i = 0; i < bars->n; i++) {
			struct ydoc_node *b = bars->items[i];
			struct project_bar *r = &t->bars[t->nbars++];
			yschema_read_item(c, b, &project_schema_bar, r, "bar");
		}
	}
	yget_check_unknown(c, m);
	return 0;
}

static void int_list_in(struct yctx *c, struct ydoc_node *m, const char *key, int *out, int *n,
			int max)
{
	struct ydoc_node *s = seq_in(c, m, key, (size_t)max);
	*n = 0;
	for (size_t i = 0; s && i < s->n; i++) {
		double v;
		if (!yget_node_num(c, s->items[i], key, Y_POSITIVE | Y_INTEGER, &v))
			out[(*n)++] = (int)v;
	}
}

static void cell_in(struct yctx *c, struct ydoc_node *m, struct project_grid *g, int t, int ci,
		    int b)
{
	struct project_cell *x = PROJECT_CELL(g, t, ci, b);
	const char *tg = NULL;
	int C = 0, B = 0;
	if (yget_expect(c, m, YDOC_MAP, "cell"))
		return;
	yget_str(c, m, "target", Y_REQUIRED, &tg);
	int_in(c, m, "C", &C);
	int_in(c, m, "B", &B);
	if ((tg && strcmp(tg, g->targets[t])) || C != g->conc[ci] || B != g->budgets[b])
		ydiag_add(c->diag, c->file, m->line, m->col,
			  "cells: expected %s C=%d B=%d here (target-major order)", g->targets[t],
			  g->conc[ci], g->budgets[b]);
	yget_num(c, m, "M", NUM, &x->M);
	yget_num(c, m, "accept", NUM, &x->accept);
	yget_bool(c, m, "capped", Y_REQUIRED, &x->accept_capped);
	yget_bool(c, m, "lower_bound", 0, &x->accept_lower); /* runs before it: absent */
	yget_num(c, m, "step_point", NUM, &x->step_ms.point);
	yget_num(c, m, "step_p5", NUM, &x->step_ms.p5);
	yget_num(c, m, "step_p50", NUM, &x->step_ms.p50);
	yget_num(c, m, "step_p95", NUM, &x->step_ms.p95);
	yget_num(c, m, "tok_point", NUM, &x->tok_s.point);
	yget_num(c, m, "tok_p5", NUM, &x->tok_s.p5);
	yget_num(c, m, "tok_p50", NUM, &x->tok_s.p50);
	yget_num(c, m, "tok_p95", NUM, &x->tok_s.p95);
	yget_num(c, m, "p_best", NUM, &x->p_best);
	yget_num(c, m, "regret", NUM, &x->regret);
	yget_bool(c, m, "best", Y_REQUIRED, &x->best);
	yget_bool(c, m, "runner", Y_REQUIRED, &x->runner);
	yget_check_unknown(c, m);
	if (x->best)
		g->best[t * g->nconc + ci] = b;
	if (x->runner)
		g->runner[t * g->nconc + ci] = b;
}

static int grid_in(struct yctx *c, struct ydoc_node *m, struct project_grid *g)
{
	struct ydoc_node *s, *cells;
	yschema_read_fields(c, m, &project_schema_grid, g);
	if ((s = seq_in(c, m, "targets", PROJECT_MAX_GRID_TARGETS)) != NULL)
		for (size_t i = 0; i < s->n; i++)
			if (!yget_expect(c, s->items[i], YDOC_SCALAR, "targets"))
				snprintf(g->targets[g->ntargets++], sizeof g->targets[0], "%s",
					 s->items[i]->str);
	int_list_in(c, m, "concurrency", g->conc, &g->nconc, PROJECT_MAX_GRID_CONC);
	int_list_in(c, m, "budgets", g->budgets, &g->nbudgets, PROJECT_MAX_GRID_BUDGETS);
	if ((s = seq_in(c, m, "curve_accept", PROJECT_MAX_GRID_BUDGETS)) != NULL) {
		if ((int)s->n != g->nbudgets)
			ydiag_add(c->diag, c->file, s->line, s->col, "curve_accept: one per budget");
		for (size_t i = 0; i < s->n; i++)
			yget_node_num(c, s->items[i], "curve_accept", Y_NULLABLE, &g->curve_accept[i]);
	}
	size_t n = (size_t)g->ntargets * g->nconc * g->nbudgets;
	g->cells = calloc(n ? n : 1, sizeof *g->cells);
	g->best = calloc((size_t)(g->ntargets * g->nconc) + 1, sizeof *g->best);
	g->runner = calloc((size_t)(g->ntargets * g->nconc) + 1, sizeof *g->runner);
	if (!g->cells || !g->best || !g->runner)
		return err_nomem();
	if ((cells = seq_in(c, m, "cells", n)) != NULL) {
		if (cells->n != n)
			ydiag_add(c->diag, c->file, cells->line, cells->col,
				  "cells: expected %zu (targets x concurrency x budgets), got %zu", n,
				  cells->n);
		else
			for (size_t i = 0; i < n; i++)
				cell_in(c, cells->items[i], g, (int)(i / (g->nconc * g->nbudgets)),
					(int)(i / g->nbudgets % g->nconc), (int)(i % g->nbudgets));
	}
	yget_check_unknown(c, m);
	return 0;
}

static void fit_in(struct yctx *c, struct ydoc_node *m, struct project_fit *f)
{
	struct ydoc_node *s;
	const char *str = NULL;
	if (!yget_str(c, m, "curve", Y_REQUIRED, &str) && str && calib_moe_curve_parse(str, &f->curve))
		ydiag_add(c->diag, c->file, m->line, m->col, "curve: expected linear or physical");
	str_in(c, m, "gpu", f->gpu, sizeof f->gpu);
	str = NULL;
	if (!yget_str(c, m, "source", Y_REQUIRED, &str) && str && calib_provenance_parse(str, &f->source))
		ydiag_add(c->diag, c->file, m->line, m->col, "source: unknown provenance '%s'", str);
	yget_num(c, m, "rms_pct", NUM, &f->rms_pct);
	yget_num(c, m, "plateau_ms", NUM, &f->plateau_ms);
	yget_num(c, m, "m_plateau", NUM, &f->m_plateau);
	str_in(c, m, "note", f->note, sizeof f->note);
	if ((s = seq_in(c, m, "params", PROJECT_MAX_FIT_PARAMS)) != NULL)
		for (size_t i = 0; i < s->n; i++) {
			struct project_param *q = &f->params[f->nparams++];
			yschema_read_item(c, s->items[i], &project_schema_param, q, "param");
		}
	if ((s = seq_in(c, m, "points", PROJECT_MAX_FIT_POINTS)) != NULL)
		for (size_t i = 0; i < s->n; i++) {
			struct project_fit_point *q = &f->points[f->npoints++];
			yschema_read_item(c, s->items[i], &project_schema_fit_point, q, "point");
		}
	yget_check_unknown(c, m);
}

static void backtest_in(struct yctx *c, struct ydoc_node *m, struct project_backtest *b)
{
	yschema_read(c, m, &project_schema_backtest, b);
}

/* xbacktest.implementation's pooled figures (optional: older records have
 * none; its per-pair list is not read back). */
static void ximpl_in(struct yctx *c, struct ydoc_node *m, struct projection *p)
{
	struct ydoc_node *im = NULL;
	p->iback_cover_pct = p->iback_err_pct = p->iback_width_pct = p->iback_bias_pct = NAN;
	if (yget_node(c, m, "implementation", YDOC_MAP, 0, &im) || !im)
		return;
	yget_int(c, im, "points", Y_REQUIRED, &p->iback_n);
	yget_num(c, im, "cover_pct", NUM, &p->iback_cover_pct);
	yget_num(c, im, "err_pct", NUM, &p->iback_err_pct);
	yget_num(c, im, "width_pct", NUM, &p->iback_width_pct);
	yget_num(c, im, "bias_pct", NUM, &p->iback_bias_pct);
	ydoc_get(im, "pooled");
	yget_check_unknown(c, im);
}

static int xback_in(struct yctx *c, struct ydoc_node *m, struct projection *p)
{
	struct ydoc_node *s;
	yget_int(c, m, "points", Y_REQUIRED, &p->xback_n);
	yget_num(c, m, "cover_pct", NUM, &p->xback_cover_pct);
	yget_num(c, m, "err_pct", NUM, &p->xback_err_pct);
	if ((s = seq_in(c, m, "pairs", 100000)) != NULL) {
		p->xback = calloc(s->n ? s->n : 1, sizeof *p->xback);
		if (!p->xback)
			return err_nomem();
		for (size_t i = 0; i < s->n; i++) {
			struct project_xback *x = &p->xback[p->nxback++];
			yschema_read_item(c, s->items[i], &project_schema_xback, x, "pair");
		}
	}
	if ((s = seq_in(c, m, "pooled", 10000)) != NULL) {
		p->xsum = calloc(s->n ? s->n : 1, sizeof *p->xsum);
		if (!p->xsum)
			return err_nomem();
		for (size_t i = 0; i < s->n; i++) {
			struct ydoc_node *it = s->items[i];
			struct project_xsum *x = &p->xsum[p->nxsum++];
			if (yget_expect(c, it, YDOC_MAP, "pooled"))
				continue;
			str_in(c, it, "class", x->cls, sizeof x->cls);
			str_in(c, it, "family", x->fam, sizeof x->fam);
			int_in(c, it, "n", &x->n);
			yget_num(c, it, "cover_pct", NUM, &x->cover_pct);
			yget_num(c, it, "med_err_pct", NUM, &x->med_err_pct);
			x->bias_pct = x->width_pct = NAN;
			yget_num(c, it, "bias_pct", Y_NULLABLE, &x->bias_pct);
			yget_num(c, it, "width_pct", Y_NULLABLE, &x->width_pct);
			yget_check_unknown(c, it);
		}
	}
	ximpl_in(c, m, p);
	yget_check_unknown(c, m);
	return 0;
}

static void central_in(struct yctx *c, struct ydoc_node *m, struct project_central *k)
{
	k->have = 1;
	yschema_read(c, m, &project_schema_central, k);
}

static void input_in(struct yctx *c, struct ydoc_node *m, struct project_input *in)
{
	const char *s = NULL;
	str_in(c, m, "name", in->name, sizeof in->name);
	yget_num(c, m, "value", NUM, &in->value);
	if (!yget_str(c, m, "prov", Y_REQUIRED, &s) && s && calib_provenance_parse(s, &in->prov))
		ydiag_add(c->diag, c->file, m->line, m->col, "prov: unknown provenance '%s'", s);
	in->was = NAN;
	yget_num(c, m, "was", Y_NULLABLE, &in->was);
	str_in(c, m, "source", in->source, sizeof in->source);
	yget_check_unknown(c, m);
}

/* Allocates n items of size sz into *out (at least one). */
static int alloc_n(void *out, size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);
	*(void **)out = p;
	return p ? 0 : err_nomem();
}

static int read_root(struct projection *p, struct yctx *c, struct ydoc_node *root)
{
	struct ydoc_node *s, *g = NULL, *f = NULL;
	int rc = 0;

	int_in(c, root, "schema", &p->schema);
	if (p->schema != PROJECT_SCHEMA) {
		ydiag_add(c->diag, c->file, root->line, root->col,
			  "schema: this ddt reads projection schema %d, got %d", PROJECT_SCHEMA,
			  p->schema);
		return DDT_EINPUT;
	}
	yschema_read_fields(c, root, &project_schema_ident, p);
	yschema_read_fields(c, root, &project_schema_head, p);
	if ((s = seq_in(c, root, "notes", 1000)) != NULL) {
		if ((rc = alloc_n(&p->notes, s->n, sizeof *p->notes)))
			return rc;
		for (size_t i = 0; i < s->n; i++)
			if (!yget_expect(c, s->items[i], YDOC_SCALAR, "notes"))
				snprintf(p->notes[p->nnotes++], sizeof *p->notes, "%s", s->items[i]->str);
	}
	if ((s = seq_in(c, root, "rows", 100000)) != NULL) {
		if ((rc = alloc_n(&p->rows, s->n, sizeof *p->rows)))
			return rc;
		for (size_t i = 0; i < s->n; i++)
			if (!yget_expect(c, s->items[i], YDOC_MAP, "row"))
				row_in(c, s->items[i], &p->rows[p->nrows++]);
	}
	if ((s = seq_in(c, root, "tornado", 100000)) != NULL) {
		if ((rc = alloc_n(&p->tornado, s->n, sizeof *p->tornado)))
			return rc;
		for (size_t i = 0; i < s->n && !rc; i++)
			if (!yget_expect(c, s->items[i], YDOC_MAP, "tornado"))
				rc = tornado_in(c, s->items[i], &p->tornado[p->ntornado++]);
		if (rc)
			return rc;
	}
	if (!yget_node(c, root, "grid", YDOC_MAP, 0, &g) && g) {
		p->has_grid = 1;
		if ((rc = grid_in(c, g, &p->grid)))
			return rc;
	}
	if (!yget_node(c, root, "fit", YDOC_MAP, Y_REQUIRED, &f) && f)
		fit_in(c, f, &p->fit);
	if ((s = seq_in(c, root, "backtest", 1000)) != NULL) {
		if ((rc = alloc_n(&p->backtest, s->n, sizeof *p->backtest)))
			return rc;
		for (size_t i = 0; i < s->n; i++)
			if (!yget_expect(c, s->items[i], YDOC_MAP, "backtest"))
				backtest_in(c, s->items[i], &p->backtest[p->nbacktest++]);
	}
	if (!yget_node(c, root, "xbacktest", YDOC_MAP, Y_REQUIRED, &g) && g &&
	    (rc = xback_in(c, g, p)))
		return rc;
	if ((s = seq_in(c, root, "inputs", 100000)) != NULL) {
		if ((rc = alloc_n(&p->inputs, s->n, sizeof *p->inputs)))
			return rc;
		for (size_t i = 0; i < s->n; i++)
			if (!yget_expect(c, s->items[i], YDOC_MAP, "input"))
				input_in(c, s->items[i], &p->inputs[p->ninputs++]);
	}
	if (!yget_node(c, root, "calibrated_point", YDOC_MAP, 0, &g) && g)
		central_in(c, g, &p->central);
	yget_check_unknown(c, root);
	return 0;
}

/* Parses a projection document already loaded. */
static int project_parse(struct projection *p, struct ydoc *doc, struct ydiag *diag)
{
	struct yctx c = {doc->file, diag, NULL};
	size_t before = diag->n;
	int rc;
	if (!doc->root) {
		ydiag_add(diag, doc->file, 0, 0, "empty projection");
		return DDT_EINPUT;
	}
	if (yget_expect(&c, doc->root, YDOC_MAP, "projection"))
		return DDT_EINPUT;
	if ((rc = read_root(p, &c, doc->root)) != 0)
		return rc;
	return diag->n > before ? DDT_EINPUT : 0;
}

int project_read(struct projection *p, const char *path, struct ydiag *diag)
{
	struct ydoc *doc = NULL;
	int rc;
	memset(p, 0, sizeof *p);
	if ((rc = ydoc_load_file(&doc, path, diag)) == 0)
		rc = project_parse(p, doc, diag);
	ydoc_free(doc);
	return rc;
}

int project_normalize(struct projection *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct projection q;
	struct ydiag diag = {0};
	struct ydoc *doc = NULL;
	int rc;

	if (!fp)
		return err_nomem();
	project_emit(p, fp);
	if (fclose(fp) != 0) {
		free(buf);
		return err_nomem();
	}
	memset(&q, 0, sizeof q);
	rc = ydoc_load_buf(&doc, "projection", buf, len, &diag);
	if (!rc)
		rc = project_parse(&q, doc, &diag);
	if (rc)
		err_set(rc, "projection: %s", diag.n ? diag.msgs[0] : err_msg());
	ydoc_free(doc);
	ydiag_free(&diag);
	free(buf);
	if (rc) {
		project_free(&q);
		return rc;
	}
	project_free(p);
	*p = q;
	return 0;
}
