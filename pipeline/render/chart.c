/* chart.c - the chart library: pinned fonts, inks, nice axes, primitives (PNG and SVG
 * output: chart_file.c). */
#include "chart.h"

#include "err.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- fonts */

static int fonts_checked;
static const cairo_font_options_t *font_options(void);

/* The family fontconfig actually gives for want ("" when none). */
static void resolved_family(const char *want, char *got, size_t len)
{
	PangoFontMap *fm = pango_cairo_font_map_get_default();
	PangoContext *ctx = pango_font_map_create_context(fm);
	PangoFontDescription *d = pango_font_description_from_string(want);
	PangoFont *f;

	pango_font_description_set_size(d, 10 * PANGO_SCALE);
	f = pango_font_map_load_font(fm, ctx, d);
	got[0] = '\0';
	if (f) {
		PangoFontDescription *fd = pango_font_describe(f);
		const char *fam = pango_font_description_get_family(fd);
		snprintf(got, len, "%s", fam ? fam : "");
		pango_font_description_free(fd);
		g_object_unref(f);
	}
	pango_font_description_free(d);
	g_object_unref(ctx);
}

int chart_fonts_init(const char *fonts_conf)
{
	static const char *const want[] = {CHART_SANS, CHART_MONO};
	char got[128];

	if (fonts_checked)
		return 0;
	/* fontconfig reads FONTCONFIG_FILE once, when pango first asks it for a
	 * font, so this must happen before any layout exists */
	if (fonts_conf) {
		if (access(fonts_conf, R_OK) != 0)
			return err_set(DDT_EINPUT, "%s: cannot read the fontconfig file: %s",
				       fonts_conf, strerror(errno));
		setenv("FONTCONFIG_FILE", fonts_conf, 1);
	}
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		resolved_family(want[i], got, sizeof got);
		if (strcmp(got, want[i]) != 0)
			return err_set(DDT_EINPUT,
				       "font '%s' is not available (fontconfig gives '%s'); install "
				       "fonts-dejavu-core (make deps)",
				       want[i], got);
	}
	font_options(); /* made once here, before any text is laid out */
	fonts_checked = 1;
	return 0;
}

/* Font options shared by every surface: no hinting, so metrics do not depend
 * on the surface and a chart lays out the same in its PNG and on its page. */
static const cairo_font_options_t *font_options(void)
{
	static cairo_font_options_t *o;
	if (!o) {
		o = cairo_font_options_create();
		cairo_font_options_set_hint_style(o, CAIRO_HINT_STYLE_NONE);
		cairo_font_options_set_hint_metrics(o, CAIRO_HINT_METRICS_OFF);
		cairo_font_options_set_antialias(o, CAIRO_ANTIALIAS_GRAY);
	}
	return o;
}

/* No hyphen is ever inserted where a line breaks inside a word: the
 * documents set identifiers (moe_reference.rtx_pro_6000.m9_ms, run ids) that
 * a reader copies, and a hyphen in one makes another key. */
static void layout_no_hyphens(PangoLayout *l)
{
	PangoAttrList *old = pango_layout_get_attributes(l);
	PangoAttrList *a = old ? pango_attr_list_copy(old) : pango_attr_list_new();
	pango_attr_list_insert(a, pango_attr_insert_hyphens_new(FALSE));
	pango_layout_set_attributes(l, a);
	pango_attr_list_unref(a);
}

PangoLayout *chart_layout(cairo_t *cr, const char *family, double size_pt, int bold,
			  const char *text, int markup, double width_pt)
{
	PangoContext *ctx = pango_cairo_create_context(cr);
	PangoLayout *l;
	PangoFontDescription *d = pango_font_description_new();

	pango_cairo_context_set_resolution(ctx, 72); /* sizes in points = user units */
	pango_cairo_context_set_font_options(ctx, font_options());
	l = pango_layout_new(ctx);
	g_object_unref(ctx);
	pango_font_description_set_family(d, family);
	pango_font_description_set_absolute_size(d, size_pt * PANGO_SCALE);
	pango_font_description_set_weight(d, bold ? PANGO_WEIGHT_BOLD : PANGO_WEIGHT_NORMAL);
	pango_layout_set_font_description(l, d);
	pango_font_description_free(d);
	if (width_pt > 0) {
		pango_layout_set_width(l, (int)(width_pt * PANGO_SCALE));
		pango_layout_set_wrap(l, PANGO_WRAP_WORD_CHAR);
	}
	if (markup)
		pango_layout_set_markup(l, text, -1);
	else
		pango_layout_set_text(l, text, -1);
	layout_no_hyphens(l);
	return l;
}

