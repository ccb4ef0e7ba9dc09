/* yschema.c - a YAML mapping read, written and overridden by one table of
 * its keys (yschema.h). */
#include "yschema.h"

#include "err.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AT(obj, f, T) ((T *)((char *)(obj) + (f)->off))
#define AT_C(obj, f, T) ((const T *)((const char *)(obj) + (f)->off))

/* The factor from the struct's number to the file's. */
static double scale_of(const struct yschema_field *f)
{
	return f->scale != 0 ? f->scale : 1;
}

const struct yschema_field *yschema_find(const struct yschema *s, const char *key)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->fields[i].key && !strcmp(s->fields[i].key, key))
			return &s->fields[i];
	return NULL;
}

/* ---------------------------------------------------------------- reader */

static int range_holds(const struct yschema_range *r, double v)
{
	return (r->lo_open ? v > r->lo : v >= r->lo) && (r->hi_open ? v < r->hi : v <= r->hi);
}

/* "a, b or c" of an enum's names into buf. */
static void names_list(const struct yschema_name *nm, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	for (int i = 0; nm[i].name && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					!i ? "" : nm[i + 1].name ? ", " : " or ", nm[i].name);
}

static int read_num(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		    void *obj)
{
	double v = NAN;
	int rc = yget_num(c, map, f->key, f->flags, &v);
	*AT(obj, f, double) = v / scale_of(f);
	if (rc || !f->range || isnan(v) || range_holds(f->range, v))
		return rc;
	struct ydoc_node *n = ydoc_get(map, f->key);
	ydiag_add(c->diag, c->file, n->line, n->col, "%s must be %s, got %s", f->key,
		  f->range->says, n->str);
	return DDT_EINPUT;
}

/* A whole number, in the entry's range too (an absent key keeps the
 * struct's value). */
static int read_int(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		    void *obj)
{
	int rc = yget_int(c, map, f->key, f->flags, AT(obj, f, int));
	struct ydoc_node *n = ydoc_get(map, f->key);
	if (rc || !f->range || !n || range_holds(f->range, *AT(obj, f, int)))
		return rc;
	ydiag_add(c->diag, c->file, n->line, n->col, "%s must be %s, got %s", f->key,
		  f->range->says, n->str);
	return DDT_EINPUT;
}

/* A whole number from 0 to 2^53 (and in the entry's range) into a
 * uint64_t; yget's whole numbers stop at an int's largest. */
static int read_u64(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		    void *obj)
{
	double v = NAN;
	int rc = yget_num(c, map, f->key, (f->flags & ~(unsigned)Y_INTEGER) | Y_NONNEG, &v);
	if (rc || isnan(v))
		return rc;
	struct ydoc_node *n = ydoc_get(map, f->key);
	if (v != floor(v) || v > 9007199254740992.0) {
		ydiag_add(c->diag, c->file, n->line, n->col,
			  "%s must be a whole number from 0 to 2^53, got %s", f->key, n->str);
		return DDT_EINPUT;
	}
	if (f->range && !range_holds(f->range, v)) {
		ydiag_add(c->diag, c->file, n->line, n->col, "%s must be %s, got %s", f->key,
			  f->range->says, n->str);
		return DDT_EINPUT;
	}
	*AT(obj, f, uint64_t) = (uint64_t)v;
	return 0;
}

/* A whole number into a long long, exact past a double's where the text
 * is an integer (an absent key keeps the struct's value). */
static int read_long(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		     void *obj)
{
	struct ydoc_node *n = NULL;
	long long *v = AT(obj, f, long long);
	int rc = yget_node(c, map, f->key, YDOC_SCALAR, f->flags, &n);
	if (rc || !n)
		return rc;
	if (yget_node_long(c, n, f->key, f->flags, v))
		return DDT_EINPUT;
	if (!f->range || range_holds(f->range, (double)*v))
		return 0;
	ydiag_add(c->diag, c->file, n->line, n->col, "%s must be %s, got %s", f->key,
		  f->range->says, n->str);
	return DDT_EINPUT;
}

