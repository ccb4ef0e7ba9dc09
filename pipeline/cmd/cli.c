/* cli.c - parsing and --help of the subcommands, both from their option tables. */
#include "cli.h"

#include "err.h"
#include "esc.h"
#include "ydoc.h"

#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define CLI_MAX_OPTS 64
#define CLI_ID0 1000 /* getopt_long val of table entry 0: above any short option */
#define CLI_HELP_ID 999

/* "ddt " before a subcommand's name; nothing before a program of its own
 * ("ddt-allreduce"). */
static const char *ddt_before(const char *name)
{
	return strncmp(name, "ddt", 3) ? "ddt " : "";
}

int cli_template_arg(void *paths, const char *arg)
{
	paths_set_template(paths, arg);
	return 0;
}

int cli_folder_arg(void *field, const char *arg)
{
	return paths_set_folder(field, arg);
}

/* The option's name as users write it: "--long", else "-s". */
static const char *opt_name(const struct cli_opt *o, char *buf, size_t len)
{
	if (o->long_name)
		snprintf(buf, len, "--%s", o->long_name);
	else
		snprintf(buf, len, "-%c", o->short_name);
	return buf;
}

/* True when word is one of choices ("a|b|c"). */
static int is_choice(const char *choices, const char *word)
{
	size_t n = strlen(word);
	for (const char *c = choices; *c;) {
		size_t k = strcspn(c, "|");
		if (k == n && !strncmp(c, word, n))
			return 1;
		c += k + (c[k] == '|');
	}
	return 0;
}

/* choices "a|b|c" as "a, b or c". */
static void choices_text(const char *choices, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	for (const char *c = choices; *c && off < len;) {
		size_t k = strcspn(c, "|");
		const char *sep = !off ? "" : c[k] ? ", " : " or ";
		off += (size_t)snprintf(buf + off, len - off, "%s%.*s", sep, (int)k, c);
		c += k + (c[k] == '|');
	}
}

/* The numbers an option takes: from lo to hi, each end open or not. */
struct cli_range {
	double lo, hi;
	int lo_open, hi_open, whole;
};

/* The entry of a CLI_OPT_KEY option; NULL for any other (or a key its table
 * lacks: cli_check). */
static const struct yschema_field *key_entry(const struct cli_opt *o)
{
	return o->schema ? yschema_find(o->schema, o->key) : NULL;
}

/* Narrows r's lower (hi: upper) end to v, open or not. */
static void narrow(struct cli_range *r, int hi, double v, int open)
{
	if (!hi && (v > r->lo || (v == r->lo && open))) {
		r->lo = v;
		r->lo_open = open;
	} else if (hi && (v < r->hi || (v == r->hi && open))) {
		r->hi = v;
		r->hi_open = open;
	}
}

/* The numbers entry e takes, as its reader checks them (yschema.h): its
 * flags, its range, an int's bounds; a whole number's open ends closed. */
static struct cli_range entry_range(const struct yschema_field *e)
{
	int is_int = e->type == YS_INT;
	struct cli_range r = {is_int ? INT_MIN : -HUGE_VAL, is_int ? INT_MAX : HUGE_VAL, 0, 0,
			      is_int || e->type == YS_U64 || (e->flags & Y_INTEGER)};
	if (e->type == YS_U64) { /* a double's whole numbers */
		narrow(&r, 0, 0, 0);
		narrow(&r, 1, 9007199254740992.0, 0);
	}
	if (e->flags & Y_POSITIVE)
		narrow(&r, 0, 0, 1);
	if (e->flags & (Y_NONNEG | Y_FRACTION))
		narrow(&r, 0, 0, 0);
	if (e->flags & Y_FRACTION)
		narrow(&r, 1, 1, 0);
	if (e->range) {
		narrow(&r, 0, e->range->lo, e->range->lo_open);
		narrow(&r, 1, e->range->hi, e->range->hi_open);
	}
	if (r.whole && r.lo_open) {
		r.lo = floor(r.lo) + 1;
		r.lo_open = 0;
	}
	if (r.whole && r.hi_open) {
		r.hi = ceil(r.hi) - 1;
		r.hi_open = 0;
	}
	return r;
}

