/* yschema_pct.h - a schema entry whose YAML value is a percentage and whose
 * struct field is the fraction (x / 100 read, x * 100 written; NaN both
 * ways, null when written). */
#ifndef DDT_YSCHEMA_PCT_H
#define DDT_YSCHEMA_PCT_H

#include "yschema.h"

#include <math.h>

static inline void yschema_pct_read(struct yctx *c, struct ydoc_node *map,
				    const struct yschema_field *f, void *obj)
{
	double v = NAN;
	yget_num(c, map, f->key, f->flags, &v);
	*(double *)((char *)obj + f->off) = v / 100;
}

static inline void yschema_pct_write(struct yout *y, const struct yschema_field *f,
				     const void *obj)
{
	yout_kv_num(y, f->key, *(const double *)((const char *)obj + f->off) * 100);
}

/* Type T's double member m under key k, a percentage in the file. */
#define YS_PCT(T, k, m, fl, ...)                                                            \
	YS_KEYED(T, k, m, YS_CUSTOM, fl, .read = yschema_pct_read, .write = yschema_pct_write, \
		 .unit = "%", __VA_ARGS__)

#endif
