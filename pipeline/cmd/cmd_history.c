/* cmd_history.c - `ddt history`: every series over the nights, with verdicts. */
#include "cmd.h"
#include "err.h"
#include "esc.h"
#include "hindex.h"
#include "history.h"
#include "regress.h"
#include "rows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The CSV columns, in this order. */
#define HISTORY_CSV_HEADER                                                                 \
	"op,variant,params,device,backend,build,run_id,created,status,median_us,baseline_us," \
	"noise_pct,delta_pct,z,band_lo_us,band_hi_us,verdict,night_verdict,reason,machine,"   \
	"git_rev,commits,last_good_run,first_bad_run"

struct filter {
	const char *op, *variant;
	size_t first_run; /* runs before this one are not shown */
};

static int shown(const struct filter *f, const struct hist_series *s)
{
	return (!f->op || !strcmp(f->op, s->key.op)) &&
	       (!f->variant || !strcmp(f->variant, s->key.variant));
}

/* The columns after reason: machine, the night's git_rev, and the change the
 * verdict names (commits a..b, last good and first bad run ids). */
static void write_rows_change(const struct history *h, const struct hist_series *s,
			      const struct hist_point *p, struct rows *w)
{
	char commits[112];
	const char *f[] = {s->key.machine, h->runs[p->run].git_rev,
			   regress_commits(h, p, commits, sizeof commits),
			   p->good_run < h->nruns ? h->runs[p->good_run].run_id : "",
			   p->bad_run < h->nruns ? h->runs[p->bad_run].run_id : ""};
	for (size_t j = 0; j < sizeof f / sizeof *f; j++)
		rows_str(w, f[j]);
}

static void write_point_row(const struct history *h, const struct hist_series *s,
			    const struct hist_point *p, struct rows *w)
{
	const char *fields[] = {s->key.op,		s->key.variant,
				s->key.params,		s->key.device,
				s->key.backend,		s->key.build,
				h->runs[p->run].run_id, h->runs[p->run].created,
				rec_status_name(p->status)};
	const double nums[] = {p->median_us,	     p->baseline_us, p->noise_frac * 100,
			       p->delta_frac * 100, p->z,	     p->band_lo_us,
			       p->band_hi_us};
	for (size_t j = 0; j < sizeof fields / sizeof *fields; j++)
		rows_str(w, fields[j]);
	for (size_t j = 0; j < sizeof nums / sizeof *nums; j++)
		rows_num(w, nums[j]);
	rows_str(w, regress_verdict_name(p->verdict));
	rows_str(w, regress_verdict_name(p->verdict_night));
	rows_str(w, p->reason);
	write_rows_change(h, s, p, w);
	rows_end_row(w);
}

/* The points as CSV or JSON (one object a point, keyed by the CSV's columns). */
static void write_rows(const struct history *h, const struct filter *f, enum rows_format fmt,
		       FILE *fp)
{
	struct rows w;
	rows_begin(&w, fp, fmt, HISTORY_CSV_HEADER);
	for (size_t i = 0; i < h->n; i++) {
		const struct hist_series *s = &h->series[i];
		if (!shown(f, s))
			continue;
		for (size_t k = 0; k < s->n; k++)
			if (s->pts[k].run >= f->first_run)
				write_point_row(h, s, &s->pts[k], &w);
	}
	rows_end(&w);
}

/* "%+.1f%%", or "-" when not finite. */
static const char *fmt_pct(char *buf, size_t len, double frac, int sign)
{
	if (!isfinite(frac))
		return "-";
	snprintf(buf, len, sign ? "%+.1f%%" : "%.2f%%", frac * 100);
	return buf;
}

static const char *fmt_num(char *buf, size_t len, const char *fmt, double v)
{
	if (!isfinite(v))
		return "-";
	snprintf(buf, len, fmt, v);
	return buf;
}

/* Microseconds with 4 significant digits, never in exponent form. */
static const char *fmt_us(char *buf, size_t len, double us)
{
	return fmt_num(buf, len, fabs(us) >= 1e4 ? "%.0f" : "%.4g", us);
}

/* One point of the table: run, median, baseline, change, noise, z, verdict. */
static void write_point(const struct history *h, const struct hist_point *p, FILE *fp)
{
	char a[112], b[32], c[32], d[32], e[32];

	fprintf(fp, "  %-28s %11s %11s %8s %7s %7s  %s", h->runs[p->run].run_id,
		fmt_us(a, sizeof a, p->median_us), fmt_us(b, sizeof b, p->baseline_us),
		fmt_pct(c, sizeof c, p->delta_frac, 1), fmt_pct(d, sizeof d, p->noise_frac, 0),
		fmt_num(e, sizeof e, "%+.1f", p->z), regress_verdict_name(p->verdict));
	if (p->verdict != p->verdict_night)
		fprintf(fp, " (on the night: %s)", regress_verdict_name(p->verdict_night));
	if (p->bad_run < h->nruns && p->verdict != REG_OUTLIER)
		fprintf(fp, " %s", regress_commits(h, p, a, sizeof a));
	if (p->reason[0])
		fprintf(fp, ": %s", p->reason);
	fputc('\n', fp);
}

