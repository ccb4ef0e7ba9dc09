/* xlsx_whatif.c - report.xlsx's What-if sheet: the step model as live formulas. */
#include "xlsx_book.h"

#include "formula.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- What-if */

/* The What-if sheet is the model's own formulas (model_terms and
 * model_row_terms) written as live cells: the inputs are named cells, and a
 * configuration's names become its row's cells, as in
 * =comp_attn_ms*(1-growth+growth*K12/anchor_m0)*anchor_bw/J12*V12. */
struct wi {
	struct xw *x;
	lxw_worksheet *ws;
	lxw_row_t r;
	const struct whatif *k; /* the values the sheet caches (have_cal: the
				 * stored projection kept its calibrated point) */
};

/* A --set key as the model's formulas name it: every '.' as '_' (model.h:
 * model.hidden is model_hidden). */
static void key_name(const char *key, char *buf, size_t len)
{
	size_t i = 0;
	for (; key[i] && i + 1 < len; i++)
		buf[i] = key[i] == '.' ? '_' : key[i];
	if (len)
		buf[i] = '\0';
}

/* Names cell (r, c): key is a --set key ("model.hidden": the name is
 * model_hidden, as the model's formulas call it) or a derived value's name. */
static void wi_define(struct wi *w, const char *key, lxw_row_t r, lxw_col_t c)
{
	char cell[32], ref[64], name[160];
	lxw_rowcol_to_cell_abs(cell, r, c, 1, 1);
	snprintf(ref, sizeof ref, "='What-if'!%s", cell);
	key_name(key, name, sizeof name);
	xlsx_ck(w->x, workbook_define_name(w->x->wb, name, ref));
}

static void wi_define_range(struct wi *w, const char *name, lxw_row_t r0, lxw_col_t c0,
			    lxw_row_t r1, lxw_col_t c1)
{
	char a[32], b[32], ref[96];
	lxw_rowcol_to_cell_abs(a, r0, c0, 1, 1);
	lxw_rowcol_to_cell_abs(b, r1, c1, 1, 1);
	snprintf(ref, sizeof ref, "='What-if'!%s:%s", a, b);
	xlsx_ck(w->x, workbook_define_name(w->x->wb, name, ref));
}

/* A list every value of cell (r, c) must come from: the names of the
 * comma-separated list, or a range's (list "=gpu_ids"); anything else typed
 * is refused, so "nativ" never computes SGLang silently. */
static void wi_choice(struct wi *w, lxw_row_t r, lxw_col_t c, const char *list)
{
	lxw_data_validation dv;
	char buf[512], *names[16];
	int n = 0;
	memset(&dv, 0, sizeof dv);
	dv.error_title = "Not one of the choices";
	dv.error_message = "Pick a value from the list (the cell's drop-down).";
	if (list[0] == '=') {
		dv.validate = LXW_VALIDATION_TYPE_LIST_FORMULA;
		dv.value_formula = (char *)list;
	} else {
		snprintf(buf, sizeof buf, "%s", list);
		for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && n < 15;
		     t = strtok_r(NULL, ",", &save))
			names[n++] = t;
		names[n] = NULL;
		dv.validate = LXW_VALIDATION_TYPE_LIST;
		dv.value_list = names;
	}
	xlsx_ck(w->x, worksheet_data_validation_cell(w->ws, r, c, &dv));
}

/* The basis and "unit: source" of a scalar row (columns C and D; the text
 * of D runs on over the empty cells to its right). */
static void wi_about(struct wi *w, const char *unit, const char *basis, const char *source)
{
	char about[CALIB_SOURCE_LEN + 128];
	snprintf(about, sizeof about, "%s%s%s", unit, unit[0] && source[0] ? ": " : "", source);
	xlsx_put_str(w->x, w->ws, w->r, 2, basis, NULL);
	xlsx_put_str(w->x, w->ws, w->r, 3, about, NULL);
}

/* One scalar input row: its --set key | value | basis | unit: source; the
 * value's cell named by the key (wi_define). */
static void wi_scalar(struct wi *w, const char *name, double v, const char *unit,
		      const char *basis, const char *source)
{
	struct xw *x = w->x;
	xlsx_put_str(x, w->ws, w->r, 0, name, NULL);
	xlsx_put_num(x, w->ws, w->r, 1, xlsx_edited(x, name, v), x->f.in_num);
	wi_about(w, unit, basis, source);
	wi_define(w, name, w->r, 1);
	w->r++;
}

static void wi_text(struct wi *w, const char *name, const char *v, const char *unit,
		    const char *basis, const char *source, const char *choices)
{
	struct xw *x = w->x;
	xlsx_put_str(x, w->ws, w->r, 0, name, NULL);
	xlsx_put_str(x, w->ws, w->r, 1, v, x->f.in_text);
	wi_choice(w, w->r, 1, choices);
	wi_about(w, unit, basis, source);
	wi_define(w, name, w->r, 1);
	w->r++;
}

