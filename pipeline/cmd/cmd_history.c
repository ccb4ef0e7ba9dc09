/* history_cmd.c - `ddt history`: every series over the nights, with verdicts. */
#include "cli.h"
#include "csv.h"
#include "err.h"
#include "history.h"
#include "regress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: ddt history [OPTIONS]\n"
	"\n"
	"Shows every kernel series (op x variant x params x device x backend x build)\n"
	"over the nights of runs/, with the regression verdict of each night as it\n"
	"reads now: a suspect night the next night reverted reads \"outlier\" (the\n"
	"verdict the nightly gave on the night itself is the `night` column of the\n"
	"CSV). Damaged run records are skipped with a warning naming the file.\n"
	"\n"
	"  --op NAME           only series of this op\n"
	"  --variant NAME      only series of this variant\n"
	"  --last N            only the last N nights (default 14; 0: all)\n"
	"  --format F          table (default) or csv\n"
	"  --template PATH     where the regress: settings come from (default:\n"
	"                      templates/default.yaml)\n"
	"  --runs DIR          run records folder (default: runs/)\n"
	"  -h, --help          this text\n";

/* The CSV columns, in this order. */
#define HISTORY_CSV_HEADER                                                                 \
	"op,variant,params,device,backend,build,run_id,created,status,median_us,baseline_us," \
	"noise_pct,delta_pct,z,band_lo_us,band_hi_us,verdict,night_verdict,reason"

struct filter {
	const char *op, *variant;
	size_t first_run; /* runs before this one are not shown */
};

static int shown(const struct filter *f, const struct hist_series *s)
{
	return (!f->op || !strcmp(f->op, s->key.op)) &&
	       (!f->variant || !strcmp(f->variant, s->key.variant));
}

static void write_csv(const struct history *h, const struct filter *f, FILE *fp)
{
	fprintf(fp, HISTORY_CSV_HEADER "\n");
	for (size_t i = 0; i < h->n; i++) {
		const struct hist_series *s = &h->series[i];
		if (!shown(f, s))
			continue;
		for (size_t k = 0; k < s->n; k++) {
			const struct hist_point *p = &s->pts[k];
			const char *fields[] = {s->key.op,
						s->key.variant,
						s->key.params,
						s->key.device,
						s->key.backend,
						s->key.build,
						h->runs[p->run].run_id,
						h->runs[p->run].created,
						rec_status_name(p->status)};
			if (p->run < f->first_run)
				continue;
			for (size_t j = 0; j < sizeof fields / sizeof *fields; j++) {
				if (j)
					fputc(',', fp);
				csv_field(fp, fields[j]);
			}
			csv_num(fp, p->median_us);
			csv_num(fp, p->baseline_us);
			csv_num(fp, p->noise_frac * 100);
			csv_num(fp, p->delta_frac * 100);
			csv_num(fp, p->z);
			csv_num(fp, p->band_lo_us);
			csv_num(fp, p->band_hi_us);
			fputc(',', fp);
			csv_field(fp, regress_verdict_name(p->verdict));
			fputc(',', fp);
			csv_field(fp, regress_verdict_name(p->verdict_night));
			fputc(',', fp);
			csv_field(fp, p->reason);
			fputc('\n', fp);
		}
	}
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
	char a[32], b[32], c[32], d[32], e[32];

	fprintf(fp, "  %-28s %11s %11s %8s %7s %7s  %s", h->runs[p->run].run_id,
		fmt_us(a, sizeof a, p->median_us), fmt_us(b, sizeof b, p->baseline_us),
		fmt_pct(c, sizeof c, p->delta_frac, 1), fmt_pct(d, sizeof d, p->noise_frac, 0),
		fmt_num(e, sizeof e, "%+.1f", p->z), regress_verdict_name(p->verdict));
	if (p->verdict != p->verdict_night)
		fprintf(fp, " (on the night: %s)", regress_verdict_name(p->verdict_night));
	if (p->status != REC_OK && p->reason[0])
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

enum { OPT_OP = OPT_FIRST_FREE, OPT_VARIANT, OPT_LAST, OPT_FORMAT };

int cmd_history(int argc, char **argv)
{
	static const struct option opts[] = {{"op", required_argument, NULL, OPT_OP},
					     {"variant", required_argument, NULL, OPT_VARIANT},
					     {"last", required_argument, NULL, OPT_LAST},
					     {"format", required_argument, NULL, OPT_FORMAT},
					     {"help", no_argument, NULL, 'h'},
					     CLI_PATH_OPTIONS,
					     {NULL, 0, NULL, 0}};
	struct cli_paths paths;
	struct filter f = {0};
	struct regress_conf conf;
	struct history h;
	struct ydiag warn = {0};
	const char *format = "table";
	double last = 14;
	int opt, rc;

	cli_paths_init(&paths, "default");
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (cli_path_option(&paths, opt, optarg))
			continue;
		switch (opt) {
		case 'h':
			fputs(usage, stdout);
			return 0;
		case OPT_OP: f.op = optarg; break;
		case OPT_VARIANT: f.variant = optarg; break;
		case OPT_FORMAT: format = optarg; break;
		case OPT_LAST:
			if (ynum_parse(optarg, &last) || last < 0 || last != floor(last) ||
			    last > 1e9)
				return cli_usage_error("history",
						       "--last: expected a whole number >= 0, "
						       "got '%s'",
						       optarg);
			break;
		default:
			return cli_usage_error("history", "unknown option");
		}
	}
	if (optind < argc)
		return cli_usage_error("history", "unexpected argument '%s'", argv[optind]);
	if (strcmp(format, "table") && strcmp(format, "csv"))
		return cli_usage_error("history", "--format: expected table or csv, got '%s'",
				       format);
	if ((rc = regress_conf_load_file(&conf, paths.template_path)) != 0)
		return cli_fail("history", rc);
	rc = history_load(&h, paths.runs, &warn);
	for (size_t i = 0; i < warn.n; i++)
		fprintf(stderr, "ddt history: warning: %s\n", warn.msgs[i]);
	ydiag_free(&warn);
	if (rc) {
		history_free(&h);
		return cli_fail("history", rc);
	}
	regress_history(&conf, &h);
	f.first_run = last > 0 && h.nruns > (size_t)last ? h.nruns - (size_t)last : 0;
	if (!strcmp(format, "csv"))
		write_csv(&h, &f, stdout);
	else
		write_table(&h, &f, stdout);
	history_free(&h);
	return fflush(stdout) == 0 ? 0 : 1;
}
