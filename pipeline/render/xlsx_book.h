/* xlsx_book.h - what the sheets of report.xlsx share: the workbook being
 * written, its formats and the cell writers (xlsx.c), and each sheet's
 * writer (xlsx_sheets.c, xlsx_whatif.c). Inside render/ only. */
#ifndef DDT_XLSX_BOOK_H
#define DDT_XLSX_BOOK_H

#include "xlsx.h"

#include <xlsxwriter.h>

/* Formats shared by the sheets. */
struct xfmt {
	lxw_format *title, *note, *head, *text, *wrap, *bold, *bad, *good;
	lxw_format *ms, *tok, *us, *num, *pct, *pct1, *intg, *gbps, *sci;
	lxw_format *in_num, *in_text, *calc, *calc_big, *calc_ms, *calc_tok, *calc_int, *check;
};

struct xw {
	lxw_workbook *wb;
	struct xfmt f;
	const struct report_data *d;
	const struct whatif *wi; /* the What-if sheet's values */
	int cache;          /* write ddt's value as each formula's cached result */
	const struct xlsx_edit *edits; /* inputs written as if typed over (n_edits) */
	size_t n_edits;
	lxw_error err;      /* first libxlsxwriter error */
	int rc;             /* first error of ddt's own (message set) */
};

struct col {
	const char *title;
	double width;
};

/* The value typed over input key (xlsx_write_report_edited), else v. */
double xlsx_edited(const struct xw *x, const char *key, double v);
/* Remembers the first error of a libxlsxwriter call. */
void xlsx_ck(struct xw *x, lxw_error e);
/* A number (NaN: an empty cell), a text, a formula with ddt's value cached
 * (x->cache) at (r, c) in format f (NULL: none). */
void xlsx_put_num(struct xw *x, lxw_worksheet *ws, lxw_row_t r, lxw_col_t c, double v,
		  lxw_format *f);
void xlsx_put_str(struct xw *x, lxw_worksheet *ws, lxw_row_t r, lxw_col_t c, const char *s,
		  lxw_format *f);
void xlsx_put_formula(struct xw *x, lxw_worksheet *ws, lxw_row_t r, lxw_col_t c,
		      const char *formula, lxw_format *f, double cached);
/* A new sheet that prints landscape on A4; one page wide unless wide. */
lxw_worksheet *xlsx_new_sheet(struct xw *x, const char *name, int wide);
/* A header row and the column widths; xlsx_put_header keeps it in view. */
void xlsx_put_header_row(struct xw *x, lxw_worksheet *ws, lxw_row_t r, const struct col *cols,
			 int n);
void xlsx_put_header(struct xw *x, lxw_worksheet *ws, lxw_row_t r, const struct col *cols, int n);

/* The Assumptions sheet's cited sources, which the Sources sheet lists. */
struct asm_sheet {
	struct xw *x;
	lxw_worksheet *ws;
	lxw_row_t r;
	const struct source *cited[128]; /* the Sources sheet's rows, in order */
	size_t ncited;
};

/* The sheets, in the workbook's order (xlsx_sheets.c, xlsx_whatif.c). */
void xlsx_sheet_summary(struct xw *x);
void xlsx_sheet_projections(struct xw *x);
void xlsx_sheet_throughput(struct xw *x);
void xlsx_sheet_breakdown(struct xw *x);
void xlsx_sheet_kernels(struct xw *x);
void xlsx_sheet_history(struct xw *x);
void xlsx_sheet_regressions(struct xw *x);
void xlsx_sheet_assumptions(struct xw *x, struct asm_sheet *a);
void xlsx_sheet_whatif(struct xw *x);
void xlsx_sheet_sources(struct xw *x, const struct asm_sheet *a);

#endif
