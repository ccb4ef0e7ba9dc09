/* pdf.c - the flowing-document writer: two passes (measure, draw) over one
 * render function, cairo's PDF stream with a checked sink, fixed metadata. */
#include "pdf.h"

#include "err.h"
#include "fsx.h"

#include <cairo-pdf.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#define A4_W 595.276
#define A4_H 841.89
#define MARGIN 50.0
#define HEAD_PT 7.0
#define CELL_PT 7.2
#define CELL_PAD 2.6

/* ---------------------------------------------------------------- pages */

static void draw_text(struct pdf_doc *doc, PangoLayout *l, double x, double y)
{
	if (doc->measuring)
		return;
	cairo_move_to(doc->cr, x, y);
	pango_cairo_show_layout(doc->cr, l);
}

/* One line of text at (x, y), aligned on x. */
static void line_at(struct pdf_doc *doc, double x, double y, enum pdf_align al, const char *s,
		    double pt, enum chart_ink ink)
{
	PangoLayout *l = chart_layout(doc->cr, CHART_SANS, pt, 0, s, 0, 0);
	double w;
	chart_layout_size(l, &w, NULL);
	if (!doc->measuring)
		chart_set_ink(doc->cr, ink, 1);
	draw_text(doc, l, al == PDF_RIGHT ? x - w : al == PDF_CENTER ? x - w / 2 : x, y);
	g_object_unref(l);
}

/* Running header (from page 2) and footer of the current page. */
static void page_furniture(struct pdf_doc *doc)
{
	char foot[260];
	if (doc->measuring)
		return;
	if (doc->page > 1) {
		line_at(doc, doc->left, MARGIN - 22, PDF_LEFT, doc->head_left, HEAD_PT, INK_MUTED);
		line_at(doc, doc->right, MARGIN - 22, PDF_RIGHT, doc->head_right, HEAD_PT,
			INK_MUTED);
		chart_set_ink(doc->cr, INK_GRID, 1);
		cairo_set_line_width(doc->cr, 0.6);
		cairo_move_to(doc->cr, doc->left, MARGIN - 10);
		cairo_line_to(doc->cr, doc->right, MARGIN - 10);
		cairo_stroke(doc->cr);
	}
	snprintf(foot, sizeof foot, "%s    page %d of %d", doc->foot, doc->page, doc->npages);
	line_at(doc, (doc->left + doc->right) / 2, doc->h - MARGIN + 18, PDF_CENTER, foot,
		HEAD_PT, INK_MUTED);
}

void pdf_new_page(struct pdf_doc *doc)
{
	if (doc->page > 0 && !doc->measuring)
		cairo_show_page(doc->cr);
	doc->page++;
	doc->y = doc->top;
	page_furniture(doc);
}

double pdf_room(const struct pdf_doc *doc)
{
	return doc->bottom - doc->y;
}

/* Starts a new page unless h points fit below the cursor. */
static void need(struct pdf_doc *doc, double h)
{
	if (doc->y + h > doc->bottom && doc->y > doc->top)
		pdf_new_page(doc);
}

void pdf_keep(struct pdf_doc *doc, double h)
{
	need(doc, h);
}

void pdf_space(struct pdf_doc *doc, double pt)
{
	doc->y += pt;
}

/* ---------------------------------------------------------------- text */

void pdf_outline(struct pdf_doc *doc, const char *text)
{
	char attrs[64];
	if (doc->measuring)
		return;
	snprintf(attrs, sizeof attrs, "page=%d pos=[%.0f %.0f]", doc->page, doc->left, doc->y);
	cairo_pdf_surface_add_outline(doc->surf, CAIRO_PDF_OUTLINE_ROOT, text, attrs, 0);
}

void pdf_heading(struct pdf_doc *doc, int level, const char *text)
{
	static const double size[] = {18, 13, 10.5};
	double pt = size[level < 0 ? 0 : level > 2 ? 2 : level], h;
	PangoLayout *l = chart_layout(doc->cr, CHART_SANS, pt, 1, text, 0, doc->right - doc->left);

	chart_layout_size(l, NULL, &h);
	/* keep a heading with what follows it */
	need(doc, h + (level == 1 ? 110 : 60));
	if (level == 1 && doc->y > doc->top)
		doc->y += 8;
	if (level == 1)
		pdf_outline(doc, text);
	if (!doc->measuring)
		chart_set_ink(doc->cr, INK_TEXT, 1);
	draw_text(doc, l, doc->left, doc->y);
	doc->y += h + (level == 0 ? 6 : 4);
	g_object_unref(l);
}