/* The numbers option o takes: its entry's, else [min, max]. */
static struct cli_range opt_range(const struct cli_opt *o)
{
	const struct yschema_field *e = key_entry(o);
	if (e)
		return entry_range(e);
	return (struct cli_range){o->min, o->max, 0, 0, o->kind != CLI_NUM};
}

/* r in words: "a whole number from 1 to 10", "a number > 0". */
static void range_text(const struct cli_range *r, char *buf, size_t len)
{
	const char *what = r->whole ? "a whole number" : "a number";
	const char *fmt = r->whole ? "%.0f" : "%g";
	char lo[40], hi[40];
	snprintf(lo, sizeof lo, fmt, r->lo);
	snprintf(hi, sizeof hi, fmt, r->hi);
	if (isfinite(r->lo) && isfinite(r->hi) && !r->lo_open && !r->hi_open)
		snprintf(buf, len, "%s from %s to %s", what, lo, hi);
	else if (isfinite(r->lo) && isfinite(r->hi))
		snprintf(buf, len, "%s %s %s and %s %s", what, r->lo_open ? ">" : ">=", lo,
			 r->hi_open ? "<" : "<=", hi);
	else if (isfinite(r->lo))
		snprintf(buf, len, "%s %s %s", what, r->lo_open ? ">" : ">=", lo);
	else if (isfinite(r->hi))
		snprintf(buf, len, "%s %s %s", what, r->hi_open ? "<" : "<=", hi);
	else
		snprintf(buf, len, "%s", what);
}

/* A number of arg that o takes into *v; 0 or a usage error. */
static int num_arg(const struct cli_spec *s, const struct cli_opt *o, const char *arg,
		   double *v)
{
	struct cli_range r = opt_range(o);
	char name[64], words[128];
	if (!yget_parse_num(arg, v) && (!r.whole || *v == floor(*v)) &&
	    (r.lo_open ? *v > r.lo : *v >= r.lo) && (r.hi_open ? *v < r.hi : *v <= r.hi))
		return 0;
	range_text(&r, words, sizeof words);
	return cli_usage_error(s->name, "%s: expected %s, got '%s'", opt_name(o, name, sizeof name),
			       words, arg);
}

/* True when word is one of o's words: its entry's names, else its choices. */
static int takes_word(const struct cli_opt *o, const char *word)
{
	const struct yschema_field *e = key_entry(o);
	if (!e)
		return !o->choices || is_choice(o->choices, word);
	if (!e->names || (!word[0] && (e->flags & YS_OMIT))) /* any text; the empty one */
		return 1;
	for (const struct yschema_name *nm = e->names; nm->name; nm++)
		if (!strcmp(nm->name, word))
			return 1;
	return 0;
}

/* o's words as "a, b or c". */
static void words_text(const struct cli_opt *o, char *buf, size_t len)
{
	const struct yschema_field *e = key_entry(o);
	if (e)
		yschema_describe(e, buf, len); /* an entry with names: its names */
	else
		choices_text(o->choices, buf, len);
}

/* Stores the text arg into field: one of o's words, shorter than its
 * buffer or its entry's; 0 or a usage error. */
static int store_text(const struct cli_spec *s, const struct cli_opt *o, void *field,
		      const char *arg)
{
	const struct yschema_field *e = key_entry(o);
	size_t room = o->kind == CLI_BUF ? o->size : e && e->type == YS_STR ? e->size : 0;
	char name[64], words[256];

	opt_name(o, name, sizeof name);
	if (!takes_word(o, arg)) {
		words_text(o, words, sizeof words);
		return cli_usage_error(s->name, "%s: expected %s, got '%s'", name, words, arg);
	}
	if (room && strlen(arg) >= room)
		return cli_usage_error(s->name, "%s: too long (at most %zu characters)", name,
				       room - 1);
	if (o->kind == CLI_BUF)
		memcpy(field, arg, strlen(arg) + 1);
	else
		*(const char **)field = arg;
	return 0;
}

