/* yschema.h - a YAML mapping described once, as a table of its keys: each
 * entry names the key, its type, its range, unit, a help line and where its
 * value comes from, and the field of the struct it fills. One table drives
 * the strict reader (every problem at file:line:column, in the getters'
 * words, yget.c), the writer (yout.c) and the KEY=VALUE overrides with the
 * list of keys they take. Knows nothing of what the structs mean. */
#ifndef DDT_YSCHEMA_H
#define DDT_YSCHEMA_H

#include "ydoc.h"

#include <stddef.h>

enum yschema_type {
	YS_NUM,    /* double; NaN when absent (or null with Y_NULLABLE) */
	YS_INT,    /* int */
	YS_U64,    /* uint64_t, a whole number from 0 to 2^53 (a double's whole
		    * numbers: a seed); absent keeps the struct's value */
	YS_STR,    /* char[size]; a longer value is a problem, never a truncation;
		    * with names: one of the names (their values unused) */
	YS_ENUM,   /* int holding one of names' values, written by its name;
		    * with Y_NULLABLE a null (~, null, nothing) reads as the
		    * value of names' end {NULL, v}, and v writes as null */
	YS_BOOL,   /* int, true or false */
	YS_MAP,    /* a nested mapping described by sub (a struct member) */
	YS_LIST,   /* a sequence of mappings described by sub, into an array of
		    * max structs of size bytes at off, the int at count their
		    * number; more than max items is a problem at item max + 1 */
	YS_NUMS,   /* a sequence of numbers, each checked as a YS_NUM, into
		    * double[max] at off, the int at count their number; written
		    * on one line; with Y_NULLABLE an item may be null (NaN) */
	YS_INTS,   /* the same of whole numbers into int[max] */
	YS_STRS,   /* a sequence of texts into char[max][size] at off, the int
		    * at count their number; with names: each one of them */
	YS_DICT,   /* a mapping keyed by data (NAME: {...}): each value a
		    * mapping described by sub, read as a YS_LIST's items are
		    * (into max structs of size bytes at off, the int at count
		    * their number) with the item's NAME in its char member at
		    * name_off (name_size bytes) and c->ctx the struct that
		    * holds the mapping (an item's rules may need its siblings).
		    * A sub of one entry whose key is NULL (YS_VALUE) takes plain
		    * values, NAME: value: that entry's type and checks read each
		    * value into the item (its messages name the NAME), the
		    * sub's rule, if any, checks each item (map: the dict's
		    * mapping, c->ctx the holder); written on one line when sub
		    * says flow, {M: 9, k: 64} */
	YS_VEC,    /* a sequence of mappings described by sub (sub NULL: of texts
		    * of at most size - 1 bytes) into an array of items of size
		    * bytes the reader allocates (calloc) at the pointer member
		    * at off, their number in the int or size_t member at count
		    * (count_size says which); more than max items is a problem
		    * at item max + 1. An item starts as sub's init or zero
		    * bytes. The reader sets the pointer without freeing what it
		    * held: the caller frees the array (also after a problem) */
	YS_FLAGS,  /* a sequence of names into an unsigned: each name's value
		    * ORed in; an empty list is a problem (YS_OMIT: an empty
		    * set is left out); written on one line in names' order */
	YS_BOOLS,  /* a sequence of true or false into int[max] at off, the int
		    * at count their number; written on one line */
	YS_LONG,   /* long long, a whole number exact past an int's range (a
		    * count, a line number), in the entry's range too */
	YS_CUSTOM  /* read and written by the entry's own functions */
};

/* Entry flags beyond the getters' (Y_REQUIRED ... Y_NULLABLE, ydoc.h). */
enum {
	YS_NOSET = 1 << 12, /* not a KEY=VALUE override (a number fixed by its file) */
	YS_OMIT = 1 << 13,  /* written only when it says something: an empty text or a
			     * NaN number is left out (a key later layouts added); a
			     * YS_STR with names also takes the empty text */
	YS_BLOCK = 1 << 14, /* a YS_NUMS, YS_INTS, YS_STRS or YS_FLAGS written one item a line
			     * (default: on one line, [a, b]) */
	YS_LONE = 1 << 15   /* a YS_NUMS or YS_INTS that also takes one number for a
			     * list of it, and writes a list of one so (a sweep's
			     * values: 64 or [64, 128]) */
};

/* One name of an enum and the value it stands for; a list ends at name NULL.
 * A bad value is "key: expected a, b or c, got 'x'" in the list's order. */
struct yschema_name {
	const char *name;
	int value;
};

