/* model.c - the decode-step model. Pure functions over a prepared struct model. */
#include "model.h"

#include "err.h"

#include <math.h>
#include <string.h>

const char *model_comp_name(enum model_comp k)
{
	static const char *const names[COMP_COUNT] = {"moe", "attn_lmhead", "draft", "tree",
						      "overhead"};
	return names[k];
}

double model_moe_ref_ms(const struct model *m, double M)
{
	/* piecewise linear; outside the points, the end segment's line */
	int i = 1;
	while (i < m->npoints - 1 && M > m->pm[i])
		i++;
	double x0 = m->pm[i - 1], x1 = m->pm[i], y0 = m->pms[i - 1], y1 = m->pms[i];
	double y = y0 + (M - x0) * (y1 - y0) / (x1 - x0);
	return y > 0 ? y : 0;
}

double model_moe_ms(const struct model *m, const struct gpu *target, double M)
{
	double t = model_moe_ref_ms(m, M) * m->ref_gpu->bw_tbps / target->bw_tbps;
	return target == m->ref_gpu ? t : t * m->v[ASM_MOE_TRANSFER];
}

/* The non-MoE components at in for growth g, before the native cut. */
static void nonmoe_parts(const struct model *m, const struct model_in *in, double g,
			 double out[COMP_COUNT])
{
	double bwr = m->anchor_gpu->bw_tbps / in->target->bw_tbps;
	double C = in->concurrency, M = C * (in->budget + 1);
	double f = m->v[ASM_TREE_SCALE_FRAC];

	out[COMP_ATTN] = m->n0_ms * m->share[0] * (1 - g + g * M / m->m0) * bwr;
	out[COMP_DRAFT] = m->n0_ms * m->share[1] * (1 - g + g * C * in->block / m->draft0) * bwr;
	out[COMP_TREE] = m->n0_ms * m->share[2] * (1 - f + f * C * in->budget / m->tree0);
	out[COMP_OVERHEAD] = m->n0_ms * m->share[3];
}

void model_eval(const struct model *m, const struct model_in *in, struct model_out *out)
{
	double cut = in->pipeline == PIPE_NATIVE ? 1 - m->v[ASM_NATIVE_CUT] : 1;

	out->M = in->concurrency * (in->budget + 1);
	nonmoe_parts(m, in, m->growth, out->ms);
	out->nonmoe_ms = 0;
	for (int k = COMP_ATTN; k < COMP_COUNT; k++) {
		out->ms[k] *= cut;
		out->nonmoe_ms += out->ms[k];
	}
	out->ms[COMP_MOE] = model_moe_ms(m, in->target, out->M);
	out->step_ms = out->ms[COMP_MOE] + out->nonmoe_ms;
	out->tok_s = in->concurrency * in->accept / out->step_ms * 1000.0;
}

static struct model_in anchor_in(const struct anchor *a, const struct gpu *g)
{
	struct model_in in = {g, a->pipeline, a->block, a->budget, a->concurrency, 1};
	return in;
}

static double parts_sum(const struct model *m, const struct model_in *in, double g)
{
	double p[COMP_COUNT];
	nonmoe_parts(m, in, g, p);
	return p[COMP_ATTN] + p[COMP_DRAFT] + p[COMP_TREE] + p[COMP_OVERHEAD];
}

int model_prepare(struct model *m, const struct calib *c, const double *asm_values)
{
	const struct anchor *a8 = &c->sglang_b8, *a16 = &c->sglang_b16;
	const struct gpu *g16;
	double sum = 0;

	memset(m, 0, sizeof *m);
	m->cal = c;
	for (int i = 0; i < ASM_COUNT; i++)
		m->v[i] = asm_values ? asm_values[i] : c->asm_[i].point;
	m->ref_gpu = calib_gpu(c, c->moe_ref.gpu);
	m->anchor_gpu = calib_gpu(c, a8->gpu);
	g16 = calib_gpu(c, a16->gpu);
	if (!m->ref_gpu || !m->anchor_gpu || !g16)
		return err_set(DDT_EINPUT, "calibration names a GPU that is not in its catalog");
	if (a8->pipeline != PIPE_SGLANG || a16->pipeline != PIPE_SGLANG)
		return err_set(DDT_EINPUT, "the non-MoE anchors must be SGLang pipeline steps");
	m->npoints = c->moe_ref.npoints;
	for (int i = 0; i < m->npoints; i++) {
		m->pm[i] = c->moe_ref.points[i].m;
		m->pms[i] = c->moe_ref.points[i].step_ms;
	}
	for (int i = 0; i < 4; i++)
		sum += m->v[ASM_SHARE_ATTN + i];
	if (!(sum > 0))
		return err_set(DDT_EINPUT, "the non-MoE shares sum to zero");
	for (int i = 0; i < 4; i++)
		m->share[i] = m->v[ASM_SHARE_ATTN + i] / sum;

	m->m0 = a8->concurrency * (a8->budget + 1);
	m->draft0 = a8->concurrency * a8->block;
	m->tree0 = a8->concurrency * a8->budget;
	m->n0_ms = a8->step_ms - model_moe_ms(m, m->anchor_gpu, m->m0);
	if (!(m->n0_ms > 0))
		return err_set(DDT_EINPUT,
			       "anchor sglang_b8: its step (%.3g ms) is shorter than its MoE time "
			       "(%.3g ms)",
			       a8->step_ms, a8->step_ms - m->n0_ms);

	/* non-MoE is linear in g: solve f(g) = the b16 anchor's non-MoE time */
	struct model_in in16 = anchor_in(a16, g16);
	double want = a16->step_ms - model_moe_ms(m, g16, a16->concurrency * (a16->budget + 1));
	double f0 = parts_sum(m, &in16, 0), f1 = parts_sum(m, &in16, 1);
	m->growth = f1 != f0 ? (want - f0) / (f1 - f0) : 0;
	if (!(m->growth >= 0 && m->growth <= 1)) {
		m->growth = m->growth > 1 ? 1 : 0;
		m->growth_clamped = 1;
	}
	return 0;
}
