/* calib_query.c - reading the loaded calibration: names of its kinds, its
 * lookups (GPUs, classes, transfer entries, all-reduce figures), the
 * assumptions' labels and groups, and the quantiles of a distribution. */
#include "calib.h"

#include "calib_fields.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

const char *calib_assumption_name(enum assumption a)
{
	return asm_names[a];
}

const char *calib_dist_kind_name(enum dist_kind k)
{
	return dist_kind_names[k].name;
}

/* By value; "override": their name in projection.yaml files before,
 * read but never written (a name is looked up by value first to last). */
const struct yschema_name calib_provenance_names[] = {
	{"measured", PROV_MEASURED}, {"calibration", PROV_CALIBRATION}, {"assumed", PROV_ASSUMED},
	{"overridden", PROV_OVERRIDE}, {"tonight", PROV_TONIGHT},        {"derived", PROV_DERIVED},
	{"override", PROV_OVERRIDE},  {NULL, 0},
};

const char *calib_provenance_name(enum provenance p)
{
	return calib_provenance_names[p].name;
}

int calib_provenance_parse(const char *s, enum provenance *out)
{
	for (int i = 0; calib_provenance_names[i].name; i++)
		if (!strcmp(s, calib_provenance_names[i].name)) {
			*out = (enum provenance)calib_provenance_names[i].value;
			return 0;
		}
	return -1;
}

const struct yschema_name calib_moe_curve_names[] = {
	{"linear", MOE_CURVE_LINEAR}, {"physical", MOE_CURVE_PHYSICAL}, {NULL, 0}};

const char *calib_moe_curve_name(enum moe_curve_kind k)
{
	return calib_moe_curve_names[k].name;
}

int calib_moe_curve_parse(const char *s, enum moe_curve_kind *out)
{
	for (int i = 0; calib_moe_curve_names[i].name; i++)
		if (!strcmp(s, calib_moe_curve_names[i].name)) {
			*out = (enum moe_curve_kind)calib_moe_curve_names[i].value;
			return 0;
		}
	return -1;
}

const char *calib_moe_param_name(enum moe_param p)
{
	return moe_param_names[p];
}

const struct meas_class *calib_class(const struct calib *c, const char *name)
{
	for (int i = 0; i < c->meas.nclasses; i++)
		if (!strcmp(c->meas.cls[i].name, name))
			return &c->meas.cls[i];
	return NULL;
}

const struct meas_series *calib_series(const struct meas_class *k, const char *gpu)
{
	for (int i = 0; k && i < k->nseries; i++)
		if (!strcmp(k->series[i].gpu, gpu))
			return &k->series[i];
	return NULL;
}

double calib_xcurve_at(const struct xfer_curve *cv, const double *y, double M)
{
	if (M <= cv->m[0])
		return y[0];
	if (M >= cv->m[cv->n - 1])
		return y[cv->n - 1];
	int i = 1;
	while (M > cv->m[i])
		i++;
	double w = log(M / cv->m[i - 1]) / log(cv->m[i] / cv->m[i - 1]);
	return y[i - 1] + w * (y[i] - y[i - 1]);
}

double calib_xfer_adj(const struct xfer_table *t, int i, double M)
{
	const struct xfer_entry *e = &t->xfer[i];
	if (e->curve < 0 || e->d.kind != DIST_LOGNORMAL || e->d.overridden)
		return 1;
	const struct xfer_curve *cv = &t->xcurve[e->curve];
	return exp(calib_xcurve_at(cv, cv->lf, M)) / e->d.median;
}

/* ---------------------------------------------------------------- lookups */

int calib_nassumptions(const struct xfer_table *t)
{
	return ASM_COUNT + t->nxfer;
}

const struct dist *calib_asm(const struct calib *c, const struct xfer_table *t, int i)
{
	return i < ASM_COUNT ? &c->asm_[i] : &t->xfer[i - ASM_COUNT].d;
}

