/* ydoc.c - strict YAML documents over libyaml's event parser, and an emitter. */

#include "ydoc.h"

#include "err.h"
#include "fsx.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ---------------------------------------------------------------- diag */

void ydiag_add(struct ydiag *d, const char *file, int line, int col, const char *fmt, ...)
{
	char msg[768], *full = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (line > 0)
		full = NULL, (void)!asprintf(&full, "%s:%d:%d: %s", file, line, col, msg);
	else
		(void)!asprintf(&full, "%s: %s", file, msg);
	if (!full)
		return;
	if (d->n == 0)
		err_set(DDT_EINPUT, "%s", full);
	if (d->n == d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 8;
		char **nm = realloc(d->msgs, ncap * sizeof *nm);
		if (!nm) {
			free(full);
			return;
		}
		d->msgs = nm;
		d->cap = ncap;
	}
	d->msgs[d->n++] = full;
}

void ydiag_free(struct ydiag *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->msgs[i]);
	free(d->msgs);
	memset(d, 0, sizeof *d);
}

void ydiag_print(const struct ydiag *d, FILE *fp)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(fp, "%s\n", d->msgs[i]);
}

/* ---------------------------------------------------------------- tree */

static void node_free(struct ydoc_node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++) {
		node_free(n->items[i]);
		if (n->keys)
			node_free(n->keys[i]);
	}
	free(n->items);
	free(n->keys);
	free(n->used);
	free(n->str);
	free(n);
}

void ydoc_free(struct ydoc *doc)
{
	if (!doc)
		return;
	node_free(doc->root);
	free(doc->file);
	free(doc);
}

static struct ydoc_node *node_new(enum ydoc_kind kind, const yaml_mark_t *m)
{
	struct ydoc_node *n = calloc(1, sizeof *n);
	if (n) {
		n->kind = kind;
		n->line = (int)m->line + 1;
		n->col = (int)m->column + 1;
	}
	return n;
}

static int node_push(struct ydoc_node *parent, struct ydoc_node *key, struct ydoc_node *val)
{
	if ((parent->n & (parent->n - 1)) == 0) { /* grow at powers of two */
		size_t cap = parent->n ? parent->n * 2 : 4;
		struct ydoc_node **it = realloc(parent->items, cap * sizeof *it);
		if (!it)
			return -1;
		parent->items = it;
		if (parent->kind == YDOC_MAP) {
			struct ydoc_node **k = realloc(parent->keys, cap * sizeof *k);
			unsigned char *u = realloc(parent->used, cap);
			if (k)
				parent->keys = k;
			if (u)
				parent->used = u;
			if (!k || !u)
				return -1;
		}
	}
	parent->items[parent->n] = val;
	if (parent->kind == YDOC_MAP) {
		parent->keys[parent->n] = key;
		parent->used[parent->n] = 0;
	}
	parent->n++;
	return 0;
}

struct parse {
	yaml_parser_t p;
	const char *file;
	struct ydiag *diag;
	int depth;
};

static int parse_err(struct parse *ps, const yaml_mark_t *m, const char *msg)
{
	ydiag_add(ps->diag, ps->file, (int)m->line + 1, (int)m->column + 1, "%s", msg);
	return DDT_EINPUT;
}

static int parse_node(struct parse *ps, yaml_event_t *ev, struct ydoc_node **out);

