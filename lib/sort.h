/* sort.h - the ascending order of doubles and of sizes, for qsort. */
#ifndef DDT_SORT_H
#define DDT_SORT_H

#include <stddef.h>
#include <stdlib.h>

/* qsort's comparison of two doubles: -1, 0 or 1 as *a is below, equal to or
 * above *b (a NaN compares equal to everything: sort only numbers). */
static inline int sort_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorts v[0..n) ascending, as qsort with sort_cmp_double would (stable
 * too): a short array (a nightly window) by insertion, with no call per
 * comparison; a long one by qsort. */
static inline void sort_doubles(double *v, size_t n)
{
	if (n > 64) {
		qsort(v, n, sizeof *v, sort_cmp_double);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		double x = v[i];
		size_t j = i;
		for (; j && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* Slides the sorted window v[0..n) by one: when drop, the value out (one
 * v holds) leaves; then in goes after the values equal to it, where the
 * stable sort puts it. Returns the new count. For positive finite values
 * (equal values are then equal bits) v is afterwards exactly sort_doubles
 * of the slid window: the same multiset, sorted. */
static inline size_t sort_slide(double *v, size_t n, int drop, double out, double in)
{
	size_t k = 0;
	if (drop && n) {
		while (k + 1 < n && v[k] != out)
			k++;
		for (n--; k < n; k++)
			v[k] = v[k + 1];
	}
	for (k = n; k && v[k - 1] > in; k--)
		v[k] = v[k - 1];
	v[k] = in;
	return n + 1;
}

/* The same for size_t. */
static inline int sort_cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

#endif
