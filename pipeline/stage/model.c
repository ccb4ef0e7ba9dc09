/* model.c - the decode-step model. Pure functions over a prepared struct model. */
#include "model.h"

#include "err.h"
#include "fit.h"
#include "formula.h"
#include "yschema.h"

#include <stddef.h>

#include <math.h>
#include <string.h>

/* The components' names, in the enum's order: one list for both tables. */
#define MODEL_COMPS(X)                                                                     \
	X(COMP_MOE, "moe") X(COMP_ATTN, "attn_lmhead") X(COMP_DRAFT, "draft")              \
	X(COMP_TREE, "tree") X(COMP_OVERHEAD, "overhead") X(COMP_ALLREDUCE, "allreduce")
#define COMP_STR(k, s) [k] = (s),
#define COMP_YNAME(k, s) {(s), (k)},
const char *const model_comp_names[COMP_COUNT] = {MODEL_COMPS(COMP_STR)};
const struct yschema_name model_comp_ynames[] = {MODEL_COMPS(COMP_YNAME){NULL, -1}};
_Static_assert(sizeof model_comp_ynames / sizeof *model_comp_ynames == COMP_COUNT + 1,
	       "every model component has its name");

const char *model_comp_name(enum model_comp k)
{
	return model_comp_names[k];
}

/* ---------------------------------------------------------------- MoE curve */

const struct model_term_def model_terms[MT_COUNT] = {
	[MT_MOE_LAYERS] = {"moe_layers", "layers", "layers - dense_layers",
			   "model_layers-model_dense_layers"},
	[MT_EXPERT_SLICE] = {"expert_slice", "weights", "3 hidden moe_intermediate / moe_tp",
			     "3*model_hidden*model_moe_intermediate/moe_reference_tp"},
	[MT_EXPERT_BYTES] = {"expert_bytes", "bytes", "one expert slice with its scales",
			     "expert_slice*model_expert_weight_bits/8+expert_slice/"
			     "model_expert_group_size*model_expert_scale_bytes"},
	[MT_SHARED_BYTES] = {"shared_bytes", "bytes", "the shared expert slice",
			     "model_shared_experts*expert_slice*model_dense_weight_bytes"},
	[MT_PHYS_A] = {"phys_a", "ms", "every expert read once, all MoE layers",
		       "moe_layers*model_experts*expert_bytes*1000/(ref_bw*1E12*"
		       "moe_reference_physical_efficiency)"},
	[MT_PHYS_B] = {"phys_b", "ms", "shared expert and fixed cost, all MoE layers",
		       "moe_layers*shared_bytes*1000/(ref_bw*1E12*moe_reference_physical_efficiency)+"
		       "moe_layers*moe_reference_physical_fixed_us/1000"},
	[MT_MOE_FLOOR_MS] = {"moe_floor_ms", "ms",
			     "the curve's per-call floor, all MoE layers (one token: launch, routing)",
			     "moe_reference_floor_us*moe_layers/1000"},
	[MT_PHYS_LNQ] = {"phys_lnq", "", "ln(1 - k/E): distinct experts E(1 - (1 - k/E)^M_eff)",
			 "LN(1-model_experts_per_token/model_experts)"},
	[MT_FLOPS_PER_M] = {"flops_per_m", "flop per token",
			    "MoE flops per step per GPU and verify token (compute roof)",
			    "moe_layers*2*expert_slice*(model_experts_per_token+model_shared_experts)"},
	[MT_AR_COUNT] = {"ar_count", "per step", "all-reduces per layer x layers",
			 "allreduce_per_layer*model_layers"},
};

#define GEO(f, unit) {"model." #f, unit, offsetof(struct geometry, f)}
const struct model_geometry_input model_geometry_inputs[MODEL_NGEOMETRY_INPUTS] = {
	GEO(layers, "layers"),
	GEO(dense_layers, "layers"),
	GEO(hidden, ""),
	GEO(moe_intermediate, ""),
	GEO(experts, ""),
	GEO(experts_per_token, ""),
	GEO(shared_experts, ""),
	GEO(expert_weight_bits, "bits"),
	GEO(expert_group_size, "weights"),
	GEO(expert_scale_bytes, "bytes"),
	GEO(dense_weight_bytes, "bytes"),
};
#undef GEO

const char *const model_moe_param_keys[MOE_P_COUNT] = {"moe_reference.physical.efficiency",
						       "moe_reference.physical.overlap",
						       "moe_reference.physical.fixed_us"};

void model_key_name(const char *key, char *buf, size_t len)
{
	size_t i = 0;
	for (; key[i] && i + 1 < len; i++)
		buf[i] = key[i] == '.' ? '_' : key[i];
	if (len)
		buf[i] = '\0';
}

double model_moe_tp(const struct calib *c)
{
	return c->moe_ref.tp > 0 ? c->moe_ref.tp : c->model.tp;
}

/* What the formulas of model_terms read: the inputs, the terms before. */
struct term_env {
	const struct calib *c;
	const struct gpu *ref;
	const double *p, *t;
	int nt;
};

static int name_is(const char *name, size_t len, const char *s)
{
	return strlen(s) == len && !memcmp(name, s, len);
}

/* True when name (len bytes) is key's name in formulas (model_key_name). */
static int key_is(const char *name, size_t len, const char *key)
{
	if (strlen(key) != len)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (name[i] != (key[i] == '.' ? '_' : key[i]))
			return 0;
	return 1;
}

static int term_lookup(void *ctx, const char *name, size_t len, int row, int col, double *out)
{
	const struct term_env *e = ctx;
	const struct calib *c = e->c;
	if (row || col)
		return -1; /* no tables here */
	for (int i = 0; i < MODEL_NGEOMETRY_INPUTS; i++)
		if (key_is(name, len, model_geometry_inputs[i].key)) {
			memcpy(out, (const char *)&c->model + model_geometry_inputs[i].offset, sizeof *out);
			return 0;
		}
	for (int i = 0; i < e->nt; i++)
		if (name_is(name, len, model_terms[i].name))
			return *out = e->t[i], 0;
	for (int i = 0; i < MOE_P_COUNT; i++)
		if (key_is(name, len, model_moe_param_keys[i]))
			return *out = e->p[i], 0;
	if (key_is(name, len, "moe_reference.tp"))
		return *out = model_moe_tp(c), 0;
	if (key_is(name, len, "allreduce.per_layer"))
		return *out = c->ar.per_layer, 0;
	if (key_is(name, len, "moe_reference.floor_us"))
		return *out = isnan(c->moe_ref.floor_us) ? 0 : c->moe_ref.floor_us, 0;
	if (name_is(name, len, "ref_bw"))
		return *out = e->ref->bw_tbps, 0;
	return -1;
}