void chart_layout_size(PangoLayout *l, double *w, double *h)
{
	int iw, ih;
	pango_layout_get_size(l, &iw, &ih);
	if (w)
		*w = (double)iw / PANGO_SCALE;
	if (h)
		*h = (double)ih / PANGO_SCALE;
}

/* ---------------------------------------------------------------- inks */

static const char *const ink_hex[INK_COUNT] = {
	[INK_MOE] = "#0072B2",        [INK_ATTN] = "#E69F00",
	[INK_DRAFT] = "#F0E442",      [INK_TREE] = "#CC79A7",
	[INK_OVERHEAD] = "#999999",   [INK_ALLREDUCE] = "#44AA99",
	[INK_SGLANG] = "#D55E00",     [INK_NATIVE] = "#117733",
	[INK_MEASURED] = "#000000",
	[INK_CALIBRATION] = "#8C564B", [INK_FIT] = "#56B4E9",
	[INK_PROJECTED] = "#7B3294",  [INK_BASELINE] = "#9DB9D5",
	[INK_REGRESSION] = "#C00000", [INK_IMPROVEMENT] = "#999933",
	/* targets: Paul Tol's "bright" scheme, told apart in colour-blind vision */
	[INK_TARGET0] = "#4477AA",    [INK_TARGET1] = "#EE6677",
	[INK_TARGET2] = "#228833",    [INK_TARGET3] = "#CCBB44",
	[INK_TARGET4] = "#66CCEE",    [INK_TARGET5] = "#AA3377",
	[INK_TEXT] = "#1A1A1A",       [INK_MUTED] = "#555555",
	[INK_GRID] = "#E3E3E3",       [INK_AXIS] = "#404040",
};

const char *chart_ink_hex(enum chart_ink k)
{
	return ink_hex[k];
}

struct chart_rgb chart_ink_rgb(enum chart_ink k)
{
	unsigned v = (unsigned)strtoul(ink_hex[k] + 1, NULL, 16);
	struct chart_rgb c = {((v >> 16) & 255) / 255.0, ((v >> 8) & 255) / 255.0,
			      (v & 255) / 255.0};
	return c;
}

enum chart_ink chart_target_ink(int k)
{
	return (enum chart_ink)(INK_TARGET0 + (k % CHART_TARGET_INKS + CHART_TARGET_INKS) %
						  CHART_TARGET_INKS);
}

enum chart_ink chart_comp_ink(int comp)
{
	static const enum chart_ink inks[] = {INK_MOE,  INK_ATTN,     INK_DRAFT,
					      INK_TREE, INK_OVERHEAD, INK_ALLREDUCE};
	return comp >= 0 && comp < (int)(sizeof inks / sizeof *inks) ? inks[comp] : INK_MUTED;
}

void chart_set_ink(cairo_t *cr, enum chart_ink k, double alpha)
{
	struct chart_rgb c = chart_ink_rgb(k);
	cairo_set_source_rgba(cr, c.r, c.g, c.b, alpha);
}

/* ---------------------------------------------------------------- axes */

double chart_nice_step(double raw)
{
	if (!(raw > 0) || !isfinite(raw))
		return 1;
	double e = floor(log10(raw)), p = pow(10, e), f = raw / p;
	/* guard against 0.30000000000000004 going to the next step */
	if (f <= 1 + 1e-9)
		return p;
	if (f <= 2 + 1e-9)
		return 2 * p;
	if (f <= 5 + 1e-9)
		return 5 * p;
	return 10 * p;
}

void chart_fmt_num(char *buf, size_t len, double v)
{
	for (int prec = 1; prec <= 6; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		double back = strtod(buf, NULL);
		if (fabs(back - v) <= 1e-3 * fabs(v) || v == 0)
			break;
	}
	if (strchr(buf, 'e')) /* 1e+03 reads badly on an axis */
		snprintf(buf, len, "%.0f", v);
}