/* What a null of a Y_NULLABLE enum stands for: the value of its names'
 * end, {NULL, v}. */
static int null_value(const struct yschema_field *f)
{
	int k = 0;
	while (f->names[k].name)
		k++;
	return f->names[k].value;
}

/* An enum's value by its name; a YS_STR with names: one of them, copied. */
static int read_enum(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		     void *obj)
{
	const char *s = NULL;
	int rc = yget_str(c, map, f->key, f->flags, &s);
	char list[256];
	if (rc || !s)
		return rc;
	if (f->type == YS_ENUM && (f->flags & Y_NULLABLE) && yget_is_null(ydoc_get(map, f->key))) {
		*AT(obj, f, int) = null_value(f);
		return 0;
	}
	if (f->type == YS_STR && (strlen(s) >= f->size || (!s[0] && (f->flags & YS_OMIT))))
		return yget_strcpy(c, map, f->key, f->flags, AT(obj, f, char), f->size);
	for (int i = 0; f->names[i].name; i++)
		if (!strcmp(f->names[i].name, s)) {
			if (f->type == YS_STR)
				snprintf(AT(obj, f, char), f->size, "%s", s);
			else
				*AT(obj, f, int) = f->names[i].value;
			return 0;
		}
	struct ydoc_node *n = ydoc_get(map, f->key);
	names_list(f->names, list, sizeof list);
	ydiag_add(c->diag, c->file, n->line, n->col, "%s: expected %s, got '%s'", f->key, list, s);
	return DDT_EINPUT;
}

static int read_map(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		    void *obj)
{
	struct ydoc_node *n = NULL;
	int rc = yget_node(c, map, f->key, YDOC_MAP, f->flags, &n);
	if (rc || !n)
		return rc;
	return yschema_read(c, n, f->sub, AT(obj, f, char));
}

/* The sequence of key (NULL when absent), its number of items checked
 * against f->max. */
static int read_seq(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		    struct ydoc_node **seq)
{
	int rc = yget_node(c, map, f->key, YDOC_SEQ, f->flags, seq);
	if (rc || !*seq || (*seq)->n <= (size_t)f->max)
		return rc;
	struct ydoc_node *n = (*seq)->items[f->max];
	ydiag_add(c->diag, c->file, n->line, n->col, "%s: at most %d items, got %zu", f->key,
		  f->max, (*seq)->n);
	return DDT_EINPUT;
}

int yschema_read_seq(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		     struct ydoc_node **seq)
{
	*seq = NULL;
	return read_seq(c, map, f, seq);
}

/* A list's or dictionary's item before its keys are read: the table's
 * start value, or zero bytes. */
static void item_start(const struct yschema_field *f, char *item)
{
	if (f->sub->init)
		memcpy(item, f->sub->init, f->size);
	else
		memset(item, 0, f->size);
}

/* Whether list item e is a text that fits one of f's items (f->size bytes
 * with its end); the problem recorded at e when not. */
static int text_fits(struct yctx *c, const struct yschema_field *f, struct ydoc_node *e)
{
	if (yget_expect(c, e, YDOC_SCALAR, f->key))
		return 0;
	if (strlen(e->str) < f->size)
		return 1;
	ydiag_add(c->diag, c->file, e->line, e->col, "%s: longer than %zu characters", f->key,
		  f->size - 1);
	return 0;
}

/* seq's items into a (room for them all, f->size bytes each): mappings of
 * f->sub, each starting as its table's start value, or texts when f has
 * no table. 0, or DDT_EINPUT with every bad item's problem recorded. */
static int read_items(struct yctx *c, struct ydoc_node *seq, const struct yschema_field *f,
		      char *a)
{
	int rc = 0;
	for (size_t i = 0; i < seq->n; i++) {
		struct ydoc_node *e = seq->items[i];
		char *item = a + i * f->size;
		if (f->sub) {
			item_start(f, item);
			if (yschema_read_item(c, e, f->sub, item, f->key))
				rc = DDT_EINPUT;
		} else if (text_fits(c, f, e)) {
			memcpy(item, e->str, strlen(e->str) + 1);
		} else {
			rc = DDT_EINPUT;
		}
	}
	return rc;
}

