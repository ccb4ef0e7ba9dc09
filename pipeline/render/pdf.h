/* pdf.h - a small flowing-document writer on cairo's PDF surface: headings with
 * an outline, wrapped paragraphs, tables that break across pages, vector
 * charts, running header and "page N of M" footer, fixed metadata. */
#ifndef DDT_PDF_H
#define DDT_PDF_H

#include <stdio.h>

#include <cairo.h>

#include "chart.h"

#define PDF_MAX_COLS 16

enum pdf_align { PDF_LEFT, PDF_RIGHT, PDF_CENTER };

struct pdf_col {
	const char *title;
	double frac;              /* share of the text width */
	enum pdf_align align;
};

/* Document metadata; every string is copied. created is ISO 8601 UTC
 * ("2025-12-02T15:42:07Z"): creation and modification date both, so the
 * same run renders the same bytes. */
struct pdf_meta {
	const char *title, *author, *subject, *keywords, *creator, *created;
	const char *head_left, *head_right; /* running header of pages 2.. */
	const char *foot;                   /* footer before "page N of M" */
};

/* The next link in a table cell's text at or after byte *pos: sets *start
 * and *len to the span that is clickable, *target to where it leads (a URI,
 * or with *internal set, the name of a destination in this document; NULL:
 * the span is no link), *pos past it, and returns 1; 0 when there is none. */
typedef int (*pdf_link_fn)(const char *text, size_t *pos, size_t *start, size_t *len,
			   const char **target, int *internal, const void *arg);

struct pdf_doc {
	cairo_surface_t *surf;
	cairo_t *cr;
	int measuring;            /* first pass: lay out, draw nothing */
	int page, npages;         /* current page (1-based); total from the first pass */
	double w, h;              /* A4 portrait, points */
	double left, right, top, bottom; /* text area edges */
	double y;                 /* the cursor */
	struct pdf_meta meta;
	char head_left[200], head_right[100], foot[200];
	/* the open table */
	int ncols, zebra;
	struct pdf_col cols[PDF_MAX_COLS];
	char col_titles[PDF_MAX_COLS][48];
	int link_col;             /* the column whose spans link (-1: none) */
	pdf_link_fn link_fn;
	const void *link_arg;
	/* the sink */
	FILE *fp;
	int write_errno;          /* first write error of the stream (0: none) */
};

/* The layout of a document is produced twice by the caller's render function:
 * pdf_write calls render(doc, arg) once measuring (to count pages) and once
 * drawing into a PDF written to path atomically through cairo's stream API,
 * with its own write-error check. Returns 0, or DDT_EIO (the write failed),
 * DDT_EGENERIC (cairo failed; the message says how) or DDT_ENOMEM. */
int pdf_write(const char *path, const struct pdf_meta *meta,
	      void (*render)(struct pdf_doc *doc, const void *arg), const void *arg);

/* The same into an open stream (no atomicity; for tests of the write-error
 * check). Returns 0 or DDT_EIO / DDT_EGENERIC / DDT_ENOMEM. */
int pdf_write_fp(FILE *fp, const char *name, const struct pdf_meta *meta,
		 void (*render)(struct pdf_doc *doc, const void *arg), const void *arg);

/* Flow elements. Each moves the cursor and starts a new page when the
 * element does not fit in what is left of this one. */
void pdf_new_page(struct pdf_doc *doc);
/* level 0: document title (large); 1: section (outline entry); 2: subsection. */
void pdf_heading(struct pdf_doc *doc, int level, const char *text);
/* An outline (bookmark) entry for the current position, without a heading. */
void pdf_outline(struct pdf_doc *doc, const char *text);
/* Wrapped text; markup 1 means pango markup (every data string in it must
 * be escaped with g_markup_escape_text). */
void pdf_para(struct pdf_doc *doc, const char *text, int markup, double size_pt,
	      enum chart_ink ink);
/* A shaded box holding wrapped markup text, for the headline. */
void pdf_callout(struct pdf_doc *doc, const char *markup, double size_pt);
void pdf_space(struct pdf_doc *doc, double pt);
/* A chart drawn as vector graphics, w x h points, centred. */
void pdf_chart(struct pdf_doc *doc, chart_draw_fn draw, const void *arg, double w, double h);

/* Tables: begin with the columns, add rows (n cells each; NULL cells are
 * blank), end. The header row repeats on every page the table spans. */
void pdf_table_begin(struct pdf_doc *doc, const struct pdf_col *cols, int n);
void pdf_table_row(struct pdf_doc *doc, const char *const *cells, enum chart_ink ink, int bold);
void pdf_table_end(struct pdf_doc *doc);
/* Makes the spans fn finds in column col of the open table's rows links, set
 * in the link colour (until pdf_table_end). */
void pdf_table_links(struct pdf_doc *doc, int col, pdf_link_fn fn, const void *arg);
/* A row that is also the destination name ("#name" links lead to it). */
void pdf_table_row_dest(struct pdf_doc *doc, const char *const *cells, enum chart_ink ink,
			const char *name);

/* Starts a new page unless h points fit below the cursor (keeps a heading
 * with the chart after it). */
void pdf_keep(struct pdf_doc *doc, double h);

/* Room left on this page below the cursor, points. */
double pdf_room(const struct pdf_doc *doc);

#endif
