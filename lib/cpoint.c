/* cpoint.c - E-divisive means change points (Q-hat splits, t-test significance, merge) and two-sample t tests. */
#include "cpoint.h"

#include "err.h"

#include <float.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static double t_two_sided(double t, double df);

void cpoint_moments(const double *x, size_t lo, size_t hi, double *mean, double *var)
{
	double m = 0, s = 0;
	size_t n = hi - lo;
	for (size_t i = lo; i < hi; i++)
		m += x[i];
	m = n ? m / (double)n : NAN;
	for (size_t i = lo; i < hi; i++)
		s += (x[i] - m) * (x[i] - m);
	*mean = m;
	*var = n > 1 ? s / (double)(n - 1) : 0;
}

double cpoint_t_p(double t, double df)
{
	return t_two_sided(t, df);
}

/* Two-sided p of |t| with df degrees of freedom. */
static double t_two_sided(double t, double df)
{
	if (isnan(t))
		return 1;
	if (isinf(t))
		return 0;
	return 2 * gsl_cdf_tdist_Q(fabs(t), df);
}

double cpoint_ttest_p(double m1, double v1, double n1, double m2, double v2, double n2)
{
	double df = n1 + n2 - 2;
	if (n1 < 1 || n2 < 1 || df < 1)
		return 1;
	double pooled = ((n1 - 1) * v1 + (n2 - 1) * v2) / df;
	double se = sqrt(pooled * (1 / n1 + 1 / n2));
	if (se == 0)
		return m1 == m2 ? 1 : 0;
	return t_two_sided((m2 - m1) / se, df);
}

double cpoint_welch_p(double m1, double v1, double n1, double m2, double v2, double n2)
{
	if (n1 < 2 || n2 < 2)
		return 1;
	double a = v1 / n1, b = v2 / n2, se = sqrt(a + b);
	if (se == 0)
		return m1 == m2 ? 1 : 0;
	double df = (a + b) * (a + b) / (a * a / (n1 - 1) + b * b / (n2 - 1));
	return t_two_sided((m2 - m1) / se, df);
}

/* ---------------------------------------------------------------- Q-hat */

/* Sum of |x_i - x_j| over pairs within a group of size k, as an average
 * over the pairs (0 for fewer than two points). */
static double pair_mean(double sum, size_t k)
{
	return k > 1 ? sum / ((double)k * (double)(k - 1) / 2) : 0;
}

/* The windows the walk searches are at most change_window_nights long: up to
 * this many points the scratch lives on the stack (no allocation per call);
 * a longer series takes the heap. */
#define CPOINT_STACK_POINTS 64
/* The loops below are written for the vectorizer, which -O2 of GCC 12 runs
 * only on loops of a known trip count: these two ask for it, and for no
 * trapping math (a compare or a division may then run in a lane it does not
 * count in; no value changes). Lanes keep IEEE results and -std=c11
 * contracts nothing: the same bits as scalar code. */
#if defined(__GNUC__) && !defined(__clang__)
#define CPOINT_VECTORIZE __attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math")))
#else
#define CPOINT_VECTORIZE
#endif
#define CPOINT_SCRATCH(m) ((m) * ((m) + 1) + ((m) + 1) + 10 * (m))

/* rt[a * w + k] = sum of |x_i - x_(lo+k)| over i in [lo, lo + a), for a <= k
 * only (the search reads no other entry), d[k] = rt[k * w + k], and sxx[a] =
 * the sum over the pairs within x[lo..lo + a). Each sum runs over i in the
 * order of the plain row-by-row prefix sums, so every entry is bit for bit
 * that value; laid out by a, the k of one step are independent (vectorized). */
