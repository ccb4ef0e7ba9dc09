/* chart.h - charts drawn with cairo and text set with pango: pinned fonts, one
 * ink per meaning, nice axes, legends outside the data, PNG and vector output. */
#ifndef DDT_CHART_H
#define DDT_CHART_H

#include <cairo.h>
#include <pango/pangocairo.h>
#include <stddef.h>

/* ---- fonts ---- */

/* Points fontconfig at fonts_conf (FONTCONFIG_FILE) before pango starts, then
 * checks that the sans and mono families resolve to DejaVu. Call once before
 * any other chart_ or pdf_ call; later calls only repeat the check. Returns 0,
 * or DDT_EINPUT when the fonts are missing (the message says which). */
int chart_fonts_init(const char *fonts_conf);

/* The families every document uses. */
#define CHART_SANS "DejaVu Sans"
#define CHART_MONO "DejaVu Sans Mono"

/* A layout for cr: plain text (markup 0) or pango markup (markup 1; the caller
 * escapes every data string with g_markup_escape_text). size_pt in points;
 * width_pt > 0 wraps there. Hinting is off so the same text measures the same
 * on a PNG and on a PDF page. The caller unrefs it (g_object_unref). */
PangoLayout *chart_layout(cairo_t *cr, const char *family, double size_pt, int bold,
			  const char *text, int markup, double width_pt);

/* Size of a layout in points. */
void chart_layout_size(PangoLayout *l, double *w, double *h);

/* ---- inks: one colour per meaning, in every chart and document ---- */

enum chart_ink {
	INK_MOE,          /* MoE forward */
	INK_ATTN,         /* attention + lm_head */
	INK_DRAFT,        /* drafter forward */
	INK_TREE,         /* tree build + accept */
	INK_OVERHEAD,     /* launch + scheduling */
	INK_ALLREDUCE,    /* tensor-parallel all-reduce */
	INK_SGLANG,       /* the SGLang pipeline */
	INK_NATIVE,       /* the native engine */
	INK_MEASURED,     /* a measurement (tonight's or a night's) */
	INK_CALIBRATION,  /* a stored calibration point */
	INK_FIT,          /* a curve fitted to measurements */
	INK_PROJECTED,    /* a projection onto a target GPU */
	INK_BASELINE,     /* a history's baseline band */
	INK_REGRESSION,   /* a regression (and a suspect night, hollow) */
	INK_IMPROVEMENT,  /* an improvement */
	INK_TARGET0,      /* one ink per target GPU on charts that compare targets */
	INK_TARGET1,
	INK_TARGET2,
	INK_TARGET3,
	INK_TARGET4,
	INK_TARGET5,
	INK_TEXT,
	INK_MUTED,        /* secondary text, axis titles */
	INK_GRID,
	INK_AXIS,
	INK_COUNT
};

struct chart_rgb {
	double r, g, b;
};

struct chart_rgb chart_ink_rgb(enum chart_ink k);
/* "#RRGGBB" of an ink (static string), for the spreadsheet's chart. */
const char *chart_ink_hex(enum chart_ink k);
/* The ink of a model component (model.h enum model_comp order). */
enum chart_ink chart_comp_ink(int comp);
#define CHART_TARGET_INKS 6
/* The ink of the k-th target a chart compares (k modulo CHART_TARGET_INKS). */
enum chart_ink chart_target_ink(int k);
void chart_set_ink(cairo_t *cr, enum chart_ink k, double alpha);

/* ---- axes ---- */

#define CHART_MAX_TICKS 24

struct chart_axis {
	double lo, hi;       /* data range shown */
	int log;             /* log10 scale (lo > 0) */
	int nticks;
	double ticks[CHART_MAX_TICKS];
	char labels[CHART_MAX_TICKS][24];
	char title[96];      /* with its unit: "step time (ms)" */
	int ncat;            /* > 0: a category axis with ncat slots, no ticks */
};

/* Chooses a range and ticks on 1-2-5 steps covering [dmin, dmax] with at most
 * max_ticks ticks; zero is included when include_zero. A log axis ticks
 * decades, or 1-2-5 within decades when there are few. Non-finite or empty
 * input gives [0, 1]. Cannot fail. */
void chart_axis_linear(struct chart_axis *a, double dmin, double dmax, int max_ticks,
		       int include_zero, const char *title);
void chart_axis_log(struct chart_axis *a, double dmin, double dmax, const char *title);
/* A log axis ticked at powers of two (every other one when there are many). */
void chart_axis_log2(struct chart_axis *a, double dmin, double dmax, const char *title);
void chart_axis_category(struct chart_axis *a, int n, const char *title);

/* The tick step 1, 2 or 5 x 10^k nearest above raw. */
double chart_nice_step(double raw);