void pdf_para(struct pdf_doc *doc, const char *text, int markup, double size_pt,
	      enum chart_ink ink)
{
	PangoLayout *l = chart_layout(doc->cr, CHART_SANS, size_pt, 0, text, markup,
				      doc->right - doc->left);
	double h;
	chart_layout_size(l, NULL, &h);
	need(doc, h);
	if (!doc->measuring)
		chart_set_ink(doc->cr, ink, 1);
	draw_text(doc, l, doc->left, doc->y);
	doc->y += h + size_pt * 0.45;
	g_object_unref(l);
}

void pdf_callout(struct pdf_doc *doc, const char *markup, double size_pt)
{
	double pad = 9, width = doc->right - doc->left, h;
	PangoLayout *l = chart_layout(doc->cr, CHART_SANS, size_pt, 0, markup, 1, width - 2 * pad);

	chart_layout_size(l, NULL, &h);
	need(doc, h + 2 * pad);
	if (!doc->measuring) {
		cairo_t *cr = doc->cr;
		cairo_set_source_rgb(cr, 0.955, 0.95, 0.975);
		cairo_rectangle(cr, doc->left, doc->y, width, h + 2 * pad);
		cairo_fill(cr);
		chart_set_ink(cr, INK_PROJECTED, 1);
		cairo_rectangle(cr, doc->left, doc->y, 3, h + 2 * pad);
		cairo_fill(cr);
		chart_set_ink(cr, INK_TEXT, 1);
	}
	draw_text(doc, l, doc->left + pad + 2, doc->y + pad);
	doc->y += h + 2 * pad + 8;
	g_object_unref(l);
}

void pdf_chart(struct pdf_doc *doc, chart_draw_fn draw, const void *arg, double w, double h)
{
	double x = (doc->left + doc->right - w) / 2;
	need(doc, h);
	if (!doc->measuring) {
		cairo_save(doc->cr);
		cairo_translate(doc->cr, x, doc->y);
		cairo_rectangle(doc->cr, 0, 0, w, h);
		cairo_clip(doc->cr);
		draw(doc->cr, w, h, arg);
		cairo_restore(doc->cr);
	}
	doc->y += h + 10;
}

/* ---------------------------------------------------------------- tables */

static double col_x(const struct pdf_doc *doc, int i, double *w)
{
	double x = doc->left, tw = doc->right - doc->left;
	for (int k = 0; k < i; k++)
		x += doc->cols[k].frac * tw;
	*w = doc->cols[i].frac * tw;
	return x;
}

struct row_layout {
	PangoLayout *l[PDF_MAX_COLS];
	const char *text[PDF_MAX_COLS];
	double h;
};

/* The link colour of the spans doc's link function finds in cell text. */
static void link_colour(struct pdf_doc *doc, PangoLayout *l, const char *text)
{
	size_t pos = 0, start, len;
	const char *target;
	int internal;
	PangoAttrList *attrs = pango_attr_list_new();
	while (doc->link_fn(text, &pos, &start, &len, &target, &internal, doc->link_arg)) {
		PangoAttribute *a = pango_attr_foreground_new(0x1f1f, 0x4d4d, 0xa8a8);
		if (!target) {
			pango_attribute_destroy(a);
			continue;
		}
		a->start_index = (guint)start;
		a->end_index = (guint)(start + len);
		pango_attr_list_insert(attrs, a);
	}
	pango_layout_set_attributes(l, attrs);
	pango_attr_list_unref(attrs);
}

/* Appends the rectangles (points, page space) that bytes [a, b) of layout l
 * drawn at (x0, y0) cover, one per line they run over, to buf at *off. */
static void span_rects(PangoLayout *l, double x0, double y0, int a, int b, char *buf,
		       size_t size, size_t *off)
{
	PangoLayoutIter *it = pango_layout_get_iter(l);
	do {
		PangoLayoutLine *line = pango_layout_iter_get_line_readonly(it);
		int la = a > line->start_index ? a : line->start_index;
		int lb = b < line->start_index + line->length ? b : line->start_index + line->length;
		PangoRectangle lr;
		int *ranges = NULL, n = 0;
		if (la >= lb)
			continue;
		pango_layout_iter_get_line_extents(it, NULL, &lr);
		pango_layout_line_get_x_ranges(line, la, lb, &ranges, &n);
		for (int k = 0; k < n && *off < size; k++)
			*off += (size_t)snprintf(buf + *off, size - *off, "%.2f %.2f %.2f %.2f ",
						 x0 + (double)ranges[2 * k] / PANGO_SCALE,
						 y0 + (double)lr.y / PANGO_SCALE,
						 (double)(ranges[2 * k + 1] - ranges[2 * k]) / PANGO_SCALE,
						 (double)lr.height / PANGO_SCALE);
		g_free(ranges);
	} while (pango_layout_iter_next_line(it));
	pango_layout_iter_free(it);
}