CPOINT_VECTORIZE static void distance_sums(const double *x, size_t lo, size_t m, size_t w, double *rt, double *d,
			  double *sxx)
{
	for (size_t k = 0; k < m; k++)
		rt[k] = 0;
	for (size_t a = 0; a + 1 < m; a++) {
		const double xa = x[lo + a], *src = rt + a * w;
		double *dst = rt + (a + 1) * w;
		for (size_t k = a + 1; k < m; k++)
			dst[k] = src[k] + fabs(xa - x[lo + k]);
	}
	sxx[0] = 0;
	for (size_t k = 0; k < m; k++) {
		d[k] = rt[k * w + k];
		sxx[k + 1] = sxx[k] + d[k];
	}
}

/* The split search, kappa = k + 1 by kappa: the sums of each split t get
 * column k's distances (col[t] = rt[t * w + k], dk = d[k]) in the order of k,
 * as a search of t then k adds them, and Q-hat of X = x[lo..lo + t),
 * Y = x[lo + t..lo + k + 1) is nx ny / (nx + ny) (2 sxy / (nx ny) - mean pair
 * distance within X (px[t]) - within Y). The splits t of one k are
 * independent (vectorized); bq[t], bk[t]: the best Q-hat of split t so far
 * and its first k. */
CPOINT_VECTORIZE static void qhat_column(const double *col, double dk, const double *px,
					 const double *qn, size_t k, size_t min_seg, size_t tmax,
					 double *sxy, double *syy, double *bq, double *bk)
{
	size_t hi = k < tmax ? k : tmax;
	for (size_t t = min_seg; t <= hi; t++) {
		sxy[t] += col[t];
		syy[t] += dk - col[t];
	}
	const double kk = (double)(k + 1);
	for (size_t t = min_seg; t + min_seg <= k + 1; t++) {
		double nx = (double)t, ny = kk - nx;
		double py = syy[t] / (ny > 1 ? ny * (ny - 1) / 2 : 1); /* no branch */
		py = ny > 1 ? py : 0;
		double e = 2 * sxy[t] / (nx * ny) - px[t] - py;
		double q = qn[t] * e; /* qn[t] = nx * ny / kk, the same bits */
		bk[t] = q > bq[t] ? (double)k : bk[t];
		bq[t] = q > bq[t] ? q : bq[t];
	}
}

/* Q-hat's weights nx ny / (nx + ny) for nx + ny = kk <= CPOINT_STACK_POINTS:
 * row kk, entry nx, built once (they are the same for every search); beside
 * them, for the bounds (qhat_bounds), the nearest doubles to 1 / (nx ny)
 * and to 1 / the pairs within Y (0 for one point). */
static double qn_table[(CPOINT_STACK_POINTS + 1) * CPOINT_STACK_POINTS];
static double inv_nxny[(CPOINT_STACK_POINTS + 1) * CPOINT_STACK_POINTS];
static double inv_pairs[(CPOINT_STACK_POINTS + 1) * CPOINT_STACK_POINTS];
static pthread_once_t qn_once = PTHREAD_ONCE_INIT;

static void qn_fill(double *row, double kk, size_t n)
{
	for (size_t t = 1; t < n; t++) {
		double nx = (double)t, ny = kk - nx;
		row[t] = nx * ny / kk;
	}
}

static void qn_build(void)
{
	for (size_t kk = 2; kk <= CPOINT_STACK_POINTS; kk++) {
		qn_fill(qn_table + kk * CPOINT_STACK_POINTS, (double)kk, kk);
		for (size_t t = 1; t < kk; t++) {
			double nx = (double)t, ny = (double)(kk - t);
			inv_nxny[kk * CPOINT_STACK_POINTS + t] = 1 / (nx * ny);
			inv_pairs[kk * CPOINT_STACK_POINTS + t] = ny > 1 ? 1 / (ny * (ny - 1) / 2) : 0;
		}
	}
}

/* The bounds' margin: Q-hat with each division a product by the nearest
 * double to its reciprocal is within 9.2 u qn (A + px + py) of Q-hat as
 * qhat_column computes it (u = 2^-53; A = 2 sxy / (nx ny), px and py the
 * mean pair distances, all >= 0: each reciprocal and product rounds once,
 * the differences and the weight once each, and every rounding is at most
 * u of a value within A + px + py). 2^-48 = 32 u leaves the roundings of
 * the bound's own sums room; 2^-1020 covers the absolute error of
 * subnormal values. */