void chart_axis_linear(struct chart_axis *a, double dmin, double dmax, int max_ticks,
		       int include_zero, const char *title)
{
	double step;
	int decimals;

	memset(a, 0, sizeof *a);
	snprintf(a->title, sizeof a->title, "%s", title ? title : "");
	if (max_ticks < 2)
		max_ticks = 2;
	if (max_ticks > CHART_MAX_TICKS)
		max_ticks = CHART_MAX_TICKS;
	if (!isfinite(dmin) || !isfinite(dmax) || dmin > dmax)
		dmin = 0, dmax = 1;
	if (include_zero) {
		dmin = dmin > 0 ? 0 : dmin;
		dmax = dmax < 0 ? 0 : dmax;
	}
	if (dmax - dmin < 1e-12 * (fabs(dmax) + 1)) {
		double pad = dmax != 0 ? fabs(dmax) * 0.1 : 1;
		dmin -= dmin == 0 && include_zero ? 0 : pad;
		dmax += pad;
	}
	step = chart_nice_step((dmax - dmin) / (max_ticks - 1));
	for (;;) {
		a->lo = floor(dmin / step + 1e-9) * step;
		a->hi = ceil(dmax / step - 1e-9) * step;
		if ((a->hi - a->lo) / step + 1 <= max_ticks + 1e-9)
			break;
		step = chart_nice_step(step * 1.5);
	}
	decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
	for (double t = a->lo; t <= a->hi + step * 1e-6 && a->nticks < CHART_MAX_TICKS;
	     t += step) {
		double v = fabs(t) < step * 1e-9 ? 0 : t;
		a->ticks[a->nticks] = v;
		snprintf(a->labels[a->nticks], sizeof a->labels[0], "%.*f", decimals, v);
		a->nticks++;
	}
}

/* The 1-2-5 value at or below v (down 1) or at or above it (down 0). */
static double step125(double v, int down)
{
	static const double mult[] = {1, 2, 5, 10};
	double p = pow(10, floor(log10(v) + 1e-12));
	if (down) {
		for (int k = 3; k >= 0; k--)
			if (mult[k] * p <= v * (1 + 1e-9))
				return mult[k] * p;
		return p;
	}
	for (int k = 0; k < 4; k++)
		if (mult[k] * p >= v * (1 - 1e-9))
			return mult[k] * p;
	return 10 * p;
}

void chart_axis_log(struct chart_axis *a, double dmin, double dmax, const char *title)
{
	static const double mult[] = {1, 2, 5};
	double e0, e1;

	memset(a, 0, sizeof *a);
	snprintf(a->title, sizeof a->title, "%s", title ? title : "");
	a->log = 1;
	if (!(dmin > 0) || !isfinite(dmax) || dmax < dmin)
		dmin = 1, dmax = 10;
	/* bounds on the 1-2-5 values around the data, not whole decades */
	a->lo = step125(dmin, 1);
	a->hi = step125(dmax, 0);
	if (a->hi <= a->lo)
		a->hi = step125(a->lo * 1.01, 0);
	e0 = floor(log10(a->lo) + 1e-9);
	e1 = ceil(log10(a->hi) - 1e-9);
	/* with few decades, 1-2-5 within each; else decades only */
	for (double e = e0; e <= e1 && a->nticks < CHART_MAX_TICKS; e++)
		for (int k = 0; k < 3 && a->nticks < CHART_MAX_TICKS; k++) {
			double v = mult[k] * pow(10, e);
			if ((e1 - e0 > 3 && k) || v > a->hi * (1 + 1e-9) || v < a->lo * (1 - 1e-9))
				continue;
			a->ticks[a->nticks] = v;
			chart_fmt_num(a->labels[a->nticks], sizeof a->labels[0], v);
			a->nticks++;
		}
}

