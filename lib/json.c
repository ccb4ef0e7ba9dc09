/* json.c - JSON text: strings, numbers, and a YAML document written as JSON. */
#include "json.h"

#include "ydoc.h"

#include <math.h>
#include <string.h>

void json_str(FILE *fp, const char *s)
{
	if (!s) {
		fputs("null", fp);
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
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(fp, "\\u%04x", *p);
		else if (!n)
			fputs("\xef\xbf\xbd", fp); /* U+FFFD */
		else
			fwrite(p, 1, (size_t)n, fp);
		p += n ? n : 1;
	}
	fputc('"', fp);
}

void json_num(FILE *fp, double v)
{
	if (!isfinite(v)) {
		fputs("null", fp);
		return;
	}
	locale_t loc = ydoc_c_locale(), old = loc ? uselocale(loc) : (locale_t)0;
	fprintf(fp, "%.9g", v == 0 ? 0.0 : v); /* no "-0"; a point in every locale */
	if (loc)
		uselocale(old);
}

static void scalar(FILE *fp, const struct ydoc_node *n)
{
	double v;
	if (n->plain && yget_parse_num(n->str, &v) == 0)
		json_num(fp, v);
	else if (n->plain && (!strcmp(n->str, "true") || !strcmp(n->str, "false") ||
			      !strcmp(n->str, "null")))
		fputs(n->str, fp);
	else if (n->plain && !strcmp(n->str, "~"))
		fputs("null", fp);
	else
		json_str(fp, n->str);
}

static void node(FILE *fp, const struct ydoc_node *n, int depth)
{
	if (!n) {
		fputs("null", fp);
		return;
	}
	if (n->kind == YDOC_SCALAR) {
		scalar(fp, n);
		return;
	}
	int map = n->kind == YDOC_MAP;
	fputc(map ? '{' : '[', fp);
	for (size_t i = 0; i < n->n; i++) {
		fprintf(fp, "%s\n%*s", i ? "," : "", 2 * (depth + 1), "");
		if (map) {
			json_str(fp, n->keys[i]->str);
			fputs(": ", fp);
		}
		node(fp, n->items[i], depth + 1);
	}
	if (n->n)
		fprintf(fp, "\n%*s", 2 * depth, "");
	fputc(map ? '}' : ']', fp);
}

void json_write_ydoc(FILE *fp, const struct ydoc_node *root)
{
	node(fp, root, 0);
	fputc('\n', fp);
}
