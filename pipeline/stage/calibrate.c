/* calibrate.c - the calibration stage: the fits and transfer entries made
 * from the calibration's facts, again after a --set changes one, and
 * tonight's measurements folded in (the MoE curve, the laws, the transfer
 * calibration). */
#include "calibrate.h"

#include "err.h"
#include "fit.h"
#include "model.h"
#include "project.h"
#include "record.h"
#include "xfer.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct moe_reference *calibrate_moe_ref(const struct calib *c,
					      const struct calibration *d)
{
	return d && d->moe_own ? &d->moe_ref : &c->moe_ref;
}

const struct measured *calibrate_meas(const struct calib *c, const struct calibration *d)
{
	return d && d->meas_own ? &d->meas : &c->meas;
}

const struct meas_class *calibrate_class(const struct calib *c, const struct calibration *d,
					 const char *name)
{
	const struct measured *ms = calibrate_meas(c, d);
	for (int i = 0; i < ms->nclasses; i++)
		if (!strcmp(ms->cls[i].name, name))
			return &ms->cls[i];
	return NULL;
}

const struct dist *calibrate_asm(const struct calib *c, const struct calibration *d, int i)
{
	if (i == ASM_TREE_SCALE_FRAC && d->tree_tonight)
		return &d->tree_scale_frac;
	return calib_asm(c, &d->xt, i);
}

double calibrate_law_hold(const struct calib *c, const struct calibration *d, int i)
{
	return d && d->unheld ? NAN : c->law_hold[i];
}

/* The MoE reference of d to change: the facts' copied in first. */
static struct moe_reference *own_moe_ref(const struct calib *c, struct calibration *d)
{
	if (!d->moe_own)
		d->moe_ref = c->moe_ref;
	d->moe_own = 1;
	return &d->moe_ref;
}

/* d's transfer entries built again, for the reference GPU and measured
 * tables in use. */
static int rebuild_xfer(const struct calib *c, struct calibration *d)
{
	return xfer_build_for(c, calibrate_moe_ref(c, d)->gpu, calibrate_meas(c, d), &d->xt);
}

int calibrate_moe(const struct calib *c, struct calibration *d)
{
	const struct moe_reference *r = calibrate_moe_ref(c, d);
	const struct gpu *ref = calib_gpu(c, r->gpu);
	double m[CALIB_MAX_MOE_POINTS], ms[CALIB_MAX_MOE_POINTS];

	if (!ref)
		return err_set(DDT_EINPUT, "moe_reference.gpu: '%s' is not in the GPU catalog", r->gpu);
	for (int i = 0; i < r->npoints; i++) {
		m[i] = r->points[i].m;
		ms[i] = r->points[i].step_ms;
	}
	fit_moe_physical(&d->moe_fit, c, ref, m, ms, r->npoints, &r->phys);
	if (r->curve == MOE_CURVE_PHYSICAL && !d->moe_fit.ok)
		return err_set(DDT_EINPUT, "moe_reference: the physical curve cannot be fitted: %s",
			       d->moe_fit.note);
	/* the transfer entries start at the reference GPU */
	if (d->xt.ref[0] && strcmp(d->xt.ref, r->gpu))
		return rebuild_xfer(c, d);
	return 0;
}

/* What a change to key asks of the fits: 2 refit, its failure the change's;
 * 1 refit, its failure model_prepare's to report; 0 nothing (the fit
 * depends on the points, the geometry and the reference GPU). */
static int refit_need(const char *key, size_t len)
{
	if ((len == 17 && !strncmp(key, "moe_reference.gpu", len)) ||
	    (len == 19 && !strncmp(key, "moe_reference.curve", len)))
		return 2;
	return (len > 6 && !strncmp(key, "model.", 6)) || (len > 5 && !strncmp(key, "gpus.", 5)) ||
	       (len > 14 && !strncmp(key, "moe_reference.", 14));
}

/* Refits after a successful change to the key key[0..len). */
static int refit_after(struct calib *c, struct calibration *d, const char *key, size_t len)
{
	int need = refit_need(key, len), rc;
	if (!need)
		return 0;
	rc = calibrate_moe(c, d);
	return need == 2 ? rc : 0;
}

