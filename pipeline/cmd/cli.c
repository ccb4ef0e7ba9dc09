/* cli.c - parsing and --help of the subcommands, both from their option tables. */
#include "cli.h"

#include "err.h"
#include "esc.h"
#include "ydoc.h"

#include <getopt.h>
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

/* A whole number of arg in [o->min, o->max] into *v; 0 or a usage error. */
static int whole_arg(const struct cli_spec *s, const struct cli_opt *o, const char *arg,
		     double *v)
{
	char name[64];
	if (yget_parse_num(arg, v) || *v != floor(*v) || *v < o->min || *v > o->max)
		return cli_usage_error(s->name, "%s: expected a whole number from %.0f to %.0f, got '%s'",
				       opt_name(o, name, sizeof name), o->min, o->max, arg);
	return 0;
}

/* Stores arg (NULL for a flag) into o's field of args; 0 or a usage error. */
static int store(const struct cli_spec *s, const struct cli_opt *o, char *args, const char *arg)
{
	void *field = args + o->field;
	char name[64], words[256];
	double v;

	opt_name(o, name, sizeof name);
	switch (o->kind) {
	case CLI_FLAG:
		*(int *)field = 1;
		return 0;
	case CLI_STR:
		if (o->choices && !is_choice(o->choices, arg)) {
			choices_text(o->choices, words, sizeof words);
			return cli_usage_error(s->name, "%s: expected %s, got '%s'", name, words, arg);
		}
		*(const char **)field = arg;
		return 0;
	case CLI_BUF:
		if (strlen(arg) >= o->size)
			return cli_usage_error(s->name, "%s: too long (at most %zu characters)", name,
					       o->size - 1);
		memcpy(field, arg, strlen(arg) + 1);
		return 0;
	case CLI_INT:
		if (whole_arg(s, o, arg, &v))
			return 2;
		*(int *)field = (int)v;
		return 0;
	case CLI_WHOLE:
		return whole_arg(s, o, arg, (double *)field) ? 2 : 0;
	case CLI_NUM:
		if (yget_parse_num(arg, &v) || v < o->min || v > o->max)
			return cli_usage_error(s->name, "%s: expected a number from %g to %g, got '%s'",
					       name, o->min, o->max, arg);
		*(double *)field = v;
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

void cli_help(const struct cli_spec *s, FILE *fp)
{
	static const struct cli_opt help = {CLI_FLAG, 'h', "help", NULL, "this text", 0, 0, 0, 0,
					    NULL, NULL};
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
		put_indented(fp, e->help, col);
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
