/* ydoc.h - strict YAML documents: a node tree with positions (ydoc.c), the
 * problems a loader records (ydiag.c), typed getters that report every problem
 * as file:line:column (yget.c), and a small emitter (yout.c). */
#ifndef DDT_YDOC_H
#define DDT_YDOC_H

#include <locale.h>
#include <stddef.h>
#include <stdio.h>

enum ydoc_kind { YDOC_SCALAR, YDOC_MAP, YDOC_SEQ };

struct ydoc_node {
	enum ydoc_kind kind;
	int line, col;             /* 1-based position of the node's start */
	char *str;                 /* scalar text (NUL-free, checked) */
	int plain;                 /* scalar was unquoted (only plain scalars are numbers) */
	size_t n;                  /* items of a sequence or pairs of a map */
	struct ydoc_node **items;  /* [n] sequence items or map values */
	struct ydoc_node **keys;   /* [n] map keys (scalars), NULL for sequences */
	unsigned char *used;       /* [n] map: key consumed by a loader */
};

/* Collected problems, each "file:line:column: message". A loader records every
 * problem it finds and goes on, so `ddt check` can list them all. */
struct ydiag {
	char **msgs;
	size_t n, cap;
};

struct ydoc {
	char *file; /* name used in messages */
	struct ydoc_node *root;
};

/* Limits against hostile input (Debian's libyaml has no depth limit). */
#define YDOC_MAX_BYTES (64u << 20)
#define YDOC_MAX_DEPTH 64
#define YDOC_MAX_SCALAR (1u << 20)
/* Values (scalars, lists, mappings) in one file: bounds memory at about 550 MB
 * where 60 MB of "[1,1,..." took 3.5 GB. Run records, which hold up to
 * RECORD_MAX_ROWS rows, have caps of their own (record.h). */
#define YDOC_MAX_NODES (1u << 22)

/* The size caps of one file: YDOC_MAX_BYTES and YDOC_MAX_NODES unless the
 * loader of a kind of file that legitimately holds more says how much (a
 * run record scales them to its rows, record.h). */
struct ydoc_caps {
	size_t bytes;
	size_t values;
};

/* Parses a file or a buffer. Anchors, aliases, tags, duplicate keys, non-scalar
 * keys, NUL bytes, control characters in strings (but tab and newline), and
 * input over the limits are errors. Unicode bidi controls (U+061C,
 * U+200E-200F, U+202A-202E, U+2066-2069) are removed from every scalar: no
 * name read here reorders the text it is shown in. Returns 0 with *out set, or
 * DDT_EINPUT with the problem added to diag (and to err_msg()), or
 * DDT_ENOMEM/DDT_EIO/DDT_ENOTFOUND. An empty document gives a NULL root. */
int ydoc_load_file(struct ydoc **out, const char *path, struct ydiag *diag);
int ydoc_load_buf(struct ydoc **out, const char *name, const char *buf, size_t len,
		  struct ydiag *diag);
/* Reads the whole file at path (at most cap bytes; fsx_read_all) into *buf
 * (malloc'd, NUL-terminated), *len bytes; a failure is added to diag at the
 * path, as the loaders report it. Returns 0 or fsx_read_all's code. */
int ydoc_read_file(const char *path, size_t cap, char **buf, size_t *len, struct ydiag *diag);
/* The same under caps (NULL: the defaults). */
int ydoc_load_file_capped(struct ydoc **out, const char *path, const struct ydoc_caps *caps,
			  struct ydiag *diag);
int ydoc_load_buf_capped(struct ydoc **out, const char *name, const char *buf, size_t len,
			 const struct ydoc_caps *caps, struct ydiag *diag);
void ydoc_free(struct ydoc *doc);

/* Diagnostics. ydiag_add formats "file:line:col: msg" (line 0 omits the
 * position; file NULL: msg names its own place) and also sets err_msg() to
 * the first problem recorded. */