void model_terms_eval(const struct calib *c, const struct gpu *ref, const double p[MOE_P_COUNT],
		      double t[MT_COUNT])
{
	struct term_env e = {c, ref, p, t, 0};
	for (e.nt = 0; e.nt < MT_COUNT; e.nt++)
		formula_eval(model_terms[e.nt].formula, term_lookup, &e, &t[e.nt]);
}

/* Coefficients of the physical curve on ref: ms = a (1 - exp(lnq M_eff)) + b. */
static void phys_coef(const struct calib *c, const struct gpu *ref, const double p[MOE_P_COUNT],
		      double *a, double *b, double *lnq)
{
	double t[MT_COUNT];
	model_terms_eval(c, ref, p, t);
	*a = t[MT_PHYS_A];
	*b = t[MT_PHYS_B];
	*lnq = t[MT_PHYS_LNQ];
}

static double phys_eval(double a, double b, double lnq, double overlap, double M)
{
	double meff = 1 + (M - 1) * (1 - overlap);
	return -a * expm1(lnq * meff) + b;
}

double model_phys_ms(const struct calib *c, const struct gpu *ref, const double p[MOE_P_COUNT],
		     double M)
{
	double a, b, lnq;
	phys_coef(c, ref, p, &a, &b, &lnq);
	return phys_eval(a, b, lnq, p[MOE_P_OVERLAP], M);
}

/* The physical form through its own points: between them the points joined
 * in log-log (a GDDR curve's floor and jump that the form cannot follow);
 * beyond them the physical curve scaled through the end point it leaves
 * from. With fewer than two points, the physical curve. */
static double phys_through(const struct model *m, double M)
{
	int n = m->npoints, i = 1;
	double y = phys_eval(m->phys_a, m->phys_b, m->lnq, m->overlap, M);
	if (n < 2)
		return y;
	if (M <= m->pm[0] || M >= m->pm[n - 1]) {
		int e = M <= m->pm[0] ? 0 : n - 1;
		return y * m->pms[e] / phys_eval(m->phys_a, m->phys_b, m->lnq, m->overlap, m->pm[e]);
	}
	while (i < n - 1 && M > m->pm[i])
		i++;
	return m->pms[i - 1] * exp(log(M / m->pm[i - 1]) * log(m->pms[i] / m->pms[i - 1]) /
				   log(m->pm[i] / m->pm[i - 1]));
}

double model_moe_ref_form_ms(const struct model *m, enum moe_curve_kind k, double M)
{
	double y;
	if (k == MOE_CURVE_PHYSICAL && m->has_phys)
		y = phys_through(m, M);
	else if (m->npoints < 2)
		y = m->npoints ? m->pms[0] : 0;
	else {
		/* piecewise linear; outside the points, the end segment's line */
		int i = 1;
		while (i < m->npoints - 1 && M > m->pm[i])
			i++;
		double x0 = m->pm[i - 1], x1 = m->pm[i], y0 = m->pms[i - 1], y1 = m->pms[i];
		y = y0 + (M - x0) * (y1 - y0) / (x1 - x0);
	}
	return y > m->floor_ms ? y : m->floor_ms;
}

double model_moe_ref_ms(const struct model *m, double M)
{
	return model_moe_ref_form_ms(m, m->curve, M);
}

/* ---------------------------------------------------------------- all-reduce */

/* Latency part (µs, before the PCIe factor) and link part (µs) of one
 * all-reduce of `bytes` on the GPU of ar; g gives the link bandwidth. */
static void ar_one_us(const struct allreduce *ar, const struct ar_gpu *a, const struct gpu *g,
		      double bytes, double *small_us, double *link_us)
{
	int n = ar->nsizes, i = 1;
	*link_us = 0;
	if (bytes <= ar->bytes[0]) {
		*small_us = a->us[0];
		return;
	}
	if (bytes >= ar->bytes[n - 1]) {
		/* a ring moves 2(n-1)/n of the message each way over the link */
		double per_dir_bps = g->link_gbps * 1e9 / 2;
		*small_us = a->us[n - 1];
		*link_us = 2 * (ar->gpus - 1) / ar->gpus * (bytes - ar->bytes[n - 1]) / per_dir_bps * 1e6;
		return;
	}
	while (bytes > ar->bytes[i])
		i++;
	double t = (log2(bytes) - ar->log2_bytes[i - 1]) / (ar->log2_bytes[i] - ar->log2_bytes[i - 1]);
	*small_us = a->us[i - 1] + t * (a->us[i] - a->us[i - 1]);
}

/* The factor on a's latencies that --set allreduce.GPU.step_ms_at_mM asks
 * for: the step's all-reduce at that width (the PCIe factor at its point)
 * equal to the value set; 1 when none or d leaves the holds out; <= 0 when
 * the value is below the link part (model_prepare refuses it). */
static double ar_hold_scale(const struct calib *c, const struct calibration *d,
			    const struct ar_gpu *a, const struct gpu *g)
{
	double s, l, count = c->ar.per_layer * c->model.layers;
	if (d->unheld || !(a->hold_m > 0))
		return 1;
	ar_one_us(&c->ar, a, g, c->model.hidden * 2 * a->hold_m, &s, &l);
	double pcie = a->pcie ? c->asm_[ASM_ALLREDUCE_PCIE].point : 1;
	return (a->hold_ms - count * l / 1e3) / (count * s / 1e3 * pcie);
}

/* Per step: small and link parts in ms, and whether the PCIe factor applies. */
static void ar_step_ms(const struct calib *c, const struct calibration *d, const struct ar_gpu *a,
		       const struct gpu *g, double M, double *small_ms, double *link_ms, int *pcie)
{
	double s, l, count = c->ar.per_layer * c->model.layers;
	*small_ms = *link_ms = 0;
	*pcie = 0;
	if (!a)
		return; /* model_prepare refuses calibrations without one */
	ar_one_us(&c->ar, a, g, c->model.hidden * 2 * M, &s, &l);
	*small_ms = count * s / 1e3 * ar_hold_scale(c, d, a, g);
	*link_ms = count * l / 1e3;
	*pcie = a->pcie;
}

/* ---------------------------------------------------------------- laws */

/* A measured law's time at x: piecewise linear, end segments extended,
 * never below a tenth of the nearest point (a line may dip below zero). */
static double law_at(const struct comp_law *l, double x)
{
	if (l->n == 1)
		return l->t_us[0];
	int i = 1;
	while (i < l->n - 1 && x > l->x[i])
		i++;
	double y = l->t_us[i - 1] + (x - l->x[i - 1]) * (l->t_us[i] - l->t_us[i - 1]) /
					    (l->x[i] - l->x[i - 1]);
	double floor = 0.1 * (x < l->x[0] ? l->t_us[0] : l->t_us[i]);
	return y > floor ? y : floor;
}

/* ---------------------------------------------------------------- context */