static int read_list(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		     void *obj)
{
	struct ydoc_node *seq = NULL;
	int rc = read_seq(c, map, f, &seq);
	if (rc || !seq)
		return rc;
	rc = read_items(c, seq, f, AT(obj, f, char));
	*(int *)((char *)obj + f->count) = (int)seq->n;
	return rc;
}

/* One number of a YS_NUMS or YS_INTS item, with the entry's checks. */
static int read_item_num(struct yctx *c, const struct yschema_field *f, struct ydoc_node *n,
			 double *v)
{
	unsigned fl = (f->flags & ~(unsigned)(Y_REQUIRED | (f->type == YS_INTS ? Y_NULLABLE : 0))) |
		      (f->type == YS_INTS ? Y_INTEGER : 0);
	int rc = yget_node_num(c, n, f->key, fl, v);
	if (rc || !f->range || isnan(*v) || range_holds(f->range, *v))
		return rc;
	ydiag_add(c->diag, c->file, n->line, n->col, "%s must be %s, got %s", f->key,
		  f->range->says, n->str);
	return DDT_EINPUT;
}

/* A YS_NUMS, YS_INTS or YS_BOOLS list, each item checked at its place. */
static int read_nums(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		     void *obj)
{
	struct ydoc_node *seq = NULL, *one = f->flags & YS_LONE ? ydoc_get(map, f->key) : NULL;
	struct ydoc_node lone = {.kind = YDOC_SEQ, .n = 1, .items = &one};
	int rc = 0;
	if (one && one->kind == YDOC_SCALAR) /* a lone number, a list of one */
		seq = &lone;
	else if ((rc = read_seq(c, map, f, &seq)) != 0 || !seq)
		return rc;
	for (size_t i = 0; i < seq->n; i++) {
		struct ydoc_node *e = seq->items[i];
		double v = NAN;
		if (f->type == YS_BOOLS ? yget_node_bool(c, e, f->key, AT(obj, f, int) + i)
					: read_item_num(c, f, e, &v))
			rc = DDT_EINPUT;
		else if (f->type == YS_INTS)
			AT(obj, f, int)[i] = (int)v;
		else if (f->type == YS_NUMS)
			AT(obj, f, double)[i] = v / scale_of(f);
	}
	*(int *)((char *)obj + f->count) = (int)seq->n;
	return rc;
}

/* The index in f->names of the text item e, or -1 with the problem
 * recorded at e. */
static int name_of(struct yctx *c, const struct yschema_field *f, struct ydoc_node *e)
{
	char list[256];
	int k = 0;
	while (f->names[k].name && strcmp(f->names[k].name, e->str))
		k++;
	if (f->names[k].name)
		return k;
	names_list(f->names, list, sizeof list);
	ydiag_add(c->diag, c->file, e->line, e->col, "%s: expected %s, got '%s'", f->key, list,
		  e->str);
	return -1;
}

/* A list of texts, each no longer than the array's strings (and one of
 * the entry's names when it has them). */
static int read_strs(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		     void *obj)
{
	struct ydoc_node *seq = NULL;
	int rc = read_seq(c, map, f, &seq);
	if (rc || !seq)
		return rc;
	for (size_t i = 0; i < seq->n; i++) {
		struct ydoc_node *e = seq->items[i];
		if (!text_fits(c, f, e) || (f->names && name_of(c, f, e) < 0)) {
			rc = DDT_EINPUT;
			continue;
		}
		memcpy(AT(obj, f, char) + i * f->size, e->str, strlen(e->str) + 1);
	}
	*(int *)((char *)obj + f->count) = (int)seq->n;
	return rc;
}

/* A list of names into a bit set, their values ORed; an empty list says
 * nothing (leave the key out) and is a problem. */
