/* regress_wander.c - whether a change found in a series that wanders holds: its t test with the nights' autocorrelation allowed for, and swings seen before. */
#include "regress.h"
#include "regress_walk.h"

#include "cpoint.h"

#include <math.h>
#include <stdint.h>

/* The lag-1 autocorrelation of the residuals e[0..m) when it is
 * significantly positive (above 2 / sqrt m: white noise leaves it there
 * one time in forty), else 0; at most 0.9. Resets at the indexes where
 * brk is set (segment boundaries). */
static double resid_rho(const double *e, size_t m, size_t brk)
{
	double num = 0, den = 0;
	for (size_t k = 0; k < m; k++) {
		den += e[k] * e[k];
		if (k && k != brk)
			num += e[k] * e[k - 1];
	}
	double rho = den > 0 ? num / den : 0;
	return rho > 2 / sqrt((double)m) ? fmin(rho, 0.9) : 0;
}

int regress_drift_holds(const struct regress_conf *c, const double *y, size_t m, size_t h,
			double a, double b, double *tmp)
{
	double sxx = 0, rss = 0;
	for (size_t k = 0; k < m; k++) {
		double x = k > h ? (double)(k - h) : 0;
		tmp[k] = y[k] - (a + b * x);
		rss += tmp[k] * tmp[k];
		sxx += x * x;
	}
	double rho = resid_rho(tmp, m, SIZE_MAX);
	if (rho == 0 || m < 4 || sxx <= 0 || rss <= 0)
		return 1;
	double f = (1 + rho) / (1 - rho), se = sqrt(rss / (double)(m - 2) / sxx * f);
	return cpoint_t_p(b / se, (double)(m - 2) / f) <= c->change_max_p;
}

int regress_step_holds(const struct regress_conf *c, const double *y, size_t lo, size_t at,
		       size_t hi, double *tmp)
{
	double m1, v1, m2, v2;
	size_t m = hi - lo;
	cpoint_moments(y, lo, at, &m1, &v1);
	cpoint_moments(y, at, hi, &m2, &v2);
	for (size_t k = lo; k < hi; k++)
		tmp[k - lo] = y[k] - (k < at ? m1 : m2);
	double rho = resid_rho(tmp, m, at - lo);
	if (rho == 0)
		return 1;
	double f = (1 - rho) / (1 + rho);
	return cpoint_ttest_p(m1, v1, (double)(at - lo) * f, m2, v2, (double)(hi - at) * f) <=
	       c->change_max_p;
}

int regress_keeps_swinging(const struct regress_conf *c, const struct hist_series *s, size_t i,
			   double cut, size_t from, double *tmp)
{
	enum { SWING_NIGHTS = 3 };
	int side = -1, runs = 0, streak = 0, streak_side = -1;
	size_t looked = 0, first = 0, nb = 0;
	for (size_t j = i + 1; j-- > 0 && looked < 3 * (size_t)c->baseline_nights;) {
		const struct hist_point *q = &s->pts[j];
		if (q->status != REC_OK || q->verdict == REG_OUTLIER || q->verdict == REG_UNJUDGED)
			continue;
		looked++;
		first = j;
	}
	for (size_t j = first; j <= i; j++) {
		const struct hist_point *q = &s->pts[j];
		if (q->status != REC_OK || q->verdict == REG_OUTLIER || q->verdict == REG_UNJUDGED)
			continue;
		int at = q->median_us > cut;
		if (j < from && nb < 3 * (size_t)c->baseline_nights)
			tmp[nb++] = q->median_us;
		streak = at == streak_side ? streak + 1 : 1;
		streak_side = at;
		if (streak >= SWING_NIGHTS && at != side) {
			side = at;
			runs++;
		}
	}
	if (runs < 4 || nb < 2 * (size_t)c->min_good_nights)
		return 0;
	double mean, var; /* and the nights before the change wander */
	cpoint_moments(tmp, 0, nb, &mean, &var);
	for (size_t k = 0; k < nb; k++)
		tmp[k] -= mean;
	return resid_rho(tmp, nb, SIZE_MAX) > 0;
}