/* Stores arg (NULL for a flag) into o's field of args; 0 or a usage error. */
static int store(const struct cli_spec *s, const struct cli_opt *o, char *args, const char *arg)
{
	const struct yschema_field *e = key_entry(o);
	void *field = args + o->field;
	char name[64];
	double v;

	opt_name(o, name, sizeof name);
	switch (o->kind) {
	case CLI_FLAG:
		*(int *)field = 1;
		return 0;
	case CLI_STR:
	case CLI_BUF:
		return store_text(s, o, field, arg);
	case CLI_INT:
		if (num_arg(s, o, arg, &v))
			return 2;
		*(int *)field = (int)v;
		return 0;
	case CLI_WHOLE:
	case CLI_NUM:
		if (num_arg(s, o, arg, &v))
			return 2;
		*(double *)field = e && e->scale != 0 ? v / e->scale : v;
		return 0;
	case CLI_LIST: {
		struct cli_list *l = field;
		if (l->n == CLI_LIST_MAX)
			return cli_usage_error(s->name, "too many %s (at most %d)", name, CLI_LIST_MAX);
		l->v[l->n++] = arg;
		return 0;
	}
	case CLI_CALL:
		return o->fn(field, arg) ? cli_usage_error(s->name, "%s", err_msg()) : 0;
	case CLI_END:
		break;
	}
	return cli_usage_error(s->name, "%s: not an option", name);
}

/* Whether entry e fits option o's kind (cli_check); NULL or why not. */
static const char *entry_misfit(const struct cli_opt *o, const struct yschema_field *e)
{
	switch (o->kind) {
	case CLI_INT:
		return e->type == YS_INT && (e->scale == 0 || e->scale == 1)
			       ? NULL
			       : "an int option needs a YS_INT entry";
	case CLI_NUM: /* a YS_U64 (a seed) within a double's whole numbers */
		return e->type == YS_INT || e->type == YS_NUM || e->type == YS_U64
			       ? NULL
			       : "a double option needs a number entry";
	case CLI_STR:
		return e->names || e->type == YS_STR ? NULL
						     : "a text option needs a YS_STR entry or names";
	case CLI_BUF:
		return e->type == YS_STR && e->size == o->size
			       ? NULL
			       : "a char array option needs a YS_STR entry of its size";
	default:
		return "not a kind an entry gives";
	}
}

int cli_check(const struct cli_spec *s)
{
	for (const struct cli_opt *o = s->opts; o->kind != CLI_END; o++) {
		const struct yschema_field *e = key_entry(o);
		const char *why;
		if (!o->schema)
			continue;
		if (!e)
			return err_set(DDT_EGENERIC, "--%s: %s has no key '%s'", o->long_name,
				       o->schema->name, o->key);
		if ((why = entry_misfit(o, e)) != NULL)
			return err_set(DDT_EGENERIC, "--%s: %s.%s: %s", o->long_name,
				       o->schema->name, o->key, why);
	}
	return 0;
}

/* getopt_long's tables for s: long options with val CLI_ID0 + their index.
 * Returns how many options the table has. */
static size_t getopt_tables(const struct cli_spec *s, struct option *lo, char *so)
{
	size_t n = 0, l = 0, k = 0;
	so[k++] = ':'; /* a missing argument returns ':' */
	so[k++] = 'h';
	for (; s->opts[n].kind != CLI_END && n < CLI_MAX_OPTS; n++) {
		const struct cli_opt *o = &s->opts[n];
		if (o->long_name)
			lo[l++] = (struct option){o->long_name, o->arg ? required_argument : no_argument,
						  NULL, CLI_ID0 + (int)n};
		if (o->short_name) {
			so[k++] = o->short_name;
			if (o->arg)
				so[k++] = ':';
		}
	}
	so[k] = '\0';
	lo[l] = (struct option){"help", no_argument, NULL, CLI_HELP_ID};
	lo[l + 1] = (struct option){NULL, 0, NULL, 0};
	return n;
}

/* The table index of short option c; -1 when none. */
static int short_index(const struct cli_spec *s, int c)
{
	for (int i = 0; s->opts[i].kind != CLI_END; i++)
		if (s->opts[i].short_name && s->opts[i].short_name == c)
			return i;
	return -1;
}