/* The value of moe_reference.physical.PARAM (key[0..len)) the fit in d
 * gives, as calib_keys writes a number, into buf[len]; 0 for another key
 * or a parameter the fit neither fitted nor held (the fact stands). */
static int fit_value(const struct calibration *d, const char *key, size_t klen, char *buf,
		     size_t len)
{
	static const char pre[] = "moe_reference.physical.";
	const size_t n = sizeof pre - 1;
	if (klen <= n || strncmp(key, pre, n))
		return 0;
	for (int p = 0; p < MOE_P_COUNT; p++) {
		const char *name = calib_moe_param_name((enum moe_param)p);
		if (strlen(name) != klen - n || strncmp(key + n, name, klen - n))
			continue;
		if (!d->moe_fit.ok && !d->moe_fit.held[p])
			return 0;
		double v = d->moe_fit.value[p];
		if (isnan(v))
			buf[0] = '\0';
		else
			snprintf(buf, len, "%.9g", v);
		return 1;
	}
	return 0;
}

/* After a set of key[0..klen) that c logged: what it replaced, when the
 * fit gave that value (was, fit_value's before the set). */
static void set_was(struct calib *c, int nsets, const char *was, int fitted)
{
	if (fitted && c->nsets > nsets)
		snprintf(c->sets[c->nsets - 1].was, sizeof c->sets[0].was, "%s", was);
}

static int set_key(struct calib *c, struct calibration *d, const char *key, const char *value)
{
	char was[64];
	int nsets = c->nsets, fitted = fit_value(d, key, strlen(key), was, sizeof was);
	int rc = calib_set(c, &d->xt, key, value);
	if (rc)
		return rc;
	set_was(c, nsets, was, fitted);
	return refit_after(c, d, key, strlen(key));
}

static int set_arg(struct calib *c, struct calibration *d, const char *arg)
{
	char was[64];
	size_t klen = strcspn(arg, "=");
	int nsets = c->nsets, fitted = fit_value(d, arg, klen, was, sizeof was);
	int rc = calib_set_arg(c, &d->xt, arg);
	if (rc)
		return rc;
	set_was(c, nsets, was, fitted);
	return refit_after(c, d, arg, klen);
}

struct keys_shim {
	const struct calibration *d;
	calib_key_fn fn;
	void *ctx;
};

static int keys_shim_fn(void *ctx, const char *key, const char *value)
{
	const struct keys_shim *s = ctx;
	char v[64];
	return s->fn(s->ctx, key, fit_value(s->d, key, strlen(key), v, sizeof v) ? v : value);
}

int calibrate_keys(const struct calib *c, const struct calibration *d, calib_key_fn fn,
		   void *ctx)
{
	struct keys_shim s = {d, fn, ctx};
	return calib_keys(c, &d->xt, keys_shim_fn, &s);
}

/* --moe-reference: the curve at path replaces the calibration's, while the
 * anchors keep the MoE of the calibration's own curve (moe_ref.anchor_ms):
 * their steps were measured with it, not with the new implementation's. */
static int moe_reference(struct calib *c, struct calibration *d, const char *path)
{
	double own[2];
	int rc = model_anchor_moe(c, d, own);
	if (!rc && !(rc = calib_reference_csv(c, path)) && !(rc = calibrate_moe(c, d)))
		memcpy(c->moe_ref.anchor_ms, own, sizeof own);
	return rc;
}

/* Applies o's changes to the loaded c and d, in calibrate_opts' order. */
static int apply_opts(struct calib *c, struct calibration *d, const struct calibrate_opts *o)
{
	int rc = 0;
	if (!o)
		return 0;
	if (o->moe_reference && (rc = moe_reference(c, d, o->moe_reference)) != 0)
		return rc;
	for (int i = 0; i < o->nsets; i++)
		if ((rc = set_arg(c, d, o->sets[i])) != 0)
			return rc;
	if (o->curve && (rc = set_key(c, d, "moe_reference.curve", o->curve)) != 0)
		return rc;
	return o->fleet ? calibrate_fleet(c, d, o->fleet, NULL) : 0;
}