/* A range beyond the flags: lo and hi, each end open or closed; says
 * completes "must be ..." ("within (0, 1]"). */
struct yschema_range {
	double lo, hi;
	unsigned char lo_open, hi_open;
	const char *says;
};

struct yschema;
struct yschema_field;
typedef void (*yschema_read_fn)(struct yctx *c, struct ydoc_node *map,
				const struct yschema_field *f, void *obj);
typedef void (*yschema_write_fn)(struct yout *y, const struct yschema_field *f,
				 const void *obj);

struct yschema_field {
	const char *key;
	enum yschema_type type;
	size_t off;                        /* the field's offset in its struct */
	size_t size;                       /* its size (YS_STR: the array's bytes) */
	unsigned flags;                    /* Y_REQUIRED, Y_POSITIVE, ..., YS_NOSET */
	const struct yschema_range *range; /* NULL: the flags' checks only */
	const struct yschema_name *names;  /* YS_ENUM, YS_FLAGS; YS_STR, YS_STRS: the
					    * values it takes */
	const struct yschema *sub;         /* YS_MAP */
	yschema_read_fn read;              /* YS_CUSTOM; NULL (a table only written):
					    * reading the key is an internal error */
	yschema_write_fn write;            /* YS_CUSTOM; NULL (a table only read):
					    * writing it is an internal error */
	const char *unit;                  /* "GB", "ms"; NULL: none */
	const char *help;                  /* one line */
	const char *source;                /* provenance: who states the value */
	double scale;                      /* YS_NUM: the file's value is the struct's
					    * times scale (100: a fraction in the struct,
					    * a percentage in the file); 0: 1. Flags and
					    * range apply to the file's value */
	size_t count;                      /* YS_LIST, YS_NUMS, YS_INTS: the offset of
					    * the int holding the items' number (YS_VEC:
					    * an int or a size_t, count_size) */
	int max;                           /* ... and the array's length (YS_VEC: the
					    * most items read) */
	size_t name_off, name_size;        /* YS_DICT: the item's member holding its
					    * NAME, and its bytes */
	size_t count_size;                 /* YS_VEC: sizeof its count, an int's or
					    * a size_t's */
};

/* A rule across a mapping's keys, checked once every entry was read
 * without a problem: records each problem in c's diagnostics (at map or
 * at one of its keys) and returns nonzero when it found one. c->ctx is
 * the caller's (a catalog to look names up in). */
typedef int (*yschema_check_fn)(struct yctx *c, struct ydoc_node *map, void *obj);

struct yschema {
	const char *name;                  /* the mapping's, for messages and help */
	const struct yschema_field *fields;
	size_t n;
	int flow;                          /* written on one line: {a: 1, b: 2} */
	yschema_check_fn check;            /* NULL: none */
	const void *init;                  /* what a YS_LIST or YS_DICT item of this
					    * table starts as before its keys are read
					    * (an absent key keeps its value); NULL:
					    * zero bytes */
};

/* Entries: type T's member m under the key "m" (YS_KEYED: another key). */
#define YS_KEYED(T, k, m, ty, fl, ...)                                                    \
	{.key = (k), .type = (ty), .off = offsetof(T, m), .size = sizeof(((T *)0)->m),    \
	 .flags = (fl), __VA_ARGS__}
#define YS_FIELD(T, m, ty, fl, ...) YS_KEYED(T, #m, m, ty, fl, __VA_ARGS__)
/* Type T's double member m, a fraction, under key k as a percentage. */
#define YS_PCT(T, k, m, fl, ...)                                                          \
	YS_KEYED(T, k, m, YS_NUM, fl, .scale = 100, .unit = "%", __VA_ARGS__)
/* Type T's array member arr (fixed length), its number in the int member
 * cnt: a YS_LIST of mappings described by sub, a YS_NUMS of doubles, a
 * YS_INTS of ints or a YS_BOOLS of ints 0 or 1. */
#define YS_COUNT_(T, cnt) _Generic(((T *)0)->cnt, int: offsetof(T, cnt))
#define YS_LIST_OF(T, k, arr, cnt, sub_, fl, ...)                                         \
	{.key = (k), .type = YS_LIST, .off = offsetof(T, arr),                             \
	 .size = sizeof(((T *)0)->arr[0]), .count = YS_COUNT_(T, cnt),                     \
	 .max = (int)(sizeof(((T *)0)->arr) / sizeof(((T *)0)->arr[0])), .flags = (fl),    \
	 .sub = (sub_), __VA_ARGS__}