#define CPOINT_BOUND_REL 0x1p-48
#define CPOINT_BOUND_ABS 0x1p-1020

/* The search's first pass, kappa = k + 1 by kappa: the sums as
 * qhat_column adds them (column k of rt read at stride w from col), and, for each split t, the largest upper (bhi[t])
 * and lower (blo[t]) bound on its Q-hat over the kappas so far, from
 * products instead of divisions (no division in the loop: 2 x 4 times
 * faster). qn, inv, ipy: row k + 1 of qn_table, inv_nxny, inv_pairs. */
CPOINT_VECTORIZE static void qhat_bounds(const double *restrict col, size_t w, double dk,
					 const double *restrict px, const double *restrict qn,
					 const double *restrict inv, const double *restrict ipy,
					 size_t k, size_t min_seg, size_t tmax, double *restrict sxy,
					 double *restrict syy, double *restrict bhi,
					 double *restrict blo)
{
	size_t hi = k < tmax ? k : tmax, t = min_seg;
	for (; t + min_seg <= k + 1; t++) { /* the splits of kappa k + 1 */
		double c = col[t * w];
		sxy[t] += c;
		syy[t] += dk - c;
		double a = 2 * sxy[t] * inv[t], b = syy[t] * ipy[t];
		double q = qn[t] * (a - px[t] - b);
		double err = qn[t] * (a + px[t] + b) * CPOINT_BOUND_REL + CPOINT_BOUND_ABS;
		double up = q + err, down = q - err;
		bhi[t] = up > bhi[t] ? up : bhi[t];
		blo[t] = down > blo[t] ? down : blo[t];
	}
	for (; t <= hi; t++) { /* too near kappa to split yet: the sums alone */
		sxy[t] += col[t * w];
		syy[t] += dk - col[t * w];
	}
}

/* Split t's Q-hat over every kappa, each as qhat_column computes it (the
 * same sums in the same order, the same divisions): the largest into
 * bq[t], its first k into bk[t]. */
static void qhat_row(const double *rt, size_t w, const double *d, const double *px, size_t t,
		     size_t m, size_t min_seg, double *bq, double *bk)
{
	double sxy = 0, syy = 0, nx = (double)t;
	for (size_t k = t; k < m; k++) {
		sxy += rt[t * w + k];
		syy += d[k] - rt[t * w + k];
		if (t + min_seg > k + 1)
			continue;
		double ny = (double)(k + 1) - nx;
		double py = syy / (ny > 1 ? ny * (ny - 1) / 2 : 1);
		py = ny > 1 ? py : 0;
		double e = 2 * sxy / (nx * ny) - px[t] - py;
		double q = qn_table[(k + 1) * CPOINT_STACK_POINTS + t] * e;
		bk[t] = q > bq[t] ? (double)k : bk[t];
		bq[t] = q > bq[t] ? q : bq[t];
	}
}

/* The search of a window of at most CPOINT_STACK_POINTS points whose
 * distances sum to a finite total well below overflow (sxx[m] <
 * DBL_MAX / 2^20): a first pass bounds every split's Q-hat without a
 * division (qhat_bounds); only a split whose upper bound reaches the
 * largest lower bound can hold the largest Q-hat or tie it, and those
 * alone are searched as qhat_column searches (qhat_row). bq, bk as the
 * full search leaves them for those splits; -inf for the others, whose
 * Q-hat is below the largest. */