int calibrate_load(struct calib *c, struct calibration *d, const char *path,
		   const struct calibrate_opts *o, struct ydiag *diag)
{
	size_t before = diag->n;
	int rc;

	memset(d, 0, sizeof *d);
	if ((rc = calib_load(c, path, diag)) != 0)
		return rc;
	if (calibrate_moe(c, d) != 0)
		ydiag_add(diag, c->moe_ref_at.file, c->moe_ref_at.line, 1, "%s", err_msg());
	else if (rebuild_xfer(c, d) != 0)
		ydiag_add(diag, c->xfer_at.file, c->xfer_at.line, 1, "%s", err_msg());
	if (diag->n > before)
		return DDT_EINPUT;
	return apply_opts(c, d, o);
}

int calibrate_with(struct calib *c, struct calibration *d, const struct calib *c0,
		   const struct calibration *d0, const struct calibrate_opts *o)
{
	int rc = calib_copy(c, c0);
	*d = *d0;
	return rc ? rc : apply_opts(c, d, o);
}

/* ---------------------------------------------------------------- tonight */

/* Copies src into dst[len], cut short when it does not fit. */
static void copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void swap_d(double *a, double *b)
{
	double t = *a;
	*a = *b;
	*b = t;
}

/* The catalog GPU a device is: the longest catalog id (underscores dropped)
 * inside the device name (lowercase, letters and digits only). */