static int read_flags(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		      void *obj)
{
	struct ydoc_node *seq = NULL;
	unsigned set = 0;
	int rc = yget_node(c, map, f->key, YDOC_SEQ, f->flags, &seq), k;
	if (rc || !seq)
		return rc;
	if (!seq->n) {
		ydiag_add(c->diag, c->file, seq->line, seq->col, "%s: empty list", f->key);
		return DDT_EINPUT;
	}
	for (size_t i = 0; i < seq->n; i++) {
		struct ydoc_node *e = seq->items[i];
		if (yget_expect(c, e, YDOC_SCALAR, f->key) || (k = name_of(c, f, e)) < 0)
			rc = DDT_EINPUT;
		else
			set |= (unsigned)f->names[k].value;
	}
	*AT(obj, f, unsigned) = set;
	return rc;
}

static int read_field(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		      void *obj, int given);

/* Whether a dict's values are plain (its sub one entry keyed NULL). */
static int dict_of_values(const struct yschema_field *f)
{
	return f->sub->n == 1 && !f->sub->fields[0].key;
}

/* A plain value NAME: value of the dict d into item: the value entry under
 * the NAME (its checks and messages), then the sub's rule on the item. */
static int read_dict_value(struct yctx *c, struct ydoc_node *d, const struct yschema_field *f,
			   const char *name, char *item)
{
	struct yschema_field vf = f->sub->fields[0];
	vf.key = name;
	if (read_field(c, d, &vf, item, 0))
		return DDT_EINPUT;
	return f->sub->check && f->sub->check(c, d, item) ? DDT_EINPUT : 0;
}

/* A mapping keyed by data: each NAME's mapping (or plain value) into the
 * next item, the NAME in the item, the items read with c->ctx the struct
 * holding them. */
static int read_dict(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		     void *obj)
{
	struct ydoc_node *d = NULL;
	struct yctx ic = {c->file, c->diag, obj};
	int *count = (int *)((char *)obj + f->count), rc;
	if ((rc = yget_node(c, map, f->key, YDOC_MAP, f->flags, &d)) != 0 || !d)
		return rc;
	*count = 0;
	for (size_t i = 0; i < d->n; i++) {
		struct ydoc_node *name = d->keys[i], *val = d->items[i];
		char *item = AT(obj, f, char) + (size_t)*count * f->size;
		d->used[i] = 1;
		if (*count == f->max) {
			ydiag_add(c->diag, c->file, name->line, name->col,
				  "%s: at most %d items, got %zu", f->key, f->max, d->n);
			return DDT_EINPUT;
		}
		if (strlen(name->str) >= f->name_size) {
			ydiag_add(c->diag, c->file, name->line, name->col,
				  "%s: '%s' is longer than %zu characters", f->key, name->str,
				  f->name_size - 1);
			rc = DDT_EINPUT;
			continue;
		}
		if (!dict_of_values(f) && yget_expect(c, val, YDOC_MAP, name->str)) {
			rc = DDT_EINPUT;
			continue;
		}
		item_start(f, item);
		memcpy(item + f->name_off, name->str, strlen(name->str) + 1);
		if (dict_of_values(f) ? read_dict_value(&ic, d, f, name->str, item)
				      : yschema_read(&ic, val, f->sub, item))
			rc = DDT_EINPUT;
		(*count)++;
	}
	return rc;
}

/* A YS_VEC's count, an int or a size_t member. */
static size_t vec_count(const struct yschema_field *f, const void *obj)
{
	const char *at = (const char *)obj + f->count;
	return f->count_size == sizeof(int) ? (size_t)*(const int *)at : *(const size_t *)at;
}

static void vec_set_count(const struct yschema_field *f, void *obj, size_t n)
{
	char *at = (char *)obj + f->count;
	if (f->count_size == sizeof(int))
		*(int *)at = (int)n;
	else
		*(size_t *)at = n;
}

/* A list into an array of its own, allocated here, freed by the caller;
 * a problem at an item still leaves the array (and its number) set. */