/* A cairo string attribute value: ' and \ escaped. */
static void tag_string(char *buf, size_t size, size_t *off, const char *s)
{
	for (; *s && *off + 3 < size; s++) {
		if (*s == '\'' || *s == '\\')
			buf[(*off)++] = '\\';
		buf[(*off)++] = *s;
	}
	buf[*off] = '\0';
}

/* The link annotations of the spans in cell text, laid out as l at (x0, y0). */
static void cell_links(struct pdf_doc *doc, PangoLayout *l, double x0, double y0,
		       const char *text)
{
	size_t pos = 0, start, len;
	const char *target;
	int internal;
	while (doc->link_fn(text, &pos, &start, &len, &target, &internal, doc->link_arg)) {
		char attrs[2048];
		size_t off = 0, mark;
		if (!target || !target[0])
			continue;
		off = (size_t)snprintf(attrs, sizeof attrs, "rect=[");
		mark = off;
		span_rects(l, x0, y0, (int)start, (int)(start + len), attrs, sizeof attrs, &off);
		if (off == mark || off + 16 >= sizeof attrs)
			continue; /* not shown (or too many pieces to name) */
		off += (size_t)snprintf(attrs + off, sizeof attrs - off, "] %s='",
					internal ? "dest" : "uri");
		tag_string(attrs, sizeof attrs - 2, &off, target);
		snprintf(attrs + off, sizeof attrs - off, "'");
		cairo_tag_begin(doc->cr, CAIRO_TAG_LINK, attrs);
		cairo_tag_end(doc->cr, CAIRO_TAG_LINK);
	}
}

/* Lays out one row; the caller draws it (row_draw) and frees it (row_free). */
static void row_layout(struct pdf_doc *doc, const char *const *cells, int bold,
		       struct row_layout *rl)
{
	rl->h = 0;
	for (int i = 0; i < doc->ncols; i++) {
		double w, h;
		col_x(doc, i, &w);
		rl->text[i] = cells[i] ? cells[i] : "";
		rl->l[i] = chart_layout(doc->cr, CHART_SANS, CELL_PT, bold, rl->text[i], 0,
					w - 2 * CELL_PAD);
		if (i == doc->link_col && doc->link_fn)
			link_colour(doc, rl->l[i], rl->text[i]);
		pango_layout_set_alignment(rl->l[i],
					   doc->cols[i].align == PDF_RIGHT    ? PANGO_ALIGN_RIGHT
					   : doc->cols[i].align == PDF_CENTER ? PANGO_ALIGN_CENTER
									      : PANGO_ALIGN_LEFT);
		chart_layout_size(rl->l[i], NULL, &h);
		rl->h = h > rl->h ? h : rl->h;
	}
	rl->h += 2 * CELL_PAD;
}

static void row_free(struct pdf_doc *doc, struct row_layout *rl)
{
	for (int i = 0; i < doc->ncols; i++)
		g_object_unref(rl->l[i]);
}

/* Draws a laid-out row at the cursor; shade 1: zebra, 2: header. */
static void row_draw(struct pdf_doc *doc, const struct row_layout *rl, enum chart_ink ink,
		     int shade)
{
	cairo_t *cr = doc->cr;
	if (doc->measuring)
		return;
	if (shade) {
		if (shade == 2)
			cairo_set_source_rgb(cr, 0.88, 0.88, 0.9);
		else
			cairo_set_source_rgb(cr, 0.965, 0.965, 0.97);
		cairo_rectangle(cr, doc->left, doc->y, doc->right - doc->left, rl->h);
		cairo_fill(cr);
	}
	chart_set_ink(cr, ink, 1);
	for (int i = 0; i < doc->ncols; i++) {
		double w, x = col_x(doc, i, &w);
		cairo_move_to(cr, x + CELL_PAD, doc->y + CELL_PAD);
		pango_cairo_show_layout(cr, rl->l[i]);
		if (i == doc->link_col && doc->link_fn && shade != 2)
			cell_links(doc, rl->l[i], x + CELL_PAD, doc->y + CELL_PAD, rl->text[i]);
	}
}

