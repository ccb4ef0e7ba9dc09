/* test_chart.c - the chart library: nice ticks, axes, pinned fonts, inks, PNG
 * output, and the PDF writer's own write-error check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "chart.h"
#include "chart_report.h"
#include "err.h"
#include "fsx.h"
#include "pdf.h"

static char fonts_conf[4096];

static int setup(void **state)
{
	(void)state;
	const char *home = getenv("DDT_HOME");
	char *abs;
	snprintf(fonts_conf, sizeof fonts_conf, "%s/fonts/fonts.conf", home && *home ? home : ".");
	abs = realpath(fonts_conf, NULL);
	if (!abs)
		return -1;
	snprintf(fonts_conf, sizeof fonts_conf, "%s", abs);
	free(abs);
	return chart_fonts_init(fonts_conf);
}

static void test_chart__nice_step_is_1_2_5(void **state)
{
	(void)state;
	assert_true(chart_nice_step(0.7) == 1);
	assert_true(chart_nice_step(1.3) == 2);
	assert_true(chart_nice_step(2.6) == 5);
	assert_true(chart_nice_step(6) == 10);
	assert_true(fabs(chart_nice_step(0.03) - 0.05) < 1e-15);
	assert_true(chart_nice_step(200) == 200);
	assert_true(chart_nice_step(0.3) > 0.29 && chart_nice_step(0.3) < 0.51);
}

static void test_chart__linear_axis_covers_the_data_on_round_ticks(void **state)
{
	(void)state;
	struct chart_axis a;
	chart_axis_linear(&a, 3.2, 97.5, 7, 1, "step time (ms)");
	assert_true(a.lo <= 0 && a.hi >= 97.5);
	assert_true(a.nticks >= 3 && a.nticks <= 7);
	for (int i = 1; i < a.nticks; i++) {
		double step = a.ticks[i] - a.ticks[i - 1];
		double m = step / pow(10, floor(log10(step)));
		assert_true(fabs(m - 1) < 1e-9 || fabs(m - 2) < 1e-9 || fabs(m - 5) < 1e-9);
	}
	assert_string_equal(a.labels[0], "0");
	assert_string_equal(a.title, "step time (ms)");
	/* small steps get the decimals they need, never -0 */
	chart_axis_linear(&a, -0.25, 0.35, 8, 0, "");
	for (int i = 0; i < a.nticks; i++)
		assert_true(strcmp(a.labels[i], "-0.0") != 0 && strcmp(a.labels[i], "-0") != 0);
	assert_true(strchr(a.labels[1], '.') != NULL);
	/* nothing to show: a sane range */
	chart_axis_linear(&a, NAN, NAN, 5, 0, "");
	assert_true(a.lo == 0 && a.hi == 1);
}

static void test_chart__log_axes_tick_decades_and_powers_of_two(void **state)
{
	(void)state;
	struct chart_axis a;
	chart_axis_log(&a, 1, 512, "M");
	assert_true(a.log && a.lo == 1 && a.hi == 1000);
	assert_string_equal(a.labels[0], "1");
	assert_string_equal(a.labels[1], "2");
	assert_string_equal(a.labels[2], "5");
	assert_string_equal(a.labels[a.nticks - 1], "1000");
	chart_axis_log2(&a, 8, 512, "B");
	assert_true(a.lo == 8 && a.hi == 512 && a.nticks == 7);
	assert_string_equal(a.labels[3], "64");
}

static void test_chart__fonts_are_pinned_dejavu(void **state)
{
	(void)state;
	cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 8, 8);
	cairo_t *cr = cairo_create(s);
	PangoLayout *l = chart_layout(cr, CHART_SANS, 10, 0, "tok/s", 0, 0);
	PangoLayoutIter *it = pango_layout_get_iter(l);
	PangoLayoutRun *run = pango_layout_iter_get_run_readonly(it);
	PangoFontDescription *d = pango_font_describe(run->item->analysis.font);
	assert_string_equal(pango_font_description_get_family(d), "DejaVu Sans");
	assert_string_equal(getenv("FONTCONFIG_FILE"), fonts_conf);
	pango_font_description_free(d);
	pango_layout_iter_free(it);
	g_object_unref(l);
	cairo_destroy(cr);
	cairo_surface_destroy(s);
}