#define YS_ARRAY_(T, k, arr, cnt, ty, elem, fl, ...)                                     \
	{.key = (k), .type = (ty), .off = offsetof(T, arr),                                \
	 .size = sizeof(_Generic(((T *)0)->arr[0], elem: ((T *)0)->arr)),                   \
	 .count = YS_COUNT_(T, cnt), .max = (int)(sizeof(((T *)0)->arr) / sizeof(elem)),    \
	 .flags = (fl), __VA_ARGS__}
#define YS_NUMS_OF(T, k, arr, cnt, fl, ...)                                               \
	YS_ARRAY_(T, k, arr, cnt, YS_NUMS, double, fl, __VA_ARGS__)
#define YS_INTS_OF(T, k, arr, cnt, fl, ...)                                               \
	YS_ARRAY_(T, k, arr, cnt, YS_INTS, int, fl, __VA_ARGS__)
#define YS_BOOLS_OF(T, k, arr, cnt, fl, ...)                                               \
	YS_ARRAY_(T, k, arr, cnt, YS_BOOLS, int, fl, __VA_ARGS__)
/* Type T's unsigned member m, a YS_FLAGS of names nm. */
#define YS_FLAGS_OF(T, k, m, nm, fl, ...)                                                  \
	{.key = (k), .type = YS_FLAGS, .off = offsetof(T, m),                              \
	 .size = sizeof(_Generic(((T *)0)->m, unsigned: ((T *)0)->m)), .names = (nm),        \
	 .flags = (fl), __VA_ARGS__}
/* Type T's member arr, char[max][size], a YS_STRS of texts. */
#define YS_STRS_OF(T, k, arr, cnt, fl, ...)                                               \
	{.key = (k), .type = YS_STRS, .off = offsetof(T, arr),                             \
	 .size = sizeof(_Generic(((T *)0)->arr[0][0], char: ((T *)0)->arr[0])),             \
	 .count = YS_COUNT_(T, cnt), .max = (int)(sizeof(((T *)0)->arr) / sizeof(((T *)0)->arr[0])), \
	 .flags = (fl), __VA_ARGS__}
/* The value of a YS_DICT of plain values, its sub's only entry: type T's
 * member m, read and written as an entry of type ty with flags fl. */
#define YS_VALUE(T, m, ty, fl, ...) YS_KEYED(T, NULL, m, ty, fl, __VA_ARGS__)
/* Type T's array member arr of Item, a YS_DICT whose NAMEs go in Item's
 * char member name. */
#define YS_DICT_OF(T, k, arr, cnt, Item, name, sub_, fl, ...)                              \
	{.key = (k), .type = YS_DICT, .off = offsetof(T, arr),                             \
	 .size = sizeof(_Generic(((T *)0)->arr[0], Item: ((T *)0)->arr[0])),                 \
	 .count = YS_COUNT_(T, cnt), .max = (int)(sizeof(((T *)0)->arr) / sizeof(Item)),    \
	 .name_off = offsetof(Item, name), .name_size = sizeof(((Item *)0)->name),          \
	 .flags = (fl), .sub = (sub_), __VA_ARGS__}
/* Type T's pointer member arr (an array is a compile error) to cnt items
 * (an int or a size_t member, any other a compile error), a YS_VEC of at
 * most max_ mappings described by sub_, or texts of sizeof *arr bytes when
 * sub_ is NULL (arr a char (*)[N]). */
#define YS_VEC_OF(T, k, arr, cnt, sub_, max_, fl, ...)                                     \
	{.key = (k), .type = YS_VEC, .off = offsetof(T, arr) + 0 * sizeof(((T *)0)->arr = 0),  \
	 .size = sizeof(*((T *)0)->arr),                                                       \
	 .count = _Generic(((T *)0)->cnt, int: offsetof(T, cnt), size_t: offsetof(T, cnt)),    \
	 .count_size = sizeof(((T *)0)->cnt), .max = (max_), .flags = (fl), .sub = (sub_),      \
	 __VA_ARGS__}
#define YS_TABLE(name_, fields_, flow_)                                                    \
	{.name = (name_), .fields = (fields_), .n = sizeof(fields_) / sizeof *(fields_),     \
	 .flow = (flow_)}
/* Part of a table: n of its fields from fields_ on (a mapping read in
 * steps, a check between them). */
#define YS_PART(name_, fields_, n_) {.name = (name_), .fields = (fields_), .n = (n_)}
/* The same with the value its list items start as (one struct). */
#define YS_TABLE_INIT(name_, fields_, flow_, init_)                                        \
	{.name = (name_), .fields = (fields_), .n = sizeof(fields_) / sizeof *(fields_),     \
	 .flow = (flow_), .init = (init_)}
