/* chart_file.c - a chart as a file: PNG (cairo's pixels, deflated here) and SVG. */
#include "chart.h"

#include "err.h"
#include "fsx.h"

#include <cairo-svg.h>
#include <errno.h>
#include <stdint.h>
#include <zlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- PNG */

/* cairo's own PNG writer (libpng, adaptive filters, zlib's default level)
 * made PNG encoding most of a report's time. Charts are flat colour: plain
 * scanlines at deflate level 3 give files as small in a quarter of the time.
 * Output depends only on the pixels (no time stamps). */
#define PNG_DEFLATE_LEVEL 3

struct png_out {
	FILE *fp;
	int failed; /* errno of the first failed write */
};

static void png_put(struct png_out *o, const void *p, size_t n)
{
	if (!o->failed && n && fwrite(p, 1, n, o->fp) != n)
		o->failed = errno ? errno : EIO;
}

static void png_be32(unsigned char *b, uint32_t v)
{
	b[0] = (unsigned char)(v >> 24), b[1] = (unsigned char)(v >> 16);
	b[2] = (unsigned char)(v >> 8), b[3] = (unsigned char)v;
}

/* One chunk: length, type, data, CRC of type and data. */
static void png_chunk(struct png_out *o, const char *type, const unsigned char *data, size_t n)
{
	unsigned char b[4];
	uLong crc = crc32(0, (const Bytef *)type, 4);
	if (n)
		crc = crc32(crc, data, (uInt)n);
	png_be32(b, (uint32_t)n);
	png_put(o, b, 4);
	png_put(o, type, 4);
	png_put(o, data, n);
	png_be32(b, (uint32_t)crc);
	png_put(o, b, 4);
}

/* The image as scanlines (filter byte 0, then RGB), deflated into IDAT
 * chunks. Returns 0 or DDT_ENOMEM / DDT_EGENERIC. */
static int png_idat(struct png_out *o, cairo_surface_t *s)
{
	int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
	int stride = cairo_image_surface_get_stride(s);
	const unsigned char *px = cairo_image_surface_get_data(s);
	size_t rowlen = 1 + 3 * (size_t)w, cap = 1 << 16;
	unsigned char *row = malloc(rowlen), *out = malloc(cap);
	z_stream z;
	int rc = 0, zrc = Z_OK;

	memset(&z, 0, sizeof z);
	if (!row || !out || deflateInit2(&z, PNG_DEFLATE_LEVEL, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(row);
		free(out);
		return err_nomem();
	}
	for (int y = 0; y <= h && zrc == Z_OK; y++) {
		int flush = y == h ? Z_FINISH : Z_NO_FLUSH;
		if (y < h) {
			const uint32_t *src = (const uint32_t *)(const void *)(px + (size_t)y * (size_t)stride);
			row[0] = 0; /* filter: none */
			for (int x = 0; x < w; x++) {
				row[1 + 3 * x] = (unsigned char)(src[x] >> 16);
				row[2 + 3 * x] = (unsigned char)(src[x] >> 8);
				row[3 + 3 * x] = (unsigned char)src[x];
			}
			z.next_in = row;
			z.avail_in = (uInt)rowlen;
		}
		do {
			z.next_out = out;
			z.avail_out = (uInt)cap;
			zrc = deflate(&z, flush);
			if (zrc == Z_STREAM_ERROR)
				break;
			if (cap - z.avail_out)
				png_chunk(o, "IDAT", out, cap - z.avail_out);
		} while (z.avail_out == 0);
		if (flush == Z_FINISH && zrc == Z_STREAM_END)
			break;
	}
	if (zrc != Z_STREAM_END)
		rc = err_set(DDT_EGENERIC, "PNG: deflate failed (%d)", zrc);
	deflateEnd(&z);
	free(row);
	free(out);
	return rc;
}

/* Writes an RGB24 image surface as an 8-bit RGB PNG. */
static int png_write(struct png_out *o, cairo_surface_t *s)
{
	static const unsigned char sig[8] = {137, 80, 78, 71, 13, 10, 26, 10};
	unsigned char ihdr[13];
	int rc;

	cairo_surface_flush(s);
	png_put(o, sig, 8);
	png_be32(ihdr, (uint32_t)cairo_image_surface_get_width(s));
	png_be32(ihdr + 4, (uint32_t)cairo_image_surface_get_height(s));
	ihdr[8] = 8;  /* bits per sample */
	ihdr[9] = 2;  /* truecolour */
	ihdr[10] = 0; /* deflate */
	ihdr[11] = 0; /* adaptive filtering, one filter byte per row */
	ihdr[12] = 0; /* no interlace */
	png_chunk(o, "IHDR", ihdr, sizeof ihdr);
	if ((rc = png_idat(o, s)) != 0)
		return rc;
	png_chunk(o, "IEND", NULL, 0);
	return 0;
}

int chart_write_png(const char *path, double w_pt, double h_pt, double px_per_pt,
		    chart_draw_fn draw, const void *arg)
{
	int wpx = (int)lround(w_pt * px_per_pt), hpx = (int)lround(h_pt * px_per_pt);
	cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, wpx, hpx);
	struct fsx_file f;
	struct png_out out = {0};
	cairo_status_t st;
	int rc;

	if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
		cairo_surface_destroy(s);
		return err_set(DDT_ENOMEM, "%s: cannot make a %dx%d image", path, wpx, hpx);
	}
	cairo_t *cr = cairo_create(s);
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	cairo_scale(cr, (double)wpx / w_pt, (double)hpx / h_pt);
	draw(cr, w_pt, h_pt, arg);
	st = cairo_status(cr);
	cairo_destroy(cr);
	if (st != CAIRO_STATUS_SUCCESS) {
		cairo_surface_destroy(s);
		return err_set(DDT_EGENERIC, "%s: drawing failed: %s", path,
			       cairo_status_to_string(st));
	}
	if ((rc = fsx_open(&f, path)) != 0) {
		cairo_surface_destroy(s);
		return rc;
	}
	out.fp = f.fp;
	rc = png_write(&out, s);
	cairo_surface_destroy(s);
	if (!rc && out.failed)
		rc = err_set(DDT_EIO, "%s: write failed: %s", path, strerror(out.failed));
	if (rc) {
		fsx_abort(&f);
		return err_wrap(rc, "%s", path);
	}
	return fsx_commit(&f);
}

