/* formula.c - a recursive-descent evaluator of spreadsheet arithmetic. */
#include "formula.h"

#include "err.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct fx {
	const char *f, *p;
	formula_lookup lookup;
	void *ctx;
	int rc;
	int skip; /* > 0: inside an IF branch not taken: read, not evaluated */
};

static double fx_fail(struct fx *x, const char *what)
{
	if (!x->rc)
		x->rc = err_set(DDT_EINPUT, "formula '%s': %s at offset %d", x->f, what,
				(int)(x->p - x->f));
	return NAN;
}

static double fx_cmp(struct fx *x);

static int fx_is_name_start(char ch)
{
	return isalpha((unsigned char)ch) || ch == '_';
}

/* Skips a name; returns its length. */
static size_t fx_name_len(const char *s)
{
	size_t n = 0;
	while (isalnum((unsigned char)s[n]) || s[n] == '_')
		n++;
	return n;
}

/* Consumes c or fails with what; returns whether it was there. */
static int fx_expect(struct fx *x, char c, const char *what)
{
	if (*x->p != c) {
		fx_fail(x, what);
		return 0;
	}
	x->p++;
	return 1;
}

/* A comparison operator at p: its length (0: none) and code in *op. */
static int fx_cmp_op(const char *p, char *op)
{
	if ((p[0] == '<' || p[0] == '>') && p[1] == '=')
		return *op = p[0] == '<' ? 'l' : 'g', 2;
	if (p[0] == '<' && p[1] == '>')
		return *op = '!', 2;
	if (p[0] == '<' || p[0] == '>' || p[0] == '=')
		return *op = p[0], 1;
	return 0;
}

static double fx_compare(double a, char op, double b)
{
	switch (op) {
	case '<': return a < b;
	case '>': return a > b;
	case 'l': return a <= b;
	case 'g': return a >= b;
	case '=': return a == b;
	default: return a != b;
	}
}

/* A table's element (i, j): 0 while skipping, NaN and an error when absent. */
static double fx_elem(struct fx *x, const char *name, size_t len, int i, int j)
{
	double v;
	if (x->skip)
		return 0;
	if (x->lookup(x->ctx, name, len, i, j, &v) != 0)
		return fx_fail(x, "no such element of the table");
	return v;
}

/* The table name that opens INDEX / COUNT / COUNTIF's arguments: its
 * length (0 and an error when there is none). */
static size_t fx_table(struct fx *x, const char **name)
{
	size_t len = fx_is_name_start(*x->p) ? fx_name_len(x->p) : 0;
	*name = x->p;
	if (!len)
		fx_fail(x, "a table's name expected");
	x->p += len;
	return len;
}

/* How many elements a table holds (one-row or one-column). */
static int fx_count(struct fx *x, const char *name, size_t len)
{
	double v;
	int n = 0;
	while (x->lookup(x->ctx, name, len, n + 1, 0, &v) == 0)
		n++;
	return n;
}

/* COUNTIF(t,"op"&x)'s criterion and count, after the table's name. */
static double fx_countif(struct fx *x, const char *t, size_t tl)
{
	char op = 0;
	double e, ref, n = 0;
	if (!fx_expect(x, ',', "',' expected") || !fx_expect(x, '"', "'\"' expected"))
		return NAN;
	x->p += fx_cmp_op(x->p, &op);
	if (!op)
		return fx_fail(x, "a comparison expected");
	if (!fx_expect(x, '"', "'\"' after the comparison expected") ||
	    !fx_expect(x, '&', "'&' expected"))
		return NAN;
	ref = fx_cmp(x);
	for (int i = 1; !x->skip && x->lookup(x->ctx, t, tl, i, 0, &e) == 0; i++)
		n += fx_compare(e, op, ref);
	return n;
}

/* INDEX(t,i[,j]) | COUNT(t) | COUNTIF(t,"op"&x), after the '('. */
static double fx_table_fn(struct fx *x, const char *fn, size_t fl)
{
	const char *t;
	size_t tl = fx_table(x, &t);
	double v, i, j = 0;
	if (!tl)
		return NAN;
	if (fn[0] == 'C' && fl == 5)
		v = x->skip ? 0 : fx_count(x, t, tl);
	else if (fn[0] == 'C')
		v = fx_countif(x, t, tl);
	else {
		if (!fx_expect(x, ',', "',' expected"))
			return NAN;
		i = fx_cmp(x);
		if (*x->p == ',')
			x->p++, j = fx_cmp(x);
		v = i >= 1 && j >= 0 && i < 1e9 && j < 1e9 ? fx_elem(x, t, tl, (int)i, (int)j)
		    : x->skip				 ? 0
							 : fx_fail(x, "an index out of range");
	}
	return fx_expect(x, ')', "')' expected") ? v : NAN;
}

/* IF(c,a,b), after the '(': only the branch taken is evaluated. */
static double fx_if(struct fx *x)
{
	double c = fx_cmp(x), a, b;
	int take_a = c != 0;
	if (!fx_expect(x, ',', "',' expected"))
		return NAN;
	x->skip += !take_a;
	a = fx_cmp(x);
	x->skip -= !take_a;
	if (!fx_expect(x, ',', "',' expected"))
		return NAN;
	x->skip += take_a;
	b = fx_cmp(x);
	x->skip -= take_a;
	if (!fx_expect(x, ')', "')' expected"))
		return NAN;
	return take_a ? a : b;
}