static int read_vec(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		    void *obj)
{
	struct ydoc_node *seq = NULL;
	char *a;
	int rc = read_seq(c, map, f, &seq);
	if (rc || !seq)
		return rc;
	if (!(a = calloc(seq->n ? seq->n : 1, f->size))) {
		ydiag_add(c->diag, c->file, seq->line, seq->col, "%s: out of memory", f->key);
		return DDT_EINPUT;
	}
	rc = read_items(c, seq, f, a);
	*(char **)((char *)obj + f->off) = a;
	vec_set_count(f, obj, seq->n);
	return rc;
}

static int read_fields(struct yctx *c, struct ydoc_node *map, const struct yschema *s,
		       void *obj, int given);

/* Entry f of map into obj; given: only when map gives the key, a nested
 * mapping's keys over its struct's (yschema_read_given). */
static int read_field(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		      void *obj, int given)
{
	if (given && !ydoc_get(map, f->key))
		return 0;
	if (given && f->type == YS_MAP) {
		struct ydoc_node *n = NULL;
		int rc = yget_node(c, map, f->key, YDOC_MAP, 0, &n);
		return rc ? rc : yschema_read_given(c, n, f->sub, AT(obj, f, char));
	}
	switch (f->type) {
	case YS_NUM:
		return read_num(c, map, f, obj);
	case YS_INT:
		return read_int(c, map, f, obj);
	case YS_U64:
		return read_u64(c, map, f, obj);
	case YS_STR:
		if (f->names)
			return read_enum(c, map, f, obj);
		return yget_strcpy(c, map, f->key, f->flags, AT(obj, f, char), f->size);
	case YS_ENUM:
		return read_enum(c, map, f, obj);
	case YS_BOOL:
		return yget_bool(c, map, f->key, f->flags, AT(obj, f, int));
	case YS_MAP:
		return read_map(c, map, f, obj);
	case YS_LIST:
		return read_list(c, map, f, obj);
	case YS_NUMS:
	case YS_INTS:
	case YS_BOOLS:
		return read_nums(c, map, f, obj);
	case YS_STRS:
		return read_strs(c, map, f, obj);
	case YS_DICT:
		return read_dict(c, map, f, obj);
	case YS_VEC:
		return read_vec(c, map, f, obj);
	case YS_FLAGS:
		return read_flags(c, map, f, obj);
	case YS_LONG:
		return read_long(c, map, f, obj);
	case YS_CUSTOM: {
		size_t before = c->diag->n;
		if (!f->read) { /* a table only written: said once, at the key if given */
			struct ydoc_node *n = ydoc_get(map, f->key), *at = n ? n : map;
			ydiag_add(c->diag, c->file, at->line, at->col,
				  "%s: internal error: the table has no reader for this key", f->key);
			return DDT_EINPUT;
		}
		f->read(c, map, f, obj);
		return c->diag->n > before ? DDT_EINPUT : 0;
	}
	}
	return 0;
}

static int read_fields(struct yctx *c, struct ydoc_node *map, const struct yschema *s,
		       void *obj, int given)
{
	int rc = 0;
	for (size_t i = 0; i < s->n; i++)
		if (read_field(c, map, &s->fields[i], obj, given))
			rc = DDT_EINPUT;
	return rc;
}

int yschema_read_fields(struct yctx *c, struct ydoc_node *map, const struct yschema *s,
			void *obj)
{
	return read_fields(c, map, s, obj, 0);
}

/* The unknown keys of map, then (nothing wrong so far) s's rule. */
static int read_end(struct yctx *c, struct ydoc_node *map, const struct yschema *s, void *obj,
		    int rc)
{
	if (yget_check_unknown(c, map))
		rc = DDT_EINPUT;
	if (!rc && s->check && s->check(c, map, obj))
		rc = DDT_EINPUT;
	return rc;
}

int yschema_read(struct yctx *c, struct ydoc_node *map, const struct yschema *s, void *obj)
{
	return read_end(c, map, s, obj, read_fields(c, map, s, obj, 0));
}

int yschema_read_given(struct yctx *c, struct ydoc_node *map, const struct yschema *s,
		       void *obj)
{
	return read_end(c, map, s, obj, read_fields(c, map, s, obj, 1));
}

/* ---------------------------------------------------------------- writer */