void chart_axis_log2(struct chart_axis *a, double dmin, double dmax, const char *title)
{
	int e0, e1, every;

	memset(a, 0, sizeof *a);
	snprintf(a->title, sizeof a->title, "%s", title ? title : "");
	a->log = 1;
	if (!(dmin > 0) || !isfinite(dmax) || dmax < dmin)
		dmin = 1, dmax = 2;
	e0 = (int)floor(log2(dmin) + 1e-9);
	e1 = (int)ceil(log2(dmax) - 1e-9);
	if (e1 <= e0)
		e1 = e0 + 1;
	a->lo = ldexp(1, e0);
	a->hi = ldexp(1, e1);
	every = e1 - e0 > 12 ? 2 : 1;
	for (int e = e0; e <= e1 && a->nticks < CHART_MAX_TICKS; e += every) {
		a->ticks[a->nticks] = ldexp(1, e);
		snprintf(a->labels[a->nticks], sizeof a->labels[0], "%.0f", ldexp(1, e));
		a->nticks++;
	}
}

void chart_axis_category(struct chart_axis *a, int n, const char *title)
{
	memset(a, 0, sizeof *a);
	snprintf(a->title, sizeof a->title, "%s", title ? title : "");
	a->ncat = n > 0 ? n : 1;
	a->lo = 0;
	a->hi = a->ncat;
}

/* ---------------------------------------------------------------- text */

#define TICK_PT 7.5
#define TITLE_PT 10.5
#define NOTE_PT 7.5
#define AXIS_TITLE_PT 8
#define LEGEND_PT 7.5

static void text_size(cairo_t *cr, const char *s, double pt, int bold, double *w, double *h)
{
	PangoLayout *l = chart_layout(cr, CHART_SANS, pt, bold, s, 0, 0);
	chart_layout_size(l, w, h);
	g_object_unref(l);
}

void chart_text(struct chart *c, double x, double y, double ax, double ay, const char *text,
		double size_pt, enum chart_ink ink, int bold)
{
	PangoLayout *l = chart_layout(c->cr, CHART_SANS, size_pt, bold, text, 0, 0);
	double w, h;
	chart_layout_size(l, &w, &h);
	chart_set_ink(c->cr, ink, 1);
	cairo_move_to(c->cr, x - ax * w, y - ay * h);
	pango_cairo_show_layout(c->cr, l);
	g_object_unref(l);
}

void chart_label(struct chart *c, double x, double y, double ax, double ay, const char *text,
		 double size_pt, enum chart_ink ink)
{
	PangoLayout *l = chart_layout(c->cr, CHART_SANS, size_pt, 0, text, 0, 0);
	double w, h, x0, y0;
	chart_layout_size(l, &w, &h);
	x0 = x - ax * w, y0 = y - ay * h;
	cairo_set_source_rgba(c->cr, 1, 1, 1, 0.85);
	cairo_rectangle(c->cr, x0 - 1, y0, w + 2, h);
	cairo_fill(c->cr);
	chart_set_ink(c->cr, ink, 1);
	cairo_move_to(c->cr, x0, y0);
	pango_cairo_show_layout(c->cr, l);
	g_object_unref(l);
}

/* Text rotated a quarter turn counter-clockwise, centred at (x, y). */
static void text_vertical(struct chart *c, double x, double y, const char *text, double pt)
{
	cairo_t *cr = c->cr;
	double w, h;
	cairo_save(cr);
	cairo_translate(cr, x, y);
	cairo_rotate(cr, -M_PI / 2);
	PangoLayout *l = chart_layout(cr, CHART_SANS, pt, 0, text, 0, 0);
	chart_layout_size(l, &w, &h);
	chart_set_ink(cr, INK_MUTED, 1);
	cairo_move_to(cr, -w / 2, -h / 2);
	pango_cairo_show_layout(cr, l);
	g_object_unref(l);
	cairo_restore(cr);
}

/* ---------------------------------------------------------------- frame */

static void mark_at(cairo_t *cr, double cx, double cy, enum chart_mark m, enum chart_ink ink,
		    double size);

void chart_begin(struct chart *c, cairo_t *cr, double w, double h, const char *title)
{
	memset(c, 0, sizeof *c);
	c->cr = cr;
	c->w = w;
	c->h = h;
	snprintf(c->title, sizeof c->title, "%s", title ? title : "");
	c->pad_right = 14;
	chart_axis_linear(&c->x, 0, 1, 5, 0, "");
	chart_axis_linear(&c->y, 0, 1, 5, 0, "");
}