static void search_bounded(const double *rt, size_t w, const double *d, const double *px,
			   size_t m, size_t min_seg, double *sxy, double *syy,
			   double *bq, double *bk, double *bhi, double *blo)
{
	size_t tmax = m - min_seg;
	double floor = -INFINITY;
	for (size_t t = min_seg; t <= tmax; t++)
		bhi[t] = blo[t] = -INFINITY;
	for (size_t k = min_seg; k < m; k++) {
		const size_t row = (k + 1) * CPOINT_STACK_POINTS;
		qhat_bounds(rt + k, w, d[k], px, qn_table + row, inv_nxny + row, inv_pairs + row, k,
			    min_seg, tmax, sxy, syy, bhi, blo);
	}
	for (size_t t = min_seg; t <= tmax; t++)
		floor = blo[t] > floor ? blo[t] : floor;
	for (size_t t = min_seg; t <= tmax; t++)
		if (bhi[t] >= floor)
			qhat_row(rt, w, d, px, t, m, min_seg, bq, bk);
}

/* The weights of kappa = k + 1: the table's row, or computed into spare. */
static const double *qn_row(size_t k, double *spare)
{
	if (k + 1 <= CPOINT_STACK_POINTS)
		return qn_table + (k + 1) * CPOINT_STACK_POINTS;
	qn_fill(spare, (double)(k + 1), k + 1);
	return spare;
}

int cpoint_best_split(const double *x, size_t lo, size_t hi, size_t min_seg, size_t *at,
		  size_t *kappa, double *qhat)
{
	size_t m = hi > lo ? hi - lo : 0, w = m + 1;
	double stack[CPOINT_SCRATCH(CPOINT_STACK_POINTS)], *rt = stack;
	if (min_seg < 1)
		min_seg = 1;
	if (m < 2 * min_seg)
		return DDT_EINPUT;
	if (m > CPOINT_STACK_POINTS && !(rt = malloc(CPOINT_SCRATCH(m) * sizeof *rt)))
		return err_nomem();
	double *sxx = rt + m * w, *d = sxx + w, *sxy = d + m, *syy = sxy + m, *px = syy + m,
	       *col = px + m, *bq = col + m, *bk = bq + m, *bhi = bk + 2 * m, *blo = bhi + m;
	size_t tmax = m - min_seg;
	pthread_once(&qn_once, qn_build);
	distance_sums(x, lo, m, w, rt, d, sxx);
	for (size_t t = min_seg; t <= tmax; t++) {
		sxy[t] = syy[t] = bk[t] = 0;
		bq[t] = -INFINITY;
		px[t] = pair_mean(sxx[t], t);
	}
	if (m <= CPOINT_STACK_POINTS && sxx[m] < DBL_MAX / 0x1p20)
		search_bounded(rt, w, d, px, m, min_seg, sxy, syy, bq, bk, bhi, blo);
	else
		for (size_t k = min_seg; k < m; k++) {
			for (size_t t = min_seg; t <= k && t <= tmax; t++)
				col[t] = rt[t * w + k];
			qhat_column(col, d[k], px, qn_row(k, bk + m), k, min_seg, tmax, sxy, syy,
				    bq, bk);
		}
	/* the first split with the largest Q-hat, as a search of t then k finds */
	double best = -INFINITY;
	size_t best_at = lo + min_seg, best_kappa = hi;
	for (size_t t = min_seg; t <= tmax; t++)
		if (bq[t] > best) {
			best = bq[t];
			best_at = lo + t;
			best_kappa = lo + (size_t)bk[t] + 1;
		}
	if (rt != stack)
		free(rt);
	*at = best_at;
	*kappa = best_kappa;
	*qhat = best;
	return 0;
}

/* ---------------------------------------------------------------- divisive */

/* The change at c[i] between its neighbours (c[-1] = 0, c[k] = n). */
static struct cpoint_change stats_of(const double *x, size_t n, const size_t *c, size_t k, size_t i)
{
	size_t lo = i ? c[i - 1] : 0, hi = i + 1 < k ? c[i + 1] : n;
	struct cpoint_change ch = {.at = c[i]};
	double v1, v2;
	cpoint_moments(x, lo, c[i], &ch.mean_before, &v1);
	cpoint_moments(x, c[i], hi, &ch.mean_after, &v2);
	ch.p = cpoint_ttest_p(ch.mean_before, v1, (double)(c[i] - lo), ch.mean_after, v2,
			  (double)(hi - c[i]));
	return ch;
}