static void test_chart__one_colour_per_meaning(void **state)
{
	(void)state;
	for (int i = 0; i < INK_COUNT; i++)
		for (int j = i + 1; j < INK_COUNT; j++)
			assert_string_not_equal(chart_ink_hex((enum chart_ink)i),
						chart_ink_hex((enum chart_ink)j));
	assert_int_equal(chart_comp_ink(0), INK_MOE);
}

/* A line chart with a band and a legend. */
static void draw_sample(cairo_t *cr, double w, double h, const void *arg)
{
	struct chart c;
	double xs[4] = {1, 2, 3, 4}, y[4] = {10, 20, 15, 30}, lo[4] = {8, 17, 12, 26},
	       hi[4] = {12, 23, 18, 34};
	(void)arg;
	chart_begin(&c, cr, w, h, "Sample <chart> & title");
	chart_axis_linear(&c.x, 1, 4, 6, 0, "x (units)");
	chart_axis_linear(&c.y, 0, 34, 6, 1, "y (ms)");
	chart_legend_add(&c, INK_NATIVE, SWATCH_LINE, MARK_NONE, "native engine");
	chart_legend_add(&c, INK_NATIVE, SWATCH_BAND, MARK_NONE, "p5-p95 band");
	chart_layout_frame(&c);
	chart_band(&c, xs, lo, hi, 4, INK_NATIVE, 0.2);
	chart_line(&c, xs, y, 4, INK_NATIVE, 2, 0);
	chart_finish(&c);
}

