/* yget.c - typed getters over a YAML node tree: every problem recorded at its file:line:column. */
#include "ydoc.h"

#include "err.h"

#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *kind_name(enum ydoc_kind k)
{
	return k == YDOC_MAP ? "a mapping" : k == YDOC_SEQ ? "a list" : "a value";
}


int yget_parse_num(const char *s, double *out)
{
	const char *p = s;
	char *end;
	int digits = 0;

	/* optional sign, digits with an optional point, optional exponent */
	if (*p == '+' || *p == '-')
		p++;
	while (isdigit((unsigned char)*p))
		p++, digits++;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			digits++;
	if (!digits)
		return -1;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p)
		return -1;
	errno = 0;
	locale_t loc = ydoc_c_locale(); /* "1.5" is one and a half in every locale */
	double v = loc ? strtod_l(s, &end, loc) : strtod(s, &end);
	if (*end || !isfinite(v) || errno == ERANGE)
		return -1;
	*out = v;
	return 0;
}

int yget_expect(struct yctx *c, struct ydoc_node *node, enum ydoc_kind kind, const char *what)
{
	if (node->kind == kind)
		return 0;
	ydiag_add(c->diag, c->file, node->line, node->col, "%s: expected %s, got %s", what,
		  kind_name(kind), kind_name(node->kind));
	return DDT_EINPUT;
}

int yget_is_null(const struct ydoc_node *n)
{
	return n->kind == YDOC_SCALAR && n->plain &&
	       (!strcmp(n->str, "~") || !strcmp(n->str, "null") || !n->str[0]);
}

int yget_node_num(struct yctx *c, struct ydoc_node *node, const char *what, unsigned flags,
	      double *out)
{
	double v;

	if (node->kind != YDOC_SCALAR) {
		ydiag_add(c->diag, c->file, node->line, node->col, "%s: expected a number, got %s",
			  what, kind_name(node->kind));
		return DDT_EINPUT;
	}
	if ((flags & Y_NULLABLE) && yget_is_null(node)) {
		*out = NAN;
		return 0;
	}
	if (!node->plain || yget_parse_num(node->str, &v) != 0) {
		const char *l = node->str;
		int nonfinite = strcasestr(l, "nan") || strcasestr(l, "inf");
		ydiag_add(c->diag, c->file, node->line, node->col, "%s: %s '%s'", what,
			  nonfinite ? "must be a finite number, got"
				    : node->plain ? "expected a number, got" : "expected a number, got string",
			  l);
		return DDT_EINPUT;
	}
	const char *bad = NULL;
	if ((flags & Y_POSITIVE) && !(v > 0))
		bad = "must be greater than zero";
	else if ((flags & Y_NONNEG) && v < 0)
		bad = "must not be negative";
	else if ((flags & Y_FRACTION) && (v < 0 || v > 1))
		bad = "must be between 0 and 1";
	else if ((flags & Y_INTEGER) && (v != floor(v) || fabs(v) > 2147483647.0))
		bad = "must be a whole number";
	if (bad) {
		ydiag_add(c->diag, c->file, node->line, node->col, "%s %s, got %s", what, bad,
			  node->str);
		return DDT_EINPUT;
	}
	*out = v;
	return 0;
}

int yget_node_long(struct yctx *c, struct ydoc_node *node, const char *what, unsigned flags,
		   long long *out)
{
	double v;
	char *end;
	if (yget_node_num(c, node, what, flags & ~(unsigned)Y_INTEGER, &v))
		return DDT_EINPUT;
	errno = 0;
	long long w = strtoll(node->str, &end, 10);
	if (*end || errno) { /* "1e3", "500.0": whole if the number is */
		if (v != floor(v) || fabs(v) > 9007199254740992.0) {
			ydiag_add(c->diag, c->file, node->line, node->col,
				  "%s must be a whole number, got %s", what, node->str);
			return DDT_EINPUT;
		}
		w = (long long)v;
	}
	*out = w;
	return 0;
}

