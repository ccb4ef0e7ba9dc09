/* ydoc.c - strict YAML documents over libyaml's event parser, and an emitter. */

#include "ydoc.h"

#include "err.h"
#include "fsx.h"

#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ---------------------------------------------------------------- diag */

/* Stands in for a problem whose text could not be stored, so that a loader's
 * count of problems stays right when memory runs out. */
static char ydiag_oom[] = "out of memory while recording a problem";
static char *ydiag_oom_list[1] = {ydiag_oom};

/* Grows d->msgs (which may be ydiag_oom_list). Returns 0 or -1. */
static int ydiag_grow(struct ydiag *d)
{
	size_t ncap = d->cap ? d->cap * 2 : 8;
	char **nm = malloc(ncap * sizeof *nm);

	if (!nm)
		return -1;
	if (d->n)
		memcpy(nm, d->msgs, d->n * sizeof *nm);
	if (d->msgs != ydiag_oom_list)
		free(d->msgs);
	d->msgs = nm;
	d->cap = ncap;
	return 0;
}

static void ydiag_msg_free(char *m)
{
	if (m != ydiag_oom)
		free(m);
}

void ydiag_add(struct ydiag *d, const char *file, int line, int col, const char *fmt, ...)
{
	char msg[768], *full = NULL;
	va_list ap;
	int len;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (!file)
		len = asprintf(&full, "%s", msg);
	else if (line > 0)
		len = asprintf(&full, "%s:%d:%d: %s", file, line, col, msg);
	else
		len = asprintf(&full, "%s: %s", file, msg);
	if (len < 0)
		full = ydiag_oom;
	if (d->n == 0)
		err_set(DDT_EINPUT, "%s", full);
	if (d->n == d->cap && ydiag_grow(d) != 0) {
		/* No room: the problem still counts. With no list at all, a static
		 * one-entry list stands in; otherwise the last message gives way. */
		if (d->n == 0) {
			d->msgs = ydiag_oom_list;
			d->n = d->cap = 1;
		} else {
			ydiag_msg_free(d->msgs[d->n - 1]);
			d->msgs[d->n - 1] = ydiag_oom;
		}
		ydiag_msg_free(full);
		return;
	}
	d->msgs[d->n++] = full;
	if (d->n == d->cap)
		ydiag_grow(d); /* keep a free slot for when memory is short */
}

void ydiag_free(struct ydiag *d)
{
	for (size_t i = 0; i < d->n; i++)
		ydiag_msg_free(d->msgs[i]);
	if (d->msgs != ydiag_oom_list)
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
	size_t nodes; /* made so far, against max_nodes */
	size_t max_nodes;
	const unsigned char *buf; /* the input, for the reader's byte offsets */
	size_t len;
};

static int parse_err(struct parse *ps, const yaml_mark_t *m, const char *msg)
{
	ydiag_add(ps->diag, ps->file, (int)m->line + 1, (int)m->column + 1, "%s", msg);
	return DDT_EINPUT;
}

/* The position of byte off of a UTF-8 buffer, as libyaml counts marks: the
 * line, and the column in characters. A byte inside a sequence cut short
 * (libyaml blames the first bad trailing byte) is placed at the sequence's
 * leading byte, where the bad character starts. */
static yaml_mark_t utf8_mark(const unsigned char *buf, size_t off)
{
	yaml_mark_t m = {.index = off};
	size_t line0 = 0, start = off;

	for (size_t i = 0; i < off; i++)
		if (buf[i] == '\n') {
			m.line++;
			line0 = i + 1;
		}
	for (size_t k = 1; k <= 3 && k <= off - line0; k++) {
		unsigned char b = buf[off - k];
		if ((b & 0xc0) == 0x80)
			continue;
		int width = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
		if (width > (int)k)
			start = off - k;
		break;
	}
	for (size_t i = line0; i < start; i++)
		m.column += (buf[i] & 0xc0) != 0x80;
	return m;
}

/* libyaml's reader refused a byte (not UTF-8, a control character): it gives
 * the byte's offset, not a mark, so the mark is counted here. */
static int reader_fail(struct parse *ps)
{
	char msg[160];
	size_t off = ps->p.problem_offset;
	int v = ps->p.problem_value;

	snprintf(msg, sizeof msg, v >= 0 ? "%s (0x%X): ddt reads UTF-8 text; save the file as UTF-8"
					 : "%s: ddt reads UTF-8 text; save the file as UTF-8",
		 ps->p.problem ? ps->p.problem : "unreadable byte", v);
	if (ps->p.encoding != YAML_UTF8_ENCODING || off > ps->len) {
		ydiag_add(ps->diag, ps->file, 0, 0, "byte %zu: %s", off, msg);
		return DDT_EINPUT;
	}
	yaml_mark_t m = utf8_mark(ps->buf, off);
	return parse_err(ps, &m, msg);
}

