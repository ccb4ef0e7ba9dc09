/* xlsx.c - report.xlsx: Summary, Projections, Throughput, Breakdown, Kernels, History,
 * Regressions, Assumptions, What-if (the step model as live formulas), Sources; the
 * workbook, its formats and cell writers here, the sheets in xlsx_sheets.c and
 * xlsx_whatif.c. */
#include "xlsx.h"
#include "xlsx_book.h"

#include "err.h"
#include "fsx.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <xlsxwriter.h>

/* The value typed over input key (xlsx_write_report_edited), else v. */
double xlsx_edited(const struct xw *x, const char *key, double v)
{
	for (size_t i = 0; i < x->n_edits; i++)
		if (!strcmp(x->edits[i].key, key))
			return x->edits[i].value;
	return v;
}

/* Remembers the first error of a libxlsxwriter call. */
void xlsx_ck(struct xw *x, lxw_error e)
{
	if (e != LXW_NO_ERROR && x->err == LXW_NO_ERROR)
		x->err = e;
}

/* A number, or a blank cell when it is not finite (never -NAN). */
void xlsx_put_num(struct xw *x, lxw_worksheet *ws, lxw_row_t r, lxw_col_t c, double v,
		  lxw_format *f)
{
	if (isfinite(v))
		xlsx_ck(x, worksheet_write_number(ws, r, c, v, f));
	else
		xlsx_ck(x, worksheet_write_blank(ws, r, c, f));
}

/* A string, always as a string (a leading '=' stays text). */
void xlsx_put_str(struct xw *x, lxw_worksheet *ws, lxw_row_t r, lxw_col_t c, const char *s,
		  lxw_format *f)
{
	if (s && s[0])
		xlsx_ck(x, worksheet_write_string(ws, r, c, s, f));
	else
		xlsx_ck(x, worksheet_write_blank(ws, r, c, f));
}

/* A formula with its cached result (ddt's own value at the default inputs),
 * or 0 when x->cache is off, so a recalculation is what fills it. */
void xlsx_put_formula(struct xw *x, lxw_worksheet *ws, lxw_row_t r, lxw_col_t c,
		      const char *formula, lxw_format *f, double cached)
{
	double v = x->cache && isfinite(cached) ? cached : 0;
	xlsx_ck(x, worksheet_write_formula_num(ws, r, c, formula, f, v));
}

/* A new sheet that prints landscape on A4; one page wide (its charts whole)
 * unless wide (the What-if's 32 columns would print unreadably small). */
lxw_worksheet *xlsx_new_sheet(struct xw *x, const char *name, int wide)
{
	lxw_worksheet *ws = workbook_add_worksheet(x->wb, name);
	if (ws) {
		worksheet_set_landscape(ws);
		worksheet_set_paper(ws, 9); /* A4 */
		if (!wide)
			worksheet_fit_to_pages(ws, 1, 0);
	}
	return ws;
}

/* A header row, and the column widths. */
void xlsx_put_header_row(struct xw *x, lxw_worksheet *ws, lxw_row_t r, const struct col *cols,
			 int n)
{
	for (int i = 0; i < n; i++) {
		xlsx_put_str(x, ws, r, (lxw_col_t)i, cols[i].title, x->f.head);
		xlsx_ck(x, worksheet_set_column(ws, (lxw_col_t)i, (lxw_col_t)i, cols[i].width, NULL));
	}
	xlsx_ck(x, worksheet_set_row(ws, r, 30, NULL)); /* room for titles that wrap */
}

/* A header row that stays in view with the rows above it. */
void xlsx_put_header(struct xw *x, lxw_worksheet *ws, lxw_row_t r, const struct col *cols,
		     int n)
{
	xlsx_put_header_row(x, ws, r, cols, n);
	worksheet_freeze_panes(ws, r + 1, 0);
}

static void formats(struct xw *x)
{
	lxw_workbook *wb = x->wb;
	struct xfmt *f = &x->f;
#define NEWF(name) (f->name = workbook_add_format(wb))
	NEWF(title);
	format_set_bold(f->title);
	format_set_font_size(f->title, 14);
	NEWF(note);
	format_set_italic(f->note);
	format_set_font_color(f->note, 0x555555);
	NEWF(head);
	format_set_bold(f->head);
	format_set_bg_color(f->head, 0xE0E0E6);
	format_set_bottom(f->head, LXW_BORDER_THIN);
	format_set_text_wrap(f->head);
	format_set_align(f->head, LXW_ALIGN_VERTICAL_TOP);
	NEWF(text);
	NEWF(wrap); /* long text kept in its column */
	format_set_text_wrap(f->wrap);
	format_set_align(f->wrap, LXW_ALIGN_VERTICAL_TOP);
	NEWF(bold);
	format_set_bold(f->bold);
	NEWF(bad);
	format_set_font_color(f->bad, 0xC00000);
	format_set_bold(f->bad);
	NEWF(good);
	format_set_font_color(f->good, 0x999933);
	NEWF(ms);
	format_set_num_format(f->ms, "0.000\" ms\"");
	NEWF(tok);
	format_set_num_format(f->tok, "0.0\" tok/s\"");
	NEWF(us);
	format_set_num_format(f->us, "0.00\" µs\"");
	NEWF(num);
	format_set_num_format(f->num, "General");
	NEWF(pct);
	format_set_num_format(f->pct, "0.0%");
	NEWF(pct1); /* a percentage stored in percent: 12.3 */
	format_set_num_format(f->pct1, "0.0");
	NEWF(intg);
	format_set_num_format(f->intg, "0");
	NEWF(gbps);
	format_set_num_format(f->gbps, "0.0\" GB/s\"");
	NEWF(sci);
	format_set_num_format(f->sci, "0.0E+00");
	NEWF(in_num);
	format_set_font_color(f->in_num, 0x0000C0);
	format_set_bg_color(f->in_num, 0xFFF8DC);
	format_set_num_format(f->in_num, "General");
	NEWF(in_text);
	format_set_font_color(f->in_text, 0x0000C0);
	format_set_bg_color(f->in_text, 0xFFF8DC);
	NEWF(calc);
	format_set_num_format(f->calc, "0.000000");
	NEWF(calc_big);
	format_set_num_format(f->calc_big, "#,##0");
	NEWF(calc_ms);
	format_set_num_format(f->calc_ms, "0.000\" ms\"");
	NEWF(calc_tok);
	format_set_num_format(f->calc_tok, "0.0\" tok/s\"");
	format_set_bold(f->calc_tok);
	NEWF(calc_int);
	format_set_num_format(f->calc_int, "0");
	NEWF(check);
	format_set_num_format(f->check, "0.000000");
	format_set_font_color(f->check, 0x555555);
#undef NEWF
}