static int missing(struct yctx *c, struct ydoc_node *map, const char *key)
{
	if (!map) {
		ydiag_add(c->diag, c->file, 0, 0, "missing required key '%s'", key);
		return DDT_EINPUT;
	}
	ydiag_add(c->diag, c->file, map->line, map->col, "missing required key '%s'", key);
	return DDT_EINPUT;
}

int yget_node(struct yctx *c, struct ydoc_node *map, const char *key, enum ydoc_kind kind,
	      unsigned flags, struct ydoc_node **out)
{
	struct ydoc_node *n = ydoc_get(map, key);

	*out = NULL;
	if (!n)
		return (flags & Y_REQUIRED) ? missing(c, map, key) : 0;
	if (yget_expect(c, n, kind, key))
		return DDT_EINPUT;
	*out = n;
	return 0;
}

int yget_num(struct yctx *c, struct ydoc_node *map, const char *key, unsigned flags, double *out)
{
	struct ydoc_node *n = ydoc_get(map, key);
	if (!n)
		return (flags & Y_REQUIRED) ? missing(c, map, key) : 0;
	return yget_node_num(c, n, key, flags, out);
}

int yget_int(struct yctx *c, struct ydoc_node *map, const char *key, unsigned flags, int *out)
{
	double v;
	int rc;
	struct ydoc_node *n = ydoc_get(map, key);

	if (!n)
		return (flags & Y_REQUIRED) ? missing(c, map, key) : 0;
	rc = yget_node_num(c, n, key, flags | Y_INTEGER, &v);
	if (!rc)
		*out = (int)v;
	return rc;
}

int yget_str(struct yctx *c, struct ydoc_node *map, const char *key, unsigned flags,
	     const char **out)
{
	struct ydoc_node *n = ydoc_get(map, key);
	if (!n)
		return (flags & Y_REQUIRED) ? missing(c, map, key) : 0;
	if (yget_expect(c, n, YDOC_SCALAR, key))
		return DDT_EINPUT;
	*out = n->str;
	return 0;
}

int yget_strcpy(struct yctx *c, struct ydoc_node *map, const char *key, unsigned flags,
		char *dst, size_t len)
{
	const char *s = NULL;
	int rc = yget_str(c, map, key, flags, &s);

	if (rc || !s)
		return rc;
	if (strlen(s) >= len) {
		struct ydoc_node *n = ydoc_get(map, key);
		ydiag_add(c->diag, c->file, n->line, n->col, "%s: longer than %zu characters", key,
			  len - 1);
		return DDT_EINPUT;
	}
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

int yget_bool(struct yctx *c, struct ydoc_node *map, const char *key, unsigned flags, int *out)
{
	struct ydoc_node *n = ydoc_get(map, key);
	if (!n)
		return (flags & Y_REQUIRED) ? missing(c, map, key) : 0;
	return yget_node_bool(c, n, key, out);
}

int yget_node_bool(struct yctx *c, struct ydoc_node *node, const char *what, int *out)
{
	if (yget_expect(c, node, YDOC_SCALAR, what))
		return DDT_EINPUT;
	if (node->plain && !strcmp(node->str, "true"))
		*out = 1;
	else if (node->plain && !strcmp(node->str, "false"))
		*out = 0;
	else {
		ydiag_add(c->diag, c->file, node->line, node->col,
			  "%s: expected true or false, got '%s'", what, node->str);
		return DDT_EINPUT;
	}
	return 0;
}

int yget_check_unknown(struct yctx *c, struct ydoc_node *map)
{
	int rc = 0;
	if (!map || map->kind != YDOC_MAP)
		return 0;
	for (size_t i = 0; i < map->n; i++)
		if (!map->used[i]) {
			ydiag_add(c->diag, c->file, map->keys[i]->line, map->keys[i]->col,
				  "unknown key '%s'", map->keys[i]->str);
			rc = DDT_EINPUT;
		}
	return rc;
}