static void write_table(const struct history *h, const struct filter *f, FILE *fp)
{
	char label[512];
	int any = 0;

	for (size_t i = 0; i < h->n; i++) {
		const struct hist_series *s = &h->series[i];
		if (!shown(f, s))
			continue;
		fprintf(fp, "%s%s\n", any++ ? "\n" : "",
			history_key_label(&s->key, label, sizeof label));
		fprintf(fp, "  %-28s %11s %11s %8s %7s %7s  %s\n", "run", "median_us",
			"baseline_us", "change", "noise", "z", "verdict");
		for (size_t k = 0; k < s->n; k++)
			if (s->pts[k].run >= f->first_run)
				write_point(h, &s->pts[k], fp);
	}
	if (!any)
		fprintf(fp, "no series%s\n", h->nruns ? " match" : ": no run records yet");
}

struct history_args {
	struct paths paths;
	const char *op, *variant, *format, *sql;
	double last;
};

typedef struct history_args A;
static const struct cli_opt history_opts[] = {
	CLI_OPT_STR(A, op, 0, "op", "NAME", "only series of this op"),
	CLI_OPT_STR(A, variant, 0, "variant", "NAME", "only series of this variant"),
	CLI_OPT_WHOLE(A, last, "last", "N", 0, 1e9, "only the last N nights (default 14; 0: all)"),
	CLI_OPT_CHOICE(A, format, "format", "F", "table|csv|json",
		       "table (default), csv, or json (an array of objects\n"
		       "keyed by the csv's columns)"),
	CLI_OPT_STR(A, sql, 0, "sql", "SELECT",
		    "one read-only SQL statement on the history index\n"
		    "(runs/.index.sqlite; tables: ddt help nightly),\n"
		    "its rows printed as CSV"),
	CLI_OPTS_HISTORY_PATHS(A, paths),
	CLI_OPT_END,
};

const struct cli_spec cmd_history_spec = {
	.name = "history",
	.usage = "history [OPTIONS]",
	.about = "Shows every kernel series (op x variant x params x device x backend x build\n"
		 "x machine) over the nights of runs/, with the regression verdict of each\n"
		 "night as it reads now: a suspect night the next night reverted reads\n"
		 "\"outlier\" (the verdict the nightly gave on the night itself is the\n"
		 "`night_verdict` column of the CSV). A verdict that names a change shows its\n"
		 "commits, last good..first bad night (a1b2c3d..e4f5a6b), ready for `git log`\n"
		 "or `git bisect`; the CSV adds machine, git_rev, commits, last_good_run and\n"
		 "first_bad_run after reason. Damaged run records are skipped with a warning\n"
		 "naming the file. --sql queries the index the history is loaded through:\n"
		 "  ddt history --sql \"SELECT op, params, count(*), min(median_us) FROM history\n"
		 "                     WHERE status = 'ok' GROUP BY op, params\"",
	.opts = history_opts,
};

int cmd_history(int argc, char **argv)
{
	struct history_args a = {.format = "table", .last = 14};
	struct regress_conf conf;
	struct history h;
	struct ydiag warn = {0};
	int first, rc;

	paths_init(&a.paths, "default");
	if ((rc = cli_parse(&cmd_history_spec, &a, argc, argv, &first)) >= 0)
		return rc;
	struct filter f = {.op = a.op, .variant = a.variant};
	if ((rc = regress_conf_load_file(&conf, a.paths.template_path)) != 0)
		return cli_fail("history", rc);
	rc = history_load(&h, a.paths.runs, &warn);
	for (size_t i = 0; i < warn.n; i++)
		fputs("ddt history: warning: ", stderr), esc_line(stderr, warn.msgs[i]);
	ydiag_free(&warn);
	if (rc) {
		history_free(&h);
		return cli_fail("history", rc);
	}
	if (a.sql) {
		history_free(&h);
		rc = hindex_query(a.paths.runs, a.sql, stdout);
		return rc ? cli_fail("history", rc) : fflush(stdout) == 0 ? 0 : 1;
	}
	if ((rc = cmd_check_op("history", cmd_history_has_op(&h, a.op) ? NULL : a.op)) != 0) {
		history_free(&h);
		return rc;
	}
	regress_history(&conf, &h);
	f.first_run = a.last > 0 && h.nruns > (size_t)a.last ? h.nruns - (size_t)a.last : 0;
	enum rows_format fmt;
	if (!rows_format_parse(a.format, &fmt))
		write_rows(&h, &f, fmt, stdout);
	else
		write_table(&h, &f, stdout);
	history_free(&h);
	return fflush(stdout) == 0 ? 0 : 1;
}