/* ---------------------------------------------------------------- SVG */

struct svg_sink {
	char *buf;
	size_t len, cap;
	int failed;
};

static cairo_status_t svg_write(void *arg, const unsigned char *data, unsigned int n)
{
	struct svg_sink *o = arg;
	if (o->len + n + 1 > o->cap) {
		size_t cap = (o->len + n + 1) * 2;
		char *b = realloc(o->buf, cap);
		if (!b) {
			o->failed = 1;
			return CAIRO_STATUS_WRITE_ERROR;
		}
		o->buf = b, o->cap = cap;
	}
	memcpy(o->buf + o->len, data, n);
	o->len += n;
	o->buf[o->len] = '\0';
	return CAIRO_STATUS_SUCCESS;
}

/* cairo numbers an SVG's surfaces ("surface845") by a counter of the whole
 * process: numbered again from 1 in order of first use, the same drawing
 * gives the same bytes in any process. Returns the new text (malloc'd) or
 * NULL when out of memory. */
static char *svg_renumber(const char *in, size_t *len)
{
	char *out = NULL;
	unsigned long seen[256];
	size_t nseen = 0, olen = 0;
	FILE *fp = open_memstream(&out, &olen);

	if (!fp)
		return NULL;
	for (const char *p = in; *p;) {
		const char *at = strstr(p, "surface");
		char *end;
		if (!at) {
			fputs(p, fp);
			break;
		}
		at += 7;
		fwrite(p, 1, (size_t)(at - p), fp);
		unsigned long v = strtoul(at, &end, 10), k;
		if (end == at) {
			p = at;
			continue;
		}
		for (k = 0; k < nseen && seen[k] != v; k++)
			;
		if (k == nseen && nseen < sizeof seen / sizeof *seen)
			seen[nseen++] = v;
		fprintf(fp, "%lu", k < nseen ? k + 1 : v);
		p = end;
	}
	if (fclose(fp) != 0) {
		free(out);
		return NULL;
	}
	*len = olen;
	return out;
}

int chart_svg(char **svg, size_t *len, double w_pt, double h_pt, chart_draw_fn draw,
	      const void *arg)
{
	struct svg_sink o = {0};
	cairo_surface_t *s = cairo_svg_surface_create_for_stream(svg_write, &o, w_pt, h_pt);
	cairo_t *cr = cairo_create(s);
	cairo_status_t st;

	*svg = NULL, *len = 0;
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	draw(cr, w_pt, h_pt, arg);
	st = cairo_status(cr);
	cairo_destroy(cr);
	cairo_surface_finish(s);
	if (st == CAIRO_STATUS_SUCCESS)
		st = cairo_surface_status(s);
	cairo_surface_destroy(s);
	if (o.failed || st != CAIRO_STATUS_SUCCESS || !o.buf) {
		free(o.buf);
		return o.failed ? err_nomem()
				: err_set(DDT_EGENERIC, "SVG drawing failed: %s",
					  cairo_status_to_string(st));
	}
	*svg = svg_renumber(o.buf, len);
	free(o.buf);
	return *svg ? 0 : err_nomem();
}