static const char *enum_name(const struct yschema_field *f, int v)
{
	for (int i = 0; f->names[i].name; i++)
		if (f->names[i].value == v)
			return f->names[i].name;
	return NULL; /* written null: read back, a problem named at its place */
}

static int count_of(const struct yschema_field *f, const void *obj)
{
	return *(const int *)((const char *)obj + f->count);
}

static int write_field(struct yout *y, const struct yschema_field *f, const void *obj);

/* A mapping keyed by data, NAME: {its item's entries} each, or NAME: value
 * (on one line when the values' table says flow). */
static int write_dict(struct yout *y, const struct yschema_field *f, const void *obj)
{
	int n = count_of(f, obj), rc = 0, plain = dict_of_values(f);
	struct yschema_field vf = f->sub->fields[0];
	if (!n && (f->flags & YS_OMIT))
		return 0;
	yout_key(y, f->key);
	if (plain && f->sub->flow)
		yout_map_flow(y);
	else
		yout_map(y);
	for (int i = 0; i < n && i < f->max; i++) {
		const char *item = AT_C(obj, f, char) + (size_t)i * f->size;
		vf.key = item + f->name_off;
		if (plain) {
			rc |= write_field(y, &vf, item);
			continue;
		}
		yout_key(y, item + f->name_off);
		rc |= yschema_write_item(y, f->sub, item);
	}
	yout_end(y);
	return rc ? DDT_EGENERIC : 0;
}

/* A list: mappings (YS_LIST, YS_VEC) and an allocated list's texts one a
 * line, other texts and numbers on one line unless YS_BLOCK; "key: []"
 * when empty unless YS_OMIT; a YS_LONE list of one as its number. */
static int write_list(struct yout *y, const struct yschema_field *f, const void *obj)
{
	int vec = f->type == YS_VEC, rc = 0;
	const char *a = vec ? *(char *const *)((const char *)obj + f->off) : AT_C(obj, f, char);
	int count = vec ? 0 : count_of(f, obj);
	size_t n = vec ? vec_count(f, obj) : (size_t)(count < f->max ? count : f->max);
	if (!n && (f->flags & YS_OMIT))
		return 0;
	yout_key(y, f->key);
	if ((f->flags & YS_LONE) && n == 1 && (f->type == YS_NUMS || f->type == YS_INTS)) {
		if (f->type == YS_INTS)
			yout_int(y, ((const int *)a)[0]);
		else
			yout_num(y, ((const double *)a)[0] * scale_of(f));
		return 0;
	}
	if (f->type == YS_LIST || vec || (f->flags & YS_BLOCK))
		yout_seq(y);
	else
		yout_seq_flow(y);
	for (size_t i = 0; i < n; i++) {
		if (f->sub)
			rc |= yschema_write_item(y, f->sub, a + i * f->size);
		else if (f->type == YS_STRS || vec)
			yout_str(y, a + i * f->size);
		else if (f->type == YS_INTS)
			yout_int(y, ((const int *)a)[i]);
		else if (f->type == YS_BOOLS)
			yout_bool(y, ((const int *)a)[i]);
		else
			yout_num(y, ((const double *)a)[i] * scale_of(f));
	}
	yout_end(y);
	return rc ? DDT_EGENERIC : 0;
}

/* A bit set, its names in names' order. */
static void write_flags(struct yout *y, const struct yschema_field *f, const void *obj)
{
	unsigned set = *AT_C(obj, f, unsigned);
	if (!set && (f->flags & YS_OMIT))
		return;
	yout_key(y, f->key);
	if (f->flags & YS_BLOCK)
		yout_seq(y);
	else
		yout_seq_flow(y);
	for (int k = 0; f->names[k].name; k++)
		if (set & (unsigned)f->names[k].value)
			yout_str(y, f->names[k].name);
	yout_end(y);
}