/* Attention per token of context on target at concurrency C and verify
 * width M, ms, at efficiency 1: the larger of reading every sequence's MLA
 * latent KV row (kv_lora_rank + qk_rope_dim values of kv_cache_bytes) and
 * the M queries' scores and values over it (2 (576 + 512) flops a head,
 * attn_heads / tp heads a GPU), in every layer. */
static double ctx_ms_per_token(const struct calib *c, const struct gpu *t, double C, double M)
{
	const struct geometry *g = &c->model;
	double row = g->kv_lora_rank + g->qk_rope_dim;
	double bytes = C * g->layers * row * g->kv_cache_bytes;
	double flops = M * g->layers * (g->attn_heads / g->tp) * 2 * (row + g->kv_lora_rank);
	double mem = bytes / (t->bw_tbps * 1e12), cmp = flops / (t->bf16_tflops * 1e12);
	return 1e3 * (mem > cmp ? mem : cmp);
}

/* The measured law's scales for case k on target t: a token of context
 * costs b per sequence (its KV row: the bandwidth's) and c per query (the
 * bf16 peak's), every layer, moved from the GPU measured to t. */
static void ctx_law_case(struct model_case *k, const struct model *m, const struct gpu *t)
{
	const struct calib *c = m->cal;
	const struct ctx_law *l = &m->der->law_ctx;
	k->ctx_fit = l->n > 0;
	k->ctx_kv_ms = k->ctx_q_ms = 0;
	if (!k->ctx_fit)
		return;
	k->ctx_kv_ms = k->C * c->model.layers * (l->bw_tbps / t->bw_tbps) / 1e3;
	k->ctx_q_ms = k->M * c->model.layers * (l->bf16_tflops / t->bf16_tflops) / 1e3;
}

/* ---------------------------------------------------------------- cases */

static const struct gpu *gpu_of(const struct calib *c, const struct gpu *g)
{
	/* callers may hand in a copy of a catalog entry; find ours by id */
	if (g >= c->gpus && g < c->gpus + c->ngpus)
		return g;
	const struct gpu *o = calib_gpu(c, g->id);
	return o ? o : g;
}

/* The transfer entry (index into xfer, or -1) and all-reduce figures of t. */
static int case_lookups(const struct model *m, const struct gpu *t, double M,
			const struct ar_gpu **ar)
{
	const struct calib *c = m->cal;
	ptrdiff_t i = t - c->gpus;
	if (i < 0 || i >= (ptrdiff_t)c->ngpus || i >= MODEL_MAX_GPUS) {
		*ar = calib_ar(c, t->id);
		return calib_xfer_index(&m->der->xt, m->ref_gpu, t, M);
	}
	*ar = m->ar_of[i];
	int first = m->xfer_first[i], n = m->xfer_count[i];
	if (first < 0)
		return -1;
	M = floor(M);
	for (int x = first; x < first + n - 1; x++)
		if (M <= m->der->xt.xfer[x].m_hi)
			return x;
	return first + n - 1;
}

/* Fills the per-GPU tables of case_lookups. */
static void prepare_lookups(struct model *m)
{
	const struct calib *c = m->cal;
	const struct xfer_table *xt = &m->der->xt;
	for (size_t i = 0; i < c->ngpus && i < MODEL_MAX_GPUS; i++) {
		const struct gpu *t = &c->gpus[i];
		int x = calib_xfer_index(xt, m->ref_gpu, t, 1), n = 0;
		m->ar_of[i] = calib_ar(c, t->id);
		m->xfer_first[i] = x;
		while (x >= 0 && x + n < xt->nxfer && !strcmp(xt->xfer[x + n].from, xt->xfer[x].from) &&
		       !strcmp(xt->xfer[x + n].to, xt->xfer[x].to))
			n++;
		m->xfer_count[i] = n;
	}
}

void model_case_init(struct model_case *k, const struct model *m, const struct model_in *in)
{
	const struct calib *c = m->cal;
	const struct calibration *d = m->der;
	const struct gpu *t = gpu_of(c, in->target);
	const struct ar_gpu *ar;
	double C = in->concurrency, M = C * (in->budget + 1);

	k->target = in->target;
	k->pipeline = in->pipeline;
	k->C = C;
	k->block = in->block;
	k->budget = in->budget;
	k->M = M;
	double inv_bw = 1 / in->target->bw_tbps;
	k->bwr_anchor = m->anchor_gpu->bw_tbps * inv_bw;
	k->moe_mem_ms = model_moe_ref_ms(m, M) * m->ref_gpu->bw_tbps * inv_bw;
	k->moe_alt_ms = model_moe_ref_form_ms(m, m->curve == MOE_CURVE_PHYSICAL ? MOE_CURVE_LINEAR
										 : MOE_CURVE_PHYSICAL, M) *
			m->ref_gpu->bw_tbps * inv_bw;
	k->moe_lr = k->moe_mem_ms > 0 && k->moe_alt_ms > 0 ? log(k->moe_alt_ms / k->moe_mem_ms) : 0;
	k->moe_fitted = m->npoints < 2 || M < m->m_lo || M > m->m_hi;
	k->moe_x_sig = M > m->m_hi   ? m->xsig_hi * log(M / m->m_hi)
		       : M < m->m_lo ? m->xsig_lo * log(m->m_lo / M)
				     : 0;
	k->xfer = case_lookups(m, t, M, &ar);
	k->xfer_adj = k->xfer >= 0 ? calib_xfer_adj(&m->der->xt, k->xfer, M) : 1;
	if (k->xfer >= 0)
		k->xfer += ASM_COUNT;
	k->moe_flop_ms = m->curve == MOE_CURVE_PHYSICAL
				 ? m->flops_per_m * M / (in->target->bf16_tflops * 1e12) * 1e3
				 : 0;
	ar_step_ms(c, d, ar, t, M, &k->ar_small_ms, &k->ar_link_ms, &k->ar_pcie);
	k->spec = in->budget > 0;
	k->attn_x = M / m->m0;
	k->draft_x = C * in->block / m->draft0;
	k->tree_x = C * in->budget / m->tree0;
	k->context = in->context > 0 ? in->context : 0;
	k->ctx_ms_tok = ctx_ms_per_token(c, in->target, C, M);
	ctx_law_case(k, m, in->target);
	k->tree_meas_ms = d->law_tree.n ? C * law_at(&d->law_tree, in->budget) / 1e3 : NAN;
	/* a law held with --set law.* follows the growth law at the value held */
	k->attn_f = d->law_attn.n && isnan(calibrate_law_hold(c, d, 0))
			    ? law_at(&d->law_attn, M) / law_at(&d->law_attn, m->m0)
			    : NAN;
	k->draft_f = d->law_draft.n && isnan(calibrate_law_hold(c, d, 1))
			     ? law_at(&d->law_draft, C * in->block) / law_at(&d->law_draft, m->draft0)
			     : NAN;
	k->attn_c = isnan(k->attn_f) ? 1 : k->attn_f;
	k->attn_g = isnan(k->attn_f) ? k->attn_x - 1 : 0;
	k->draft_c = isnan(k->draft_f) ? 1 : k->draft_f;
	k->draft_g = isnan(k->draft_f) ? k->draft_x - 1 : 0;
}