/* Reads events until the container's end event; *out is the container. */
static int parse_container(struct parse *ps, struct ydoc_node *c, yaml_event_type_t end)
{
	for (;;) {
		yaml_event_t ev;
		struct ydoc_node *key = NULL, *val = NULL;
		int rc;

		if (!yaml_parser_parse(&ps->p, &ev))
			return parse_err(ps, &ps->p.problem_mark, ps->p.problem ? ps->p.problem
										 : "YAML syntax error");
		if (ev.type == end) {
			yaml_event_delete(&ev);
			return 0;
		}
		if (c->kind == YDOC_MAP) {
			rc = parse_node(ps, &ev, &key);
			if (rc)
				return rc;
			if (key->kind != YDOC_SCALAR) {
				rc = parse_err(ps, &(yaml_mark_t){.line = key->line - 1,
								.column = key->col - 1},
					       "keys must be plain scalars");
				node_free(key);
				return rc;
			}
			for (size_t i = 0; i < c->n; i++)
				if (!strcmp(c->keys[i]->str, key->str)) {
					ydiag_add(ps->diag, ps->file, key->line, key->col,
						  "duplicate key '%s' (first at line %d)", key->str,
						  c->keys[i]->line);
					node_free(key);
					return DDT_EINPUT;
				}
			if (!yaml_parser_parse(&ps->p, &ev)) {
				node_free(key);
				return parse_err(ps, &ps->p.problem_mark,
						 ps->p.problem ? ps->p.problem : "YAML syntax error");
			}
		}
		rc = parse_node(ps, &ev, &val);
		if (rc) {
			node_free(key);
			return rc;
		}
		if (node_push(c, key, val) != 0) {
			node_free(key);
			node_free(val);
			return err_nomem();
		}
	}
}

/* Builds the node that starts with ev (consumed here). */
static int parse_node(struct parse *ps, yaml_event_t *ev, struct ydoc_node **out)
{
	struct ydoc_node *n = NULL;
	int rc = 0;

	*out = NULL;
	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		rc = parse_err(ps, &ev->start_mark, "aliases are not allowed");
		break;
	case YAML_SCALAR_EVENT:
		if (ev->data.scalar.anchor) {
			rc = parse_err(ps, &ev->start_mark, "anchors are not allowed");
			break;
		}
		if (ev->data.scalar.length > YDOC_MAX_SCALAR ||
		    strlen((char *)ev->data.scalar.value) != ev->data.scalar.length) {
			rc = parse_err(ps, &ev->start_mark,
				       "string too long or containing a NUL byte");
			break;
		}
		n = node_new(YDOC_SCALAR, &ev->start_mark);
		if (!n || !(n->str = strdup((char *)ev->data.scalar.value))) {
			rc = err_nomem();
			break;
		}
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		int is_map = ev->type == YAML_MAPPING_START_EVENT;
		if ((is_map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor)) {
			rc = parse_err(ps, &ev->start_mark, "anchors are not allowed");
			break;
		}
		if (++ps->depth > YDOC_MAX_DEPTH) {
			rc = parse_err(ps, &ev->start_mark, "nested too deeply");
			break;
		}
		n = node_new(is_map ? YDOC_MAP : YDOC_SEQ, &ev->start_mark);
		if (!n) {
			rc = err_nomem();
			break;
		}
		rc = parse_container(ps, n, is_map ? YAML_MAPPING_END_EVENT
						   : YAML_SEQUENCE_END_EVENT);
		ps->depth--;
		break;
	}
	default:
		rc = parse_err(ps, &ev->start_mark, "unexpected YAML event");
	}
	yaml_event_delete(ev);
	if (rc) {
		node_free(n);
		return rc;
	}
	*out = n;
	return 0;
}

int ydoc_load_buf(struct ydoc **out, const char *name, const char *buf, size_t len,
		  struct ydiag *diag)
{
	struct parse ps = {.file = name, .diag = diag};
	struct ydoc *doc = calloc(1, sizeof *doc);
	yaml_event_t ev;
	int rc = 0, docs = 0;

	*out = NULL;
	if (!doc || !(doc->file = strdup(name))) {
		free(doc);
		return err_nomem();
	}
	if (len > YDOC_MAX_BYTES) {
		ydiag_add(diag, name, 0, 0, "larger than %u bytes", YDOC_MAX_BYTES);
		ydoc_free(doc);
		return DDT_EINPUT;
	}
	if (memchr(buf, '\0', len)) {
		ydiag_add(diag, name, 0, 0, "contains a NUL byte");
		ydoc_free(doc);
		return DDT_EINPUT;
	}
	yaml_parser_initialize(&ps.p);
	yaml_parser_set_input_string(&ps.p, (const unsigned char *)buf, len);
	for (;;) {
		if (!yaml_parser_parse(&ps.p, &ev)) {
			rc = parse_err(&ps, &ps.p.problem_mark,
				       ps.p.problem ? ps.p.problem : "YAML syntax error");
			break;
		}
		yaml_event_type_t t = ev.type;
		if (t == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (t == YAML_DOCUMENT_START_EVENT && ++docs > 1) {
			rc = parse_err(&ps, &ev.start_mark, "only one YAML document per file");
			yaml_event_delete(&ev);
			break;
		}
		if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_START_EVENT ||
		    t == YAML_DOCUMENT_END_EVENT) {
			yaml_event_delete(&ev);
			continue;
		}
		rc = parse_node(&ps, &ev, &doc->root);
		if (rc)
			break;
	}
	yaml_parser_delete(&ps.p);
	if (rc) {
		ydoc_free(doc);
		return rc;
	}
	*out = doc;
	return 0;
}