void chart_legend_add(struct chart *c, enum chart_ink ink, enum chart_swatch sw,
		      enum chart_mark mark, const char *label)
{
	if (c->nlegend == CHART_MAX_LEGEND)
		return;
	struct chart_legend_item *it = &c->legend[c->nlegend++];
	it->ink = ink;
	it->swatch = sw;
	it->mark = mark;
	snprintf(it->label, sizeof it->label, "%s", label);
}

#define SWATCH_W 16.0
#define LEGEND_GAP 12.0

/* Places legend entries in rows across width starting at (x0, y0); returns
 * the height they take. */
static double legend_place(struct chart *c, double x0, double y0, double width)
{
	double x = x0, y = y0, rowh = 0;
	for (int i = 0; i < c->nlegend; i++) {
		double tw, th;
		text_size(c->cr, c->legend[i].label, LEGEND_PT, 0, &tw, &th);
		double iw = SWATCH_W + 4 + tw;
		if (x > x0 && x + iw > x0 + width) {
			x = x0;
			y += rowh + 3;
		}
		c->legend_xy[i][0] = x;
		c->legend_xy[i][1] = y;
		rowh = th > rowh ? th : rowh;
		x += iw + LEGEND_GAP;
	}
	return c->nlegend ? y - y0 + rowh : 0;
}

static double max_label_w(struct chart *c, const struct chart_axis *a, int cat)
{
	double m = 0, w;
	int n = cat ? a->ncat : a->nticks;
	for (int i = 0; i < n && i < 32; i++) {
		text_size(c->cr, cat ? c->cat_labels[i] : a->labels[i], TICK_PT, 0, &w, NULL);
		m = w > m ? w : m;
	}
	return m;
}

void chart_layout_frame(struct chart *c)
{
	cairo_t *cr = c->cr;
	double th = 0, nh = 0, tickh, axth, lw, legh, top, bottom, left, right;

	text_size(cr, "0", TICK_PT, 0, NULL, &tickh);
	text_size(cr, "Ag", AXIS_TITLE_PT, 0, NULL, &axth);
	if (c->title[0])
		text_size(cr, c->title, TITLE_PT, 1, NULL, &th);
	if (c->note[0]) {
		PangoLayout *l = chart_layout(cr, CHART_SANS, NOTE_PT, 0, c->note, 0, c->w - 8);
		chart_layout_size(l, NULL, &nh);
		g_object_unref(l);
	}
	top = 4 + th + (nh > 0 ? nh + 2 : 0) + 8;
	lw = max_label_w(c, &c->y, c->y.ncat > 0);
	if (lw > c->w * 0.38)
		lw = c->w * 0.38;
	left = 4 + (c->y.title[0] ? axth + 4 : 0) + lw + 6;
	right = c->pad_right;
	legh = legend_place(c, left, 0, c->w - left - right);
	bottom = tickh + 6 + (c->x.title[0] ? axth + 4 : 0) + (legh > 0 ? legh + 8 : 0) + 4;
	c->px = left;
	c->py = top;
	c->pw = c->w - left - right;
	c->ph = c->h - top - bottom;
	if (c->pw < 20)
		c->pw = 20;
	if (c->ph < 20)
		c->ph = 20;
	for (int i = 0; i < c->nlegend; i++)
		c->legend_xy[i][1] += c->h - 4 - legh;

	/* title and note */
	if (c->title[0])
		chart_text(c, 4, 4, 0, 0, c->title, TITLE_PT, INK_TEXT, 1);
	if (c->note[0]) {
		PangoLayout *l = chart_layout(cr, CHART_SANS, NOTE_PT, 0, c->note, 0, c->w - 8);
		chart_set_ink(cr, INK_MUTED, 1);
		cairo_move_to(cr, 4, 4 + th + 2);
		pango_cairo_show_layout(cr, l);
		g_object_unref(l);
	}

	/* grid and tick labels */
	cairo_save(cr);
	cairo_set_line_width(cr, 0.5);
	for (int i = 0; i < c->x.nticks && !c->x.ncat; i++) {
		double x = chart_px(c, c->x.ticks[i]);
		chart_set_ink(cr, INK_GRID, 1);
		cairo_move_to(cr, x, c->py);
		cairo_line_to(cr, x, c->py + c->ph);
		cairo_stroke(cr);
		chart_text(c, x, c->py + c->ph + 3, 0.5, 0, c->x.labels[i], TICK_PT, INK_TEXT, 0);
	}
	for (int i = 0; i < c->y.nticks && !c->y.ncat; i++) {
		double y = chart_py(c, c->y.ticks[i]);
		chart_set_ink(cr, INK_GRID, 1);
		cairo_move_to(cr, c->px, y);
		cairo_line_to(cr, c->px + c->pw, y);
		cairo_stroke(cr);
		chart_text(c, c->px - 4, y, 1, 0.5, c->y.labels[i], TICK_PT, INK_TEXT, 0);
	}
	for (int i = 0; i < c->y.ncat && i < 32; i++) {
		PangoLayout *l = chart_layout(cr, CHART_SANS, TICK_PT, 0, c->cat_labels[i], 0, 0);
		double w, h;
		pango_layout_set_width(l, (int)(lw * PANGO_SCALE));
		pango_layout_set_ellipsize(l, PANGO_ELLIPSIZE_MIDDLE);
		PangoRectangle ink, logical;
		chart_layout_size(l, NULL, &h);
		pango_layout_get_extents(l, &ink, &logical); /* ellipsized width */
		w = (double)logical.width / PANGO_SCALE;
		chart_set_ink(cr, INK_TEXT, 1);
		cairo_move_to(cr, c->px - 5 - w, chart_cat_y(c, i) - h / 2);
		pango_cairo_show_layout(cr, l);
		g_object_unref(l);
	}
	/* axes: left and bottom lines */
	chart_set_ink(cr, INK_AXIS, 1);
	cairo_set_line_width(cr, 0.8);
	cairo_move_to(cr, c->px, c->py);
	cairo_line_to(cr, c->px, c->py + c->ph);
	cairo_line_to(cr, c->px + c->pw, c->py + c->ph);
	cairo_stroke(cr);
	cairo_restore(cr);

	if (c->x.title[0])
		chart_text(c, c->px + c->pw / 2, c->py + c->ph + tickh + 6, 0.5, 0, c->x.title,
			   AXIS_TITLE_PT, INK_MUTED, 0);
	if (c->y.title[0])
		text_vertical(c, 4 + axth / 2, c->py + c->ph / 2, c->y.title, AXIS_TITLE_PT);
}