static double rel_change(const struct cpoint_change *ch)
{
	return ch->mean_before != 0 ? fabs(ch->mean_after / ch->mean_before - 1) : INFINITY;
}

/* Inserts v into the sorted c[0..*k). */
static void insert_sorted(size_t *c, size_t *k, size_t v)
{
	size_t i = *k;
	while (i && c[i - 1] > v) {
		c[i] = c[i - 1];
		i--;
	}
	c[i] = v;
	(*k)++;
}

/* The best split of each interval tried, by the interval's first point: an
 * interval the last split left whole is not searched again. */
struct split_memo {
	size_t end, at, kappa;
	double q;
	int rc;
};

/* cpoint_best_split of x[a..b), from the memo when it holds that interval. */
static int best_split_memo(const double *x, size_t a, size_t b, size_t min_seg, struct split_memo *memo,
			   size_t *at, size_t *kappa, double *q)
{
	struct split_memo *e = &memo[a];
	if (e->end != b) {
		e->rc = cpoint_best_split(x, a, b, min_seg, &e->at, &e->kappa, &e->q);
		e->end = e->rc == DDT_ENOMEM ? 0 : b;
	}
	*at = e->at, *kappa = e->kappa, *q = e->q;
	return e->rc;
}

/* Split step: change points into c (room for n), their number into *k.
 * The interval whose best candidate has the largest Q-hat is split when a t
 * test between the points before the candidate and those up to its kappa
 * (the two groups Q-hat compared) gives p <= split_p; an interval whose best
 * candidate fails is not tried again. */
static int split_all(const double *x, size_t n, const struct cpoint_opts *o, unsigned char *done,
		     struct split_memo *memo, size_t *c, size_t *k)
{
	int rc = 0;
	memset(done, 0, n + 1); /* done[lo]: interval from lo tried */
	memset(memo, 0, (n + 1) * sizeof *memo); /* end 0: none */
	*k = 0;
	for (;;) {
		size_t best_at = 0, best_kappa = 0, lo = 0;
		double best_q = -INFINITY;
		for (size_t i = 0; i <= *k; i++) {
			size_t a = i ? c[i - 1] : 0, b = i < *k ? c[i] : n, at, kappa;
			double q;
			if (done[a])
				continue;
			rc = best_split_memo(x, a, b, o->min_seg, memo, &at, &kappa, &q);
			if (rc == DDT_ENOMEM)
				goto out;
			if (rc) {
				rc = 0;
				done[a] = 1;
			} else if (q > best_q) {
				best_q = q;
				best_at = at;
				best_kappa = kappa;
				lo = a;
			}
		}
		if (best_q == -INFINITY)
			break;
		double m1, v1, m2, v2;
		cpoint_moments(x, lo, best_at, &m1, &v1);
		cpoint_moments(x, best_at, best_kappa, &m2, &v2);
		if (cpoint_ttest_p(m1, v1, (double)(best_at - lo), m2, v2,
			       (double)(best_kappa - best_at)) > o->split_p)
			done[lo] = 1;
		else
			insert_sorted(c, k, best_at);
	}
out:
	return rc;
}

/* Merge step: removes the weakest change point until all are kept. */
static void merge_weak(const double *x, size_t n, const struct cpoint_opts *o, size_t *c, size_t *k)
{
	while (*k) {
		size_t worst = 0, smallest = 0;
		double worst_p = -1, smallest_rel = INFINITY;
		for (size_t i = 0; i < *k; i++) {
			struct cpoint_change ch = stats_of(x, n, c, *k, i);
			if (ch.p > worst_p) {
				worst_p = ch.p;
				worst = i;
			}
			if (rel_change(&ch) < smallest_rel) {
				smallest_rel = rel_change(&ch);
				smallest = i;
			}
		}
		size_t drop;
		if (worst_p > o->max_p)
			drop = worst;
		else if (smallest_rel < o->min_rel)
			drop = smallest;
		else
			return;
		memmove(&c[drop], &c[drop + 1], (*k - drop - 1) * sizeof *c);
		(*k)--;
	}
}