static double case_moe(const struct model *m, const struct model_case *k)
{
	return model_case_moe(m, k);
}

/* The MoE inside anchor i's measured step (0: b8, 1: b16): the
 * calibration's own reference's where another curve replaced it
 * (calib.h anchor_ms), else the case's. */
static double anchor_moe(const struct model *m, const struct model_case *k, int i)
{
	double a = m->cal->moe_ref.anchor_ms[i];
	return a > 0 ? a : case_moe(m, k);
}

double model_anchor_step(const struct model *m, int i)
{
	const struct model_case *k = i ? &m->k16 : &m->k8;
	return anchor_moe(m, k, i) + model_case_rest(m, k);
}

static double case_ar(const struct model *m, const struct model_case *k)
{
	return (k->ar_small_ms * (k->ar_pcie ? m->c_pcie : 1) + k->ar_link_ms) * m->c_ar;
}

void model_case_eval(const struct model *m, const struct model_case *k, struct model_out *out)
{
	double cut = m->c_cut[k->pipeline == PIPE_NATIVE];

	out->M = k->M;
	out->ms[COMP_ATTN] = cut * k->bwr_anchor * (m->c_attn * k->attn_c + m->c_attn_g * k->attn_g) +
			     model_case_context(m, k);
	out->ms[COMP_DRAFT] = cut * k->spec * k->bwr_anchor *
			      (m->c_draft * k->draft_c + m->c_draft_g * k->draft_g);
	out->ms[COMP_TREE] = k->pipeline == PIPE_NATIVE && m->tree_kernels
				     ? k->spec * model_case_tree_kernels(m, k)
				     : cut * k->spec * (m->c_tree0 + m->c_tree1 * k->tree_x);
	out->ms[COMP_OVERHEAD] = cut * m->c_over;
	out->ms[COMP_ALLREDUCE] = (m->ar_uncut ? 1 : cut) * case_ar(m, k);
	out->nonmoe_ms = out->ms[COMP_ATTN] + out->ms[COMP_DRAFT] + out->ms[COMP_TREE] +
			 out->ms[COMP_OVERHEAD] + out->ms[COMP_ALLREDUCE];
	out->ms[COMP_MOE] = case_moe(m, k);
	out->step_ms = out->ms[COMP_MOE] + out->nonmoe_ms;
	out->tok_s = NAN;
}

void model_eval(const struct model *m, const struct model_in *in, struct model_out *out)
{
	struct model_case k;
	model_case_init(&k, m, in);
	model_case_eval(m, &k, out);
	out->tok_s = in->concurrency * in->accept / out->step_ms * 1000.0;
}

double model_moe_ms(const struct model *m, const struct gpu *target, double M)
{
	struct model_in in = {target, PIPE_NATIVE, 1, M - 1, 1, 1, 0};
	struct model_case k;
	model_case_init(&k, m, &in);
	return case_moe(m, &k);
}

double model_allreduce_ms(const struct model *m, const struct gpu *target, double M)
{
	struct model_in in = {target, PIPE_NATIVE, 1, M - 1, 1, 1, 0};
	struct model_case k;
	model_case_init(&k, m, &in);
	return case_ar(m, &k);
}

/* ---------------------------------------------------------------- prepare */

/* The growth of attention (i = 0) or draft (1) when the free one is g: the
 * value held with --set law.*, else g. */
static double growth_of(const struct model *m, int i, double g)
{
	double h = calibrate_law_hold(m->cal, m->der, i);
	return isnan(h) ? g : h;
}

/* Non-MoE time of k before the native cut and without all-reduce, at growth g. */
static double parts_sum(const struct model *m, const struct model_case *k, double g)
{
	double n0 = m->n0_ms, f = m->v[ASM_TREE_SCALE_FRAC];
	return k->bwr_anchor * n0 *
		       (m->share[0] * (k->attn_c + growth_of(m, 0, g) * k->attn_g) +
			m->share[1] * (k->draft_c + growth_of(m, 1, g) * k->draft_g)) +
	       n0 * m->share[2] * (1 - f + f * k->tree_x) + n0 * m->share[3];
}

static void anchor_case(struct model_case *k, const struct model *m, const struct anchor *a,
			const struct gpu *g)
{
	struct model_in in = {g, a->pipeline, a->block, a->budget, a->concurrency, 1, 0};
	model_case_init(k, m, &in);
}

/* The curve in use in m (calibrate_moe_ref): the linear points or the
 * physical coefficients. */
static int prepare_curve(struct model *m, const struct calib *c)
{
	const struct moe_reference *r = calibrate_moe_ref(c, m->der);
	double t[MT_COUNT];
	model_terms_eval(c, m->ref_gpu, m->der->moe_fit.value, t);
	m->curve = r->curve;
	m->npoints = r->npoints;
	for (int i = 0; i < m->npoints; i++) {
		m->pm[i] = r->points[i].m;
		m->pms[i] = r->points[i].step_ms;
	}
	m->flops_per_m = t[MT_FLOPS_PER_M];
	m->floor_ms = t[MT_MOE_FLOOR_MS];
	m->m_lo = m->npoints ? m->pm[0] : 1;
	m->m_hi = m->npoints ? m->pm[m->npoints - 1] : 1;
	m->xsig_lo = m->xsig_hi = 0;
	if (m->npoints >= 2) {
		/* the curve's extrapolation error: leave out an end point, predict it */
		double hi = fit_moe_loo(c, m->ref_gpu, m->pm, m->pms, m->npoints, &r->phys,
					MOE_CURVE_PHYSICAL, m->npoints - 1);
		double lo = fit_moe_loo(c, m->ref_gpu, m->pm, m->pms, m->npoints, &r->phys,
					MOE_CURVE_PHYSICAL, 0);
		double span_hi = log(m->pm[m->npoints - 1] / m->pm[m->npoints - 2]);
		double span_lo = log(m->pm[1] / m->pm[0]);
		if (isfinite(hi) && hi > 0 && span_hi > 0)
			m->xsig_hi = fabs(log(hi / m->pms[m->npoints - 1])) / span_hi;
		if (isfinite(lo) && lo > 0 && span_lo > 0)
			m->xsig_lo = fabs(log(lo / m->pms[0])) / span_lo;
	}
	if (m->der->moe_fit.ok) {
		/* the other form of a linear curve, for the Monte Carlo's mix */
		phys_coef(c, m->ref_gpu, m->der->moe_fit.value, &m->phys_a, &m->phys_b, &m->lnq);
		m->overlap = m->der->moe_fit.value[MOE_P_OVERLAP];
		m->has_phys = 1;
	}
	if (m->curve != MOE_CURVE_PHYSICAL)
		return m->npoints >= 2 ? 0
				       : err_set(DDT_EINPUT, "moe_reference: the linear curve needs "
							     "two points, got %d", m->npoints);
	if (!m->der->moe_fit.ok)
		return err_set(DDT_EINPUT, "moe_reference: the physical curve has no fit: %s",
			       m->der->moe_fit.note);
	return 0;
}