int ydoc_load_file(struct ydoc **out, const char *path, struct ydiag *diag)
{
	char *buf;
	size_t len;
	int rc = fsx_read_all(path, YDOC_MAX_BYTES, &buf, &len);

	*out = NULL;
	if (rc) {
		ydiag_add(diag, path, 0, 0, "%s", strchr(err_msg(), ':') ? strchr(err_msg(), ':') + 2
									: err_msg());
		return rc;
	}
	rc = ydoc_load_buf(out, path, buf, len, diag);
	free(buf);
	return rc;
}

/* ---------------------------------------------------------------- getters */

static const char *kind_name(enum ydoc_kind k)
{
	return k == YDOC_MAP ? "a mapping" : k == YDOC_SEQ ? "a list" : "a value";
}

struct ydoc_node *ydoc_get(struct ydoc_node *map, const char *key)
{
	if (!map || map->kind != YDOC_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (!strcmp(map->keys[i]->str, key)) {
			map->used[i] = 1;
			return map->items[i];
		}
	return NULL;
}

int ynum_parse(const char *s, double *out)
{
	const char *p = s;
	char *end;
	int digits = 0;

	/* optional sign, digits with an optional point, optional exponent */
	if (*p == '+' || *p == '-')
		p++;
	while (isdigit((unsigned char)*p))
		p++, digits++;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			digits++;
	if (!digits)
		return -1;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p)
		return -1;
	errno = 0;
	double v = strtod(s, &end); /* the program never leaves the C numeric locale */
	if (*end || !isfinite(v) || errno == ERANGE)
		return -1;
	*out = v;
	return 0;
}

int ynode_expect(struct yctx *c, struct ydoc_node *node, enum ydoc_kind kind, const char *what)
{
	if (node->kind == kind)
		return 0;
	ydiag_add(c->diag, c->file, node->line, node->col, "%s: expected %s, got %s", what,
		  kind_name(kind), kind_name(node->kind));
	return DDT_EINPUT;
}

static int is_null(const struct ydoc_node *n)
{
	return n->kind == YDOC_SCALAR && n->plain &&
	       (!strcmp(n->str, "~") || !strcmp(n->str, "null") || !n->str[0]);
}

int ynode_num(struct yctx *c, struct ydoc_node *node, const char *what, unsigned flags,
	      double *out)
{
	double v;

	if (node->kind != YDOC_SCALAR) {
		ydiag_add(c->diag, c->file, node->line, node->col, "%s: expected a number, got %s",
			  what, kind_name(node->kind));
		return DDT_EINPUT;
	}
	if ((flags & Y_NULLABLE) && is_null(node)) {
		*out = NAN;
		return 0;
	}
	if (!node->plain || ynum_parse(node->str, &v) != 0) {
		const char *l = node->str;
		int nonfinite = strcasestr(l, "nan") || strcasestr(l, "inf");
		ydiag_add(c->diag, c->file, node->line, node->col, "%s: %s '%s'", what,
			  nonfinite ? "must be a finite number, got"
				    : node->plain ? "expected a number, got" : "expected a number, got string",
			  l);
		return DDT_EINPUT;
	}
	const char *bad = NULL;
	if ((flags & Y_POSITIVE) && !(v > 0))
		bad = "must be greater than zero";
	else if ((flags & Y_NONNEG) && v < 0)
		bad = "must not be negative";
	else if ((flags & Y_FRACTION) && (v < 0 || v > 1))
		bad = "must be between 0 and 1";
	else if ((flags & Y_INTEGER) && (v != floor(v) || fabs(v) > 2147483647.0))
		bad = "must be a whole number";
	if (bad) {
		ydiag_add(c->diag, c->file, node->line, node->col, "%s %s, got %s", what, bad,
			  node->str);
		return DDT_EINPUT;
	}
	*out = v;
	return 0;
}