/* libyaml refused to go on: out of memory, or a problem with the input. */
static int parser_fail(struct parse *ps)
{
	if (ps->p.error == YAML_MEMORY_ERROR)
		return err_nomem();
	if (ps->p.error == YAML_READER_ERROR)
		return reader_fail(ps);
	return parse_err(ps, &ps->p.problem_mark, ps->p.problem ? ps->p.problem : "YAML syntax error");
}

/* A new node at m, counted against the cap. Returns 0, or DDT_EINPUT
 * (too many) / DDT_ENOMEM with *out NULL. */
static int node_new(struct parse *ps, enum ydoc_kind kind, const yaml_mark_t *m,
		    struct ydoc_node **out)
{
	struct ydoc_node *n;

	*out = NULL;
	if (++ps->nodes > ps->max_nodes) {
		ydiag_add(ps->diag, ps->file, (int)m->line + 1, (int)m->column + 1,
			  "more than %zu values in one file", ps->max_nodes);
		return DDT_EINPUT;
	}
	if (!(n = calloc(1, sizeof *n)))
		return err_nomem();
	n->kind = kind;
	n->line = (int)m->line + 1;
	n->col = (int)m->column + 1;
	*out = n;
	return 0;
}

/* Why a scalar's text cannot be used, or NULL. Control characters (C0 but tab
 * and newline, DEL, C1) are refused: they have no place in these files and
 * would reach terminals, PDFs and spreadsheets. */
static const char *scalar_problem(const yaml_event_t *ev)
{
	const unsigned char *v = ev->data.scalar.value;
	size_t len = ev->data.scalar.length;

	if (len > YDOC_MAX_SCALAR)
		return "string longer than the limit";
	if (memchr(v, '\0', len))
		return "string containing a NUL byte";
	for (size_t i = 0; i < len; i++)
		if ((v[i] < 0x20 && v[i] != '\t' && v[i] != '\n') || v[i] == 0x7f ||
		    (v[i] == 0xc2 && i + 1 < len && v[i + 1] >= 0x80 && v[i + 1] <= 0x9f))
			return "string containing a control character";
	return NULL;
}

/* The length of the Unicode bidi control (Bidi_Control: U+061C, U+200E-200F,
 * U+202A-202E, U+2066-2069) at p, or 0. They reorder how text is shown: an
 * RLO makes "gnp.exe" show as "exe.png" in a PDF, a spreadsheet or a
 * terminal. */
static size_t bidi_len(const unsigned char *p)
{
	if (p[0] == 0xd8 && p[1] == 0x9c)
		return 2;
	if (p[0] != 0xe2 || !p[1])
		return 0;
	if (p[1] == 0x80 && (p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xaa && p[2] <= 0xae)))
		return 3;
	if (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)
		return 3;
	return 0;
}

/* Removes every bidi control from s in place: every string ddt reads, and so
 * every name that reaches a document (PDF, spreadsheet, CSV, summary), is
 * shown in the order it was written. */
static void strip_bidi(char *s)
{
	unsigned char *r = (unsigned char *)s, *w = r;
	while (*r) {
		size_t n = bidi_len(r);
		if (n)
			r += n;
		else
			*w++ = *r++;
	}
	*w = '\0';
}

/* Duplicate-key lookup for one mapping: open addressing over the indexes of
 * its keys, so a wide mapping costs linear time, not quadratic. */
struct keyset {
	size_t *slot; /* [cap] key index + 1; 0 = empty */
	size_t cap;   /* power of two, or 0 while the mapping is small */
};

static size_t key_hash(const char *s)
{
	uint64_t h = 1469598103934665603u; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return (size_t)h;
}

/* The index of an earlier key equal to key in c, or -1. */
static long keyset_find(const struct keyset *ks, const struct ydoc_node *c, const char *key)
{
	if (!ks->cap) {
		for (size_t i = 0; i < c->n; i++)
			if (!strcmp(c->keys[i]->str, key))
				return (long)i;
		return -1;
	}
	for (size_t h = key_hash(key) & (ks->cap - 1); ks->slot[h]; h = (h + 1) & (ks->cap - 1))
		if (!strcmp(c->keys[ks->slot[h] - 1]->str, key))
			return (long)(ks->slot[h] - 1);
	return -1;
}