/* Moves each change point to the least-squares split of its two segments
 * within +-2 points (Q-hat with alpha = 1 finds the region of a mean shift;
 * the two-means fit places it). */
static void refine(const double *x, size_t n, size_t min_seg, size_t *c, size_t k)
{
	for (size_t i = 0; i < k; i++) {
		size_t lo = i ? c[i - 1] : 0, hi = i + 1 < k ? c[i + 1] : n, best = c[i];
		double best_gain = -1;
		for (size_t t = c[i] > lo + 2 ? c[i] - 2 : lo; t <= c[i] + 2 && t < hi; t++) {
			if (t < lo + min_seg || t + min_seg > hi)
				continue;
			double m1, v1, m2, v2, n1 = (double)(t - lo), n2 = (double)(hi - t);
			cpoint_moments(x, lo, t, &m1, &v1);
			cpoint_moments(x, t, hi, &m2, &v2);
			double gain = (m2 - m1) * (m2 - m1) * n1 * n2 / (n1 + n2);
			if (gain > best_gain) {
				best_gain = gain;
				best = t;
			}
		}
		c[i] = best;
	}
}

static int by_p(const void *a, const void *b)
{
	const struct cpoint_change *x = a, *y = b;
	return x->p < y->p ? -1 : x->p > y->p ? 1 : (x->at > y->at) - (x->at < y->at);
}

static int by_at(const void *a, const void *b)
{
	const struct cpoint_change *x = a, *y = b;
	return (x->at > y->at) - (x->at < y->at);
}

/* Run lengths L to 2L - 1 whose sums cpoint_no_change_possible keeps on the
 * stack (min_seg up to this); a longer min_seg divides each run's sum. */
#define CPOINT_RUN_LENGTHS 16

/* The bound (cpoint.h): a segment of m >= L points splits into runs of L
 * to 2L - 1 points, so its mean lies between the smallest and largest mean
 * of such a run; x positive, so no mean is 0. The runs' means are summed in
 * order from their first point, each within 2L roundings of its exact
 * value, as the merge's means are within n of theirs: the bound allows
 * (4n + 16) DBL_EPSILON of slack, and at its edge the full search runs.
 * O(n L) against the search's O(n^2) per split. */
int cpoint_no_change_possible(const double *x, size_t n, const struct cpoint_opts *o)
{
	size_t L = o->min_seg ? o->min_seg : 1;
	double min_rel = o->min_rel;
	double lo = INFINITY, hi = 0;

	if (!(min_rel > 0) || n < 2 * L)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(x[i] > 0 && x[i] < INFINITY))
			return 0;
	if (L <= CPOINT_RUN_LENGTHS) {
		/* the smallest and largest sum of each run length, divided once:
		 * a quotient rounds monotonically, so the same lo and hi */
		double smin[CPOINT_RUN_LENGTHS], smax[CPOINT_RUN_LENGTHS];
		for (size_t l = 0; l < L; l++)
			smin[l] = INFINITY, smax[l] = 0;
		for (size_t i = 0; i + L <= n; i++) {
			double sum = 0;
			for (size_t j = i; j < i + 2 * L - 1 && j < n; j++) {
				sum += x[j];
				size_t l = j + 1 - i - L; /* wraps below L: no run */
				if (l < L) {
					smin[l] = sum < smin[l] ? sum : smin[l];
					smax[l] = sum > smax[l] ? sum : smax[l];
				}
			}
		}
		for (size_t l = 0; l < L && smax[l] > 0; l++) {
			double a = smin[l] / (double)(L + l), b = smax[l] / (double)(L + l);
			lo = a < lo ? a : lo;
			hi = b > hi ? b : hi;
		}
	} else
		for (size_t i = 0; i + L <= n; i++) {
			double sum = 0;
			for (size_t j = i; j < i + 2 * L - 1 && j < n; j++) {
				sum += x[j];
				if (j + 1 - i < L)
					continue;
				double mean = sum / (double)(j + 1 - i);
				lo = mean < lo ? mean : lo;
				hi = mean > hi ? mean : hi;
			}
		}
	double slack = (4 * (double)n + 16) * DBL_EPSILON;
	return hi / lo * (1 + slack) - 1 < min_rel * (1 - slack);
}