static int missing(struct yctx *c, struct ydoc_node *map, const char *key)
{
	if (!map) {
		ydiag_add(c->diag, c->file, 0, 0, "missing required key '%s'", key);
		return DDT_EINPUT;
	}
	ydiag_add(c->diag, c->file, map->line, map->col, "missing required key '%s'", key);
	return DDT_EINPUT;
}

int yget_node(struct yctx *c, struct ydoc_node *map, const char *key, enum ydoc_kind kind,
	      unsigned flags, struct ydoc_node **out)
{
	struct ydoc_node *n = ydoc_get(map, key);

	*out = NULL;
	if (!n)
		return (flags & Y_REQUIRED) ? missing(c, map, key) : 0;
	if (ynode_expect(c, n, kind, key))
		return DDT_EINPUT;
	*out = n;
	return 0;
}

int yget_num(struct yctx *c, struct ydoc_node *map, const char *key, unsigned flags, double *out)
{
	struct ydoc_node *n = ydoc_get(map, key);
	if (!n)
		return (flags & Y_REQUIRED) ? missing(c, map, key) : 0;
	return ynode_num(c, n, key, flags, out);
}

int yget_int(struct yctx *c, struct ydoc_node *map, const char *key, unsigned flags, int *out)
{
	double v;
	int rc;
	struct ydoc_node *n = ydoc_get(map, key);

	if (!n)
		return (flags & Y_REQUIRED) ? missing(c, map, key) : 0;
	rc = ynode_num(c, n, key, flags | Y_INTEGER, &v);
	if (!rc)
		*out = (int)v;
	return rc;
}

int yget_str(struct yctx *c, struct ydoc_node *map, const char *key, unsigned flags,
	     const char **out)
{
	struct ydoc_node *n = ydoc_get(map, key);
	if (!n)
		return (flags & Y_REQUIRED) ? missing(c, map, key) : 0;
	if (ynode_expect(c, n, YDOC_SCALAR, key))
		return DDT_EINPUT;
	*out = n->str;
	return 0;
}

int yget_bool(struct yctx *c, struct ydoc_node *map, const char *key, unsigned flags, int *out)
{
	struct ydoc_node *n = ydoc_get(map, key);
	if (!n)
		return (flags & Y_REQUIRED) ? missing(c, map, key) : 0;
	if (ynode_expect(c, n, YDOC_SCALAR, key))
		return DDT_EINPUT;
	if (n->plain && !strcmp(n->str, "true"))
		*out = 1;
	else if (n->plain && !strcmp(n->str, "false"))
		*out = 0;
	else {
		ydiag_add(c->diag, c->file, n->line, n->col, "%s: expected true or false, got '%s'",
			  key, n->str);
		return DDT_EINPUT;
	}
	return 0;
}

int ycheck_unknown(struct yctx *c, struct ydoc_node *map)
{
	int rc = 0;
	if (!map || map->kind != YDOC_MAP)
		return 0;
	for (size_t i = 0; i < map->n; i++)
		if (!map->used[i]) {
			ydiag_add(c->diag, c->file, map->keys[i]->line, map->keys[i]->col,
				  "unknown key '%s'", map->keys[i]->str);
			rc = DDT_EINPUT;
		}
	return rc;
}

/* ---------------------------------------------------------------- emitter */

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

	if (!s[0] || ynum_parse(s, &v) == 0 || strlen(s) > 120)
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

static void write_string(FILE *fp, const char *s)
{
	if (plain_ok(s)) {
		fputs(s, fp);
		return;
	}
	fputc('"', fp);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(fp, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", fp);
		else if (*p == '\t')
			fputs("\\t", fp);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(fp, "\\x%02x", *p);
		else
			fputc(*p, fp);
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
	if (isfinite(v))
		fprintf(y->fp, "%.9g", v == 0 ? 0.0 : v); /* no "-0" */
	else
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