/* LN EXP MIN MAX, after the '(': one or more arguments. */
static double fx_math(struct fx *x, const char *fn, size_t fl)
{
	double v = fx_cmp(x);
	while (fl == 3 && fn[1] != 'X' && *x->p == ',') { /* MIN / MAX */
		x->p++;
		double r = fx_cmp(x);
		v = fn[1] == 'I' ? (r < v ? r : v) : (r > v ? r : v);
	}
	if (!fx_expect(x, ')', "')' expected"))
		return NAN;
	return fl == 2 ? log(v) : fn[1] == 'X' ? exp(v) : v;
}

static int fx_fn_is(const char *s, size_t len, const char *name)
{
	return strlen(name) == len && !memcmp(s, name, len);
}

/* A name: a function call, else a value by lookup. */
static double fx_name(struct fx *x)
{
	const char *s = x->p;
	size_t len = fx_name_len(s);
	double v;
	x->p += len;
	if (*x->p == '(') {
		x->p++;
		if (fx_fn_is(s, len, "LN") || fx_fn_is(s, len, "EXP") || fx_fn_is(s, len, "MIN") ||
		    fx_fn_is(s, len, "MAX"))
			return fx_math(x, s, len);
		if (fx_fn_is(s, len, "IF"))
			return fx_if(x);
		if (fx_fn_is(s, len, "INDEX") || fx_fn_is(s, len, "COUNT") ||
		    fx_fn_is(s, len, "COUNTIF"))
			return fx_table_fn(x, s, len);
		x->p = s;
		return fx_fail(x, "unknown function");
	}
	if (x->lookup(x->ctx, s, len, 0, 0, &v) != 0) {
		x->p = s;
		return fx_fail(x, "unknown name");
	}
	return v;
}

static double fx_atom(struct fx *x)
{
	double v;
	char *end;
	if (*x->p == '-') {
		x->p++;
		return -fx_atom(x);
	}
	if (*x->p == '(') {
		x->p++;
		v = fx_cmp(x);
		return fx_expect(x, ')', "')' expected") ? v : NAN;
	}
	if (fx_is_name_start(*x->p))
		return fx_name(x);
	if (!isdigit((unsigned char)*x->p) && *x->p != '.')
		return fx_fail(x, "a number, a name or '(' expected");
	v = strtod(x->p, &end);
	x->p = end;
	return v;
}

static double fx_product(struct fx *x)
{
	double v = fx_atom(x);
	while (*x->p == '*' || *x->p == '/') {
		char op = *x->p++;
		double r = fx_atom(x);
		v = op == '*' ? v * r : v / r;
	}
	return v;
}

static double fx_sum(struct fx *x)
{
	double v = fx_product(x);
	while (*x->p == '+' || *x->p == '-') {
		char op = *x->p++;
		double r = fx_product(x);
		v = op == '+' ? v + r : v - r;
	}
	return v;
}

/* Comparisons: the lowest precedence, left to right, 1 or 0. */
static double fx_cmp(struct fx *x)
{
	double v = fx_sum(x);
	char op;
	int n;
	while (!x->rc && (n = fx_cmp_op(x->p, &op)) > 0) {
		x->p += n;
		v = fx_compare(v, op, fx_sum(x));
	}
	return v;
}

int formula_eval(const char *f, formula_lookup lookup, void *ctx, double *out)
{
	struct fx x = {f, f, lookup, ctx, 0, 0};
	double v = fx_cmp(&x);
	if (!x.rc && *x.p)
		fx_fail(&x, "operator expected");
	*out = x.rc ? NAN : v;
	return x.rc;
}

/* ---------------------------------------------------------------- rewrite */

/* The length of the number at s (digits, '.', an exponent). */
static size_t fx_number_len(const char *s)
{
	size_t n = 0;
	while (isdigit((unsigned char)s[n]) || s[n] == '.')
		n++;
	if ((s[n] == 'E' || s[n] == 'e') &&
	    (isdigit((unsigned char)s[n + 1]) ||
	     ((s[n + 1] == '+' || s[n + 1] == '-') && isdigit((unsigned char)s[n + 2]))))
		for (n += 2; isdigit((unsigned char)s[n]);)
			n++;
	return n;
}

int formula_rewrite(const char *f, formula_rename rename, void *ctx, char *buf, size_t len)
{
	size_t o = 0;
	for (const char *p = f; *p;) {
		const char *piece = p, *with;
		size_t n = 1;
		if (*p == '"')
			n = strchr(p + 1, '"') ? (size_t)(strchr(p + 1, '"') - p) + 1 : strlen(p);
		else if (isdigit((unsigned char)*p) || *p == '.')
			n = fx_number_len(p);
		else if (fx_is_name_start(*p)) {
			n = fx_name_len(p);
			if (p[n] != '(' && (with = rename(ctx, p, n)) != NULL)
				piece = with;
		}
		size_t w = piece == p ? n : strlen(piece);
		if (o + w >= len)
			return err_set(DDT_EINPUT, "formula '%.60s': its rewritten text exceeds %zu bytes",
				       f, len);
		memcpy(buf + o, piece, w);
		o += w;
		p += n;
	}
	buf[o] = '\0';
	return 0;
}
