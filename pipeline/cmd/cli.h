/* cli.h - the subcommands' options as tables, from which parsing and --help both come. */
#ifndef DDT_CLI_H
#define DDT_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "paths.h"
#include "yschema.h"

/* What an option does with its argument, into the field of the command's
 * argument struct it names. */
enum cli_kind {
	CLI_END,    /* ends a table */
	CLI_FLAG,   /* int field = 1; takes no argument */
	CLI_STR,    /* const char * field = the argument (one of choices, when set) */
	CLI_BUF,    /* char[size] field = a copy of the argument (too long: an error) */
	CLI_INT,    /* int field = a whole number in [min, max] */
	CLI_WHOLE,  /* double field = a whole number in [min, max] */
	CLI_NUM,    /* double field = a number in [min, max] */
	CLI_LIST,   /* struct cli_list field: appends the argument (repeatable) */
	CLI_CALL,   /* fn(field, argument): checks and stores it */
};

/* One option: name, argument, help text and target field. Declare tables
 * with the CLI_OPT_* macros, which check the field's type. */
struct cli_opt {
	enum cli_kind kind;
	char short_name;       /* 'q', or 0 */
	const char *long_name; /* "quiet" */
	const char *arg;       /* the argument's name in --help ("N"); NULL for flags */
	const char *help;      /* its help text; '\n' starts another line in the column */
	size_t field;          /* offset of the target in the argument struct */
	size_t size;           /* CLI_BUF: the field's size */
	double min, max;       /* CLI_INT, CLI_WHOLE, CLI_NUM: the accepted range */
	const char *choices;   /* CLI_STR: the accepted words, '|' between them; NULL: any */
	/* CLI_CALL: stores arg into field; returns 0, or an error code with the
	 * message set (err.h), which parsing prints as a usage error */
	int (*fn)(void *field, const char *arg);
	/* CLI_OPT_KEY: the YAML entry (key of schema) whose value the option
	 * sets; its range or names, and its help when help is NULL, are the
	 * option's, min, max and choices unused */
	const struct yschema *schema;
	const char *key;
};

/* Repeated options in the order given (--scenario a --scenario b). */
#define CLI_LIST_MAX 64
struct cli_list {
	const char *v[CLI_LIST_MAX];
	int n;
};

/* A command's --help text and table. --help (and -h) are always accepted. */
struct cli_spec {
	const char *name;  /* "estimate", "fleet merge": "ddt <name>: " starts its errors;
			    * a program of its own ("ddt-allreduce") goes alone */
	const char *usage; /* what follows "usage: ddt " (more lines: "       ddt ...");
			    * for a program of its own, what follows "usage: " */
	const char *about; /* what the command does: the paragraph(s) before the options */
	int takes_args;    /* 0: parsing refuses positional arguments */
	const struct cli_opt *opts;
	const char *after; /* printed after the options (exit status, example); may be NULL */
};

/* Typed field of the argument struct T (a compile error when f is not a type). */
#define CLI_FIELD_(T, f, type) _Generic(((T *)0)->f, type: offsetof(T, f))

#define CLI_OPT_(k, s, l, a, h, off, ...)                                                   \
	{.kind = (k), .short_name = (s), .long_name = (l), .arg = (a), .help = (h),          \
	 .field = (off), __VA_ARGS__}
#define CLI_OPT_FLAG(T, f, s, l, h) CLI_OPT_(CLI_FLAG, s, l, NULL, h, CLI_FIELD_(T, f, int))
#define CLI_OPT_STR(T, f, s, l, a, h) CLI_OPT_(CLI_STR, s, l, a, h, CLI_FIELD_(T, f, const char *))
#define CLI_OPT_CHOICE(T, f, l, a, c, h)                                                    \
	CLI_OPT_(CLI_STR, 0, l, a, h, CLI_FIELD_(T, f, const char *), .choices = (c))
#define CLI_OPT_BUF(T, f, l, a, h)                                                          \
	CLI_OPT_(CLI_BUF, 0, l, a, h, CLI_FIELD_(T, f, char *), .size = sizeof(((T *)0)->f))
#define CLI_OPT_INT(T, f, l, a, lo, hi, h)                                                  \
	CLI_OPT_(CLI_INT, 0, l, a, h, CLI_FIELD_(T, f, int), .min = (lo), .max = (hi))
#define CLI_OPT_WHOLE(T, f, l, a, lo, hi, h)                                                \
	CLI_OPT_(CLI_WHOLE, 0, l, a, h, CLI_FIELD_(T, f, double), .min = (lo), .max = (hi))
#define CLI_OPT_NUM(T, f, l, a, lo, hi, h)                                                  \
	CLI_OPT_(CLI_NUM, 0, l, a, h, CLI_FIELD_(T, f, double), .min = (lo), .max = (hi))