int model_anchor_moe(const struct calib *c, const struct calibration *d, double anchor_ms[2])
{
	struct model m;
	int rc = model_prepare(&m, c, d, NULL);
	if (rc)
		return rc;
	anchor_ms[0] = anchor_moe(&m, &m.k8, 0);
	anchor_ms[1] = anchor_moe(&m, &m.k16, 1);
	return 0;
}

int model_prepare(struct model *m, const struct calib *c, const struct calibration *d,
		  const double *asm_values)
{
	static const struct calibration none;
	const struct anchor *a8 = &c->sglang_b8, *a16 = &c->sglang_b16;
	const struct gpu *g16;
	int rc;

	memset(m, 0, sizeof *m);
	m->cal = c;
	m->der = d ? d : &none;
	m->ref_gpu = calib_gpu(c, calibrate_moe_ref(c, m->der)->gpu);
	m->anchor_gpu = calib_gpu(c, a8->gpu);
	g16 = calib_gpu(c, a16->gpu);
	if (!m->ref_gpu || !m->anchor_gpu || !g16)
		return err_set(DDT_EINPUT, "calibration names a GPU that is not in its catalog");
	if (a8->pipeline != PIPE_SGLANG || a16->pipeline != PIPE_SGLANG)
		return err_set(DDT_EINPUT, "the non-MoE anchors must be SGLang pipeline steps");
	for (size_t i = 0; i < c->ngpus; i++) {
		const struct ar_gpu *a = calib_ar(c, c->gpus[i].id);
		if (!a)
			return err_set(DDT_EINPUT, "allreduce: no latency figures for GPU '%s'",
				       c->gpus[i].id);
		if (!(ar_hold_scale(c, m->der, a, &c->gpus[i]) > 0))
			return err_set(DDT_EINPUT, "allreduce.%s.step_ms_at_m%g: %g ms is no more "
				       "than the link's share of that all-reduce", a->gpu, a->hold_m,
				       a->hold_ms);
	}
	if ((rc = prepare_curve(m, c)) != 0)
		return rc;
	prepare_lookups(m);
	m->form = 0;
	m->moe_scale = 1;
	m->z_x = 0;
	m->a8_step_ms = a8->step_ms;
	m->growth_set = NAN;
	m->b16_step_ms = a16->step_ms;
	m->ctx_b_us = m->der->law_ctx.b_us;
	m->ctx_c_us = m->der->law_ctx.c_us;
	m->m0 = a8->concurrency * (a8->budget + 1);
	m->draft0 = a8->concurrency * a8->block;
	m->tree0 = a8->concurrency * a8->budget;
	anchor_case(&m->k8, m, a8, m->anchor_gpu);
	anchor_case(&m->k16, m, a16, g16);
	/* g is solved when some component follows the growth law unheld */
	m->growth_used = (isnan(m->k16.attn_f) && isnan(calibrate_law_hold(c, m->der, 0))) ||
			 (isnan(m->k16.draft_f) && isnan(calibrate_law_hold(c, m->der, 1)));
	if (asm_values)
		return model_set_values(m, asm_values);
	double v[CALIB_MAX_ASM];
	for (int i = 0; i < calib_nassumptions(&m->der->xt); i++)
		v[i] = calibrate_asm(c, m->der, i)->point;
	return model_set_values(m, v);
}

static void solve_growth(struct model *m);

int model_set_values(struct model *m, const double *asm_values)
{
	const struct calib *c = m->cal;
	const struct anchor *a8 = &c->sglang_b8;
	double sum = 0;

	memcpy(m->v, asm_values, (size_t)calib_nassumptions(&m->der->xt) * sizeof *m->v);
	for (int i = 0; i < 4; i++)
		sum += m->v[ASM_SHARE_ATTN + i];
	if (!(sum > 0))
		return err_set(DDT_EINPUT, "the non-MoE shares sum to zero");
	for (int i = 0; i < 4; i++)
		m->share[i] = m->v[ASM_SHARE_ATTN + i] / sum;
	m->c_pcie = m->v[ASM_ALLREDUCE_PCIE];
	m->c_ar = m->v[ASM_ALLREDUCE_IMPL];
	m->c_xfer = m->v[ASM_MOE_TRANSFER];
	m->c_inv_ceff = 1 / m->v[ASM_MOE_COMPUTE_EFF];
	m->c_cut[0] = 1;
	m->c_cut[1] = 1 - m->v[ASM_NATIVE_CUT];
	m->ar0_ms = case_ar(m, &m->k8);
	m->n0_ms = m->a8_step_ms - anchor_moe(m, &m->k8, 0) - m->ar0_ms;
	if (!(m->n0_ms > 0) && c->anchors_at.file[0] && a8->step_line > 0 && !a8->overridden)
		return err_set(DDT_EINPUT,
			       "%s:%d:%d: anchor sglang_b8: its step (%.3g ms) is shorter than its "
			       "MoE and all-reduce time (%.3g ms)",
			       c->anchors_at.file, a8->step_line, a8->step_col, m->a8_step_ms,
			       m->a8_step_ms - m->n0_ms);
	if (!(m->n0_ms > 0))
		return err_set(DDT_EINPUT,
			       "anchor sglang_b8: its step (%.3g ms) is shorter than its MoE and "
			       "all-reduce time (%.3g ms)",
			       m->a8_step_ms, m->a8_step_ms - m->n0_ms);
	(void)a8;

	/* non-MoE is linear in g: solve f(g) = the b16 anchor's non-MoE time */
	m->growth = 0;
	m->growth_clamped = 0;
	if (m->growth_used && !isnan(m->growth_set))
		m->growth = m->growth_set;
	else if (m->growth_used)
		solve_growth(m);
	double n0 = m->n0_ms, f = m->v[ASM_TREE_SCALE_FRAC];
	m->c_attn = n0 * m->share[0];
	m->c_attn_g = m->c_attn * growth_of(m, 0, m->growth);
	m->c_draft = n0 * m->share[1];
	m->c_draft_g = m->c_draft * growth_of(m, 1, m->growth);
	m->c_tree0 = n0 * m->share[2] * (1 - f);
	m->c_tree1 = n0 * m->share[2] * f;
	m->c_over = n0 * m->share[3];
	m->c_tn0 = m->v[ASM_NATIVE_TREE_US] / 1e3 * (1 - f);
	m->c_tn1 = m->v[ASM_NATIVE_TREE_US] / 1e3 * f;
	return 0;
}