void calib_assumption_label(const struct xfer_table *t, int i, char *buf, size_t len)
{
	if (i < ASM_COUNT) {
		snprintf(buf, len, "%s", asm_names[i]);
		return;
	}
	const struct xfer_entry *e = &t->xfer[i - ASM_COUNT];
	snprintf(buf, len, "moe_transfer.%s.%s.%s", e->from, e->to, e->range);
}

int calib_assumption_group(const struct xfer_table *t, int i)
{
	int g = ASM_COUNT - 1;
	if (i < ASM_COUNT)
		return i;
	for (int k = 0; k <= i - ASM_COUNT; k++)
		if (k == 0 || strcmp(t->xfer[k].from, t->xfer[k - 1].from) ||
		    strcmp(t->xfer[k].to, t->xfer[k - 1].to))
			g++;
	return g;
}

int calib_ngroups(const struct xfer_table *t)
{
	return t->nxfer ? calib_assumption_group(t, ASM_COUNT + t->nxfer - 1) + 1 : ASM_COUNT;
}

void calib_group_label(const struct xfer_table *t, int group, char *buf, size_t len)
{
	if (group < ASM_COUNT) {
		snprintf(buf, len, "%s", asm_names[group]);
		return;
	}
	for (int i = 0; i < t->nxfer; i++)
		if (calib_assumption_group(t, ASM_COUNT + i) == group) {
			snprintf(buf, len, "moe_transfer.%s.%s", t->xfer[i].from, t->xfer[i].to);
			return;
		}
	snprintf(buf, len, "?");
}

const char *calib_family(const struct calib *c, const char *arch)
{
	for (int i = 0; i < c->nfamilies; i++)
		if (!strcmp(c->families[i].arch, arch))
			return c->families[i].family;
	return arch;
}

int calib_xfer_index(const struct xfer_table *t, const struct gpu *from, const struct gpu *to,
		     double M)
{
	if (!strcmp(from->id, to->id))
		return -1;
	/* ranges are whole numbers of tokens; a fractional M belongs to the lower one */
	M = floor(M);
	for (int i = 0; i < t->nxfer; i++) {
		const struct xfer_entry *e = &t->xfer[i];
		if (!strcmp(e->from, from->id) && !strcmp(e->to, to->id) && M <= e->m_hi &&
		    (M >= e->m_lo || e->m_lo == 1))
			return i;
	}
	return -1;
}

const struct ar_gpu *calib_ar(const struct calib *c, const char *gpu_id)
{
	for (int i = 0; i < c->ar.n; i++)
		if (!strcmp(c->ar.per_gpu[i].gpu, gpu_id))
			return &c->ar.per_gpu[i];
	return NULL;
}

const struct gpu *calib_gpu(const struct calib *c, const char *id)
{
	for (size_t i = 0; i < c->ngpus; i++)
		if (!strcmp(c->gpus[i].id, id))
			return &c->gpus[i];
	return NULL;
}
/* ---------------------------------------------------------------- quantiles */

double calib_dist_quantile(const struct dist *d, double q)
{
	switch (d->kind) {
	case DIST_FIXED:
		return d->point;
	case DIST_UNIFORM:
		return d->min + q * (d->max - d->min);
	case DIST_TRIANGULAR: {
		double w = d->max - d->min, fc = (d->mode - d->min) / w;
		return q < fc ? d->min + sqrt(q * w * (d->mode - d->min))
			      : d->max - sqrt((1 - q) * w * (d->max - d->mode));
	}
	case DIST_NORMAL: {
		/* truncation: map q into the CDF range [F(lo), F(hi)] */
		double flo = isnan(d->min) ? 0 : gsl_cdf_gaussian_P(d->min - d->mean, d->sd);
		double fhi = isnan(d->max) ? 1 : gsl_cdf_gaussian_P(d->max - d->mean, d->sd);
		return d->mean + gsl_cdf_gaussian_Pinv(flo + q * (fhi - flo), d->sd);
	}
	case DIST_LOGNORMAL:
		return d->median * exp(gsl_cdf_gaussian_Pinv(q, d->sigma));
	}
	return d->point;
}