static int write_field(struct yout *y, const struct yschema_field *f, const void *obj)
{
	switch (f->type) {
	case YS_NUM: {
		double v = *AT_C(obj, f, double) * scale_of(f);
		if (!isnan(v) || ((f->flags & Y_NULLABLE) && !(f->flags & YS_OMIT)))
			yout_kv_num(y, f->key, v);
		return 0;
	}
	case YS_INT:
		yout_kv_int(y, f->key, *AT_C(obj, f, int));
		return 0;
	case YS_U64:
		yout_kv_int(y, f->key, (long long)*AT_C(obj, f, uint64_t));
		return 0;
	case YS_STR:
		if (AT_C(obj, f, char)[0] || !(f->flags & YS_OMIT))
			yout_kv_str(y, f->key, AT_C(obj, f, char));
		return 0;
	case YS_ENUM:
		yout_kv_str(y, f->key, enum_name(f, *AT_C(obj, f, int)));
		return 0;
	case YS_BOOL:
		yout_key(y, f->key);
		yout_bool(y, *AT_C(obj, f, int));
		return 0;
	case YS_MAP:
		yout_key(y, f->key);
		return yschema_write_item(y, f->sub, AT_C(obj, f, char));
	case YS_LIST:
	case YS_NUMS:
	case YS_INTS:
	case YS_BOOLS:
	case YS_STRS:
	case YS_VEC:
		return write_list(y, f, obj);
	case YS_DICT:
		return write_dict(y, f, obj);
	case YS_FLAGS:
		write_flags(y, f, obj);
		return 0;
	case YS_LONG:
		yout_kv_int(y, f->key, *AT_C(obj, f, long long));
		return 0;
	case YS_CUSTOM:
		if (!f->write)
			return err_set(DDT_EGENERIC,
				       "%s: internal error: the table has no writer for this key",
				       f->key);
		f->write(y, f, obj);
		return 0;
	}
	return 0;
}

int yschema_write_fields(struct yout *y, const struct yschema *s, const void *obj)
{
	int rc = 0;
	for (size_t i = 0; i < s->n; i++)
		if (write_field(y, &s->fields[i], obj))
			rc = DDT_EGENERIC;
	return rc;
}

int yschema_write_item(struct yout *y, const struct yschema *s, const void *obj)
{
	if (s->flow)
		yout_map_flow(y);
	else
		yout_map(y);
	int rc = yschema_write_fields(y, s, obj);
	yout_end(y);
	return rc;
}

int yschema_read_item(struct yctx *c, struct ydoc_node *node, const struct yschema *s,
		      void *obj, const char *what)
{
	if (yget_expect(c, node, YDOC_MAP, what))
		return DDT_EINPUT;
	return yschema_read(c, node, s, obj);
}

int yschema_write_doc(FILE *fp, const struct yschema *s, const void *obj)
{
	struct yout y;
	yout_init(&y, fp);
	return yschema_write_item(&y, s, obj);
}

int yschema_read_doc(struct yctx *c, const struct ydoc *doc, const struct yschema *s,
		     void *obj, const char *what)
{
	if (!doc->root) {
		ydiag_add(c->diag, c->file, 0, 0, "empty %s", what);
		return DDT_EINPUT;
	}
	return yschema_read_item(c, doc->root, s, obj, what);
}

/* ---------------------------------------------------------------- overrides */

static int settable(const struct yschema_field *f)
{
	return (f->type == YS_NUM || f->type == YS_INT) && !(f->flags & YS_NOSET);
}

/* The reader's checks of a number (yget_node_num and the range). */
static const char *num_refused(const struct yschema_field *f, double v)
{
	unsigned fl = f->flags | (f->type == YS_INT ? Y_INTEGER : 0);
	if ((fl & Y_POSITIVE) && !(v > 0))
		return "must be greater than zero";
	if ((fl & Y_NONNEG) && v < 0)
		return "must not be negative";
	if ((fl & Y_FRACTION) && (v < 0 || v > 1))
		return "must be between 0 and 1";
	if ((fl & Y_INTEGER) && (v != floor(v) || fabs(v) > 2147483647.0))
		return "must be a whole number";
	return NULL;
}