void model_set_growth(struct model *m, double g)
{
	m->growth = g;
	m->c_attn_g = m->c_attn * growth_of(m, 0, g);
	m->c_draft_g = m->c_draft * growth_of(m, 1, g);
}

/* The growth g that puts the model through the b16 anchor (b16_step_ms),
 * clamped to [0, 1]. */
static void solve_growth(struct model *m)
{
	double want = m->b16_step_ms - anchor_moe(m, &m->k16, 1) - case_ar(m, &m->k16);
	double f0 = parts_sum(m, &m->k16, 0), f1 = parts_sum(m, &m->k16, 1);
	m->growth = f1 != f0 ? (want - f0) / (f1 - f0) : 0;
	if (!(m->growth >= 0 && m->growth <= 1)) {
		m->growth = m->growth > 1 ? 1 : 0;
		m->growth_clamped = 1;
	}
}

/* ---------------------------------------------------------------- row terms */

const char *const model_row_var_names[MV_COUNT] = {
	[MV_C] = "C",
	[MV_BLOCK] = "block",
	[MV_BUDGET] = "budget",
	[MV_ACCEPT] = "accept",
	[MV_XFER] = "xfer",
	[MV_TARGET_BW] = "target_bw",
	[MV_TARGET_BF16] = "target_bf16",
	[MV_TARGET_LINK] = "target_link",
	[MV_TARGET_PCIE] = "target_pcie",
	[MV_TARGET_ROW] = "target_row",
	[MV_SAME_GPU] = "same_gpu",
	[MV_NATIVE] = "native",
	[MV_MOE_CORR] = "moe_corr",
	[MV_TREE_KERNELS] = "tree_kernels",
	[MV_TREE_MEAS] = "tree_meas",
	[MV_AR_UNCUT] = "ar_uncut",
};