/* Share of pixels that are not white, and whether the native ink appears. */
static void png_ink(const char *path, int *w, int *h, double *inked, int *has_native)
{
	cairo_surface_t *s = cairo_image_surface_create_from_png(path);
	struct chart_rgb n = chart_ink_rgb(INK_NATIVE);
	uint32_t want = (uint32_t)lround(n.r * 255) << 16 | (uint32_t)lround(n.g * 255) << 8 |
			(uint32_t)lround(n.b * 255);
	long count = 0;
	assert_int_equal(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
	*w = cairo_image_surface_get_width(s);
	*h = cairo_image_surface_get_height(s);
	*has_native = 0;
	for (int y = 0; y < *h; y++) {
		const uint32_t *row = (const uint32_t *)(const void *)(cairo_image_surface_get_data(s) +
							  (size_t)y * (size_t)cairo_image_surface_get_stride(s));
		for (int x = 0; x < *w; x++) {
			uint32_t p = row[x] & 0xFFFFFF;
			count += p != 0xFFFFFF;
			*has_native |= p == want;
		}
	}
	*inked = (double)count / ((double)*w * *h);
	cairo_surface_destroy(s);
}

static void test_chart__png_has_its_size_and_is_not_blank(void **state)
{
	(void)state;
	char dir[] = "/tmp/ddt-chart-XXXXXX", *path, *again;
	int w, h, native;
	double inked;
	char *a, *b;
	size_t na, nb;

	assert_non_null(mkdtemp(dir));
	path = fsx_join(dir, "sample.png");
	again = fsx_join(dir, "again.png");
	assert_int_equal(chart_write_png(path, 400, 240, 2.5, draw_sample, NULL), 0);
	png_ink(path, &w, &h, &inked, &native);
	assert_int_equal(w, 1000);
	assert_int_equal(h, 600);
	assert_true(inked > 0.02 && inked < 0.6);
	assert_true(native);
	/* the same drawing gives the same bytes */
	assert_int_equal(chart_write_png(again, 400, 240, 2.5, draw_sample, NULL), 0);
	assert_int_equal(fsx_read_all(path, 1 << 24, &a, &na), 0);
	assert_int_equal(fsx_read_all(again, 1 << 24, &b, &nb), 0);
	assert_true(na == nb && memcmp(a, b, na) == 0);
	free(a);
	free(b);
	free(path);
	free(again);
	fsx_rm_rf(dir);
}

static void render_pages(struct pdf_doc *doc, const void *arg)
{
	(void)arg;
	pdf_heading(doc, 1, "Section");
	for (int i = 0; i < 120; i++)
		pdf_para(doc, "A paragraph long enough to take a line or two of the page.", 0, 9,
			 INK_TEXT);
}

static void test_chart__pdf_write_errors_are_reported(void **state)
{
	(void)state;
	char buf[2048];
	struct pdf_meta m = {.title = "t", .created = "2025-01-02T03:04:05Z"};
	FILE *fp = fmemopen(buf, sizeof buf, "w"); /* far too small for the document */
	assert_non_null(fp);
	setvbuf(fp, NULL, _IONBF, 0);
	int rc = pdf_write_fp(fp, "small.pdf", &m, render_pages, NULL);
	fclose(fp);
	assert_int_equal(rc, DDT_EIO);
	assert_non_null(strstr(err_msg(), "small.pdf: write failed"));
}

static void test_chart__pdf_numbers_its_pages(void **state)
{
	(void)state;
	char dir[] = "/tmp/ddt-pdf-XXXXXX", *path, cmd[4400], out[8192], want[64];
	int pages = 0;
	struct pdf_meta m = {.title = "Pages", .created = "2025-01-02T03:04:05Z", .foot = "f"};
	assert_non_null(mkdtemp(dir));
	path = fsx_join(dir, "p.pdf");
	assert_int_equal(pdf_write(path, &m, render_pages, NULL), 0);
	snprintf(cmd, sizeof cmd, "pdfinfo '%s'", path);
	assert_int_equal(helpers_capture(cmd, out, sizeof out), 0);
	assert_non_null(strstr(out, "Pages:"));
	pages = atoi(strstr(out, "Pages:") + 6);
	assert_true(pages >= 2);
	assert_non_null(strstr(out, "CreationDate:    Thu Jan  2 03:04:05 2025 UTC"));
	/* "page N of M" knows M on page one already */
	snprintf(cmd, sizeof cmd, "pdftotext -f 1 -l 1 '%s' -", path);
	assert_int_equal(helpers_capture(cmd, out, sizeof out), 0);
	snprintf(want, sizeof want, "page 1 of %d", pages);
	assert_non_null(strstr(out, want));
	free(path);
	fsx_rm_rf(dir);
}

/* A line broken inside an identifier gets no hyphen: each line of the
 * layout sets exactly its own characters, none added. */
static void test_chart__identifiers_break_without_hyphens(void **state)
{
	(void)state;
	static const char *const text[] = {"moe_reference.rtx_pro_6000.m9_ms",
					   "allreduce.b300.step_ms_at_m9 20250119T020000Z-fixture"};
	cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 10, 10);
	cairo_t *cr = cairo_create(s);
	for (size_t t = 0; t < sizeof text / sizeof *text; t++) {
		PangoLayout *l = chart_layout(cr, "DejaVu Sans", 9, 0, text[t], 0, 40);
		int lines = pango_layout_get_line_count(l), glyphs = 0;
		assert_true(lines > 2); /* 40 pt is narrower than any of its words */
		for (int i = 0; i < lines; i++)
			for (GSList *r = pango_layout_get_line_readonly(l, i)->runs; r; r = r->next)
				glyphs += ((PangoGlyphItem *)r->data)->glyphs->num_glyphs;
		assert_int_equal(glyphs, (int)g_utf8_strlen(text[t], -1) - (t ? 1 : 0));
		g_object_unref(l);
	}
	cairo_destroy(cr);
	cairo_surface_destroy(s);
}

