/* cmd_compare.c - `ddt compare RUN_A RUN_B`: two runs side by side, with verdicts. */
#include "cmd.h"
#include "rows.h"
#include "err.h"
#include "esc.h"
#include "history.h"
#include "regress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define COMPARE_CSV_HEADER \
	"op,variant,params,device,backend,build,a_status,a_median_us,b_status,b_median_us," \
	"change_pct,noise_pct,compare,night_verdict,rule,machine,a_machine,commits"

struct side {
	const struct hist_point *a, *b;
	const struct hist_series *sa; /* a's series (another machine's when B's has no A) */
};

/* "slower", "faster", "same", or why there is no comparison (regress.h). */
static const char *compare_word(const struct regress_conf *c, struct side s, const char **rule)
{
	*rule = "";
	if (!s.a)
		return "only in B";
	if (!s.b)
		return "only in A";
	return regress_compare(c, s.a, s.b, rule);
}

/* The point on night ia of the series of h that matches s by op, variant,
 * params and backend (another machine's, or device's), into *sa; NULL when
 * none was measured then. */
static const struct hist_point *compare_partner(const struct history *h,
						 const struct hist_series *s, size_t ia,
						 const struct hist_series **sa)
{
	for (size_t j = 0; j < h->n; j++) {
		const struct hist_series *o = &h->series[j];
		const struct hist_point *p = history_point_at(o, ia);
		if (p && o != s && !strcmp(o->key.op, s->key.op) &&
		    !strcmp(o->key.variant, s->key.variant) &&
		    !strcmp(o->key.params, s->key.params) && !strcmp(o->key.backend, s->key.backend)) {
			*sa = o;
			return p;
		}
	}
	return NULL;
}

/* Whether series s is B's partner of another series measured on B (so it
 * is not listed again as "only in A"). */
static int compare_taken(const struct history *h, const struct hist_series *s, size_t ia,
			 size_t ib)
{
	for (size_t j = 0; j < h->n; j++) {
		const struct hist_series *o = &h->series[j], *sa = NULL;
		if (o != s && history_point_at(o, ib) && !history_point_at(o, ia) &&
		    compare_partner(h, o, ia, &sa) && sa == s)
			return 1;
	}
	return 0;
}

static double median_of(const struct hist_point *p)
{
	return p && p->status == REC_OK ? p->median_us : NAN;
}

static double noise_of(struct side s)
{
	double a = s.a ? s.a->noise_frac : NAN, b = s.b ? s.b->noise_frac : NAN;
	return isfinite(a) && isfinite(b) ? fmax(a, b) : isfinite(b) ? b : a;
}

static void data_row(struct rows *w, const struct history *h, const struct hist_series *s,
		     struct side d, const char *word, const char *rule)
{
	char commits[112] = "";
	const char *key[] = {s->key.op,	     s->key.variant, s->key.params,
			     s->key.device, s->key.backend, s->key.build};
	for (size_t j = 0; j < 6; j++)
		rows_str(w, key[j]);
	rows_str(w, d.a ? rec_status_name(d.a->status) : "");
	rows_num(w, median_of(d.a));
	rows_str(w, d.b ? rec_status_name(d.b->status) : "");
	rows_num(w, median_of(d.b));
	rows_num(w, (median_of(d.b) / median_of(d.a) - 1) * 100);
	rows_num(w, noise_of(d) * 100);
	rows_str(w, word);
	rows_str(w, d.b ? regress_verdict_name(d.b->verdict) : "");
	rows_str(w, rule);
	rows_str(w, s->key.machine);
	rows_str(w, d.sa ? d.sa->key.machine : "");
	rows_str(w, d.b ? regress_commits(h, d.b, commits, sizeof commits) : "");
	rows_end_row(w);
}

/* Microseconds with 4 significant digits, never in exponent form. */
static const char *num(char *buf, size_t len, double us)
{
	if (!isfinite(us))
		return "-";
	snprintf(buf, len, fabs(us) >= 1e4 ? "%.0f" : "%.4g", us);
	return buf;
}

