/* yschema_pct.h - a schema entry whose YAML value is a percentage and whose
 * struct field is the fraction (x / 100 read, x * 100 written; NaN both
 * ways, null when written). The flags and the entry's range apply to the
 * percentage, with the reader's words (yschema.c). */
#ifndef DDT_YSCHEMA_PCT_H
#define DDT_YSCHEMA_PCT_H

#include "yschema.h"

#include <math.h>

static inline void yschema_pct_read(struct yctx *c, struct ydoc_node *map,
				    const struct yschema_field *f, void *obj)
{
	double v = NAN;
	const struct yschema_range *r = f->range;
	if (!yget_num(c, map, f->key, f->flags, &v) && r && !isnan(v) &&
	    !((r->lo_open ? v > r->lo : v >= r->lo) && (r->hi_open ? v < r->hi : v <= r->hi))) {
		struct ydoc_node *n = ydoc_get(map, f->key);
		ydiag_add(c->diag, c->file, n->line, n->col, "%s must be %s, got %s", f->key,
			  r->says, n->str);
	}
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