/* The same with a rule across its keys (yschema_check_fn). */
#define YS_TABLE_CHECKED(name_, fields_, flow_, check_)                                    \
	{.name = (name_), .fields = (fields_), .n = sizeof(fields_) / sizeof *(fields_),     \
	 .flow = (flow_), .check = (check_)}

/* The entry of key, or NULL. */
const struct yschema_field *yschema_find(const struct yschema *s, const char *key);

/* Reads every entry of s from map into obj, in the table's order, each
 * problem recorded in c's diagnostics; yschema_read also records every key
 * of map that no entry (nor an earlier getter) consumed as "unknown key",
 * then, when nothing was wrong, checks s's rule across keys.
 * Returns 0 or DDT_EINPUT when a problem was recorded. */
int yschema_read_fields(struct yctx *c, struct ydoc_node *map, const struct yschema *s,
			void *obj);
int yschema_read(struct yctx *c, struct ydoc_node *map, const struct yschema *s, void *obj);

/* The same, of only the keys map gives, over what obj holds: a file's
 * section over the one it extends. Nothing is required; a YS_MAP entry
 * given is read the same way (its keys over its struct's), every other
 * entry given replaces the struct's value whole (a list, a YS_CUSTOM; a
 * YS_VEC's new array takes the pointer's place, the old array left to the
 * caller, who may share it with the base it copied: keep it to free it).
 * The rule across keys is checked on obj as it then stands. */
int yschema_read_given(struct yctx *c, struct ydoc_node *map, const struct yschema *s,
		       void *obj);

/* Writes obj's entries as key: value pairs into the mapping open in y (a
 * YS_MAP entry opens its own). A NaN number of an entry that takes no null
 * is left out: absent, it reads back as NaN. Returns 0, or DDT_EGENERIC
 * (err_msg() says which key) when a YS_CUSTOM entry has no writer: the
 * others are written, that one left out. */
int yschema_write_fields(struct yout *y, const struct yschema *s, const void *obj);

/* One item of a list: a mapping (on one line when s->flow) holding obj's
 * entries; its reader checks node is a mapping ("what: expected a
 * mapping, ...") and reads it strictly (yschema_read). */
int yschema_write_item(struct yout *y, const struct yschema *s, const void *obj);
int yschema_read_item(struct yctx *c, struct ydoc_node *node, const struct yschema *s,
		      void *obj, const char *what);

/* A whole document: obj's entries as fp's top mapping (a section under a
 * top key: a table of one YS_MAP entry at offset 0), written as
 * yschema_write_item writes it; fp's write errors are the caller's to
 * check. Its reader reads doc's root as yschema_read_item does; a
 * document without one is "empty WHAT" at c->file. Both return 0,
 * DDT_EGENERIC (the writer, yschema_write_fields) or DDT_EINPUT. */
int yschema_write_doc(FILE *fp, const struct yschema *s, const void *obj);
int yschema_read_doc(struct yctx *c, const struct ydoc *doc, const struct yschema *s,
		     void *obj, const char *what);

/* For an entry's own reader (YS_CUSTOM): the sequence under f->key, f's
 * flags (Y_REQUIRED) checked, NULL when absent; more than f->max items is
 * a problem at item max + 1 ("KEY: at most N items, got M") and
 * DDT_EINPUT, *seq still set. */
int yschema_read_seq(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		     struct ydoc_node **seq);

/* Sets the number of entry key (YS_NUM or YS_INT, not YS_NOSET) to v, in
 * the file's units (its scale), after the reader's checks; a value they
 * refuse is DDT_EINPUT, err_msg()
 * "LABEL: must be ..." (label: how the caller names the key). Returns 0,
 * DDT_EINPUT, or YSCHEMA_NOKEY when s has no such settable entry. */
#define YSCHEMA_NOKEY (-1)
int yschema_set_num(const struct yschema *s, void *obj, const char *key, double v,
		    const char *label);

/* Calls fn(ctx, "prefix.key", value) for every settable number of s, value
 * "%.9g" or "" for NaN. Stops at fn's first nonzero return and returns it. */
typedef int (*yschema_key_fn)(void *ctx, const char *key, const char *value);
int yschema_keys(const struct yschema *s, const void *obj, const char *prefix,
		 yschema_key_fn fn, void *ctx);

/* What an entry takes, in words: "number > 0, GB", "whole number >= 0",
 * "sglang or native". Into buf (len bytes); returns buf. */
char *yschema_describe(const struct yschema_field *f, char *buf, size_t len);

#endif