/* A crafted history: a step up on night 3 and a noisy night whose baseline
 * band reaches -50,000 us. The axis follows the medians, widened by the
 * bands to at most half the lowest median and twice the highest: never
 * below zero. */
static void test_chart__history_axis_follows_the_medians(void **state)
{
	(void)state;
	static const double med[] = {100, 101, 99, 150, 151, 149};
	struct hist_point pts[6];
	struct hist_series s;
	struct history h;
	int idx[1] = {0};
	double lo, hi;
	memset(&h, 0, sizeof h);
	memset(&s, 0, sizeof s);
	memset(pts, 0, sizeof pts);
	for (int i = 0; i < 6; i++) {
		pts[i].run = (size_t)i;
		pts[i].median_us = med[i];
		pts[i].band_lo_us = med[i] * 0.95;
		pts[i].band_hi_us = med[i] * 1.05;
	}
	pts[4].band_lo_us = -50000, pts[4].band_hi_us = 50400; /* one wild night */
	s.pts = pts, s.n = 6;
	h.series = &s, h.n = 1, h.nruns = 6;
	chart_report_history_range(&h, 6, idx, 1, &lo, &hi);
	assert_true(lo >= 49.5 - 1e-9 && lo <= 99 * 0.95 + 1e-9);
	assert_true(hi >= 151 && hi <= 302 + 1e-9);
	pts[4].band_lo_us = pts[4].median_us * 0.95, pts[4].band_hi_us = pts[4].median_us * 1.05;
	chart_report_history_range(&h, 6, idx, 1, &lo, &hi);
	assert_true(fabs(lo - 99 * 0.95) < 1e-9 && fabs(hi - 151 * 1.05) < 1e-9);
	chart_report_history_range(&h, 3, idx, 1, &lo, &hi); /* the first three nights */
	assert_true(hi < 110);
}

/* Commit labels of change points close together go to rows where none
 * overlaps another: crafted spans, then 40 labels 5 pt apart. */
static void test_chart__change_labels_never_overlap(void **state)
{
	(void)state;
	double x0[40] = {0, 5, 20, 11}, x1[40] = {10, 15, 30, 19};
	int row[40];
	chart_report_label_rows(x0, x1, 4, row);
	assert_int_equal(row[0], 0);
	assert_int_equal(row[1], 1);
	assert_int_equal(row[2], 0);
	assert_int_equal(row[3], 2); /* under 2 pt from [0, 10] and [20, 30]: too close */
	for (int i = 0; i < 40; i++)
		x1[i] = 300 - 5.0 * i, x0[i] = x1[i] - 48;
	chart_report_label_rows(x0, x1, 40, row);
	for (int i = 0; i < 40; i++)
		for (int j = 0; j < i; j++)
			if (row[i] == row[j] && x0[i] < x1[j] + 2 && x0[j] < x1[i] + 2)
				fail_msg("labels %d and %d overlap on row %d", i, j, row[i]);
	assert_true(row[5] > 0 && row[10] == 0); /* a row is reused once clear */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chart__nice_step_is_1_2_5),
		cmocka_unit_test(test_chart__linear_axis_covers_the_data_on_round_ticks),
		cmocka_unit_test(test_chart__log_axes_tick_decades_and_powers_of_two),
		cmocka_unit_test(test_chart__fonts_are_pinned_dejavu),
		cmocka_unit_test(test_chart__one_colour_per_meaning),
		cmocka_unit_test(test_chart__png_has_its_size_and_is_not_blank),
		cmocka_unit_test(test_chart__pdf_write_errors_are_reported),
		cmocka_unit_test(test_chart__pdf_numbers_its_pages),
		cmocka_unit_test(test_chart__identifiers_break_without_hyphens),
		cmocka_unit_test(test_chart__history_axis_follows_the_medians),
		cmocka_unit_test(test_chart__change_labels_never_overlap),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