/* The usage error for what getopt refused (code '?' or ':'). */
static int refused(const struct cli_spec *s, int code, char **argv)
{
	const char *word = argv[optind - 1];
	if (code == ':')
		return cli_usage_error(s->name, "%s needs an argument", word);
	if (optopt && optopt < 256 && word[0] == '-' && word[1] != '-')
		return cli_usage_error(s->name, "unknown option '-%c'", optopt);
	return cli_usage_error(s->name, "unknown or ambiguous option '%s'", word);
}

int cli_parse(const struct cli_spec *s, void *args, int argc, char **argv, int *first)
{
	struct option lo[CLI_MAX_OPTS + 2];
	char so[2 * CLI_MAX_OPTS + 3];
	size_t n = getopt_tables(s, lo, so);
	int c;

	if (cli_check(s))
		return cli_fail(s->name, DDT_EGENERIC);
	optind = 0; /* glibc: start over, argv may be another one */
	opterr = 0;
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		if (c == CLI_HELP_ID || c == 'h') {
			cli_help(s, stdout);
			return 0;
		}
		if (c == '?' || c == ':')
			return refused(s, c, argv);
		int i = c >= CLI_ID0 && (size_t)(c - CLI_ID0) < n ? c - CLI_ID0 : short_index(s, c);
		if (i < 0 || store(s, &s->opts[i], args, optarg))
			return 2;
	}
	*first = optind;
	if (!s->takes_args && optind < argc)
		return cli_usage_error(s->name, "unexpected argument '%s'", argv[optind]);
	return -1;
}

/* "  -q, --quiet", "  --runs DIR": the left column of o's help line. */
static int spec_text(const struct cli_opt *o, char *buf, size_t len)
{
	char s[8] = "";
	if (o->short_name)
		snprintf(s, sizeof s, "-%c%s", o->short_name, o->long_name ? ", " : "");
	return snprintf(buf, len, "  %s%s%s%s%s", s, o->long_name ? "--" : "",
			o->long_name ? o->long_name : "", o->arg ? " " : "", o->arg ? o->arg : "");
}

/* Writes text with every line after the first indented to column col. */
static void put_indented(FILE *fp, const char *text, int col)
{
	for (const char *t = text; *t;) {
		size_t k = strcspn(t, "\n");
		fprintf(fp, "%.*s\n", (int)k, t);
		t += k;
		if (*t == '\n' && *++t)
			fprintf(fp, "%*s", col, "");
	}
}

/* o's help: its own words, else its entry's. */
static const char *opt_help(const struct cli_opt *o)
{
	const struct yschema_field *e = key_entry(o);
	return o->help ? o->help : e && e->help ? e->help : "";
}

void cli_help(const struct cli_spec *s, FILE *fp)
{
	static const struct cli_opt help = {.kind = CLI_FLAG, .short_name = 'h',
					    .long_name = "help", .help = "this text"};
	char buf[160];
	int col = 22;

	for (const struct cli_opt *o = s->opts; o->kind != CLI_END; o++) {
		int w = spec_text(o, buf, sizeof buf) + 2;
		col = w > col && w <= 32 ? w : col;
	}
	fprintf(fp, "usage: %s", ddt_before(s->name));
	put_indented(fp, s->usage, 0);
	fprintf(fp, "\n");
	put_indented(fp, s->about, 0);
	fprintf(fp, "\n");
	for (const struct cli_opt *o = s->opts;; o++) {
		const struct cli_opt *e = o->kind == CLI_END ? &help : o;
		int w = spec_text(e, buf, sizeof buf);
		fprintf(fp, "%s%*s", buf, w < col ? col - w : 1, "");
		put_indented(fp, opt_help(e), col);
		if (e == &help)
			break;
	}
	if (s->after) {
		fprintf(fp, "\n");
		put_indented(fp, s->after, 0);
	}
}

int cli_fail(const char *cmd, int code)
{
	fprintf(stderr, "%s%s: ", ddt_before(cmd), cmd);
	esc_line(stderr, err_msg()[0] ? err_msg() : "failed"); /* outside text in it escaped */
	return err_exit_status(code);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s%s: ", ddt_before(cmd), cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see '%s%s --help')\n", ddt_before(cmd), cmd);
	return 2;
}

int cli_is_tty(void)
{
	return isatty(STDERR_FILENO);
}