const struct gpu *calibrate_device_gpu(const struct calib *c, const char *name)
{
	char dev[160], id[40];
	size_t k = 0, best_len = 0;
	const struct gpu *best = NULL;
	for (const char *s = name; *s && k + 1 < sizeof dev; s++)
		if ((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9'))
			dev[k++] = *s;
		else if (*s >= 'A' && *s <= 'Z')
			dev[k++] = (char)(*s - 'A' + 'a');
	dev[k] = '\0';
	for (size_t i = 0; i < c->ngpus; i++) {
		size_t n = 0;
		for (const char *s = c->gpus[i].id; *s && n + 1 < sizeof id; s++)
			if (*s != '_')
				id[n++] = *s;
		id[n] = '\0';
		if (n > best_len && strstr(dev, id))
			best = &c->gpus[i], best_len = n;
	}
	return best;
}

/* A GPU row usable for calibration. */
static int gpu_row(const struct run_record *run, const struct rec_row *r, const char *op)
{
	return !strcmp(r->op, op) && r->status == REC_OK && strcmp(r->backend, "cpu") != 0 &&
	       r->device >= 0 && (size_t)r->device < run->ndevices &&
	       strcmp(run->devices[r->device].kind, "cpu") != 0 && r->median_us > 0;
}

/* Sorts a law's points by x (few points: insertion sort). */
static void law_sort(struct comp_law *l)
{
	for (int i = 1; i < l->n; i++)
		for (int j = i; j > 0 && l->x[j] < l->x[j - 1]; j--) {
			swap_d(&l->x[j], &l->x[j - 1]);
			swap_d(&l->t_us[j], &l->t_us[j - 1]);
		}
}

/* Adds (x, t) to l, keeping the smaller time for a repeated x. */
static void law_add(struct comp_law *l, double x, double t)
{
	for (int i = 0; i < l->n; i++)
		if (l->x[i] == x) {
			l->t_us[i] = t < l->t_us[i] ? t : l->t_us[i];
			return;
		}
	if (l->n < CALIB_MAX_LAW) {
		l->x[l->n] = x;
		l->t_us[l->n++] = t;
	}
}

/* tonight's moe_w4a16 sweep -> the reference curve of d (per step = per
 * layer x MoE layers), when its shape is the model's. */
static int merge_moe(const struct calib *c, struct calibration *d, const struct run_record *run,
		     struct projection *p, const struct gpu **gpu_out)
{
	const struct geometry *g = &c->model;
	const struct moe_reference *r0 = calibrate_moe_ref(c, d);
	double m[CALIB_MAX_MOE_POINTS], ms[CALIB_MAX_MOE_POINTS], overlap = NAN;
	const struct gpu *gpu = NULL;
	int n = 0, skipped = 0, rc;

	for (size_t i = 0; i < run->nrows && n < CALIB_MAX_MOE_POINTS; i++) {
		const struct rec_row *row = &run->rows[i];
		if (!gpu_row(run, row, "moe_w4a16"))
			continue;
		const struct gpu *dg = calibrate_device_gpu(c, run->devices[row->device].name);
		int shape = rec_row_param(row, "tp", g->tp) == g->tp &&
			    rec_row_param(row, "ep", 1) == 1 &&
			    rec_row_param(row, "hidden", g->hidden) == g->hidden &&
			    rec_row_param(row, "moe_inter", g->moe_intermediate) == g->moe_intermediate &&
			    rec_row_param(row, "experts", g->experts) == g->experts &&
			    rec_row_param(row, "topk", g->experts_per_token) == g->experts_per_token;
		double M = rec_row_param(row, "M", NAN);
		if (!dg || !shape || isnan(M) || (gpu && dg != gpu) ||
		    (strcmp(row->variant, "cold") && row->variant[0])) {
			skipped++;
			continue;
		}
		gpu = dg;
		overlap = rec_row_param(row, "overlap", 0);
		int dup = 0;
		for (int j = 0; j < n; j++)
			if (m[j] == M) {
				ms[j] = fmin(ms[j], row->median_us * (g->layers - g->dense_layers) / 1e3);
				dup = 1;
			}
		if (!dup) {
			m[n] = M;
			ms[n++] = row->median_us * (g->layers - g->dense_layers) / 1e3;
		}
	}
	if (skipped && (rc = project_note(p, "%d moe_w4a16 row%s of tonight's run left out of the "
				   "MoE curve (another shape, device or variant)",
				   skipped, skipped == 1 ? "" : "s")))
		return rc;
	*gpu_out = gpu;
	if (n < 2)
		return n ? project_note(p, "one moe_w4a16 point tonight: too few for a curve; the "
				       "calibration's points stay")
			 : 0;
	/* The sweep's routing is the bench's synthetic draw (its overlap is
	 * known); it pins efficiency and fixed cost. Real trees keep the overlap
	 * the calibration's points gave. */
	struct moe_fit stored = d->moe_fit, tonight;
	struct moe_physical ph = r0->phys;
	ph.value[MOE_P_OVERLAP] = overlap;
	ph.nfit = 0;
	for (int j = 0; j < r0->phys.nfit; j++)
		if (r0->phys.fit[j] != MOE_P_OVERLAP)
			ph.fit[ph.nfit++] = r0->phys.fit[j];
	fit_moe_physical(&tonight, c, gpu, m, ms, n, &ph);
	if (!tonight.ok)
		return project_note(p, "tonight's MoE sweep could not be fitted (%s); the calibration's "
				   "points stay", tonight.note);
	struct moe_reference *r = own_moe_ref(c, d);
	r->npoints = n;
	for (int i = 0; i < n; i++) {
		r->points[i].m = m[i];
		r->points[i].step_ms = ms[i];
		snprintf(r->points[i].source, sizeof r->points[i].source,
			 "tonight: moe_w4a16 on %s, M=%g, x %g MoE layers", gpu->name, m[i],
			 g->layers - g->dense_layers);
	}
	for (int i = 1; i < n; i++) /* sort by m */
		for (int j = i; j > 0 && r->points[j].m < r->points[j - 1].m; j--) {
			struct moe_point t = r->points[j];
			r->points[j] = r->points[j - 1];
			r->points[j - 1] = t;
		}
	snprintf(r->gpu, sizeof r->gpu, "%s", gpu->id);
	r->prov = PROV_TONIGHT;
	tonight.value[MOE_P_OVERLAP] = stored.ok ? stored.value[MOE_P_OVERLAP] : r->phys.value[MOE_P_OVERLAP];
	tonight.held[MOE_P_OVERLAP] = 1;
	tonight.se[MOE_P_OVERLAP] = stored.ok ? stored.se[MOE_P_OVERLAP] : NAN;
	size_t len = strlen(tonight.note);
	snprintf(tonight.note + len, sizeof tonight.note - len,
		 "; overlap %.3g from the calibration's points (tonight's routing is the bench's "
		 "synthetic draw, overlap %g)",
		 tonight.value[MOE_P_OVERLAP], overlap);
	d->moe_fit = tonight;
	p->recalibrated = 1;
	return 0;
}

/* A tree_attn row's verify width: M or T when it names one, else 1 + B
 * (NaN: none). */
static double attn_width(const struct rec_row *r)
{
	double M = rec_row_param(r, "M", NAN);
	if (isnan(M))
		M = rec_row_param(r, "T", NAN);
	return isnan(M) ? rec_row_param(r, "B", NAN) + 1 : M;
}

/* tonight's tree_attn rows -> the attention law (the ctx with most points). */
static void merge_attn(struct calibration *d, const struct run_record *run,
		       const struct gpu *gpu)
{
	double ctxs[64];
	int counts[64], nctx = 0, best = -1;
	for (size_t i = 0; i < run->nrows; i++) {
		const struct rec_row *r = &run->rows[i];
		if (!gpu_row(run, r, "tree_attn"))
			continue;
		double ctx = rec_row_param(r, "ctx", 0);
		int k;
		for (k = 0; k < nctx && ctxs[k] != ctx; k++)
			;
		if (k == nctx && nctx < 64)
			ctxs[nctx] = ctx, counts[nctx++] = 0;
		if (k < nctx)
			counts[k]++;
	}
	for (int k = 0; k < nctx; k++)
		if (best < 0 || counts[k] > counts[best] ||
		    (counts[k] == counts[best] && ctxs[k] > ctxs[best]))
			best = k;
	if (best < 0 || counts[best] < 2)
		return;
	struct comp_law l = {0};
	for (size_t i = 0; i < run->nrows; i++) {
		const struct rec_row *r = &run->rows[i];
		if (!gpu_row(run, r, "tree_attn") || rec_row_param(r, "ctx", 0) != ctxs[best])
			continue;
		double M = attn_width(r);
		if (!isnan(M))
			law_add(&l, M, r->median_us);
	}
	if (l.n < 2)
		return;
	law_sort(&l);
	snprintf(l.what, sizeof l.what, "tree_attn on %s, ctx=%g, %d points",
		 gpu ? gpu->name : run->devices[0].name, ctxs[best], l.n);
	d->law_attn = l;
}

/* A tree_attn row of the model's attention on one GPU: its heads, TP,
 * latent and rope widths the geometry's, a cold (or unnamed) variant. */
static int attn_row_of_model(const struct geometry *g, const struct rec_row *r)
{
	return rec_row_param(r, "heads", g->attn_heads) == g->attn_heads &&
	       rec_row_param(r, "tp", g->tp) == g->tp &&
	       rec_row_param(r, "kv_lora", g->kv_lora_rank) == g->kv_lora_rank &&
	       rec_row_param(r, "rope", g->qk_rope_dim) == g->qk_rope_dim &&
	       (!r->variant[0] || !strcmp(r->variant, "cold"));
}

/* tonight's tree_attn rows of the model's shape, on the GPU of the first
 * -> the law of attention over context (fit_ctx_law) in d->law_ctx; rows
 * too few or off the law leave the geometry, and why in p->context_law. */
static void merge_ctx(const struct calib *c, struct calibration *d, const struct run_record *run,
		      struct projection *p)
{
	double ctx[CALIB_MAX_LAW * 4], T[CALIB_MAX_LAW * 4], t[CALIB_MAX_LAW * 4];
	const struct gpu *gpu = NULL;
	int n = 0, other = 0;
	for (size_t i = 0; i < run->nrows && n < CALIB_MAX_LAW * 4; i++) {
		const struct rec_row *r = &run->rows[i];
		if (!gpu_row(run, r, "tree_attn"))
			continue;
		const struct gpu *dg = calibrate_device_gpu(c, run->devices[r->device].name);
		double x = rec_row_param(r, "ctx", NAN), w = attn_width(r);
		if (!dg || (gpu && dg != gpu) || !attn_row_of_model(&c->model, r) || isnan(x) ||
		    isnan(w)) {
			other++;
			continue;
		}
		gpu = dg;
		ctx[n] = x, T[n] = w, t[n++] = r->median_us;
	}
	struct ctx_law l;
	if (!n) {
		snprintf(p->context_law, sizeof p->context_law, "tonight's run has no tree_attn row "
			 "of the model's shape on a catalog GPU%s", other ? " (other shapes only)" : "");
		return;
	}
	if (fit_ctx_law(&l, gpu, ctx, T, t, n)) {
		snprintf(p->context_law, sizeof p->context_law, "tonight's %s", l.what);
		return;
	}
	d->law_ctx = l;
	p->recalibrated = 1;
}

/* tonight's dense_gemv rows of the drafter's MLP shape -> the draft law
 * (tokens C x block). */
static void merge_draft(const struct calib *c, struct calibration *d, const struct run_record *run)
{
	struct comp_law l = {0};
	const char *dev = "";
	for (size_t i = 0; i < run->nrows; i++) {
		const struct rec_row *r = &run->rows[i];
		if (!gpu_row(run, r, "dense_gemv") ||
		    rec_row_param(r, "K", 0) != c->drafter.hidden ||
		    rec_row_param(r, "N", 0) != c->drafter.intermediate)
			continue;
		double M = rec_row_param(r, "M", NAN);
		if (!isnan(M))
			law_add(&l, M, r->median_us);
		dev = run->devices[r->device].name;
	}
	if (l.n < 2)
		return;
	law_sort(&l);
	char what[400];
	snprintf(what, sizeof what, "dense_gemv %gx%g (drafter MLP) on %s, %d points",
		 c->drafter.hidden, c->drafter.intermediate, dev, l.n);
	copy_str(l.what, sizeof l.what, what);
	d->law_draft = l;
}

/* The native tree per sequence from tonight's rows: tree_build at each
 * budget plus accept at the nearest budget measured. Returns the note's
 * length (0: no tree_build rows, the calibration's native_tree_us stands). */
static int merge_tree_law(struct calibration *d, const struct run_record *run, char *note,
			  size_t len)
{
	struct comp_law l = {0};
	double ab[64], at[64];
	int na = 0;
	for (size_t i = 0; i < run->nrows && na < 64; i++) {
		const struct rec_row *r = &run->rows[i];
		double b = rec_row_param(r, "B", NAN);
		if (gpu_row(run, r, "accept") && !isnan(b))
			ab[na] = b, at[na++] = r->median_us;
	}
	for (size_t i = 0; i < run->nrows; i++) {
		const struct rec_row *r = &run->rows[i];
		double b = rec_row_param(r, "B", NAN), acc = 0;
		if (!gpu_row(run, r, "tree_build") || isnan(b))
			continue;
		for (int j = 0, near = -1; j < na; j++)
			if (near < 0 || fabs(ab[j] - b) < fabs(ab[near] - b))
				near = j, acc = at[j];
		law_add(&l, b, r->median_us + acc);
	}
	if (!l.n)
		return 0;
	law_sort(&l);
	d->law_tree = l;
	return snprintf(note, len, "native tree tonight: tree_build + accept per sequence, %d "
			"budgets (%g-%g us at B=%g-%g)%s; native_tree_us unused", l.n, l.t_us[0],
			l.t_us[l.n - 1], l.x[0], l.x[l.n - 1],
			na ? "" : ", no accept rows: tree_build alone");
}

/* tonight's tree_build rows -> d's tree_scale_frac (the anchor's budget as
 * x0) and the native tree's law (merge_tree_law). */
static int merge_tree(const struct calib *c, struct calibration *d, const struct run_record *run,
		      struct projection *p)
{
	double B[64], t[64], f;
	char note[200];
	int n = 0, rc;
	if (merge_tree_law(d, run, note, sizeof note) > 0 && (rc = project_note(p, "%s", note)) != 0)
		return rc;
	for (size_t i = 0; i < run->nrows && n < 64; i++) {
		const struct rec_row *r = &run->rows[i];
		double b = rec_row_param(r, "B", NAN);
		if (!gpu_row(run, r, "tree_build") || isnan(b))
			continue;
		B[n] = b;
		t[n++] = r->median_us;
	}
	if (fit_growth_frac(B, t, n, c->sglang_b8.budget, &f))
		return 0;
	struct dist *tf = &d->tree_scale_frac;
	if (c->asm_[ASM_TREE_SCALE_FRAC].overridden)
		return 0;
	*tf = c->asm_[ASM_TREE_SCALE_FRAC];
	d->tree_tonight = 1;
	tf->kind = DIST_FIXED;
	tf->point = f;
	snprintf(tf->source, sizeof tf->source,
		 "tonight: tree_build over %d budgets, line t = a + b B at B=%g", n,
		 c->sglang_b8.budget);
	return project_note(p, "tree_scale_frac %.3g measured tonight (tree_build, %d budgets)", f, n);
}

/* tonight's launch rows: a note (the model has no eager/graph switch, so
 * they are no input: the anchors' overhead shares carry launch cost). */
static int merge_launch(const struct run_record *run, struct projection *p)
{
	char line[200] = "";
	size_t off = 0;
	for (size_t i = 0; i < run->nrows && off < sizeof line; i++) {
		const struct rec_row *r = &run->rows[i];
		if (gpu_row(run, r, "launch"))
			off += (size_t)snprintf(line + off, sizeof line - off, "%s%s %.3g us",
						off ? ", " : "",
						r->variant[0] ? r->variant : "default", r->median_us);
	}
	return off ? project_note(p, "launch tonight: %s per kernel; not a model input (the "
			      "anchors' overhead shares carry launch cost)", line)
		   : 0;
}

/* Joins the moe_w4a16 sweeps of run's GPU dv (two or more points, the
 * model's shape) to k as a series of its own, its columns from first on
 * (set at the first GPU joined). Returns 1 when joined, else 0. */
static int fleet_join(const struct calib *c, struct meas_class *k, const struct run_record *run,
		      size_t dv, int *first)
{
	const struct gpu *gpu = calibrate_device_gpu(c, run->devices[dv].name);
	const struct geometry *g = &c->model;
	double m[CALIB_MAX_MEAS_M], us[CALIB_MAX_MEAS_M];
	int n = 0;
	if (!gpu || !strcmp(run->devices[dv].kind, "cpu"))
		return 0;
	for (size_t i = 0; i < run->nrows && n < CALIB_MAX_MEAS_M; i++) {
		const struct rec_row *r = &run->rows[i];
		if (!gpu_row(run, r, "moe_w4a16") || (size_t)r->device != dv ||
		    rec_row_param(r, "hidden", g->hidden) != g->hidden ||
		    rec_row_param(r, "experts", g->experts) != g->experts ||
		    isnan(rec_row_param(r, "M", NAN)))
			continue;
		m[n] = rec_row_param(r, "M", NAN);
		us[n++] = r->median_us; /* per call, one layer */
	}
	if (n < 2 || k->nseries == CALIB_MAX_MEAS_GPUS || k->nm + n > CALIB_MAX_MEAS_M)
		return 0;
	/* columns of its own: tonight's kernel pairs only with tonight's */
	if (*first < 0)
		*first = k->nm;
	struct meas_series *s = &k->series[k->nseries++];
	memset(s, 0, sizeof *s);
	snprintf(s->gpu, sizeof s->gpu, "%s", gpu->id);
	s->prov = PROV_TONIGHT;
	snprintf(s->source, sizeof s->source, "tonight: moe_w4a16 on %s (run %s)",
		 run->devices[dv].name, run->run_id);
	for (int j = 0; j < k->nm; j++)
		s->us[j] = NAN;
	for (int j = 0; j < n; j++) {
		int col = -1;
		for (int q = *first; q < k->nm; q++)
			if (k->m[q] == m[j])
				col = q;
		if (col < 0) {
			col = k->nm++;
			k->m[col] = m[j];
			for (int t = 0; t < k->nseries - 1; t++)
				k->series[t].us[col] = NAN;
		}
		s->us[col] = us[j];
	}
	return 1;
}

int calibrate_fleet(const struct calib *c, struct calibration *d, const struct run_record *run,
		    struct projection *p)
{
	const struct meas_class *k0 = calibrate_class(c, d, c->xfer_class);
	struct meas_class *k;
	int ngpu = 0, first = -1;
	if (!k0)
		return 0;
	ptrdiff_t ki = k0 - calibrate_meas(c, d)->cls;
	if (!(k = malloc(sizeof *k)))
		return err_nomem();
	*k = *k0;
	for (size_t dv = 0; dv < run->ndevices; dv++)
		ngpu += fleet_join(c, k, run, dv, &first);
	if (ngpu < 2) {
		/* one GPU tonight: nothing to pair; its columns stay out */
		free(k);
		return 0;
	}
	if (!d->meas_own)
		d->meas = c->meas;
	d->meas_own = 1;
	d->meas.cls[ki] = *k;
	free(k);
	if (p)
		project_note(p, "tonight's moe_w4a16 sweeps on %d GPUs join the transfer calibration "
			 "and the cross-GPU backtest (paired only with each other)", ngpu);
	return rebuild_xfer(c, d);
}

/* Folds tonight's GPU measurements into d. A CPU run changes nothing. */
int calibrate_tonight(const struct calib *c, struct calibration *d, const struct run_record *run,
		      struct projection *p)
{
	const struct gpu *gpu = NULL;
	int gpu_rows = 0, rc;

	snprintf(p->run_id, sizeof p->run_id, "%s", run->run_id);
	for (size_t i = 0; i < run->nrows; i++)
		gpu_rows += run->rows[i].status == REC_OK && strcmp(run->rows[i].backend, "cpu") &&
			    run->rows[i].device >= 0 && (size_t)run->rows[i].device < run->ndevices &&
			    strcmp(run->devices[run->rows[i].device].kind, "cpu");
	for (size_t i = 0; i < run->ndevices; i++)
		if (!p->measured_on[0] || strcmp(run->devices[i].kind, "cpu"))
			snprintf(p->measured_on, sizeof p->measured_on, "%s", run->devices[i].name);
	if (!gpu_rows)
		return project_note(p, "CPU run: tonight's measurements do not recalibrate GPU "
				   "projections; every GPU figure comes from the calibration");
	if ((rc = merge_moe(c, d, run, p, &gpu)) || (rc = merge_tree(c, d, run, p)) ||
	    (rc = merge_launch(run, p)))
		return rc;
	merge_attn(d, run, gpu);
	merge_ctx(c, d, run, p);
	merge_draft(c, d, run);
	if ((rc = calibrate_fleet(c, d, run, p)) != 0)
		return rc;
	if (d->law_attn.n || d->law_draft.n || d->law_tree.n ||
	    calibrate_asm(c, d, ASM_TREE_SCALE_FRAC)->kind == DIST_FIXED)
		p->recalibrated = 1;
	if (!p->recalibrated)
		return project_note(p, "tonight's GPU rows hold nothing the model uses; the "
				   "calibration stands");
	return 0;
}

int calibrate_projection(struct calibration *d, const struct calib *c,
			 const struct calibration *d0, int moe_curve,
			 const struct run_record *run, struct projection *p)
{
	int rc;
	*d = *d0;
	memset(&d->law_attn, 0, sizeof d->law_attn);
	memset(&d->law_draft, 0, sizeof d->law_draft);
	memset(&d->law_tree, 0, sizeof d->law_tree);
	memset(&d->law_ctx, 0, sizeof d->law_ctx);
	d->tree_tonight = d->unheld = 0;
	if (moe_curve >= 0 && (enum moe_curve_kind)moe_curve != calibrate_moe_ref(c, d)->curve) {
		own_moe_ref(c, d)->curve = (enum moe_curve_kind)moe_curve;
		if ((rc = calibrate_moe(c, d)) != 0)
			return rc;
	}
	return run ? calibrate_tonight(c, d, run, p) : 0;
}
