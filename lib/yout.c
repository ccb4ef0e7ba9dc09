/* yout.c - a small YAML emitter: block style, strings quoted where needed. */
#include "ydoc.h"

#include <ctype.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void yout_init(struct yout *y, FILE *fp)
{
	memset(y, 0, sizeof *y);
	y->fp = fp;
}

static void indent(struct yout *y, int levels)
{
	for (int i = 0; i < levels; i++)
		fputs("  ", y->fp);
}

/* Starts a new item or value in the current container: writes what goes before it. */
static void before_value(struct yout *y, int is_container)
{
	if (y->depth == 0)
		return;
	int d = y->depth;
	if (y->flow[d]) {
		if (!y->in_map[d] && !y->first[d])
			fputs(", ", y->fp);
		if (y->in_map[d] && !is_container)
			fputc(' ', y->fp);
		y->pending_key = 0;
		y->first[d] = 0;
		return;
	}
	if (y->in_map[d]) { /* after "key:" */
		y->pending_key = 0;
		fputs(is_container ? "" : " ", y->fp);
		return;
	}
	/* sequence item */
	if (d > 1 || !y->first[d])
		fputc('\n', y->fp);
	indent(y, d - 1);
	fputs("-", y->fp);
	if (!is_container)
		fputc(' ', y->fp);
	y->first[d] = 0;
}

static void push(struct yout *y, int is_map, int flow)
{
	before_value(y, 1);
	y->depth++;
	y->in_map[y->depth] = is_map;
	y->first[y->depth] = 1;
	y->flow[y->depth] = flow || (y->depth > 1 && y->flow[y->depth - 1]);
	if (y->flow[y->depth])
		fputs(is_map ? " {" : " [", y->fp);
}

void yout_map(struct yout *y)
{
	push(y, 1, 0);
}

void yout_map_flow(struct yout *y)
{
	push(y, 1, 1);
}

void yout_seq(struct yout *y)
{
	push(y, 0, 0);
}

void yout_seq_flow(struct yout *y)
{
	push(y, 0, 1);
}

void yout_end(struct yout *y)
{
	int d = y->depth;
	if (y->flow[d])
		fputs(y->in_map[d] ? "}" : "]", y->fp);
	else if (y->first[d])
		fputs(y->in_map[d] ? " {}" : " []", y->fp);
	y->depth--;
	if (y->depth == 0)
		fputc('\n', y->fp);
}

/* Plain when it cannot be read back as anything but this string. */
static int plain_ok(const char *s)
{
	static const char *const reserved[] = {"true", "false", "null", "yes", "no", "on", "off",
					       "y", "n", "~"};
	double v;

	if (!s[0] || yget_parse_num(s, &v) == 0 || strlen(s) > 120)
		return 0;
	for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
		if (!strcasecmp(s, reserved[i]))
			return 0;
	if (!isalpha((unsigned char)s[0]) && s[0] != '_' && s[0] != '/')
		return 0;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_./-+", *p))
			return 0;
	return 1;
}

/* Bytes of the well-formed UTF-8 sequence at p (1 to 4), or 0 when the bytes
 * there are not one (p is NUL-terminated: a NUL ends the checks early). */
int yout_utf8_len(const unsigned char *p)
{
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		return (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (p[0] >= 0xe0 && p[0] <= 0xef)
		return (p[1] & 0xc0) == 0x80 && (p[2] & 0xc0) == 0x80 &&
		       !(p[0] == 0xe0 && p[1] < 0xa0) && !(p[0] == 0xed && p[1] >= 0xa0) ? 3 : 0;
	if (p[0] >= 0xf0 && p[0] <= 0xf4)
		return (p[1] & 0xc0) == 0x80 && (p[2] & 0xc0) == 0x80 && (p[3] & 0xc0) == 0x80 &&
		       !(p[0] == 0xf0 && p[1] < 0x90) && !(p[0] == 0xf4 && p[1] >= 0x90) ? 4 : 0;
	return 0;
}

/* Writes s quoted where needed. What the reader refuses never goes out:
 * bytes that are not UTF-8 and control characters (but tab and newline)
 * become U+FFFD, so a record ddt writes is always one it reads. */
static void write_string(FILE *fp, const char *s)
{
	if (plain_ok(s)) {
		fputs(s, fp);
		return;
	}
	fputc('"', fp);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		int n = yout_utf8_len(p);
		if (*p == '"' || *p == '\\')
			fprintf(fp, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", fp);
		else if (*p == '\t')
			fputs("\\t", fp);
		else if (!n || *p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] <= 0x9f))
			fputs("\xef\xbf\xbd", fp); /* U+FFFD */
		else
			fwrite(p, 1, (size_t)n, fp);
		p += n ? n : 1;
	}
	fputc('"', fp);
}

void yout_key(struct yout *y, const char *key)
{
	int d = y->depth;
	if (y->flow[d]) {
		if (!y->first[d])
			fputs(", ", y->fp);
		y->first[d] = 0;
	} else {
		/* the first key of a map that is a sequence item stays on the "- " line */
		int inline_first = y->first[d] && d >= 2 && !y->in_map[d - 1];
		if (inline_first)
			fputc(' ', y->fp);
		else {
			if (d > 1 || !y->first[d])
				fputc('\n', y->fp);
			indent(y, d - 1);
		}
		y->first[d] = 0;
	}
	write_string(y->fp, key);
	fputc(':', y->fp);
	y->pending_key = 1;
}

static void scalar_done(struct yout *y)
{
	if (y->depth == 0)
		fputc('\n', y->fp);
}

void yout_str(struct yout *y, const char *s)
{
	before_value(y, 0);
	if (!s)
		fputs("null", y->fp);
	else
		write_string(y->fp, s);
	scalar_done(y);
}

void yout_num(struct yout *y, double v)
{
	before_value(y, 0);
	if (isfinite(v)) {
		locale_t loc = ydoc_c_locale(), old = loc ? uselocale(loc) : (locale_t)0;
		fprintf(y->fp, "%.9g", v == 0 ? 0.0 : v); /* no "-0"; a point in every locale */
		if (loc)
			uselocale(old);
	} else
		fputs("null", y->fp);
	scalar_done(y);
}

void yout_int(struct yout *y, long long v)
{
	before_value(y, 0);
	fprintf(y->fp, "%lld", v);
	scalar_done(y);
}

void yout_bool(struct yout *y, int v)
{
	before_value(y, 0);
	fputs(v ? "true" : "false", y->fp);
	scalar_done(y);
}

void yout_kv_str(struct yout *y, const char *key, const char *s)
{
	yout_key(y, key);
	yout_str(y, s);
}

void yout_kv_num(struct yout *y, const char *key, double v)
{
	yout_key(y, key);
	yout_num(y, v);
}

void yout_kv_int(struct yout *y, const char *key, long long v)
{
	yout_key(y, key);
	yout_int(y, v);
}