static void swatch(struct chart *c, const struct chart_legend_item *it, double x, double y,
		   double h)
{
	cairo_t *cr = c->cr;
	double cy = y + h / 2;
	cairo_save(cr);
	switch (it->swatch) {
	case SWATCH_BOX:
		chart_set_ink(cr, it->ink, 1);
		cairo_rectangle(cr, x + 2, cy - 4, SWATCH_W - 4, 8);
		cairo_fill(cr);
		break;
	case SWATCH_BAND:
		chart_set_ink(cr, it->ink, 0.25);
		cairo_rectangle(cr, x, cy - 4.5, SWATCH_W, 9);
		cairo_fill(cr);
		break;
	case SWATCH_LINE:
	case SWATCH_DASH:
		chart_set_ink(cr, it->ink, 1);
		cairo_set_line_width(cr, 1.6);
		if (it->swatch == SWATCH_DASH) {
			static const double d[] = {3.5, 2.5};
			cairo_set_dash(cr, d, 2, 0);
		}
		cairo_move_to(cr, x, cy);
		cairo_line_to(cr, x + SWATCH_W, cy);
		cairo_stroke(cr);
		break;
	case SWATCH_MARK:
		break;
	}
	cairo_restore(cr);
	if (it->mark != MARK_NONE)
		mark_at(c->cr, x + SWATCH_W / 2, cy, it->mark, it->ink, 5);
}

void chart_finish(struct chart *c)
{
	for (int i = 0; i < c->nlegend; i++) {
		double tw, th;
		text_size(c->cr, c->legend[i].label, LEGEND_PT, 0, &tw, &th);
		swatch(c, &c->legend[i], c->legend_xy[i][0], c->legend_xy[i][1], th);
		chart_text(c, c->legend_xy[i][0] + SWATCH_W + 4, c->legend_xy[i][1], 0, 0,
			   c->legend[i].label, LEGEND_PT, INK_TEXT, 0);
	}
}

