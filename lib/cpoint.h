/* cpoint.h - change points of a series: E-divisive means with t-test significance, and the two-sample tests. */
#ifndef DDT_CPOINT_H
#define DDT_CPOINT_H

#include <stddef.h>

/* E-divisive means (Matteson and James, "A Nonparametric Approach for
 * Multiple Change Point Analysis of Multivariate Data", JASA 2014,
 * arXiv:1306.4933) with the deterministic significance of Fleming et al.
 * ("Hunter: Using Change Point Detection to Hunt for Performance
 * Regressions", ICPE 2023, doi:10.1145/3578244.3583719): the series is split
 * recursively where the energy divergence Q-hat (alpha = 1) between the
 * points before a candidate tau and those from tau to kappa is largest; a
 * split is kept when a t test between those two groups gives p <= split_p
 * (an interval whose best split fails is left whole, the others are still
 * tried); then the weakest change points are merged away until every one
 * left has p <= max_p against its neighbouring segments and a relative
 * change of at least min_rel. Each change point is finally placed at the
 * least-squares split of its two segments within two points, since Q-hat
 * finds the region of a mean shift and the two-means fit places it.
 *
 * A change point is the index of the first point of the new level. */

struct cpoint_opts {
	double max_p;   /* the significance a change point keeps (0.001) */
	double split_p; /* the looser level of the split step (10 x max_p) */
	size_t min_seg; /* fewest points of a segment (>= 1; 2: a step lasts 2 points) */
	double min_rel; /* smallest |mean_after / mean_before - 1| kept (0: any) */
};

struct cpoint_change {
	size_t at;          /* first index of the new level */
	double mean_before; /* mean of the segment before, up to the previous change */
	double mean_after;  /* mean of the segment after, up to the next change */
	double p;           /* two-sided p of the pooled t test between the two */
};

/* The change points of x[0..n) (finite values), in index order, into
 * out[0..cap), their number into *nout (at most cap: the strongest first
 * when there are more). Memory O(n^2) doubles, time O(n^2) per split.
 * Returns 0 or DDT_ENOMEM. */
int cpoint_edivisive(const double *x, size_t n, const struct cpoint_opts *o, struct cpoint_change *out,
		 size_t cap, size_t *nout);

/* 1 when cpoint_edivisive(x, n, o) cannot keep a change point whatever its
 * splits, so it returns none without searching: every kept change has at
 * least min_seg points on both sides and a relative change of at least
 * min_rel, and no two runs of min_seg or more points of x (all positive)
 * have means that far apart. 0 when it could (or x has a value that is not
 * a positive number, or min_rel is 0). */
int cpoint_no_change_possible(const double *x, size_t n, const struct cpoint_opts *o);

/* 1 when cpoint_edivisive(x, n, o) returns no change point because the
 * split step's first interval, x[0..n), fails its test whatever its best
 * split: no split tau and end kappa (min_seg <= tau, tau + min_seg <=
 * kappa <= n) has a t test between x[0..tau) and x[tau..kappa) with
 * p <= split_p. 0 when one could, or n > 64, or a value is not finite.
 * O(n^2) without a division, against the search's O(n^2) with two. */
int cpoint_no_split_passes(const double *x, size_t n, const struct cpoint_opts *o);

/* The split of x[lo..hi) that maximises Q-hat over both its ends (tau, kappa)
 * with lo + min_seg <= tau and tau + min_seg <= kappa <= hi: tau into *at,
 * kappa into *kappa, the value into *qhat. Returns 0, DDT_EINPUT (the
 * interval is shorter than 2 x min_seg) or DDT_ENOMEM. */
int cpoint_best_split(const double *x, size_t lo, size_t hi, size_t min_seg, size_t *at,
		  size_t *kappa, double *qhat);

/* Two-sided p of Student's t test with pooled variance between samples of
 * means m1, m2, sample variances v1, v2 (n - 1 in the denominator) and sizes
 * n1, n2; 1 when n1 + n2 < 3; 0 when both variances are 0 and the means differ. */
double cpoint_ttest_p(double m1, double v1, double n1, double m2, double v2, double n2);

/* Two-sided p of Welch's t test (unequal variances, Welch-Satterthwaite
 * degrees of freedom); 1 when either sample has fewer than 2 points. */
double cpoint_welch_p(double m1, double v1, double n1, double m2, double v2, double n2);

/* Two-sided p of a t statistic with df degrees of freedom (0 for |t| = inf). */
double cpoint_t_p(double t, double df);

/* Mean and sample variance of x[lo..hi) (variance 0 for one point). */
void cpoint_moments(const double *x, size_t lo, size_t hi, double *mean, double *var);

#endif
