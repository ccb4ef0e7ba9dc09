/* sort.h - the ascending order of doubles and of sizes, for qsort. */
#ifndef DDT_SORT_H
#define DDT_SORT_H

#include <stddef.h>

/* qsort's comparison of two doubles: -1, 0 or 1 as *a is below, equal to or
 * above *b (a NaN compares equal to everything: sort only numbers). */
static inline int sort_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The same for size_t. */
static inline int sort_cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

#endif