/* ---- a chart ---- */

enum chart_mark { MARK_NONE, MARK_CIRCLE, MARK_SQUARE, MARK_DIAMOND, MARK_TRIANGLE,
		  MARK_CROSS, MARK_RING, MARK_STAR };
enum chart_swatch { SWATCH_LINE, SWATCH_DASH, SWATCH_BOX, SWATCH_BAND, SWATCH_MARK };

#define CHART_MAX_LEGEND 16

struct chart_legend_item {
	enum chart_ink ink;
	enum chart_swatch swatch;
	enum chart_mark mark;
	char label[80];
};

struct chart {
	cairo_t *cr;
	double w, h;              /* the whole chart, points */
	double px, py, pw, ph;    /* the data area */
	struct chart_axis x, y;
	char title[128];
	char note[400];           /* small text under the title, wrapped ("" : none) */
	double pad_right;         /* room right of the data for end labels (points) */
	char cat_labels[32][64];  /* category axis (y) labels, top to bottom */
	int nlegend;
	struct chart_legend_item legend[CHART_MAX_LEGEND];
	double legend_xy[CHART_MAX_LEGEND][2]; /* placed by chart_layout_frame */
};

/* Starts a chart of w x h points on cr at the current origin. Set title, note,
 * axes, category labels and legend entries, then call chart_layout_frame to
 * place the data area (legend below it, outside the data) and draw the frame,
 * grid, ticks and titles. Cannot fail. */
void chart_begin(struct chart *c, cairo_t *cr, double w, double h, const char *title);
void chart_legend_add(struct chart *c, enum chart_ink ink, enum chart_swatch sw,
		      enum chart_mark mark, const char *label);
void chart_layout_frame(struct chart *c);
/* Draws the legend (after the data, so nothing covers it). */
void chart_finish(struct chart *c);

/* Data -> chart coordinates (points). */
double chart_px(const struct chart *c, double x);
double chart_py(const struct chart *c, double y);
/* The centre of category slot i of the y axis (0 at the top) and its height. */
double chart_cat_y(const struct chart *c, int i);
double chart_cat_h(const struct chart *c);

/* Primitives in data coordinates, clipped to the data area. Non-finite points
 * break a line. */
void chart_line(struct chart *c, const double *xs, const double *ys, size_t n,
		enum chart_ink ink, double width, int dashed);
void chart_band(struct chart *c, const double *xs, const double *lo, const double *hi,
		size_t n, enum chart_ink ink, double alpha);
/* A filled polygon through n points (data coordinates); nothing when a
 * point is not finite. */
void chart_polygon(struct chart *c, const double *xs, const double *ys, size_t n,
		   enum chart_ink ink, double alpha);
void chart_mark(struct chart *c, double x, double y, enum chart_mark m, enum chart_ink ink,
		double size);
/* A horizontal bar in category slot i from x0 to x1 (data x). */
void chart_hbar(struct chart *c, int i, double x0, double x1, double frac, enum chart_ink ink,
		double alpha);
/* A vertical line across the data area at data x. */
void chart_vline(struct chart *c, double x, enum chart_ink ink, double width, int dashed);
/* Text at chart coordinates; ax, ay in [0, 1] anchor the box (0 left/top). */
void chart_text(struct chart *c, double x, double y, double ax, double ay, const char *text,
		double size_pt, enum chart_ink ink, int bold);
/* The same on a white box, for labels that may sit on lines or bars. */
void chart_label(struct chart *c, double x, double y, double ax, double ay, const char *text,
		 double size_pt, enum chart_ink ink);
/* A centred message in the data area, for a chart without data. */
void chart_empty(struct chart *c, const char *msg);

/* ---- output ---- */

/* Draws a chart: fill a chart of w x h points on cr; returns nothing. */
typedef void (*chart_draw_fn)(cairo_t *cr, double w, double h, const void *arg);

/* Renders draw at scale px_per_pt to a PNG written atomically at path; the
 * background is white. Returns 0 or DDT_EIO / DDT_ENOMEM. */
int chart_write_png(const char *path, double w_pt, double h_pt, double px_per_pt,
		    chart_draw_fn draw, const void *arg);

/* Renders draw as an SVG document of w x h points into *svg (malloc'd,
 * NUL-ended, *len bytes without the NUL); the background is white. Returns 0
 * or DDT_ENOMEM / DDT_EGENERIC (drawing failed). */
int chart_svg(char **svg, size_t *len, double w_pt, double h_pt, chart_draw_fn draw,
	      const void *arg);

/* The shortest of %.{1,2,3}g that reads back within 0.1% - for tick labels. */
void chart_fmt_num(char *buf, size_t len, double v);

#endif
