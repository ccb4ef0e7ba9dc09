/* ydoc.c - strict YAML documents: libyaml's event parser into a node tree with positions. */

#include "ydoc.h"

#include "err.h"
#include "fsx.h"

#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

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

int ydoc_read_file(const char *path, size_t cap, char **buf, size_t *len, struct ydiag *diag)
{
	int rc = fsx_read_all(path, cap, buf, len);
	if (rc) {
		const char *m = err_msg();
		size_t plen = strlen(path);
		if (!strncmp(m, path, plen) && !strncmp(m + plen, ": ", 2))
			m += plen + 2; /* the diag adds the path itself */
		ydiag_add(diag, path, 0, 0, "%s", m);
	}
	return rc;
}

int ydoc_load_file_capped(struct ydoc **out, const char *path, const struct ydoc_caps *caps,
			  struct ydiag *diag)
{
	char *buf;
	size_t len;
	int rc = ydoc_read_file(path, caps ? caps->bytes : YDOC_MAX_BYTES, &buf, &len, diag);

	*out = NULL;
	if (rc)
		return rc;
	rc = ydoc_load_buf_capped(out, path, buf, len, caps, diag);
	free(buf);
	return rc;
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

struct ydoc_node *ydoc_key(const struct ydoc_node *map, const char *key)
{
	if (!map || map->kind != YDOC_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (!strcmp(map->keys[i]->str, key))
			return map->keys[i];
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
locale_t ydoc_c_locale(void)
{
	pthread_once(&c_locale_once, c_locale_init);
	return c_locale;
}