#define ROW(k, sc, n, t, u, w, f) [k] = {n, t, u, w, sc, f}
/* The physical curve on the reference GPU at width x (a formula). */
#define PHYS_AT(x) "(-phys_a*(EXP(phys_lnq*(1+(" x "-1)*(1-moe_reference_physical_overlap)))-1)+phys_b)"
const struct model_row_def model_row_terms[MR_COUNT] = {
	ROW(MR_AR_NSIZES, MR_ONCE, "ar_nsizes", "", "sizes", "message sizes in the table",
	    "COUNT(ar_bytes)"),
	ROW(MR_M, MR_ROW, "M", "M", "tokens", "verify width", "C*(budget+1)"),
	ROW(MR_MOE_SEG, MR_ROW, "moe_seg", "MoE curve seg", "segment", "the reference points' segment of M",
	    "MIN(MAX(COUNTIF(moe_pts_m,\"<\"&M),1),COUNT(moe_pts_m)-1)"),
	ROW(MR_MOE_PHYS, MR_ROW, "moe_phys_ms", "MoE physical curve (ms)", "ms",
	    "on the reference GPU: the points joined in log-log; beyond them the physical "
	    "curve through the end point",
	    "IF(COUNT(moe_pts_m)<2," PHYS_AT("M") ",IF(M<=INDEX(moe_pts_m,1)," PHYS_AT("M")
	    "*INDEX(moe_pts_ms,1)/" PHYS_AT("INDEX(moe_pts_m,1)") ",IF(M>=INDEX(moe_pts_m,COUNT("
	    "moe_pts_m))," PHYS_AT("M") "*INDEX(moe_pts_ms,COUNT(moe_pts_m))/"
	    PHYS_AT("INDEX(moe_pts_m,COUNT(moe_pts_m))") ",INDEX(moe_pts_ms,moe_seg)*EXP(LN(M/"
	    "INDEX(moe_pts_m,moe_seg))*LN(INDEX(moe_pts_ms,moe_seg+1)/INDEX(moe_pts_ms,moe_seg))/"
	    "LN(INDEX(moe_pts_m,moe_seg+1)/INDEX(moe_pts_m,moe_seg))))))"),
	ROW(MR_MOE_LIN, MR_ROW, "moe_lin_ms", "MoE linear curve (ms)", "ms",
	    "the reference points joined by lines (the end segments extended)",
	    "IF(COUNT(moe_pts_m)<2,IF(COUNT(moe_pts_m)=1,INDEX(moe_pts_ms,1),0),"
	    "INDEX(moe_pts_ms,moe_seg)+(M-INDEX(moe_pts_m,moe_seg))*(INDEX(moe_pts_ms,moe_seg+1)-"
	    "INDEX(moe_pts_ms,moe_seg))/(INDEX(moe_pts_m,moe_seg+1)-INDEX(moe_pts_m,moe_seg)))"),
	ROW(MR_MOE_REF, MR_ROW, "moe_ref_ms", "MoE on ref GPU (ms)", "ms",
	    "the declared curve, at least its per-call floor",
	    "MAX(moe_floor_ms,IF(moe_physical,moe_phys_ms,moe_lin_ms))"),
	ROW(MR_MOE, MR_ROW, "moe_ms", "MoE (ms)", "ms",
	    "scaled by bandwidth and transfer, at least the compute roof (physical curve)",
	    "MAX(moe_ref_ms*ref_bw/target_bw*IF(same_gpu,1,xfer*moe_transfer)*moe_corr,IF(moe_physical,"
	    "flops_per_m*M/(target_bf16*1E12)*1000/moe_compute_eff,0))"),
	ROW(MR_AR_MSG_BYTES, MR_ROW, "ar_msg_bytes", "all-reduce bytes", "bytes",
	    "one all-reduce's message: M hidden states of bf16", "model_hidden*2*M"),
	ROW(MR_AR_SEG, MR_ROW, "ar_seg", "all-reduce seg", "segment", "the message sizes' segment",
	    "MIN(MAX(COUNTIF(ar_bytes,\"<\"&ar_msg_bytes),1),ar_nsizes-1)"),
	ROW(MR_AR_SMALL_US, MR_ROW, "ar_small_us", "all-reduce latency (µs)", "µs",
	    "measured latency, log-linear in bytes between sizes, held beyond them",
	    "IF(ar_msg_bytes<=INDEX(ar_bytes,1),INDEX(ar_us,target_row,1),IF(ar_msg_bytes>="
	    "INDEX(ar_bytes,ar_nsizes),INDEX(ar_us,target_row,ar_nsizes),INDEX(ar_us,target_row,"
	    "ar_seg)+LN(ar_msg_bytes/INDEX(ar_bytes,ar_seg))/LN(INDEX(ar_bytes,ar_seg+1)/"
	    "INDEX(ar_bytes,ar_seg))*(INDEX(ar_us,target_row,ar_seg+1)-INDEX(ar_us,target_row,"
	    "ar_seg))))"),
	ROW(MR_AR_LINK_US, MR_ROW, "ar_link_us", "all-reduce link (µs)", "µs",
	    "beyond the largest size: a ring's 2(n-1)/n of the rest over the link each way",
	    "IF(ar_msg_bytes>=INDEX(ar_bytes,ar_nsizes),2*(allreduce_gpus-1)/allreduce_gpus*"
	    "(ar_msg_bytes-INDEX(ar_bytes,ar_nsizes))/(target_link*1E9/2)*1E6,0)"),
	ROW(MR_AR_STEP, MR_ROW, "ar_step_ms", "all-reduce before cut (ms)", "ms",
	    "every all-reduce of the step, the PCIe factor on the latency, the engine's "
	    "all-reduce over the table's",
	    "(ar_count*ar_small_us/1000*IF(target_pcie=1,allreduce_pcie_factor,1)+"
	    "ar_count*ar_link_us/1000)*allreduce_impl"),
	ROW(MR_ANCHOR_BW, MR_AT_B8, "anchor_bw", "", "TB/s", "bandwidth of the anchor's GPU",
	    "target_bw"),
	ROW(MR_ANCHOR_M0, MR_AT_B8, "anchor_m0", "", "tokens", "the anchor's verify width", "M"),
	ROW(MR_ANCHOR_DRAFT0, MR_AT_B8, "anchor_draft0", "", "tokens", "the anchor's C x block",
	    "C*block"),
	ROW(MR_ANCHOR_TREE0, MR_AT_B8, "anchor_tree0", "", "nodes", "the anchor's C x budget",
	    "C*budget"),
	ROW(MR_ANCHOR_NONMOE, MR_AT_B8, "anchor_nonmoe_ms", "", "ms",
	    "the anchor's step minus its MoE and all-reduce",
	    "anchors_sglang_b8_step_ms-IF(moe_reference_anchor_b8_ms>0,moe_reference_anchor_b8_ms,"
	    "moe_ms)-ar_step_ms"),
	ROW(MR_SHARE_SUM, MR_ONCE, "share_sum", "", "", "the shares are normalized by their sum",
	    "share_attn+share_draft+share_tree+share_overhead"),
	ROW(MR_COMP_ATTN, MR_ONCE, "comp_attn_ms", "", "ms",
	    "component at the anchor (type a number over it to try one)",
	    "anchor_nonmoe_ms*(share_attn/share_sum)"),
	ROW(MR_COMP_DRAFT, MR_ONCE, "comp_draft_ms", "", "ms",
	    "component at the anchor (type a number over it to try one)",
	    "anchor_nonmoe_ms*(share_draft/share_sum)"),
	ROW(MR_COMP_TREE, MR_ONCE, "comp_tree_ms", "", "ms",
	    "component at the anchor (type a number over it to try one)",
	    "anchor_nonmoe_ms*(share_tree/share_sum)"),
	ROW(MR_COMP_OVERHEAD, MR_ONCE, "comp_overhead_ms", "", "ms",
	    "component at the anchor (type a number over it to try one)",
	    "anchor_nonmoe_ms*(share_overhead/share_sum)"),
	ROW(MR_GROWTH_WANT, MR_AT_B16, "growth_want_ms", "", "ms",
	    "the b16 anchor's non-MoE time to meet",
	    "anchors_sglang_b16_step_ms-IF(moe_reference_anchor_b16_ms>0,moe_reference_anchor_b16_ms,"
	    "moe_ms)-ar_step_ms"),
	ROW(MR_GROWTH_TREE, MR_AT_B16, "growth_tree_ms", "", "ms", "tree time at the b16 anchor",
	    "comp_tree_ms*(1-tree_scale_frac+tree_scale_frac*C*budget/anchor_tree0)"),
	ROW(MR_GROWTH_F0, MR_AT_B16, "growth_f0_ms", "", "ms", "b16 non-MoE with growth 0",
	    "comp_attn_ms*anchor_bw/target_bw+comp_draft_ms*anchor_bw/target_bw+growth_tree_ms+"
	    "comp_overhead_ms"),
	ROW(MR_GROWTH_F1, MR_AT_B16, "growth_f1_ms", "", "ms", "b16 non-MoE with growth 1",
	    "comp_attn_ms*(M/anchor_m0)*anchor_bw/target_bw+comp_draft_ms*(C*block/anchor_draft0)*"
	    "anchor_bw/target_bw+growth_tree_ms+comp_overhead_ms"),
	ROW(MR_GROWTH, MR_ONCE, "growth", "", "fraction",
	    "share of attention and draft that grows with M and block (clamped to [0, 1])",
	    "IF(growth_f1_ms=growth_f0_ms,0,MIN(1,MAX(0,(growth_want_ms-growth_f0_ms)/"
	    "(growth_f1_ms-growth_f0_ms))))"),
	ROW(MR_CUT, MR_ROW, "cut", "cut factor", "", "1 - native_cut on the native engine",
	    "IF(native,1-native_cut,1)"),
	ROW(MR_ATTN, MR_ROW, "attn_lmhead_ms", "attn_lmhead (ms)", "ms",
	    "grows with M by growth, scaled by bandwidth",
	    "comp_attn_ms*(1-growth+growth*M/anchor_m0)*anchor_bw/target_bw*cut"),
	ROW(MR_DRAFT, MR_ROW, "draft_ms", "draft (ms)", "ms",
	    "grows with C x block by growth, scaled by bandwidth; none without a budget",
	    "IF(budget=0,0,comp_draft_ms*(1-growth+growth*C*block/anchor_draft0)*anchor_bw/"
	    "target_bw*cut)"),
	ROW(MR_TREE, MR_ROW, "tree_ms", "tree (ms)", "ms",
	    "tree_scale_frac of it grows with C x budget; none without a budget; the native "
	    "engine's from its kernels (tree_kernels), uncut",
	    "IF(budget=0,0,IF(native*tree_kernels,IF(tree_meas>=0,tree_meas,native_tree_us/1000*"
	    "(1-tree_scale_frac+tree_scale_frac*C*budget/anchor_tree0)),comp_tree_ms*"
	    "(1-tree_scale_frac+tree_scale_frac*C*budget/anchor_tree0)*cut))"),
	ROW(MR_OVERHEAD, MR_ROW, "overhead_ms", "overhead (ms)", "ms", "fixed",
	    "comp_overhead_ms*cut"),
	ROW(MR_ALLREDUCE, MR_ROW, "allreduce_ms", "allreduce (ms)", "ms",
	    "the all-reduce, cut by the seed's rows, not by ddt's (ar_uncut: a GPU collective)",
	    "ar_step_ms*IF(ar_uncut,1,cut)"),
	ROW(MR_NONMOE, MR_ROW, "nonmoe_ms", "non-MoE (ms)", "ms", "the components' sum",
	    "attn_lmhead_ms+draft_ms+tree_ms+overhead_ms+allreduce_ms"),
	ROW(MR_STEP, MR_ROW, "step_ms", "step (ms)", "ms", "MoE + non-MoE", "moe_ms+nonmoe_ms"),
	ROW(MR_TOK_S, MR_ROW, "tok_s", "tok/s", "tok/s", "C x accept / step",
	    "C*accept/step_ms*1000"),
};
#undef ROW