/* ---------------------------------------------------------------- workbook */

/* Writes the workbook into the file f holds (path names it in messages). */
static int write_book_into(const struct report_data *d, const struct whatif *wi,
			   struct fsx_file *f, const char *path, int cache,
			   const struct xlsx_edit *edits, size_t n_edits)
{
	lxw_workbook_options opt = {.constant_memory = 0, .tmpdir = NULL, .use_zip64 = 0};
	struct xw x = {0};
	lxw_error e;
	char subject[200], by_fd[64];

	x.d = d;
	x.wi = wi;
	x.cache = cache;
	x.edits = edits;
	x.n_edits = n_edits;
	/* libxlsxwriter opens its output by name: it gets the temporary file
	 * this process just created (O_EXCL, no link followed) through its
	 * descriptor, which no name on disk can send elsewhere */
	snprintf(by_fd, sizeof by_fd, "/proc/self/fd/%d", fileno(f->fp));
	x.wb = workbook_new_opt(by_fd, &opt);
	if (!x.wb)
		return err_set(DDT_EIO, "%s: cannot create the workbook (through %s)", path, by_fd);
	snprintf(subject, sizeof subject, "ddt nightly report of run %s", d->rec.run_id);
	lxw_doc_properties props = {.title = (char *)d->spec.title,
				    .subject = subject,
				    .author = "ddt",
				    .comments = "ddt report: the What-if sheet holds the model as "
						"live formulas",
				    .created = d->created};
	formats(&x);
	xlsx_ck(&x, workbook_set_properties(x.wb, &props));
	xlsx_sheet_summary(&x);
	xlsx_sheet_projections(&x);
	xlsx_sheet_throughput(&x);
	xlsx_sheet_breakdown(&x);
	xlsx_sheet_kernels(&x);
	xlsx_sheet_history(&x);
	xlsx_sheet_regressions(&x);
	struct asm_sheet a = {0};
	a.ncited = report_cited_sources(d, a.cited, sizeof a.cited / sizeof *a.cited);
	xlsx_sheet_assumptions(&x, &a);
	xlsx_sheet_whatif(&x);
	xlsx_sheet_sources(&x, &a);
	errno = 0; /* what the zip writer's failed write leaves says why (disk full) */
	e = workbook_close(x.wb);
	if (x.err != LXW_NO_ERROR)
		return err_set(DDT_EGENERIC, "%s: libxlsxwriter: %s", path, lxw_strerror(x.err));
	if (x.rc)
		return err_wrap(x.rc, "%s: the What-if sheet", path);
	if (e != LXW_NO_ERROR)
		return err_set(DDT_EIO, "%s: libxlsxwriter: %s%s%s", path, lxw_strerror(e),
			       errno ? ": " : "", errno ? strerror(errno) : "");
	return 0;
}

/* The workbook to path, atomically (fsx.h). */
static int write_book(const struct report_data *d, const struct whatif *wi, const char *path,
		      int cache, const struct xlsx_edit *edits, size_t n_edits)
{
	struct fsx_file f;
	int rc = fsx_open(&f, path);
	if (rc)
		return rc;
	if ((rc = write_book_into(d, wi, &f, path, cache, edits, n_edits)) != 0) {
		fsx_abort(&f);
		return rc;
	}
	return fsx_commit(&f);
}

int xlsx_write_report(const struct report_data *d, const struct whatif *wi, const char *path)
{
	return write_book(d, wi, path, 1, NULL, 0);
}

int xlsx_write_report_uncached(const struct report_data *d, const struct whatif *wi,
			       const char *path)
{
	return write_book(d, wi, path, 0, NULL, 0);
}

int xlsx_write_report_edited(const struct report_data *d, const struct whatif *wi,
			     const char *path, const struct xlsx_edit *edits, size_t n)
{
	return write_book(d, wi, path, 0, edits, n);
}