#define CLI_OPT_LIST(T, f, l, a, h) CLI_OPT_(CLI_LIST, 0, l, a, h, CLI_FIELD_(T, f, struct cli_list))
#define CLI_OPT_CALL(T, f, l, a, fn_, h) CLI_OPT_(CLI_CALL, 0, l, a, h, offsetof(T, f), .fn = (fn_))
/* The option that sets what key k of the YAML table s (yschema.h) sets, so
 * that the values both take live in one entry: a number within the entry's
 * flags and range (in the file's units, stored divided by its scale; a whole
 * number when the entry's is), or a word among its names. Field f of T says
 * the kind: an int (a YS_INT entry), a double (YS_NUM, YS_INT, or a
 * YS_CUSTOM entry with a range: a number its reader checks by the entry's
 * flags and range, stored in a type no other entry has), a
 * const char * (the argument: one of the entry's names, or a YS_STR entry's
 * text that fits its buffer) or a char array (a copy; a YS_STR entry of the
 * array's size, one of its names when it has them). h: the option's own help, or NULL for the entry's. cli_check says
 * whether the entry exists and fits. */
#define CLI_KEY_KIND_(T, f)                                                                 \
	_Generic(((T *)0)->f, int: CLI_INT, double: CLI_NUM, const char *: CLI_STR,           \
		 char *: CLI_BUF)
#define CLI_OPT_KEY(T, f, l, a, s, k, h)                                                    \
	CLI_OPT_(CLI_KEY_KIND_(T, f), 0, l, a, h, offsetof(T, f), .size = sizeof(((T *)0)->f),  \
		 .schema = (s), .key = (k))
#define CLI_OPT_END {.kind = CLI_END}

/* The four folder options of struct paths field f of T (paths.h): --calibration,
 * --template (a bare name means templates/<name>.yaml), --runs, --reports. */
int cli_template_arg(void *paths, const char *arg);
#define CLI_OPT_CALIBRATION(T, f)                                                           \
	CLI_OPT_BUF(T, f.calibration, "calibration", "PATH",                                \
		    "calibration folder or file (default: calibration/)")
#define CLI_OPT_TEMPLATE_AS(T, f, h) CLI_OPT_CALL(T, f, "template", "PATH", cli_template_arg, h)
#define CLI_OPT_TEMPLATE(T, f)                                                              \
	CLI_OPT_TEMPLATE_AS(T, f, "job template: a name under templates/ or a path\n"       \
				  "(default: templates/default.yaml)")
/* --runs and --reports: folders ddt writes, made canonical (paths_set_folder). */
int cli_folder_arg(void *field, const char *arg);
#define CLI_OPT_RUNS(T, f) CLI_OPT_CALL(T, f.runs, "runs", "DIR", cli_folder_arg, "run records folder (default: runs/)")
#define CLI_OPT_REPORTS(T, f) CLI_OPT_CALL(T, f.reports, "reports", "DIR", cli_folder_arg, "documents folder (default: reports/)")
#define CLI_OPT_PATHS(T, f) CLI_OPT_CALIBRATION(T, f), CLI_OPT_TEMPLATE(T, f), CLI_OPT_RUNS(T, f), CLI_OPT_REPORTS(T, f)

/* The help of a folder option a command accepts like the others but does not use. */
#define CLI_UNUSED "accepted for symmetry; unused here"
/* The folders of a command that reads the history: the template whose
 * regress: settings judge it, runs/, and the other two accepted unused. */
#define CLI_OPTS_HISTORY_PATHS(T, f)                                                        \
	CLI_OPT_TEMPLATE_AS(T, f,                                                           \
			    "where the regress: settings come from (default:\n"              \
			    "templates/default.yaml)"),                                       \
		CLI_OPT_RUNS(T, f), CLI_OPT_BUF(T, f.calibration, "calibration", "PATH", CLI_UNUSED), \
		CLI_OPT_BUF(T, f.reports, "reports", "DIR", CLI_UNUSED)

/* Parses argv[1..argc) into the argument struct args by s's table (GNU
 * getopt_long rules: long options may be abbreviated, options and arguments
 * may mix). Returns -1 to go on, the positional arguments being
 * argv[*first..argc); else the exit status, having printed the help (0) or
 * a one-line usage error (2). */
int cli_parse(const struct cli_spec *s, void *args, int argc, char **argv, int *first);

/* Checks that every CLI_OPT_KEY option of s names an entry of its table
 * that fits its field; returns 0, or DDT_EGENERIC with err_msg() naming the
 * option (cli_parse refuses such a table before parsing). */
int cli_check(const struct cli_spec *s);

/* Writes s's --help: usage line, about, the options table, then after. */
void cli_help(const struct cli_spec *s, FILE *fp);

/* Prints "ddt CMD: message" on stderr for the current error and returns the
 * exit status for code. */
int cli_fail(const char *cmd, int code);

/* Prints a usage error and returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* True when stderr is a terminal (progress lines are drawn only then). */
int cli_is_tty(void);

#endif