/* ---------------------------------------------------------------- mapping */

static double axis_frac(const struct chart_axis *a, double v)
{
	if (a->log) {
		if (!(v > 0))
			return NAN;
		return (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
	}
	return (v - a->lo) / (a->hi - a->lo);
}

double chart_px(const struct chart *c, double x)
{
	return c->px + axis_frac(&c->x, x) * c->pw;
}

double chart_py(const struct chart *c, double y)
{
	return c->py + c->ph - axis_frac(&c->y, y) * c->ph;
}

double chart_cat_h(const struct chart *c)
{
	return c->ph / (c->y.ncat > 0 ? c->y.ncat : 1);
}

double chart_cat_y(const struct chart *c, int i)
{
	return c->py + (i + 0.5) * chart_cat_h(c);
}

/* ---------------------------------------------------------------- primitives */

static void clip_on(struct chart *c)
{
	cairo_save(c->cr);
	cairo_rectangle(c->cr, c->px - 0.5, c->py - 0.5, c->pw + 1, c->ph + 1);
	cairo_clip(c->cr);
}

void chart_line(struct chart *c, const double *xs, const double *ys, size_t n,
		enum chart_ink ink, double width, int dashed)
{
	cairo_t *cr = c->cr;
	int pen = 0;
	clip_on(c);
	chart_set_ink(cr, ink, 1);
	cairo_set_line_width(cr, width);
	cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
	if (dashed) {
		static const double d[] = {4, 3};
		cairo_set_dash(cr, d, 2, 0);
	}
	for (size_t i = 0; i < n; i++) {
		double x = chart_px(c, xs[i]), y = chart_py(c, ys[i]);
		if (!isfinite(x) || !isfinite(y)) {
			pen = 0;
			continue;
		}
		if (pen)
			cairo_line_to(cr, x, y);
		else
			cairo_move_to(cr, x, y);
		pen = 1;
	}
	cairo_stroke(cr);
	cairo_restore(cr);
}

void chart_band(struct chart *c, const double *xs, const double *lo, const double *hi,
		size_t n, enum chart_ink ink, double alpha)
{
	cairo_t *cr = c->cr;
	size_t i = 0;
	clip_on(c);
	chart_set_ink(cr, ink, alpha);
	while (i < n) {
		size_t j = i;
		/* one polygon per run of finite points */
		while (j < n && isfinite(chart_px(c, xs[j])) && isfinite(chart_py(c, lo[j])) &&
		       isfinite(chart_py(c, hi[j])))
			j++;
		if (j - i >= 2) {
			for (size_t k = i; k < j; k++)
				cairo_line_to(cr, chart_px(c, xs[k]), chart_py(c, hi[k]));
			for (size_t k = j; k-- > i;)
				cairo_line_to(cr, chart_px(c, xs[k]), chart_py(c, lo[k]));
			cairo_close_path(cr);
			cairo_fill(cr);
		}
		cairo_new_path(cr);
		i = j + 1;
	}
	cairo_restore(cr);
}

void chart_polygon(struct chart *c, const double *xs, const double *ys, size_t n,
		   enum chart_ink ink, double alpha)
{
	cairo_t *cr = c->cr;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(chart_px(c, xs[i])) || !isfinite(chart_py(c, ys[i])))
			return;
	if (n < 3)
		return;
	clip_on(c);
	chart_set_ink(cr, ink, alpha);
	for (size_t i = 0; i < n; i++)
		cairo_line_to(cr, chart_px(c, xs[i]), chart_py(c, ys[i]));
	cairo_close_path(cr);
	cairo_fill(cr);
	cairo_restore(cr);
}