/* Records c's keys in ks once the mapping is no longer small (call after each
 * push). Returns 0 or -1 (out of memory). */
static int keyset_update(struct keyset *ks, const struct ydoc_node *c)
{
	if (c->n < 16)
		return 0;
	if (c->n * 2 > ks->cap) {
		size_t cap = ks->cap ? ks->cap * 2 : 64;
		size_t *slot = calloc(cap, sizeof *slot);
		if (!slot)
			return -1;
		free(ks->slot);
		ks->slot = slot;
		ks->cap = cap;
		for (size_t i = 0; i + 1 < c->n; i++) {
			size_t h = key_hash(c->keys[i]->str) & (cap - 1);
			while (slot[h])
				h = (h + 1) & (cap - 1);
			slot[h] = i + 1;
		}
	}
	size_t h = key_hash(c->keys[c->n - 1]->str) & (ks->cap - 1);
	while (ks->slot[h])
		h = (h + 1) & (ks->cap - 1);
	ks->slot[h] = c->n;
	return 0;
}

static int parse_node(struct parse *ps, yaml_event_t *ev, struct ydoc_node **out);

/* Reads events until the container's end event; *out is the container. */
static int parse_container(struct parse *ps, struct ydoc_node *c, yaml_event_type_t end)
{
	struct keyset ks = {NULL, 0};
	int rc = 0;

	for (;;) {
		yaml_event_t ev;
		struct ydoc_node *key = NULL, *val = NULL;
		long dup;

		if (!yaml_parser_parse(&ps->p, &ev)) {
			rc = parser_fail(ps);
			break;
		}
		if (ev.type == end) {
			yaml_event_delete(&ev);
			break;
		}
		if (c->kind == YDOC_MAP) {
			if ((rc = parse_node(ps, &ev, &key)) != 0)
				break;
			if (key->kind != YDOC_SCALAR) {
				rc = parse_err(ps, &(yaml_mark_t){.line = key->line - 1,
								.column = key->col - 1},
					       "keys must be plain scalars");
				node_free(key);
				break;
			}
			if ((dup = keyset_find(&ks, c, key->str)) >= 0) {
				ydiag_add(ps->diag, ps->file, key->line, key->col,
					  "duplicate key '%s' (first at line %d)", key->str,
					  c->keys[dup]->line);
				node_free(key);
				rc = DDT_EINPUT;
				break;
			}
			if (!yaml_parser_parse(&ps->p, &ev)) {
				node_free(key);
				rc = parser_fail(ps);
				break;
			}
		}
		if ((rc = parse_node(ps, &ev, &val)) != 0) {
			node_free(key);
			break;
		}
		if (node_push(c, key, val) != 0) {
			node_free(key);
			node_free(val);
			rc = err_nomem();
			break;
		}
		if (c->kind == YDOC_MAP && keyset_update(&ks, c) != 0) {
			rc = err_nomem();
			break;
		}
	}
	free(ks.slot);
	return rc;
}

/* The tag of an event that may carry one, or NULL. */
static const yaml_char_t *event_tag(const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return ev->data.scalar.tag;
	case YAML_SEQUENCE_START_EVENT:
		return ev->data.sequence_start.tag;
	case YAML_MAPPING_START_EVENT:
		return ev->data.mapping_start.tag;
	default:
		return NULL;
	}
}

/* Builds the node that starts with ev (consumed here). */
static int parse_node(struct parse *ps, yaml_event_t *ev, struct ydoc_node **out)
{
	struct ydoc_node *n = NULL;
	const char *bad;
	int rc = 0;

	*out = NULL;
	if (event_tag(ev)) {
		rc = parse_err(ps, &ev->start_mark, "tags are not allowed");
		goto done;
	}
	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		rc = parse_err(ps, &ev->start_mark, "aliases are not allowed");
		break;
	case YAML_SCALAR_EVENT:
		if (ev->data.scalar.anchor) {
			rc = parse_err(ps, &ev->start_mark, "anchors are not allowed");
			break;
		}
		if ((bad = scalar_problem(ev)) != NULL) {
			rc = parse_err(ps, &ev->start_mark, bad);
			break;
		}
		if ((rc = node_new(ps, YDOC_SCALAR, &ev->start_mark, &n)) != 0)
			break;
		if (!(n->str = strdup((char *)ev->data.scalar.value))) {
			rc = err_nomem();
			break;
		}
		strip_bidi(n->str);
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		int is_map = ev->type == YAML_MAPPING_START_EVENT;
		if ((is_map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor)) {
			rc = parse_err(ps, &ev->start_mark, "anchors are not allowed");
			break;
		}
		if (ps->depth + 1 > YDOC_MAX_DEPTH) {
			rc = parse_err(ps, &ev->start_mark, "nested too deeply");
			break;
		}
		if ((rc = node_new(ps, is_map ? YDOC_MAP : YDOC_SEQ, &ev->start_mark, &n)) != 0)
			break;
		ps->depth++;
		rc = parse_container(ps, n, is_map ? YAML_MAPPING_END_EVENT
						   : YAML_SEQUENCE_END_EVENT);
		ps->depth--;
		break;
	}
	default:
		rc = parse_err(ps, &ev->start_mark, "unexpected YAML event");
	}