static void table_header(struct pdf_doc *doc)
{
	const char *titles[PDF_MAX_COLS];
	struct row_layout rl;
	for (int i = 0; i < doc->ncols; i++)
		titles[i] = doc->col_titles[i];
	row_layout(doc, titles, 1, &rl);
	row_draw(doc, &rl, INK_TEXT, 2);
	doc->y += rl.h;
	row_free(doc, &rl);
}

void pdf_table_begin(struct pdf_doc *doc, const struct pdf_col *cols, int n)
{
	const char *titles[PDF_MAX_COLS];
	struct row_layout rl;
	doc->ncols = n < PDF_MAX_COLS ? n : PDF_MAX_COLS;
	doc->zebra = 0;
	for (int i = 0; i < doc->ncols; i++) {
		doc->cols[i] = cols[i];
		snprintf(doc->col_titles[i], sizeof doc->col_titles[i], "%s", cols[i].title);
		titles[i] = doc->col_titles[i];
	}
	/* the header and at least one row together */
	row_layout(doc, titles, 1, &rl);
	need(doc, 2 * rl.h + 4);
	row_free(doc, &rl);
	table_header(doc);
}

/* A row; dest, when not NULL, names it as a destination. */
static void table_row(struct pdf_doc *doc, const char *const *cells, enum chart_ink ink,
		      int bold, const char *dest)
{
	struct row_layout rl;
	row_layout(doc, cells, bold, &rl);
	if (doc->y + rl.h > doc->bottom) {
		pdf_new_page(doc);
		table_header(doc);
	}
	if (dest && !doc->measuring) {
		char attrs[160];
		size_t off = (size_t)snprintf(attrs, sizeof attrs, "name='");
		tag_string(attrs, sizeof attrs - 2, &off, dest);
		snprintf(attrs + off, sizeof attrs - off, "' x=%.1f y=%.1f", doc->left, doc->y);
		cairo_tag_begin(doc->cr, CAIRO_TAG_DEST, attrs);
		cairo_tag_end(doc->cr, CAIRO_TAG_DEST);
	}
	row_draw(doc, &rl, ink, doc->zebra++ % 2);
	doc->y += rl.h;
	row_free(doc, &rl);
}

void pdf_table_row(struct pdf_doc *doc, const char *const *cells, enum chart_ink ink, int bold)
{
	table_row(doc, cells, ink, bold, NULL);
}

void pdf_table_row_dest(struct pdf_doc *doc, const char *const *cells, enum chart_ink ink,
			const char *name)
{
	table_row(doc, cells, ink, 0, name);
}

void pdf_table_links(struct pdf_doc *doc, int col, pdf_link_fn fn, const void *arg)
{
	doc->link_col = col;
	doc->link_fn = fn;
	doc->link_arg = arg;
}

void pdf_table_end(struct pdf_doc *doc)
{
	if (!doc->measuring) {
		chart_set_ink(doc->cr, INK_GRID, 1);
		cairo_set_line_width(doc->cr, 0.6);
		cairo_move_to(doc->cr, doc->left, doc->y);
		cairo_line_to(doc->cr, doc->right, doc->y);
		cairo_stroke(doc->cr);
	}
	doc->ncols = 0;
	doc->link_col = -1;
	doc->link_fn = NULL;
	doc->y += 10;
}

/* ---------------------------------------------------------------- output */

/* After a failed write the rest is dropped, not refused: cairo 1.16 can
 * abort on an assertion when a write error meets it mid-document (seen on a
 * full disk); the error is kept and reported once the surface is done. */
static cairo_status_t sink_write(void *closure, const unsigned char *data, unsigned int len)
{
	struct pdf_doc *doc = closure;
	if (!doc->write_errno && fwrite(data, 1, len, doc->fp) != len)
		doc->write_errno = errno ? errno : EIO;
	return CAIRO_STATUS_SUCCESS;
}

static void doc_init(struct pdf_doc *doc, const struct pdf_meta *meta)
{
	memset(doc, 0, sizeof *doc);
	doc->w = A4_W;
	doc->h = A4_H;
	doc->left = MARGIN;
	doc->right = A4_W - MARGIN;
	doc->top = MARGIN;
	doc->bottom = A4_H - MARGIN;
	doc->link_col = -1;
	doc->meta = *meta;
	snprintf(doc->head_left, sizeof doc->head_left, "%s", meta->head_left ? meta->head_left : "");
	snprintf(doc->head_right, sizeof doc->head_right, "%s",
		 meta->head_right ? meta->head_right : "");
	snprintf(doc->foot, sizeof doc->foot, "%s", meta->foot ? meta->foot : "");
}