/* Room past a window's last point for cpoint_no_split_passes' rows, run
 * in whole vectors of 8 (the lanes past the window count for nothing). */
#define CPOINT_ROW_PAD 8
#define CPOINT_ROW_CAP (CPOINT_STACK_POINTS + CPOINT_ROW_PAD + 1)

/* |t|^2 at which the split step's test gives p = split_p, by degrees of
 * freedom from 1 (past CPOINT_STACK_POINTS: that of CPOINT_STACK_POINTS);
 * per thread, for the last split_p asked (the walk asks one). */
static _Thread_local struct {
	double p;
	double t2[CPOINT_ROW_CAP];
} split_crit = {-1, {0}};

static const double *split_crit2(double split_p)
{
	if (split_crit.p != split_p) {
		for (size_t df = 1; df < CPOINT_ROW_CAP; df++) {
			double f = (double)(df < CPOINT_STACK_POINTS ? df : CPOINT_STACK_POINTS);
			double t = gsl_cdf_tdist_Qinv(split_p / 2, f);
			split_crit.t2[df] = t * t;
		}
		split_crit.p = split_p;
	}
	return split_crit.t2;
}

/* 1 / i and i as doubles, for i < CPOINT_ROW_CAP (inv_n[0] unused). */
static double inv_n[CPOINT_ROW_CAP], num_n[CPOINT_ROW_CAP];
static pthread_once_t num_once = PTHREAD_ONCE_INIT;

static void num_build(void)
{
	for (size_t i = 1; i < CPOINT_ROW_CAP; i++)
		inv_n[i] = 1 / (double)i, num_n[i] = (double)i;
}

/* Whether some end kappa in [from, to) of split tau may pass the test
 * (cpoint_no_split_passes); to - from a multiple of 8, the ends past n
 * (num_n[kappa] > dn) count for nothing. */
CPOINT_VECTORIZE static int split_row_passes(const double *restrict s1,
					     const double *restrict s2,
					     const double *restrict c2, size_t tau, size_t from,
					     size_t to, double dn, double ed, double tol)
{
	double n1 = (double)tau, m1 = s1[tau] * inv_n[tau], ss1 = s2[tau] - s1[tau] * m1;
	int may = 0;
	for (size_t kap = from; kap < to; kap++) {
		double dk = num_n[kap], n2 = dk - n1, sy = s1[kap] - s1[tau];
		double m2 = sy * inv_n[kap - tau], ss2 = (s2[kap] - s2[tau]) - sy * m2;
		double d = fabs(m2 - m1) + ed;
		double lhs = d * d * n1 * n2 * (dk - 2) * (1 + 1.0 / 64);
		may |= (dk <= dn) & !(lhs < c2[kap - 2] * (ss1 + ss2 - tol) * dk);
	}
	return may;
}

/* The bound (cpoint.h), from prefix sums of y = x - mean: each pair's t^2
 * is n1 n2 df d^2 / ((n1 + n2) (ss1 + ss2)); d is taken larger by the
 * error of both its own sums and the split step's means (8 n u of the
 * values), ss smaller by the error of the prefix sums (16 n u), and t^2
 * must stay 1/64 below the critical value: far beyond the roundings and
 * the t distribution's own accuracy. O(n^2) multiplications against the
 * search's O(n^2) with two divisions a pair, every split of which fails
 * then. */