/* What a row term's formula reads: its configuration's values, the row
 * terms before it, and (through term_lookup) the inputs and model_terms. */
struct row_env {
	const struct model *m;
	double var[MV_COUNT];
	double *t;                /* the row terms so far */
	int nt;
	struct term_env terms;
};

/* Element (i, j) of one of the calibration's tables the formulas read. */
static int row_table(const struct model *m, const char *name, size_t len, int i, int j,
		     double *out)
{
	const struct calib *c = m->cal;
	if (j == 0 && name_is(name, len, "moe_pts_m") && i <= m->npoints)
		return *out = m->pm[i - 1], 0;
	if (j == 0 && name_is(name, len, "moe_pts_ms") && i <= m->npoints)
		return *out = m->pms[i - 1], 0;
	if (j == 0 && name_is(name, len, "ar_bytes") && i <= c->ar.nsizes)
		return *out = c->ar.bytes[i - 1], 0;
	if (name_is(name, len, "ar_us") && i <= (int)c->ngpus && j >= 1 && j <= c->ar.nsizes) {
		const struct ar_gpu *a = calib_ar(c, c->gpus[i - 1].id);
		return a ? (*out = a->us[j - 1], 0) : -1;
	}
	return -1;
}

static int row_lookup(void *ctx, const char *name, size_t len, int i, int j, double *out)
{
	const struct row_env *e = ctx;
	const struct model *m = e->m;
	if (i || j)
		return row_table(m, name, len, i, j, out);
	for (int k = 0; k < MV_COUNT; k++)
		if (name_is(name, len, model_row_var_names[k]))
			return *out = e->var[k], 0;
	for (int k = 0; k < e->nt; k++)
		if (name_is(name, len, model_row_terms[k].name))
			return *out = e->t[k], 0;
	for (int a = 0; a < ASM_COUNT; a++)
		if (name_is(name, len, calib_assumption_name((enum assumption)a)))
			return *out = m->v[a], 0;
	if (name_is(name, len, "moe_physical"))
		return *out = m->curve == MOE_CURVE_PHYSICAL, 0;
	if (key_is(name, len, "anchors.sglang_b8.step_ms"))
		return *out = m->a8_step_ms, 0;
	if (key_is(name, len, "anchors.sglang_b16.step_ms"))
		return *out = m->b16_step_ms, 0;
	if (key_is(name, len, "moe_reference.anchor_b8_ms"))
		return *out = m->cal->moe_ref.anchor_ms[0], 0;
	if (key_is(name, len, "moe_reference.anchor_b16_ms"))
		return *out = m->cal->moe_ref.anchor_ms[1], 0;
	if (key_is(name, len, "allreduce.gpus"))
		return *out = m->cal->ar.gpus, 0;
	return term_lookup((void *)&e->terms, name, len, 0, 0, out);
}

void model_row_vars(const struct model *m, const struct model_in *in, double v[MV_COUNT])
{
	const struct calib *c = m->cal;
	const struct gpu *t = gpu_of(c, in->target);
	const struct ar_gpu *a = calib_ar(c, t->id);
	double M = in->concurrency * (in->budget + 1);
	int xi = calib_xfer_index(&m->der->xt, m->ref_gpu, t, M);
	struct model_case k;
	model_case_init(&k, m, in);
	double e = m->form * k.moe_lr + m->z_x * k.moe_x_sig;
	v[MV_C] = in->concurrency;
	v[MV_BLOCK] = in->block;
	v[MV_BUDGET] = in->budget;
	v[MV_ACCEPT] = in->accept;
	v[MV_XFER] = xi >= 0 ? m->v[ASM_COUNT + xi] * (m->xfer_curve ? k.xfer_adj : 1) : 1;
	v[MV_MOE_CORR] = (e != 0 ? exp(e) : 1) * (k.moe_fitted ? m->moe_scale : 1);
	v[MV_TREE_KERNELS] = m->tree_kernels;
	v[MV_TREE_MEAS] = isnan(k.tree_meas_ms) ? -1 : k.tree_meas_ms;
	v[MV_AR_UNCUT] = m->ar_uncut;
	v[MV_TARGET_BW] = t->bw_tbps;
	v[MV_TARGET_BF16] = t->bf16_tflops;
	v[MV_TARGET_LINK] = t->link_gbps;
	v[MV_TARGET_PCIE] = a && a->pcie;
	v[MV_TARGET_ROW] = (double)(t - c->gpus) + 1;
	v[MV_SAME_GPU] = !strcmp(t->id, m->ref_gpu->id);
	v[MV_NATIVE] = in->pipeline == PIPE_NATIVE;
}

int model_row_eval(const struct model *m, const struct model_in *in, double t[MR_COUNT])
{
	const struct calib *c = m->cal;
	const struct anchor *a8 = &c->sglang_b8, *a16 = &c->sglang_b16;
	struct model_in i8 = {m->anchor_gpu, a8->pipeline, a8->block, a8->budget, a8->concurrency,
			      1, 0};
	struct model_in i16 = {calib_gpu(c, a16->gpu), a16->pipeline, a16->block, a16->budget,
			       a16->concurrency, 1, 0};
	double geo[MT_COUNT], t8[MR_COUNT], t16[MR_COUNT];
	struct row_env e[3] = {{.m = m, .t = t}, {.m = m, .t = t8}, {.m = m, .t = t16}};
	int rc = 0;

	model_terms_eval(c, m->ref_gpu, m->der->moe_fit.value, geo);
	model_row_vars(m, in, e[0].var);
	model_row_vars(m, &i8, e[1].var);
	model_row_vars(m, &i16, e[2].var);
	for (int r = 0; r < 3; r++)
		e[r].terms = (struct term_env){c, m->ref_gpu, m->der->moe_fit.value, geo, MT_COUNT};
	for (int k = 0; k < MR_COUNT && !rc; k++) {
		const struct model_row_def *d = &model_row_terms[k];
		if (d->scope == MR_ROW)
			for (int r = 0; r < 3 && !rc; r++)
				rc = formula_eval(d->formula, row_lookup, &e[r], &e[r].t[k]);
		else {
			struct row_env *at = &e[d->scope == MR_AT_B8 ? 1 : d->scope == MR_AT_B16 ? 2 : 0];
			rc = formula_eval(d->formula, row_lookup, at, &at->t[k]);
			/* a growth held (the calibrated point's) is not solved */
			if (k == MR_GROWTH && m->growth_used && !isnan(m->growth_set))
				at->t[k] = m->growth_set;
			t[k] = t8[k] = t16[k] = at->t[k];
		}
		for (int r = 0; r < 3; r++)
			e[r].nt = k + 1;
	}
	return rc;
}
