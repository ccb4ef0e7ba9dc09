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
};

static double fx_fail(struct fx *x, const char *what)
{
	if (!x->rc)
		x->rc = err_set(DDT_EINPUT, "formula '%s': %s at offset %d", x->f, what,
				(int)(x->p - x->f));
	return NAN;
}

static double fx_sum(struct fx *x);

/* A name: a function call LN(...) / EXP(...), else a value by lookup. */
static double fx_name(struct fx *x)
{
	const char *s = x->p;
	double v;
	while (isalnum((unsigned char)*x->p) || *x->p == '_')
		x->p++;
	size_t len = (size_t)(x->p - s);
	if (*x->p == '(' && ((len == 2 && !memcmp(s, "LN", 2)) || (len == 3 && !memcmp(s, "EXP", 3)))) {
		x->p++;
		v = fx_sum(x);
		if (*x->p != ')')
			return fx_fail(x, "')' expected");
		x->p++;
		return len == 2 ? log(v) : exp(v);
	}
	if (x->lookup(x->ctx, s, len, &v) != 0) {
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
		v = fx_sum(x);
		if (*x->p != ')')
			return fx_fail(x, "')' expected");
		x->p++;
		return v;
	}
	if (isalpha((unsigned char)*x->p) || *x->p == '_')
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

int formula_eval(const char *f, formula_lookup lookup, void *ctx, double *out)
{
	struct fx x = {f, f, lookup, ctx, 0};
	double v = fx_sum(&x);
	if (!x.rc && *x.p)
		fx_fail(&x, "operator expected");
	*out = x.rc ? NAN : v;
	return x.rc;
}