/* The first pass: the same layout on a tiny image surface, to count pages. */
static int count_pages(const struct pdf_meta *meta,
		       void (*render)(struct pdf_doc *, const void *), const void *arg)
{
	struct pdf_doc doc;
	doc_init(&doc, meta);
	doc.measuring = 1;
	doc.surf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 8, 8);
	doc.cr = cairo_create(doc.surf);
	pdf_new_page(&doc);
	render(&doc, arg);
	cairo_destroy(doc.cr);
	cairo_surface_destroy(doc.surf);
	return doc.page;
}

/* "2025-12-02T15:42:07Z" -> cairo's date form "2025-12-02T15:42:07Z". */
static void set_metadata(cairo_surface_t *s, const struct pdf_meta *m)
{
	const struct {
		cairo_pdf_metadata_t key;
		const char *val;
	} items[] = {
		{CAIRO_PDF_METADATA_TITLE, m->title},       {CAIRO_PDF_METADATA_AUTHOR, m->author},
		{CAIRO_PDF_METADATA_SUBJECT, m->subject},   {CAIRO_PDF_METADATA_KEYWORDS, m->keywords},
		{CAIRO_PDF_METADATA_CREATOR, m->creator},   {CAIRO_PDF_METADATA_CREATE_DATE, m->created},
		{CAIRO_PDF_METADATA_MOD_DATE, m->created},
	};
	for (size_t i = 0; i < sizeof items / sizeof *items; i++)
		if (items[i].val && items[i].val[0])
			cairo_pdf_surface_set_metadata(s, items[i].key, items[i].val);
}

int pdf_write_fp(FILE *fp, const char *name, const struct pdf_meta *meta,
		 void (*render)(struct pdf_doc *doc, const void *arg), const void *arg)
{
	struct pdf_doc doc;
	cairo_status_t st;
	int npages = count_pages(meta, render, arg);

	doc_init(&doc, meta);
	doc.npages = npages;
	doc.fp = fp;
	doc.surf = cairo_pdf_surface_create_for_stream(sink_write, &doc, doc.w, doc.h);
	cairo_pdf_surface_restrict_to_version(doc.surf, CAIRO_PDF_VERSION_1_5);
	set_metadata(doc.surf, meta);
	doc.cr = cairo_create(doc.surf);
	/* the document as one structure element: cairo 1.16 writes a link's
	 * entry of the structure tree only inside one, and the file's cross
	 * reference table is broken without it */
	cairo_tag_begin(doc.cr, "Document", "");
	pdf_new_page(&doc);
	render(&doc, arg);
	cairo_tag_end(doc.cr, "Document");
	st = cairo_status(doc.cr);
	cairo_destroy(doc.cr);
	cairo_surface_finish(doc.surf);
	if (st == CAIRO_STATUS_SUCCESS)
		st = cairo_surface_status(doc.surf);
	cairo_surface_destroy(doc.surf);
	/* cairo reports a failed write only as a status; the sink kept errno */
	if (!doc.write_errno && fflush(fp) != 0)
		doc.write_errno = errno ? errno : EIO;
	if (doc.write_errno)
		return err_set(DDT_EIO, "%s: write failed: %s", name, strerror(doc.write_errno));
	if (st != CAIRO_STATUS_SUCCESS)
		return err_set(st == CAIRO_STATUS_NO_MEMORY ? DDT_ENOMEM : DDT_EGENERIC,
			       "%s: cairo: %s", name, cairo_status_to_string(st));
	if (doc.page != npages)
		return err_set(DDT_EGENERIC, "%s: layout gave %d pages, then %d", name, npages,
			       doc.page);
	return 0;
}

int pdf_write(const char *path, const struct pdf_meta *meta,
	      void (*render)(struct pdf_doc *doc, const void *arg), const void *arg)
{
	struct fsx_file f;
	int rc;

	if ((rc = fsx_open(&f, path)) != 0)
		return rc;
	if ((rc = pdf_write_fp(f.fp, path, meta, render, arg)) != 0) {
		fsx_abort(&f);
		return rc;
	}
	return fsx_commit(&f);
}
