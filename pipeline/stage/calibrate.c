/* calibrate.c - the calibration stage: the fits and transfer entries made
 * from the calibration's facts, again after a --set changes one. */
#include "calibrate.h"

#include "err.h"
#include "fit.h"
#include "xfer.h"

#include <string.h>

int calibrate_moe(struct calib *c)
{
	struct moe_reference *r = &c->moe_ref;
	const struct gpu *ref = calib_gpu(c, r->gpu);
	double m[CALIB_MAX_MOE_POINTS], ms[CALIB_MAX_MOE_POINTS];

	if (!ref)
		return err_set(DDT_EINPUT, "moe_reference.gpu: '%s' is not in the GPU catalog", r->gpu);
	for (int i = 0; i < r->npoints; i++) {
		m[i] = r->points[i].m;
		ms[i] = r->points[i].step_ms;
	}
	fit_moe_physical(&r->fit, c, ref, m, ms, r->npoints, &r->phys);
	if (r->curve == MOE_CURVE_PHYSICAL && !r->fit.ok)
		return err_set(DDT_EINPUT, "moe_reference: the physical curve cannot be fitted: %s",
			       r->fit.note);
	/* the transfer entries start at the reference GPU */
	if (c->xfer_ref[0] && strcmp(c->xfer_ref, r->gpu))
		return xfer_build(c);
	return 0;
}

int calibrate_load(struct calib *c, const char *path, struct ydiag *diag)
{
	size_t before = diag->n;
	int rc = calib_load(c, path, diag);

	if (rc)
		return rc;
	if (calibrate_moe(c) != 0)
		ydiag_add(diag, c->moe_ref_at.file, c->moe_ref_at.line, 1, "%s", err_msg());
	else if (xfer_build(c) != 0)
		ydiag_add(diag, c->xfer_at.file, c->xfer_at.line, 1, "%s", err_msg());
	return diag->n > before ? DDT_EINPUT : 0;
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
static int refit_after(struct calib *c, const char *key, size_t len)
{
	int need = refit_need(key, len), rc;
	if (!need)
		return 0;
	rc = calibrate_moe(c);
	return need == 2 ? rc : 0;
}

int calibrate_set(struct calib *c, const char *key, const char *value)
{
	int rc = calib_set(c, key, value);
	return rc ? rc : refit_after(c, key, strlen(key));
}

int calibrate_set_arg(struct calib *c, const char *arg)
{
	int rc = calib_set_arg(c, arg);
	return rc ? rc : refit_after(c, arg, strcspn(arg, "="));
}

int calibrate_reference_csv(struct calib *c, const char *path)
{
	int rc = calib_reference_csv(c, path);
	return rc ? rc : calibrate_moe(c);
}