static void table_row(FILE *fp, const struct history *h, const struct hist_series *s,
		      struct side d, const char *word)
{
	char label[512], a[32], b[32], c[32], nz[32] = "-", night[160] = "-", commits[112];
	double ch = median_of(d.b) / median_of(d.a) - 1;
	if (isfinite(ch))
		snprintf(c, sizeof c, "%+.1f%%", ch * 100);
	else
		snprintf(c, sizeof c, "-");
	if (isfinite(noise_of(d)))
		snprintf(nz, sizeof nz, "%.2f%%", noise_of(d) * 100);
	if (d.b)
		snprintf(night, sizeof night, "%s%s%s", regress_verdict_name(d.b->verdict),
			 regress_commits(h, d.b, commits, sizeof commits)[0] ? " " : "", commits);
	fprintf(fp, "%10s %10s %8s %7s  %-10s %-19s %s%s%s\n", num(a, sizeof a, median_of(d.a)),
		num(b, sizeof b, median_of(d.b)), c, nz, word, night,
		history_key_label(&s->key, label, sizeof label), d.sa ? " vs A on " : "",
		d.sa ? d.sa->key.machine : "");
}

/* Writes the comparison of runs ia and ib of h, then how many got slower or
 * faster; as rows (CSV or JSON) when w is not NULL, else as the table. */
static void write_compare(const struct regress_conf *c, const struct history *h, size_t ia,
			  size_t ib, const char *op, struct rows *w, FILE *fp)
{
	int slower = 0, faster = 0, same = 0;
	if (!w)
		fprintf(fp, "A = %s (%s)\nB = %s (%s)\ncommits: %.7s..%.7s\n\n"
			    "%10s %10s %8s %7s  %-10s %-19s %s\n",
			h->runs[ia].run_id, h->runs[ia].git_rev[0] ? h->runs[ia].git_rev : "?",
			h->runs[ib].run_id, h->runs[ib].git_rev[0] ? h->runs[ib].git_rev : "?",
			h->runs[ia].git_rev[0] ? h->runs[ia].git_rev : "?",
			h->runs[ib].git_rev[0] ? h->runs[ib].git_rev : "?", "A us", "B us", "change",
			"noise", "compare", "night", "series");
	for (size_t i = 0; i < h->n; i++) {
		const struct hist_series *s = &h->series[i];
		struct side d = {history_point_at(s, ia), history_point_at(s, ib), NULL};
		if ((!d.a && !d.b) || (op && strcmp(op, s->key.op)))
			continue;
		if (!d.a) /* B on another machine than A: the same op and params there */
			d.a = compare_partner(h, s, ia, &d.sa);
		else if (!d.b && compare_taken(h, s, ia, ib))
			continue;
		const char *rule;
		const char *word = compare_word(c, d, &rule);
		slower += !strcmp(word, "slower");
		faster += !strcmp(word, "faster");
		same += !strcmp(word, "same");
		if (w)
			data_row(w, h, s, d, word, rule);
		else
			table_row(fp, h, s, d, word);
	}
	if (w)
		rows_end(w);
	else
		fprintf(fp, "\n%d slower, %d faster, %d the same (the nightly's rule: the change "
			    "against the series' night-to-night noise, the larger of A's and B's)\n",
			slower, faster, same);
}

struct compare_args {
	struct paths paths;
	const char *op, *format;
};

typedef struct compare_args A;
static const struct cli_opt compare_opts[] = {
	CLI_OPT_STR(A, op, 0, "op", "NAME", "only series of this op"),
	CLI_OPT_CHOICE(A, format, "format", "F", "table|csv|json",
		       "table (default), csv, or json (an array of objects\n"
		       "keyed by the csv's columns)"),
	CLI_OPTS_HISTORY_PATHS(A, paths),
	CLI_OPT_END,
};