done:
	yaml_event_delete(ev);
	if (rc) {
		node_free(n);
		return rc;
	}
	*out = n;
	return 0;
}

static const struct ydoc_caps default_caps = {YDOC_MAX_BYTES, YDOC_MAX_NODES};

int ydoc_load_buf(struct ydoc **out, const char *name, const char *buf, size_t len,
		  struct ydiag *diag)
{
	return ydoc_load_buf_capped(out, name, buf, len, NULL, diag);
}

int ydoc_load_buf_capped(struct ydoc **out, const char *name, const char *buf, size_t len,
			 const struct ydoc_caps *caps, struct ydiag *diag)
{
	if (!caps)
		caps = &default_caps;
	struct parse ps = {.file = name, .diag = diag, .max_nodes = caps->values,
			   .buf = (const unsigned char *)buf, .len = len};
	struct ydoc *doc = calloc(1, sizeof *doc);
	yaml_event_t ev;
	int rc = 0, docs = 0;

	*out = NULL;
	if (!doc || !(doc->file = strdup(name))) {
		free(doc);
		return err_nomem();
	}
	if (len > caps->bytes) {
		ydiag_add(diag, name, 0, 0, "larger than %zu bytes", caps->bytes);
		ydoc_free(doc);
		return DDT_EINPUT;
	}
	if (memchr(buf, '\0', len)) {
		ydiag_add(diag, name, 0, 0, "contains a NUL byte");
		ydoc_free(doc);
		return DDT_EINPUT;
	}
	if (!yaml_parser_initialize(&ps.p)) { /* it has freed what it had */
		ydoc_free(doc);
		return err_nomem();
	}
	yaml_parser_set_input_string(&ps.p, (const unsigned char *)buf, len);
	for (;;) {
		if (!yaml_parser_parse(&ps.p, &ev)) {
			rc = parser_fail(&ps);
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
	return ydoc_load_file_capped(out, path, NULL, diag);
}

int ydoc_load_file_capped(struct ydoc **out, const char *path, const struct ydoc_caps *caps,
			  struct ydiag *diag)
{
	char *buf;
	size_t len;
	int rc = fsx_read_all(path, caps ? caps->bytes : YDOC_MAX_BYTES, &buf, &len);

	*out = NULL;
	if (rc) {
		const char *m = err_msg();
		size_t plen = strlen(path);
		if (!strncmp(m, path, plen) && !strncmp(m + plen, ": ", 2))
			m += plen + 2; /* the diag adds the path itself */
		ydiag_add(diag, path, 0, 0, "%s", m);
		return rc;
	}
	rc = ydoc_load_buf_capped(out, path, buf, len, caps, diag);
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

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void c_locale_init(void)
{
	c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* The C locale, whatever setlocale() says; (locale_t)0 when it could not be
 * made (out of memory), and then the global locale serves. */
static locale_t ydoc_c_locale(void)
{
	pthread_once(&c_locale_once, c_locale_init);
	return c_locale;
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
	locale_t loc = ydoc_c_locale(); /* "1.5" is one and a half in every locale */
	double v = loc ? strtod_l(s, &end, loc) : strtod(s, &end);
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

int yget_strcpy(struct yctx *c, struct ydoc_node *map, const char *key, unsigned flags,
		char *dst, size_t len)
{
	const char *s = NULL;
	int rc = yget_str(c, map, key, flags, &s);

	if (rc || !s)
		return rc;
	if (strlen(s) >= len) {
		struct ydoc_node *n = ydoc_get(map, key);
		ydiag_add(c->diag, c->file, n->line, n->col, "%s: longer than %zu characters", key,
			  len - 1);
		return DDT_EINPUT;
	}
	memcpy(dst, s, strlen(s) + 1);
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

/* Bytes of the well-formed UTF-8 sequence at p (1 to 4), or 0 when the bytes
 * there are not one (p is NUL-terminated: a NUL ends the checks early). */
static int utf8_len(const unsigned char *p)
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
		int n = utf8_len(p);
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