int yschema_set_num(const struct yschema *s, void *obj, const char *key, double v,
		    const char *label)
{
	const struct yschema_field *f = yschema_find(s, key);
	const char *bad;
	if (!f || !settable(f))
		return YSCHEMA_NOKEY;
	if ((bad = num_refused(f, v)) != NULL)
		return err_set(DDT_EINPUT, "%s: %s", label, bad);
	if (f->range && !range_holds(f->range, v))
		return err_set(DDT_EINPUT, "%s: must be %s", label, f->range->says);
	if (f->type == YS_INT)
		*AT(obj, f, int) = (int)v;
	else
		*AT(obj, f, double) = v / scale_of(f);
	return 0;
}

int yschema_keys(const struct yschema *s, const void *obj, const char *prefix,
		 yschema_key_fn fn, void *ctx)
{
	char key[160], val[40];
	int rc = 0;
	for (size_t i = 0; i < s->n && !rc; i++) {
		const struct yschema_field *f = &s->fields[i];
		if (!settable(f))
			continue;
		double v = f->type == YS_INT ? *AT_C(obj, f, int)
					     : *AT_C(obj, f, double) * scale_of(f);
		snprintf(key, sizeof key, "%s%s%s", prefix, prefix[0] ? "." : "", f->key);
		if (isnan(v))
			val[0] = '\0';
		else
			snprintf(val, sizeof val, "%.9g", v);
		rc = fn(ctx, key, val);
	}
	return rc;
}

/* ---------------------------------------------------------------- help */

static const char *kind_words(const struct yschema_field *f)
{
	int whole = f->type == YS_INT || f->type == YS_INTS || f->type == YS_LONG ||
		    (f->flags & Y_INTEGER);
	if (f->type == YS_U64)
		return "whole number >= 0";
	if (f->type == YS_STR)
		return "text";
	if (f->type == YS_BOOL)
		return "true or false";
	if (f->type == YS_MAP || f->type == YS_CUSTOM)
		return "mapping";
	if (f->type == YS_DICT)
		return "mapping of names";
	if (f->type == YS_VEC)
		return f->sub ? "list of mappings" : "list of texts";
	if (f->type == YS_STRS)
		return "list of texts";
	if (f->type == YS_LIST)
		return "list of mappings";
	if (f->type == YS_BOOLS)
		return "list of true or false";
	if ((f->type == YS_NUMS || f->type == YS_INTS) && (f->flags & YS_LONE))
		return whole ? "whole number or list of them" : "number or list of numbers";
	if (f->type == YS_NUMS || f->type == YS_INTS)
		return whole ? "list of whole numbers" : "list of numbers";
	if (f->flags & Y_POSITIVE)
		return whole ? "whole number > 0" : "number > 0";
	if (f->flags & Y_NONNEG)
		return whole ? "whole number >= 0" : "number >= 0";
	if (f->flags & Y_FRACTION)
		return "number within [0, 1]";
	return whole ? "whole number" : "number";
}

char *yschema_describe(const struct yschema_field *f, char *buf, size_t len)
{
	size_t off;
	if (f->type == YS_DICT && dict_of_values(f)) { /* "mapping of names to number > 0" */
		off = (size_t)snprintf(buf, len, "mapping of names to ");
		if (off < len)
			yschema_describe(&f->sub->fields[0], buf + off, len - off);
		return buf;
	}
	if (f->names) {
		int list = f->type == YS_STRS || f->type == YS_FLAGS;
		off = list ? (size_t)snprintf(buf, len, "list of ") : 0;
		names_list(f->names, buf + off, len - off);
		off += strlen(buf + off);
		if (f->type == YS_ENUM && (f->flags & Y_NULLABLE) && off < len)
			snprintf(buf + off, len - off, ", or null");
		return buf;
	}
	off = (size_t)snprintf(buf, len, "%s", kind_words(f));
	if (f->range && off < len)
		off += (size_t)snprintf(buf + off, len - off, ", %s", f->range->says);
	if ((f->flags & Y_NULLABLE) && off < len)
		off += (size_t)snprintf(buf + off, len - off, " or null");
	if (f->unit && off < len)
		snprintf(buf + off, len - off, ", %s", f->unit);
	return buf;
}
