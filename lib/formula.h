/* formula.h - arithmetic formulas in spreadsheet syntax, evaluated in C: one
 * text a workbook writes as a live formula and a program computes with. */
#ifndef DDT_FORMULA_H
#define DDT_FORMULA_H

#include <stddef.h>

/* The value of a name in a formula: 0 and *out, or -1 when the name is
 * unknown. name is not NUL-terminated: len bytes. */
typedef int (*formula_lookup)(void *ctx, const char *name, size_t len, double *out);

/* Evaluates f: numbers (1000, 1E12, 0.5), names ([A-Za-z_][A-Za-z0-9_]*,
 * resolved by lookup), + - * / with the usual precedence and left to
 * right, unary minus, parentheses, LN(x) and EXP(x); spaces are not
 * allowed, as in a cell. Operations run in the order written, so the C
 * value matches the one a spreadsheet computes from the same text. Returns
 * 0 and *out, or DDT_EINPUT (message set: the formula and what is wrong at
 * which offset). */
int formula_eval(const char *f, formula_lookup lookup, void *ctx, double *out);

#endif