/* A marker centred at chart coordinates (cx, cy). */
static void mark_at(cairo_t *cr, double cx, double cy, enum chart_mark m, enum chart_ink ink,
		    double size)
{
	double r = size / 2;
	if (!isfinite(cx) || !isfinite(cy) || m == MARK_NONE)
		return;
	cairo_save(cr);
	chart_set_ink(cr, ink, 1);
	cairo_set_line_width(cr, 1.1);
	cairo_new_path(cr);
	switch (m) {
	case MARK_CIRCLE:
		cairo_arc(cr, cx, cy, r, 0, 2 * M_PI);
		cairo_fill(cr);
		break;
	case MARK_RING:
		cairo_arc(cr, cx, cy, r, 0, 2 * M_PI);
		cairo_stroke(cr);
		break;
	case MARK_SQUARE:
		cairo_rectangle(cr, cx - r * 0.9, cy - r * 0.9, 1.8 * r, 1.8 * r);
		cairo_fill(cr);
		break;
	case MARK_DIAMOND:
		cairo_move_to(cr, cx, cy - r * 1.3);
		cairo_line_to(cr, cx + r * 1.1, cy);
		cairo_line_to(cr, cx, cy + r * 1.3);
		cairo_line_to(cr, cx - r * 1.1, cy);
		cairo_close_path(cr);
		cairo_fill(cr);
		break;
	case MARK_TRIANGLE:
		cairo_move_to(cr, cx, cy - r * 1.2);
		cairo_line_to(cr, cx + r * 1.1, cy + r * 0.8);
		cairo_line_to(cr, cx - r * 1.1, cy + r * 0.8);
		cairo_close_path(cr);
		cairo_fill(cr);
		break;
	case MARK_CROSS:
		cairo_set_line_width(cr, 1.4);
		cairo_move_to(cr, cx - r, cy - r);
		cairo_line_to(cr, cx + r, cy + r);
		cairo_move_to(cr, cx - r, cy + r);
		cairo_line_to(cr, cx + r, cy - r);
		cairo_stroke(cr);
		break;
	case MARK_STAR:
		for (int k = 0; k < 10; k++) {
			double a = -M_PI / 2 + k * M_PI / 5, rr = k % 2 ? r * 0.75 : r * 1.7;
			cairo_line_to(cr, cx + rr * cos(a), cy + rr * sin(a));
		}
		cairo_close_path(cr);
		cairo_fill(cr);
		break;
	case MARK_NONE:
		break;
	}
	cairo_restore(cr);
}

void chart_mark(struct chart *c, double x, double y, enum chart_mark m, enum chart_ink ink,
		double size)
{
	mark_at(c->cr, chart_px(c, x), chart_py(c, y), m, ink, size);
}

void chart_hbar(struct chart *c, int i, double x0, double x1, double frac, enum chart_ink ink,
		double alpha)
{
	cairo_t *cr = c->cr;
	double h = chart_cat_h(c) * frac, y = chart_cat_y(c, i) - h / 2;
	double a = chart_px(c, x0), b = chart_px(c, x1);
	if (!isfinite(a) || !isfinite(b))
		return;
	clip_on(c);
	chart_set_ink(cr, ink, alpha);
	cairo_rectangle(cr, a < b ? a : b, y, fabs(b - a), h);
	cairo_fill_preserve(cr);
	cairo_set_source_rgb(cr, 1, 1, 1); /* separates stacked segments */
	cairo_set_line_width(cr, 0.6);
	cairo_stroke(cr);
	cairo_restore(cr);
}

void chart_vline(struct chart *c, double x, enum chart_ink ink, double width, int dashed)
{
	double ys[2] = {c->y.lo, c->y.hi}, xs[2] = {x, x};
	if (c->y.ncat) {
		cairo_t *cr = c->cr;
		double px = chart_px(c, x);
		if (!isfinite(px))
			return;
		cairo_save(cr);
		chart_set_ink(cr, ink, 1);
		cairo_set_line_width(cr, width);
		if (dashed) {
			static const double d[] = {4, 3};
			cairo_set_dash(cr, d, 2, 0);
		}
		cairo_move_to(cr, px, c->py);
		cairo_line_to(cr, px, c->py + c->ph);
		cairo_stroke(cr);
		cairo_restore(cr);
		return;
	}
	chart_line(c, xs, ys, 2, ink, width, dashed);
}

void chart_empty(struct chart *c, const char *msg)
{
	chart_text(c, c->px + c->pw / 2, c->py + c->ph / 2, 0.5, 0.5, msg, 9, INK_MUTED, 0);
}
