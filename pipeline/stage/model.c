/* model.c - the decode-step model. Pure functions over a prepared struct model. */
#include "model.h"

#include "err.h"
#include "fit.h"
#include "formula.h"

#include <stddef.h>

#include <math.h>
#include <string.h>

const char *model_comp_name(enum model_comp k)
{
	static const char *const names[COMP_COUNT] = {"moe",  "attn_lmhead", "draft",
						      "tree", "overhead",    "allreduce"};
	return names[k];
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

static int term_lookup(void *ctx, const char *name, size_t len, double *out)
{
	const struct term_env *e = ctx;
	const struct calib *c = e->c;
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

double model_moe_ref_form_ms(const struct model *m, enum moe_curve_kind k, double M)
{
	double y;
	if (k == MOE_CURVE_PHYSICAL && m->has_phys)
		y = phys_eval(m->phys_a, m->phys_b, m->lnq, m->overlap, M);
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
 * equal to the value set; 1 when none; <= 0 when the value is below the
 * link part (model_prepare refuses it). */
static double ar_hold_scale(const struct calib *c, const struct ar_gpu *a, const struct gpu *g)
{
	double s, l, count = c->ar.per_layer * c->model.layers;
	if (!(a->hold_m > 0))
		return 1;
	ar_one_us(&c->ar, a, g, c->model.hidden * 2 * a->hold_m, &s, &l);
	double pcie = a->pcie ? c->asm_[ASM_ALLREDUCE_PCIE].point : 1;
	return (a->hold_ms - count * l / 1e3) / (count * s / 1e3 * pcie);
}

/* Per step: small and link parts in ms, and whether the PCIe factor applies. */
static void ar_step_ms(const struct calib *c, const struct ar_gpu *a, const struct gpu *g,
		       double M, double *small_ms, double *link_ms, int *pcie)
{
	double s, l, count = c->ar.per_layer * c->model.layers;
	*small_ms = *link_ms = 0;
	*pcie = 0;
	if (!a)
		return; /* model_prepare refuses calibrations without one */
	ar_one_us(&c->ar, a, g, c->model.hidden * 2 * M, &s, &l);
	*small_ms = count * s / 1e3 * ar_hold_scale(c, a, g);
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
		return calib_xfer_index(c, m->ref_gpu, t, M);
	}
	*ar = m->ar_of[i];
	int first = m->xfer_first[i], n = m->xfer_count[i];
	if (first < 0)
		return -1;
	M = floor(M);
	for (int x = first; x < first + n - 1; x++)
		if (M <= c->xfer[x].m_hi)
			return x;
	return first + n - 1;
}

/* Fills the per-GPU tables of case_lookups. */
static void prepare_lookups(struct model *m)
{
	const struct calib *c = m->cal;
	for (size_t i = 0; i < c->ngpus && i < MODEL_MAX_GPUS; i++) {
		const struct gpu *t = &c->gpus[i];
		int x = calib_xfer_index(c, m->ref_gpu, t, 1), n = 0;
		m->ar_of[i] = calib_ar(c, t->id);
		m->xfer_first[i] = x;
		while (x >= 0 && x + n < c->nxfer && !strcmp(c->xfer[x + n].from, c->xfer[x].from) &&
		       !strcmp(c->xfer[x + n].to, c->xfer[x].to))
			n++;
		m->xfer_count[i] = n;
	}
}

void model_case_init(struct model_case *k, const struct model *m, const struct model_in *in)
{
	const struct calib *c = m->cal;
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
	k->moe_x_sig = M > m->m_hi   ? m->xsig_hi * log(M / m->m_hi)
		       : M < m->m_lo ? m->xsig_lo * log(m->m_lo / M)
				     : 0;
	k->xfer = case_lookups(m, t, M, &ar);
	k->xfer_adj = k->xfer >= 0 ? calib_xfer_adj(c, k->xfer, M) : 1;
	if (k->xfer >= 0)
		k->xfer += ASM_COUNT;
	k->moe_flop_ms = m->curve == MOE_CURVE_PHYSICAL
				 ? m->flops_per_m * M / (in->target->bf16_tflops * 1e12) * 1e3
				 : 0;
	ar_step_ms(c, ar, t, M, &k->ar_small_ms, &k->ar_link_ms, &k->ar_pcie);
	k->spec = in->budget > 0;
	k->attn_x = M / m->m0;
	k->draft_x = C * in->block / m->draft0;
	k->tree_x = C * in->budget / m->tree0;
	k->context = in->context > 0 ? in->context : 0;
	k->ctx_ms_tok = ctx_ms_per_token(c, in->target, C, M);
	k->tree_meas_ms = c->law_tree.n ? C * law_at(&c->law_tree, in->budget) / 1e3 : NAN;
	/* a law held with --set law.* follows the growth law at the value held */
	k->attn_f = c->law_attn.n && isnan(c->law_hold[0])
			    ? law_at(&c->law_attn, M) / law_at(&c->law_attn, m->m0)
			    : NAN;
	k->draft_f = c->law_draft.n && isnan(c->law_hold[1])
			     ? law_at(&c->law_draft, C * in->block) / law_at(&c->law_draft, m->draft0)
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

static double case_ar(const struct model *m, const struct model_case *k)
{
	return k->ar_small_ms * (k->ar_pcie ? m->c_pcie : 1) + k->ar_link_ms;
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
	out->ms[COMP_ALLREDUCE] = cut * case_ar(m, k);
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
	double h = m->cal->law_hold[i];
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

/* The curve of c in m: the linear points or the physical coefficients. */
static int prepare_curve(struct model *m, const struct calib *c)
{
	double t[MT_COUNT];
	model_terms_eval(c, m->ref_gpu, c->moe_ref.fit.value, t);
	m->curve = c->moe_ref.curve;
	m->npoints = c->moe_ref.npoints;
	for (int i = 0; i < m->npoints; i++) {
		m->pm[i] = c->moe_ref.points[i].m;
		m->pms[i] = c->moe_ref.points[i].step_ms;
	}
	m->flops_per_m = t[MT_FLOPS_PER_M];
	m->floor_ms = t[MT_MOE_FLOOR_MS];
	m->m_lo = m->npoints ? m->pm[0] : 1;
	m->m_hi = m->npoints ? m->pm[m->npoints - 1] : 1;
	m->xsig_lo = m->xsig_hi = 0;
	if (m->npoints >= 2) {
		/* the curve's extrapolation error: leave out an end point, predict it */
		double hi = fit_moe_loo(c, m->ref_gpu, m->pm, m->pms, m->npoints, &c->moe_ref.phys,
					MOE_CURVE_PHYSICAL, m->npoints - 1);
		double lo = fit_moe_loo(c, m->ref_gpu, m->pm, m->pms, m->npoints, &c->moe_ref.phys,
					MOE_CURVE_PHYSICAL, 0);
		double span_hi = log(m->pm[m->npoints - 1] / m->pm[m->npoints - 2]);
		double span_lo = log(m->pm[1] / m->pm[0]);
		if (isfinite(hi) && hi > 0 && span_hi > 0)
			m->xsig_hi = fabs(log(hi / m->pms[m->npoints - 1])) / span_hi;
		if (isfinite(lo) && lo > 0 && span_lo > 0)
			m->xsig_lo = fabs(log(lo / m->pms[0])) / span_lo;
	}
	if (c->moe_ref.fit.ok) {
		/* the other form of a linear curve, for the Monte Carlo's mix */
		phys_coef(c, m->ref_gpu, c->moe_ref.fit.value, &m->phys_a, &m->phys_b, &m->lnq);
		m->overlap = c->moe_ref.fit.value[MOE_P_OVERLAP];
		m->has_phys = 1;
	}
	if (m->curve != MOE_CURVE_PHYSICAL)
		return m->npoints >= 2 ? 0
				       : err_set(DDT_EINPUT, "moe_reference: the linear curve needs "
							     "two points, got %d", m->npoints);
	if (!c->moe_ref.fit.ok)
		return err_set(DDT_EINPUT, "moe_reference: the physical curve has no fit: %s",
			       c->moe_ref.fit.note);
	return 0;
}

int model_prepare(struct model *m, const struct calib *c, const double *asm_values)
{
	const struct anchor *a8 = &c->sglang_b8, *a16 = &c->sglang_b16;
	const struct gpu *g16;
	int rc;

	memset(m, 0, sizeof *m);
	m->cal = c;
	m->ref_gpu = calib_gpu(c, c->moe_ref.gpu);
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
		if (!(ar_hold_scale(c, a, &c->gpus[i]) > 0))
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
	m->m0 = a8->concurrency * (a8->budget + 1);
	m->draft0 = a8->concurrency * a8->block;
	m->tree0 = a8->concurrency * a8->budget;
	anchor_case(&m->k8, m, a8, m->anchor_gpu);
	anchor_case(&m->k16, m, a16, g16);
	/* g is solved when some component follows the growth law unheld */
	m->growth_used = (isnan(m->k16.attn_f) && isnan(c->law_hold[0])) ||
			 (isnan(m->k16.draft_f) && isnan(c->law_hold[1]));
	if (asm_values)
		return model_set_values(m, asm_values);
	double v[CALIB_MAX_ASM];
	for (int i = 0; i < calib_nassumptions(c); i++)
		v[i] = c->asm_[i].point;
	return model_set_values(m, v);
}

static void solve_growth(struct model *m);

int model_set_values(struct model *m, const double *asm_values)
{
	const struct calib *c = m->cal;
	const struct anchor *a8 = &c->sglang_b8;
	double sum = 0;

	memcpy(m->v, asm_values, (size_t)calib_nassumptions(c) * sizeof *m->v);
	for (int i = 0; i < 4; i++)
		sum += m->v[ASM_SHARE_ATTN + i];
	if (!(sum > 0))
		return err_set(DDT_EINPUT, "the non-MoE shares sum to zero");
	for (int i = 0; i < 4; i++)
		m->share[i] = m->v[ASM_SHARE_ATTN + i] / sum;
	m->c_pcie = m->v[ASM_ALLREDUCE_PCIE];
	m->c_xfer = m->v[ASM_MOE_TRANSFER];
	m->c_inv_ceff = 1 / m->v[ASM_MOE_COMPUTE_EFF];
	m->c_cut[0] = 1;
	m->c_cut[1] = 1 - m->v[ASM_NATIVE_CUT];
	m->ar0_ms = case_ar(m, &m->k8);
	m->n0_ms = m->a8_step_ms - case_moe(m, &m->k8) - m->ar0_ms;
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
	double want = m->b16_step_ms - case_moe(m, &m->k16) - case_ar(m, &m->k16);
	double f0 = parts_sum(m, &m->k16, 0), f1 = parts_sum(m, &m->k16, 1);
	m->growth = f1 != f0 ? (want - f0) / (f1 - f0) : 0;
	if (!(m->growth >= 0 && m->growth <= 1)) {
		m->growth = m->growth > 1 ? 1 : 0;
		m->growth_clamped = 1;
	}
}