int cpoint_no_split_passes(const double *x, size_t n, const struct cpoint_opts *o)
{
	size_t L = o->min_seg ? o->min_seg : 1;
	double s1[CPOINT_ROW_CAP], s2[CPOINT_ROW_CAP];
	double mean = 0, big = 0, Y = 0;
	if (n > CPOINT_STACK_POINTS || n < 2 * L || !(o->split_p > 0 && o->split_p < 1))
		return 0;
	for (size_t i = 0; i < n; i++) {
		mean += x[i];
		big = fabs(x[i]) > big ? fabs(x[i]) : big;
	}
	if (!(big < 0x1p500))
		return 0; /* a value not finite, or squares near overflow */
	pthread_once(&num_once, num_build);
	mean /= (double)n;
	s1[0] = s2[0] = 0;
	for (size_t i = 0; i < n; i++) {
		double y = x[i] - mean;
		s1[i + 1] = s1[i] + y;
		s2[i + 1] = s2[i] + y * y;
		Y += fabs(y);
	}
	for (size_t i = n + 1; i < n + 1 + CPOINT_ROW_PAD; i++)
		s1[i] = s1[n], s2[i] = s2[n];
	const double *c2 = split_crit2(o->split_p), u = DBL_EPSILON / 2, dn = (double)n;
	double ed = 8 * dn * u * (Y / (double)L + big), tol = 16 * dn * u * (s2[n] + Y * Y / (double)L);
	for (size_t tau = L; tau + L <= n; tau++) {
		size_t from = tau + L > 3 ? tau + L : 3; /* kappa < 3: no degree of freedom, p = 1 */
		size_t to = from + ((n + 1 - from + CPOINT_ROW_PAD - 1) & ~(size_t)(CPOINT_ROW_PAD - 1));
		if (from <= n && split_row_passes(s1, s2, c2, tau, from, to, dn, ed, tol))
			return 0;
	}
	return 1;
}

int cpoint_edivisive(const double *x, size_t n, const struct cpoint_opts *o, struct cpoint_change *out,
		 size_t cap, size_t *nout)
{
	/* a window's scratch on the stack; a longer series's on the heap */
	size_t c_stack[CPOINT_STACK_POINTS], *c = c_stack, k = 0;
	unsigned char done_stack[CPOINT_STACK_POINTS + 1], *done = done_stack;
	struct split_memo memo_stack[CPOINT_STACK_POINTS + 1], *memo = memo_stack;
	struct cpoint_change all_stack[CPOINT_STACK_POINTS], *all = all_stack;
	int rc;

	*nout = 0;
	if (cpoint_no_change_possible(x, n, o) || cpoint_no_split_passes(x, n, o))
		return 0;
	if (n > CPOINT_STACK_POINTS) {
		c = malloc(n * sizeof *c);
		done = malloc(n + 1);
		memo = malloc((n + 1) * sizeof *memo);
		all = malloc(n * sizeof *all);
		if (!c || !done || !memo || !all) {
			rc = err_nomem();
			goto done;
		}
	}
	if ((rc = split_all(x, n, o, done, memo, c, &k)) != 0)
		goto done;
	merge_weak(x, n, o, c, &k);
	refine(x, n, o->min_seg ? o->min_seg : 1, c, k);
	for (size_t i = 0; i < k; i++)
		all[i] = stats_of(x, n, c, k, i);
	if (k > cap) /* keep the strongest */
		qsort(all, k, sizeof *all, by_p);
	*nout = k < cap ? k : cap;
	qsort(all, *nout, sizeof *all, by_at);
	memcpy(out, all, *nout * sizeof *out);
done:
	if (n > CPOINT_STACK_POINTS) {
		free(all);
		free(memo);
		free(done);
		free(c);
	}
	return rc;
}