const struct cli_spec cmd_compare_spec = {
	.name = "compare",
	.usage = "compare [OPTIONS] RUN_A RUN_B\n"
		 "       ddt compare [OPTIONS] latest",
	.about = "Shows every kernel series measured in either run side by side: the median\n"
		 "of each, the change from A to B, and two verdicts: `compare`, slower or\n"
		 "faster by the nightly's own rule (at least regress.min_delta_pct,\n"
		 "noise_multiple x and more than z_threshold x the series' night-to-night\n"
		 "noise, the larger of A's and B's), else same. And `night`, B's own\n"
		 "verdict against its history, with its commits when it names a change.\n"
		 "Runs of two machines are compared series by series by op, variant,\n"
		 "params and backend. RUN_A and RUN_B are run ids (folders of runs/),\n"
		 "'latest' the newest; 'ddt compare latest' compares the newest night with\n"
		 "the one before it;\n"
		 "the header gives their revisions as a range for `git log`.",
	.opts = compare_opts,
	.takes_args = 1,
};

/* The run named id: its index in h, the newest for "latest"; -1 when none. */
static long run_named(const struct history *h, const char *id)
{
	if (!strcmp(id, "latest"))
		return h->nruns ? (long)h->nruns - 1 : -1;
	return history_run_index(h, id);
}

/* The runs to compare from the n (1 or 2) names given: two ids ("latest"
 * for the newest), or "latest" alone: the night before the newest, and the
 * newest. Returns 0, or DDT_EINPUT naming the run not found and the newest
 * ones there are. */
static int compare_runs(const struct history *h, int n, char **names, const char *dir, long *ia,
			long *ib)
{
	char have[400] = "";
	size_t len = 0;
	if (n == 1) {
		*ia = (long)h->nruns - 2;
		*ib = (long)h->nruns - 1;
		if (*ia >= 0)
			return 0;
		return err_set(DDT_EINPUT, "'latest' compares the two newest nights; %s holds %zu",
			       dir, h->nruns);
	}
	*ia = run_named(h, names[0]);
	*ib = run_named(h, names[1]);
	if (*ia >= 0 && *ib >= 0)
		return 0;
	for (size_t k = h->nruns; k-- > 0 && h->nruns - k <= 5 && len < sizeof have;)
		len += (size_t)snprintf(have + len, sizeof have - len, "%s%s", len ? ", " : "",
					h->runs[k].run_id);
	return err_set(DDT_EINPUT, "no readable run %s in %s; %s%s%s", *ia < 0 ? names[0] : names[1],
		       dir, h->nruns ? "the newest: " : "no runs there", have,
		       h->nruns > 5 ? ", ... ('ddt history' lists them all; 'latest' names the newest)"
				    : "");
}

int cmd_compare(int argc, char **argv)
{
	struct compare_args a = {.format = "table"};
	struct regress_conf conf;
	struct history h;
	struct ydiag warn = {0};
	int first, rc, status = 0;
	long ia, ib;

	paths_init(&a.paths, "default");
	if ((rc = cli_parse(&cmd_compare_spec, &a, argc, argv, &first)) >= 0)
		return rc;
	if (argc - first != 2 && !(argc - first == 1 && !strcmp(argv[first], "latest")))
		return cli_usage_error("compare", "expected two run ids, RUN_A and RUN_B, or "
						  "'latest' (the newest night against the one before)");
	if ((rc = regress_conf_load_file(&conf, a.paths.template_path)) != 0)
		return cli_fail("compare", rc);
	rc = history_load(&h, a.paths.runs, &warn);
	for (size_t i = 0; i < warn.n; i++)
		fputs("ddt compare: warning: ", stderr), esc_line(stderr, warn.msgs[i]);
	ydiag_free(&warn);
	if (rc) {
		status = cli_fail("compare", rc);
		goto done;
	}
	if ((status = cmd_check_op("compare", cmd_history_has_op(&h, a.op) ? NULL : a.op)) != 0)
		goto done;
	if ((rc = compare_runs(&h, argc - first, argv + first, a.paths.runs, &ia, &ib)) != 0) {
		status = cli_fail("compare", rc);
		goto done;
	}
	regress_history(&conf, &h);
	struct rows w;
	enum rows_format fmt;
	int as_rows = !rows_format_parse(a.format, &fmt);
	if (as_rows)
		rows_begin(&w, stdout, fmt, COMPARE_CSV_HEADER);
	write_compare(&conf, &h, (size_t)ia, (size_t)ib, a.op, as_rows ? &w : NULL, stdout);
	status = fflush(stdout) == 0 ? 0 : 1;
done:
	history_free(&h);
	return status;
}