/* A derived scalar: a formula (printf-style) with ddt's value cached. */
static void wi_derived(struct wi *w, const char *name, double cached, const char *unit,
		       const char *what, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void wi_derived(struct wi *w, const char *name, double cached, const char *unit,
		       const char *what, const char *fmt, ...)
{
	struct xw *x = w->x;
	char formula[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(formula, sizeof formula, fmt, ap);
	va_end(ap);
	xlsx_put_str(x, w->ws, w->r, 0, name, NULL);
	/* byte and flop counts in whole units: six decimals of 3.6E9 do not fit */
	xlsx_put_formula(x, w->ws, w->r, 1, formula, fabs(cached) >= 1e5 ? x->f.calc_big : x->f.calc,
		         cached);
	wi_about(w, unit, "derived", what);
	wi_define(w, name, w->r, 1);
	w->r++;
}

/* A row formula: fmt with %1$d for the Excel row number of this row. */
static void wi_cell(struct wi *w, lxw_row_t r, lxw_col_t c, lxw_format *f, double cached,
		    const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void wi_cell(struct wi *w, lxw_row_t r, lxw_col_t c, lxw_format *f, double cached,
		    const char *fmt, ...)
{
	char formula[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(formula, sizeof formula, fmt, ap);
	va_end(ap);
	xlsx_put_formula(w->x, w->ws, r, c, formula, f, cached);
}

/* Columns of the model rows: the inputs, the target's catalog row and
 * bandwidth, one column per row term of the model (model_row_terms, scope
 * MR_ROW) from WC_TERMS on, then ddt's figures (wi_col). */
enum { WC_NAME, WC_TARGET, WC_PIPE, WC_BLOCK, WC_BUDGET, WC_C, WC_ACCEPT, WC_XFER, WC_MOECORR,
       WC_TREEK, WC_TREEMEAS, WC_ARUNCUT, WC_GPUROW, WC_BW, WC_TERMS };
enum { WA_P5, WA_P50, WA_P95, WA_DDT, WA_DIFF, WA_XNAME, WA_N };

/* The column of row term k (MR_ROW), or of after-column a when k < 0. */
static lxw_col_t wi_col(int k, int a)
{
	int c = WC_TERMS;
	for (int i = 0; i < (k < 0 ? MR_COUNT : k); i++)
		c += model_row_terms[i].scope == MR_ROW;
	return (lxw_col_t)(c + (k < 0 ? a : 0));
}

/* The names a calibrated row reads under "cal_" (the sheet's calibrated
 * inputs and the terms taken once or at its anchors); the others (the
 * curve, geometry, catalog, tables) are shared with the seed's rows. */
static int wi_is_cal_name(const char *name, size_t len)
{
	char key[96];
	for (int a = 0; a < ASM_COUNT; a++) {
		key_name(calib_assumption_name((enum assumption)a), key, sizeof key);
		if (strlen(key) == len && !memcmp(key, name, len))
			return 1;
	}
	for (int k = 0; k < MR_COUNT; k++)
		if (model_row_terms[k].scope != MR_ROW && strlen(model_row_terms[k].name) == len &&
		    !memcmp(model_row_terms[k].name, name, len))
			return 1;
	return (len == 25 && !memcmp(name, "anchors_sglang_b8_step_ms", 25)) ||
	       (len == 26 && !memcmp(name, "anchors_sglang_b16_step_ms", 26));
}

/* What a model name stands for in the cells of one row (0-based r): the
 * row's inputs, its target's catalog figures, its row terms' cells; the
 * names the sheet does not define. NULL: a name the sheet defines. */
struct wi_names {
	lxw_row_t r;
	int cal;
	char buf[96];
};

static const char *wi_rename(void *ctx, const char *name, size_t len)
{
	static const lxw_col_t in_col[MV_COUNT] = {
		[MV_C] = WC_C, [MV_BLOCK] = WC_BLOCK, [MV_BUDGET] = WC_BUDGET,
		[MV_ACCEPT] = WC_ACCEPT, [MV_XFER] = WC_XFER, [MV_TARGET_BW] = WC_BW,
		[MV_TARGET_ROW] = WC_GPUROW, [MV_MOE_CORR] = WC_MOECORR,
		[MV_TREE_KERNELS] = WC_TREEK, [MV_TREE_MEAS] = WC_TREEMEAS,
		[MV_AR_UNCUT] = WC_ARUNCUT};
	/* a pipeline neither native nor sglang is an error, never SGLang */
	static const char *const bound[MV_COUNT] = {
		[MV_TARGET_BF16] = "INDEX(gpu_bf16,%s)", [MV_TARGET_LINK] = "INDEX(gpu_link,%s)",
		[MV_TARGET_PCIE] = "INDEX(gpu_pcie,%s)", [MV_SAME_GPU] = "(%s=moe_reference_gpu)",
		[MV_NATIVE] = "IF(%1$s=\"native\",1,IF(%1$s=\"sglang\",0,NA()))"};
	struct wi_names *n = ctx;
	char cell[32];
	if (len == 12 && !memcmp(name, "moe_physical", 12))
		return "(moe_reference_curve=\"physical\")";
	for (int k = 0; k < MV_COUNT; k++) {
		if (strlen(model_row_var_names[k]) != len || memcmp(model_row_var_names[k], name, len))
			continue;
		lxw_col_t c = bound[k] ? (k == MV_SAME_GPU ? WC_TARGET : k == MV_NATIVE ? WC_PIPE
											  : WC_GPUROW)
				       : in_col[k];
		lxw_rowcol_to_cell(cell, n->r, c);
		snprintf(n->buf, sizeof n->buf, bound[k] ? bound[k] : "%s", cell);
		return n->buf;
	}
	for (int k = 0; k < MR_COUNT; k++)
		if (model_row_terms[k].scope == MR_ROW && strlen(model_row_terms[k].name) == len &&
		    !memcmp(model_row_terms[k].name, name, len)) {
			lxw_rowcol_to_cell(n->buf, n->r, wi_col(k, 0));
			return n->buf;
		}
	if (n->cal && wi_is_cal_name(name, len)) {
		snprintf(n->buf, sizeof n->buf, "cal_%.*s", (int)len, name);
		return n->buf;
	}
	return NULL;
}

/* Row term k's formula, its names as row r's cells (cal: the calibrated
 * point's names), into buf ('=' first). */
static void wi_formula(struct wi *w, int k, lxw_row_t r, int cal, char *buf, size_t len)
{
	struct wi_names n = {r, cal, ""};
	buf[0] = '=';
	int rc = formula_rewrite(model_row_terms[k].formula, wi_rename, &n, buf + 1, len - 1);
	if (rc && !w->x->rc)
		w->x->rc = rc;
}

/* The cell format of a term in unit u. */
static lxw_format *wi_unit_format(struct xw *x, const char *u)
{
	if (!strcmp(u, "ms") || !strcmp(u, "µs"))
		return x->f.calc_ms;
	if (!strcmp(u, "tok/s"))
		return x->f.calc_tok;
	if (!strcmp(u, "tokens") || !strcmp(u, "bytes") || !strcmp(u, "segment"))
		return x->f.calc_int;
	return x->f.calc;
}

/* The stored projection's p5 / p50 / p95 tok/s of the row's scenario at its
 * acceptance, beside the live point: numbers from the draws, which no edit
 * of the sheet moves. Blank where the projection has no such row. */
static void wi_band(struct wi *w, lxw_row_t r, const struct whatif_row *row)
{
	const struct report_data *d = w->x->d;
	struct report_figure f = {.tok_p5 = NAN, .tok_p50 = NAN, .tok_p95 = NAN};
	if (row->est >= 0)
		report_figure(d, (size_t)row->est, &f);
	xlsx_put_num(w->x, w->ws, r, wi_col(-1, WA_P5), f.tok_p5, w->x->f.tok);
	xlsx_put_num(w->x, w->ws, r, wi_col(-1, WA_P50), f.tok_p50, w->x->f.tok);
	xlsx_put_num(w->x, w->ws, r, wi_col(-1, WA_P95), f.tok_p95, w->x->f.tok);
}

/* One configuration's row: its inputs (blue), its row terms as the model's
 * formulas (ddt's values cached), the stored band, ddt's point and the
 * difference. */
static void wi_model_row(struct wi *w, lxw_row_t r, const struct whatif_row *row)
{
	struct xw *x = w->x;
	const struct calib *c = &x->d->cal;
	const double *t = row->t, *v = row->v;
	struct xfmt *f = &x->f;
	int R = (int)r + 1;
	char xname[160] = "", formula[2048];

	if (row->xfer >= 0)
		calib_assumption_label(&x->d->der.xt, ASM_COUNT + row->xfer, xname, sizeof xname);
	xlsx_put_str(x, w->ws, r, WC_NAME, row->name, row->is_anchor ? f->bold : NULL);
	xlsx_put_str(x, w->ws, r, WC_TARGET, row->target->id, f->in_text);
	wi_choice(w, r, WC_TARGET, "=gpu_ids");
	xlsx_put_str(x, w->ws, r, WC_PIPE, tmpl_pipeline_name(row->pipeline), f->in_text);
	wi_choice(w, r, WC_PIPE, "sglang,native");
	xlsx_put_num(x, w->ws, r, WC_BLOCK, row->block, f->in_num);
	xlsx_put_num(x, w->ws, r, WC_BUDGET, row->budget, f->in_num);
	xlsx_put_num(x, w->ws, r, WC_C, row->C, f->in_num);
	xlsx_put_num(x, w->ws, r, WC_ACCEPT, row->accept, f->in_num);
	xlsx_put_num(x, w->ws, r, WC_XFER, v[MV_XFER], f->in_num);
	xlsx_put_num(x, w->ws, r, WC_MOECORR, v[MV_MOE_CORR], f->in_num);
	xlsx_put_num(x, w->ws, r, WC_TREEK, v[MV_TREE_KERNELS], f->in_num);
	xlsx_put_num(x, w->ws, r, WC_TREEMEAS, v[MV_TREE_MEAS], f->in_num);
	xlsx_put_num(x, w->ws, r, WC_ARUNCUT, v[MV_AR_UNCUT], f->in_num);
	wi_cell(w, r, WC_GPUROW, f->calc_int, (double)(row->target - c->gpus) + 1,
		"=MATCH(B%d,gpu_ids,0)", R);
	lxw_rowcol_to_cell(formula, r, WC_GPUROW);
	wi_cell(w, r, WC_BW, f->calc, row->target->bw_tbps, "=INDEX(gpu_bw,%s)", formula);
	for (int k = 0; k < MR_COUNT; k++) {
		if (model_row_terms[k].scope != MR_ROW)
			continue;
		if (k == MR_TOK_S && !isfinite(row->accept)) {
			xlsx_put_str(x, w->ws, r, wi_col(k, 0), "", NULL);
			continue;
		}
		wi_formula(w, k, r, row->cal, formula, sizeof formula);
		xlsx_put_formula(x, w->ws, r, wi_col(k, 0), formula, wi_unit_format(x, model_row_terms[k].unit),
			         t[k]);
	}
	wi_band(w, r, row);
	xlsx_put_num(x, w->ws, r, wi_col(-1, WA_DDT), row->ddt_tok_s, f->tok);
	if (isfinite(row->ddt_tok_s)) { /* rounded: a difference of 1E-13 is agreement */
		char tok[32], ddt[32];
		lxw_rowcol_to_cell(tok, r, wi_col(MR_TOK_S, 0));
		lxw_rowcol_to_cell(ddt, r, wi_col(-1, WA_DDT));
		wi_cell(w, r, wi_col(-1, WA_DIFF), f->check,
			round((t[MR_TOK_S] - row->ddt_tok_s) * 1e6) / 1e6, "=ROUND(%s-%s,6)", tok, ddt);
	}
	xlsx_put_str(x, w->ws, r, wi_col(-1, WA_XNAME),
		     row->xfer >= 0 ? xname : "same GPU: no transfer", NULL);
}

/* Rows [i, j) of the configurations (whatif.h); the 0-based sheet rows of
 * the first two (the anchors) to *a8 and *a16. */
static void wi_model_rows(struct wi *w, size_t i, size_t j, lxw_row_t *a8, lxw_row_t *a16)
{
	*a8 = w->r;
	*a16 = w->r + 1;
	for (; i < j; i++)
		wi_model_row(w, w->r++, &w->k->rows[i]);
}

static void wi_rows(struct wi *w, lxw_row_t *r8, lxw_row_t *r16, lxw_row_t *c8, lxw_row_t *c16)
{
	static const struct col in_cols[WC_TERMS] = {
		{"scenario", 24},        {"target (GPU id)", 13}, {"pipeline", 12},
		{"block b", 7},          {"budget B", 8},         {"C", 5},
		{"accept", 7},           {"transfer factor", 9},  {"MoE form & fit factor", 9},
		{"tree from kernels (1/0)", 8}, {"kernels' tree ms (-1: none)", 9},
		{"all-reduce uncut (1/0)", 8},
		{"GPU row", 6},          {"target bw (TB/s)", 9}};
	static const struct col after[WA_N] = {
		{"p5 tok/s (stored draws)", 13}, {"p50 tok/s (stored draws)", 13},
		{"p95 tok/s (stored draws)", 13}, {"ddt tok/s (point)", 12},
		{"tok/s - ddt", 11},      {"transfer entry", 44}};
	struct xw *x = w->x;

	xlsx_put_str(x, w->ws, w->r++, 0, "Scenarios: blue cells are inputs; tok/s follows.", x->f.bold);
	xlsx_put_str(x, w->ws, w->r++, 0,
		     "tok/s is the live point of these formulas (the seed's estimator above, ddt's "
		     "calibrated point below); p5 / p50 / p95 beside it are the stored projection's Monte "
		     "Carlo band for the same scenario and acceptance (the quantiles of its draws, p50 the "
		     "median the report's headline quotes): they stay as stored when you edit an input.",
		     x->f.note);
	for (int i = 0; i < WC_TERMS + MR_COUNT + WA_N; i++) {
		int k = i - WC_TERMS;
		struct col cl = i < WC_TERMS ? in_cols[i]
				: k < MR_COUNT ? (struct col){model_row_terms[k].title, 11}
					       : after[k - MR_COUNT];
		lxw_col_t col = i < WC_TERMS ? (lxw_col_t)i
				: k < MR_COUNT ? wi_col(k, 0)
					       : wi_col(-1, k - MR_COUNT);
		if (k >= 0 && k < MR_COUNT && model_row_terms[k].scope != MR_ROW)
			continue;
		xlsx_put_str(x, w->ws, w->r, col, cl.title, x->f.head);
		if (i)
			xlsx_ck(x, worksheet_set_column(w->ws, col, col, cl.width, NULL));
	}
	xlsx_ck(x, worksheet_set_row(w->ws, w->r, 30, NULL));
	worksheet_freeze_panes(w->ws, w->r + 1, 1);
	w->r++;
	xlsx_put_str(x, w->ws, w->r++, 0, "The seed's estimator (its assumptions at their seed points).",
		     x->f.bold);
	wi_model_rows(w, 0, w->k->nseed, r8, r16);
	if (w->k->have_cal) {
		xlsx_put_str(x, w->ws, w->r++, 0,
			     "ddt's calibrated model: its scenarios at the calibrated point (every "
			     "assumption at the central value of its distribution unless you type one in "
			     "the inputs below).",
			     x->f.bold);
		wi_model_rows(w, w->k->nseed, w->k->n, c8, c16);
	}
	w->r++;
}

static void wi_gpus(struct wi *w)
{
	struct xw *x = w->x;
	const struct calib *c = &x->d->cal;
	lxw_row_t r0;
	int nsz = c->ar.nsizes;

	xlsx_put_str(x, w->ws, w->r++, 0, "GPU catalog and small all-reduce latency (µs) per message size",
		     x->f.bold);
	xlsx_put_str(x, w->ws, w->r, 5, "message bytes:", x->f.bold);
	for (int k = 0; k < nsz; k++)
		xlsx_put_num(x, w->ws, w->r, (lxw_col_t)(6 + k), c->ar.bytes[k], x->f.in_num);
	wi_define_range(w, "ar_bytes", w->r, 6, w->r, (lxw_col_t)(6 + nsz - 1));
	w->r++;
	static const char *const head[] = {"GPU id", "bw (TB/s)", "bf16 (TFLOP/s)",
					   "link (GB/s)", "PCIe (1/0)", "name"};
	for (int k = 0; k < 6; k++)
		xlsx_put_str(x, w->ws, w->r, (lxw_col_t)k, head[k], x->f.head);
	for (int k = 0; k < nsz; k++) {
		char h[32];
		snprintf(h, sizeof h, "µs at size %d", k + 1);
		xlsx_put_str(x, w->ws, w->r, (lxw_col_t)(6 + k), h, x->f.head);
	}
	w->r++;
	r0 = w->r;
	for (size_t i = 0; i < c->ngpus; i++, w->r++) {
		const struct gpu *g = &c->gpus[i];
		const struct ar_gpu *a = calib_ar(c, g->id);
		xlsx_put_str(x, w->ws, w->r, 0, g->id, x->f.in_text);
		char key[96];
		snprintf(key, sizeof key, "gpus.%s.bw_tbps", g->id);
		xlsx_put_num(x, w->ws, w->r, 1, xlsx_edited(x, key, g->bw_tbps), x->f.in_num);
		xlsx_put_num(x, w->ws, w->r, 2, g->bf16_tflops, x->f.in_num);
		xlsx_put_num(x, w->ws, w->r, 3, g->link_gbps, x->f.in_num);
		xlsx_put_num(x, w->ws, w->r, 4, a && a->pcie ? 1 : 0, x->f.in_num);
		xlsx_put_str(x, w->ws, w->r, 5, g->name, NULL);
		for (int k = 0; k < nsz; k++)
			xlsx_put_num(x, w->ws, w->r, (lxw_col_t)(6 + k), a ? a->us[k] : NAN, x->f.in_num);
	}
	wi_define_range(w, "gpu_ids", r0, 0, w->r - 1, 0);
	wi_define_range(w, "gpu_bw", r0, 1, w->r - 1, 1);
	wi_define_range(w, "gpu_bf16", r0, 2, w->r - 1, 2);
	wi_define_range(w, "gpu_link", r0, 3, w->r - 1, 3);
	wi_define_range(w, "gpu_pcie", r0, 4, w->r - 1, 4);
	wi_define_range(w, "ar_us", r0, 6, w->r - 1, (lxw_col_t)(6 + nsz - 1));
	w->r++;
}

static void wi_moe_points(struct wi *w)
{
	struct xw *x = w->x;
	const struct moe_reference *mr = &x->d->cal.moe_ref;
	lxw_row_t r0;
	xlsx_put_str(x, w->ws, w->r++, 0, "MoE reference points (the linear curve; the fit's data)",
		     x->f.bold);
	xlsx_put_str(x, w->ws, w->r, 0, "M", x->f.head);
	xlsx_put_str(x, w->ws, w->r, 1, "MoE (ms)", x->f.head);
	xlsx_put_str(x, w->ws, w->r, 2, "source", x->f.head);
	w->r++;
	r0 = w->r;
	for (int i = 0; i < mr->npoints; i++, w->r++) {
		xlsx_put_num(x, w->ws, w->r, 0, mr->points[i].m, x->f.in_num);
		xlsx_put_num(x, w->ws, w->r, 1, mr->points[i].step_ms, x->f.in_num);
		xlsx_put_str(x, w->ws, w->r, 2, mr->points[i].source, NULL);
	}
	wi_define_range(w, "moe_pts_m", r0, 0, w->r - 1, 0);
	wi_define_range(w, "moe_pts_ms", r0, 1, w->r - 1, 1);
	w->r++;
}

static const char *asm_source(const struct calib *c, enum assumption a)
{
	return c->asm_[a].source;
}

/* The inputs, one named cell each: the assumptions, the MoE curve, the
 * geometry, the all-reduce and the anchors (the b8 anchor's inputs row is
 * r8, the b16's r16, 0-based). */
static void wi_inputs(struct wi *w, lxw_row_t r8, lxw_row_t r16)
{
	struct xw *x = w->x;
	const struct calib *c = &x->d->cal;
	const struct geometry *g = &c->model;
	const struct whatif *k = w->k;
	const struct anchor *a8 = &c->sglang_b8, *a16 = &c->sglang_b16;
	int R8 = (int)r8 + 1, R16 = (int)r16 + 1;

	xlsx_put_str(x, w->ws, w->r++, 0, "Inputs (blue) and the values derived from them", x->f.bold);
	xlsx_put_str(x, w->ws, w->r++, 0,
		     "An input is listed under its key for `ddt estimate --set KEY=VALUE`; its cell is "
		     "named by that key with every '.' as '_' (model.hidden is model_hidden), the name "
		     "the formulas use. A derived value is named as listed.",
		     x->f.note);
	static const char *const head[] = {"name (--set key)", "value", "basis", "unit: source"};
	for (int k = 0; k < 4; k++)
		xlsx_put_str(x, w->ws, w->r, (lxw_col_t)k, head[k], x->f.head);
	xlsx_ck(x, worksheet_set_row(w->ws, w->r, 30, NULL)); /* room for titles that wrap */
	w->r++;
	for (int a = 0; a < ASM_COUNT; a++)
		wi_scalar(w, calib_assumption_name((enum assumption)a), k->seed.v[a], c->asm_[a].unit,
			  calib_provenance_name(c->asm_[a].overridden ? PROV_OVERRIDE : PROV_ASSUMED),
			  asm_source(c, (enum assumption)a));
	wi_text(w, "moe_reference.gpu", c->moe_ref.gpu, "GPU id", "measured",
		"the GPU the MoE reference curve was measured on", "=gpu_ids");
	wi_text(w, "moe_reference.curve", calib_moe_curve_name(k->curve), "physical or linear",
		"calibration", "how the MoE time between and beyond the reference points is drawn",
		"physical,linear");
	{
		static const char *const pu[MOE_P_COUNT] = {"share of bandwidth", "fraction",
							    "µs per layer"};
		const struct moe_fit *fit = &x->d->der.moe_fit;
		for (int k = 0; k < MOE_P_COUNT; k++)
			wi_scalar(w, model_moe_param_keys[k], fit->value[k], pu[k],
				  fit->held[k] ? "calibration" : "derived (fit)",
				  fit->held[k] ? c->moe_ref.phys.source[k] : fit->note);
	}
	wi_scalar(w, "moe_reference.floor_us", isnan(c->moe_ref.floor_us) ? 0 : c->moe_ref.floor_us,
		  "µs per layer", "measured",
		  isnan(c->moe_ref.floor_us) ? "no per-call floor in the calibration"
					     : c->moe_ref.floor_source);
	for (int i = 0; i < 2; i++)
		wi_scalar(w, i ? "moe_reference.anchor_b16_ms" : "moe_reference.anchor_b8_ms",
			  c->moe_ref.anchor_ms[i], "ms", "calibration",
			  "the calibration's own MoE at this anchor, the one its step was measured "
			  "with, where --moe-reference replaced the curve (0: the curve is its own)");
	for (int k = 0; k < MODEL_NGEOMETRY_INPUTS; k++) {
		const struct model_geometry_input *in = &model_geometry_inputs[k];
		double v;
		memcpy(&v, (const char *)g + in->offset, sizeof v);
		wi_scalar(w, in->key, v, in->unit, "calibration", g->source);
	}
	wi_scalar(w, "moe_reference.tp", k->moe_tp, "GPUs", "calibration", c->moe_ref.source);
	wi_scalar(w, "allreduce.per_layer", c->ar.per_layer, "all-reduces per layer", "calibration",
		  c->ar.source);
	wi_scalar(w, "allreduce.gpus", c->ar.gpus, "ranks", "calibration", c->ar.source);
	if (isfinite(a8->tok_s)) {
		wi_scalar(w, "anchors.sglang_b8.tok_s", a8->tok_s, "tok/s", "measured", a8->source);
		wi_derived(w, "anchors.sglang_b8.step_ms", a8->step_ms, "ms", "C x accept / tok/s of the anchor",
			   "=F%1$d*G%1$d/anchors_sglang_b8_tok_s*1000", R8);
	} else
		wi_scalar(w, "anchors.sglang_b8.step_ms", a8->step_ms, "ms", "measured", a8->source);
	if (isfinite(a16->tok_s)) {
		wi_scalar(w, "anchors.sglang_b16.tok_s", a16->tok_s, "tok/s", "calibration", a16->source);
		wi_derived(w, "anchors.sglang_b16.step_ms", a16->step_ms, "ms", "C x accept / tok/s",
			   "=F%1$d*G%1$d/anchors_sglang_b16_tok_s*1000", R16);
	} else
		wi_scalar(w, "anchors.sglang_b16.step_ms", a16->step_ms, "ms", "calibration", a16->source);
}

/* The calibrated point's inputs, each "cal_" and its name: the central
 * value of the assumption's distribution while the seed's cell holds its
 * seed point, else the value typed there (`ddt estimate --set` fixes an
 * assumption at its value for both estimators); the anchors' steps at the
 * point, moving with the steps typed above. */
static void wi_cal_inputs(struct wi *w)
{
	struct xw *x = w->x;
	const struct calib *c = &x->d->cal;
	const struct whatif *k = w->k;
	const struct anchor *a8 = &c->sglang_b8, *a16 = &c->sglang_b16;
	char key[96], name[128], what[256];

	xlsx_put_str(x, w->ws, w->r++, 0,
		     "ddt's calibrated point: the inputs its rows read (cal_ and the name above)", x->f.bold);
	for (int a = 0; a < ASM_COUNT; a++) {
		key_name(calib_assumption_name((enum assumption)a), key, sizeof key);
		snprintf(name, sizeof name, "cal_%s", key);
		snprintf(what, sizeof what, "the central value of %s's distribution, or the value "
					    "typed in %s", key, key);
		wi_derived(w, name, k->cal.v[a], c->asm_[a].unit, what, "=IF(%s=%.17g,%.17g,%s)", key,
			   k->seed.v[a], k->cal.v[a], key);
	}
	wi_derived(w, "cal_anchors_sglang_b8_step_ms", k->cal_a8_step_ms, "ms",
		   "the b8 anchor's step at the point (drawn within its error): the step above x "
		   "the point's ratio", "=anchors_sglang_b8_step_ms*%.17g", k->cal_a8_step_ms / a8->step_ms);
	wi_derived(w, "cal_anchors_sglang_b16_step_ms", k->cal_b16_step_ms, "ms",
		   "the b16 step the point's growth is solved for (the draws' median of the "
		   "model's b16 step): the step above x the point's ratio; an input that moves the "
		   "b16 anchor (a bandwidth, a share, the transfer) moves that median in ddt "
		   "estimate by a little more or less than here", "=anchors_sglang_b16_step_ms*%.17g",
		   k->cal_b16_step_ms / a16->step_ms);
}

/* The calibrated point's values derived once or at its anchors (rows c8
 * and c16, 0-based), as wi_model's; its growth held when the projection
 * held it (no b16 step to solve for). */
static void wi_cal_model(struct wi *w, lxw_row_t c8, lxw_row_t c16)
{
	const double *rt = w->k->cal.at;
	char formula[2048], name[128];

	for (int k = 0; k < MR_COUNT; k++) {
		const struct model_row_def *d = &model_row_terms[k];
		if (d->scope == MR_ROW)
			continue;
		snprintf(name, sizeof name, "cal_%s", d->name);
		if (k == MR_GROWTH && !isnan(w->k->cal_growth_set)) {
			wi_scalar(w, name, w->k->cal_growth_set, d->unit, "calibration",
				  "the growth at ddt's calibrated point, held (no b16 step to solve for)");
			continue;
		}
		wi_formula(w, k, d->scope == MR_AT_B16 ? c16 : c8, 1, formula, sizeof formula);
		wi_derived(w, name, rt[k], d->unit, d->what, "%s", formula);
	}
}

/* The values the model derives from the inputs: the reference GPU's
 * bandwidth, model_terms (the MoE curve's terms, the compute roof, the
 * all-reduce count), and the row terms taken once or at an anchor (the
 * components at the b8 anchor, the growth the b16 anchor fixes), their
 * row names as the anchors' cells (rows r8 and r16, 0-based). */
static void wi_model(struct wi *w, lxw_row_t r8, lxw_row_t r16)
{
	const struct whatif *m = w->k;
	char formula[2048];

	wi_derived(w, "ref_bw", m->ref_bw, "TB/s", "bandwidth of moe_reference.gpu",
		   "=INDEX(gpu_bw,MATCH(moe_reference_gpu,gpu_ids,0))");
	for (int k = 0; k < MT_COUNT; k++)
		wi_derived(w, model_terms[k].name, m->terms[k], model_terms[k].unit, model_terms[k].what,
			   "=%s", model_terms[k].formula);
	for (int k = 0; k < MR_COUNT; k++) {
		const struct model_row_def *d = &model_row_terms[k];
		if (d->scope == MR_ROW)
			continue;
		wi_formula(w, k, d->scope == MR_AT_B16 ? r16 : r8, 0, formula, sizeof formula);
		wi_derived(w, d->name, m->seed.at[k], d->unit, d->what, "%s", formula);
	}
}

/* The scenario selector on rows r..r+3 (0-based): a list of every row name
 * between first and last (0-based) in column B, and beneath it that row's
 * live point and stored band, looked up from the rows. */
static void wi_selector(struct wi *w, lxw_row_t r, lxw_row_t first, lxw_row_t last)
{
	struct xw *x = w->x;
	const struct report_data *d = x->d;
	char names[64], col[64], f[512];
	long h = d->spec.nheadline ? report_scenario_row(d, d->spec.headline[0]) : 0;
	struct report_figure fig = {.tok_s = NAN, .tok_p5 = NAN, .tok_p50 = NAN, .tok_p95 = NAN};
	if (h >= 0 && (size_t)h < d->est.n)
		report_figure(d, (size_t)h, &fig);
	const struct {
		const char *title;
		int term, after;
		double cached;
	} out[] = {{"its point tok/s (live)", MR_TOK_S, -1, fig.tok_s},
		   {"its median tok/s (p50 of the stored draws)", -1, WA_P50, fig.tok_p50},
		   {"its p5 tok/s (stored)", -1, WA_P5, fig.tok_p5},
		   {"its p95 tok/s (stored)", -1, WA_P95, fig.tok_p95}};

	lxw_rowcol_to_range_abs(names, first, 0, last, 0);
	xlsx_put_str(x, w->ws, r, 0, "Scenario (pick one):", x->f.bold);
	xlsx_put_str(x, w->ws, r, 1, h >= 0 && (size_t)h < d->est.n ? d->est.rows[h].sc.name : "",
		     x->f.in_text);
	snprintf(f, sizeof f, "=%s", names);
	wi_choice(w, r, 1, f);
	for (size_t i = 0; i < sizeof out / sizeof *out; i++) {
		lxw_col_t c = out[i].term >= 0 ? wi_col(out[i].term, 0) : wi_col(-1, out[i].after);
		lxw_rowcol_to_range_abs(col, first, c, last, c);
		xlsx_put_str(x, w->ws, r + 1 + (lxw_row_t)i, 0, out[i].title, NULL);
		snprintf(f, sizeof f, "=INDEX(%s,MATCH($B$%d,%s,0))", col, (int)r + 1, names);
		xlsx_put_formula(x, w->ws, r + 1 + (lxw_row_t)i, 1, f, x->f.calc_tok, out[i].cached);
	}
}

void xlsx_sheet_whatif(struct xw *x)
{
	struct wi w = {.x = x, .ws = xlsx_new_sheet(x, "What-if", 1), .k = x->wi};
	lxw_row_t r8, r16, c8 = 0, c16 = 0, sel, first;

	xlsx_ck(x, worksheet_set_column(w.ws, 0, 0, 30, NULL));
	xlsx_put_str(x, w.ws, w.r++, 0, "What-if: the step model as live formulas", x->f.title);
	xlsx_put_str(x, w.ws, w.r++, 0,
		     "Change a blue cell (a bandwidth, native_cut, an acceptance, a block, a budget, a "
		     "component time) and every tok/s follows. Two models, one set of formulas: the SEED "
		     "estimator (every assumption at its seed point, one transfer factor per GPU pair and "
		     "M range) for the seed-* scenarios and the autoregressive baseline (budget 0: M = C, "
		     "no drafter or tree), and ddt's CALIBRATED point for ddt's own scenarios (every "
		     "assumption at the central value of its distribution, the transfer on its pair's "
		     "curve at M, the MoE curve's form mix and fit and extrapolation errors in 'MoE form "
		     "& fit factor', the native tree from its kernels, the all-reduce not cut: a GPU "
		     "collective, where the seed cut it with the rest). At the inputs as written, tok/s "
		     "equals ddt's point ('ddt tok/s (point)'; the difference in 'tok/s - ddt'); the "
		     "report's headline quotes the median p50 of the draws beside it.",
		     x->f.note);
	xlsx_put_str(x, w.ws, w.r++, 0,
		     "step = MoE + non-MoE; MoE = reference curve at M (at least its per-call floor) x "
		     "(ref bw / target bw) x transfer x form & fit factor, "
		     "at least the compute roof (physical curve); non-MoE = components anchored at the "
		     "measured SGLang step, each scaled by its law, times (1 - native_cut) on the native "
		     "engine; tok/s = C x accept / step.",
		     x->f.note);
	sel = w.r;
	w.r += 5; /* the selector's rows and a blank */
	first = w.r + 3; /* after the rows' title, note and header (wi_rows) */
	wi_rows(&w, &r8, &r16, &c8, &c16);
	wi_selector(&w, sel, first, w.r - 2);
	wi_inputs(&w, r8, r16);
	if (w.k->have_cal)
		wi_cal_inputs(&w);
	wi_model(&w, r8, r16);
	if (w.k->have_cal)
		wi_cal_model(&w, c8, c16);
	w.r++;
	wi_gpus(&w);
	wi_moe_points(&w);
	if (x->d->der.law_attn.n || x->d->der.law_draft.n)
		xlsx_put_str(x, w.ws, w.r++, 0,
			     "Note: this calibration carries measured scaling laws; the sheet uses the "
			     "growth law instead.",
			     x->f.bad);
}