void ydiag_add(struct ydiag *d, const char *file, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void ydiag_free(struct ydiag *d);
void ydiag_print(const struct ydiag *d, FILE *fp);

/* A loader's cursor: the document and where problems go. */
struct yctx {
	const char *file;
	struct ydiag *diag;
	void *ctx; /* the caller's, for the rules a schema checks (yschema.h) */
};

/* Getter flags. */
enum {
	Y_REQUIRED = 1 << 0, /* missing key is an error */
	Y_POSITIVE = 1 << 1, /* > 0 */
	Y_NONNEG = 1 << 2,   /* >= 0 */
	Y_FRACTION = 1 << 3, /* within [0, 1] */
	Y_INTEGER = 1 << 4,  /* a whole number */
	Y_NULLABLE = 1 << 5  /* null (~) is allowed and reads as NaN */
};

/* Looks key up in map and marks it used; NULL when absent (or map is NULL). */
struct ydoc_node *ydoc_get(struct ydoc_node *map, const char *key);
/* The node of key itself in map, not its value (a problem with the key is
 * told at its place); NULL when absent. Marks nothing used. */
struct ydoc_node *ydoc_key(const struct ydoc_node *map, const char *key);

/* The C locale, whatever setlocale() says, for numbers read and written;
 * (locale_t)0 when it could not be made (out of memory): then the global
 * locale serves. */
locale_t ydoc_c_locale(void);

/* Typed getters. Each returns 0 when the value was read or was absent and not
 * required (out untouched), else records a problem and returns DDT_EINPUT.
 * `what` names the value in messages; NULL means the key itself. */
int yget_num(struct yctx *c, struct ydoc_node *map, const char *key, unsigned flags, double *out);
int yget_int(struct yctx *c, struct ydoc_node *map, const char *key, unsigned flags, int *out);
int yget_str(struct yctx *c, struct ydoc_node *map, const char *key, unsigned flags,
	     const char **out);
/* A string copied into dst (len bytes); a longer one is a problem
 * ("key: longer than N characters"), never a truncation. */
int yget_strcpy(struct yctx *c, struct ydoc_node *map, const char *key, unsigned flags,
		char *dst, size_t len);
int yget_bool(struct yctx *c, struct ydoc_node *map, const char *key, unsigned flags, int *out);
/* A scalar node's true or false (a list's item); what names it in messages. */
int yget_node_bool(struct yctx *c, struct ydoc_node *node, const char *what, int *out);
/* The node itself with a kind check (NULL when absent). */
int yget_node(struct yctx *c, struct ydoc_node *map, const char *key, enum ydoc_kind kind,
	      unsigned flags, struct ydoc_node **out);

/* Converts a scalar node to a number with the checks of flags. */
int yget_node_num(struct yctx *c, struct ydoc_node *node, const char *what, unsigned flags,
	      double *out);
/* The same as a long long, exact past a double's whole numbers where the
 * text is an integer ("1e3", "500.0": whole if the number is, up to 2^53);
 * else "what must be a whole number, got X". */
int yget_node_long(struct yctx *c, struct ydoc_node *node, const char *what, unsigned flags,
		   long long *out);
/* Whether node is a YAML null: a plain ~, null or nothing. */
int yget_is_null(const struct ydoc_node *node);
/* Checks that node is of kind; records "expected a mapping" etc. otherwise. */
int yget_expect(struct yctx *c, struct ydoc_node *node, enum ydoc_kind kind, const char *what);

/* Records "unknown key" for every key of map no getter consumed. */
int yget_check_unknown(struct yctx *c, struct ydoc_node *map);

/* Parses a number the way the loaders do (C locale, finite, no hex, no
 * inf/nan). Returns 0 or -1. */
int yget_parse_num(const char *s, double *out);

/* ---- emitter: block-style YAML with quoted strings where needed ---- */
struct yout {
	FILE *fp;
	int depth;
	int in_map[YDOC_MAX_DEPTH]; /* 1 map, 0 sequence, per level */
	int pending_key;            /* a key was written; the value follows */
	int first[YDOC_MAX_DEPTH];  /* next item is the first of its container */
	int flow[YDOC_MAX_DEPTH];   /* container written on one line */
};

void yout_init(struct yout *y, FILE *fp);
/* Bytes of the well-formed UTF-8 sequence at p (1 to 4), or 0 when the bytes
 * there are not one (p is NUL-terminated: a NUL ends the checks early). */
int yout_utf8_len(const unsigned char *p);
void yout_map(struct yout *y);      /* begin a block mapping */
void yout_map_flow(struct yout *y); /* begin a mapping on one line: {a: 1, b: 2} */
void yout_seq(struct yout *y);      /* begin a block sequence */
void yout_seq_flow(struct yout *y); /* begin a sequence on one line: [1, 2] */
void yout_end(struct yout *y);      /* end the innermost container */
void yout_key(struct yout *y, const char *key);
void yout_str(struct yout *y, const char *s); /* NULL writes null */
void yout_num(struct yout *y, double v);      /* %.9g; non-finite writes null */
void yout_int(struct yout *y, long long v);
void yout_bool(struct yout *y, int v);
/* Shorthands: key then value. */
void yout_kv_str(struct yout *y, const char *key, const char *s);
void yout_kv_num(struct yout *y, const char *key, double v);
void yout_kv_int(struct yout *y, const char *key, long long v);

#endif
