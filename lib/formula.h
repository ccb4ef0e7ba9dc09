/* formula.h - arithmetic formulas in spreadsheet syntax, evaluated in C: one
 * text a workbook writes as a live formula and a program computes with. */
#ifndef DDT_FORMULA_H
#define DDT_FORMULA_H

#include <stddef.h>

/* The value of a name in a formula: 0 and *out, or -1 when the name is
 * unknown or the element is not there. name is not NUL-terminated: len
 * bytes. i = j = 0: the name's value; i >= 1: an element of the table the
 * name holds (1-based, as INDEX counts): row i, column j when j >= 1, the
 * i-th of a one-row or one-column table when j = 0. */
typedef int (*formula_lookup)(void *ctx, const char *name, size_t len, int i, int j, double *out);

/* Evaluates f: numbers (1000, 1E12, 0.5), names ([A-Za-z_][A-Za-z0-9_]*,
 * resolved by lookup), + - * / with the usual precedence and left to
 * right, unary minus, parentheses, the comparisons = <> < <= > >= (below
 * + and -, worth 1 or 0), and the functions LN(x), EXP(x), MIN(x,...),
 * MAX(x,...), IF(c,a,b) (only the branch taken is evaluated; the other is
 * read for its syntax and names), INDEX(t,i) and INDEX(t,i,j) of a table
 * name, COUNT(t) and COUNTIF(t,"<"&x) (any comparison in the quotes).
 * Spaces are not allowed, as in a cell. Operations run in the order
 * written, so the C value matches the one a spreadsheet computes from the
 * same text. Returns 0 and *out, or DDT_EINPUT (message set: the formula
 * and what is wrong at which offset). */
int formula_eval(const char *f, formula_lookup lookup, void *ctx, double *out);

/* The text a name (len bytes) stands for in a copy of a formula; NULL: the
 * name itself. */
typedef const char *(*formula_rename)(void *ctx, const char *name, size_t len);

/* Copies f into buf (len bytes) with every name that is not a function
 * replaced by what rename gives (strings and numbers copied as they are):
 * a workbook's cell references in place of a model's names. Returns 0, or
 * DDT_EINPUT when the copy does not fit (message set). */
int formula_rewrite(const char *f, formula_rename rename, void *ctx, char *buf, size_t len);

#endif
