/* site.c - the history as a static web site: reports/index.html and a page and
 * an SVG chart per series under reports/site/ (see site.h). */
#include "site.h"

#include "chart.h"
#include "chart_report.h"
#include "err.h"
#include "fsx.h"
#include "regress.h"
#include "report.h"
#include "revrange.h"
#include "yschema.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SITE_DIR "site"

/* ---------------------------------------------------------------- settings */

/* site.commit_url went to regress.commit_url (one link for a commit
 * range, the alert lines' own): a template still holding it is told so. */
static void moved_commit_url(struct yctx *y, struct ydoc_node *sec)
{
	struct ydoc_node *n = ydoc_get(sec, "commit_url");
	if (n)
		ydiag_add(y->diag, y->file, n->line, n->col,
			  "site.commit_url: moved to regress.commit_url (\"https://.../compare/"
			  "{good}...{bad}\"), which the site and the alert lines share");
}

#define SITE(m, ty, u, h)                                                                 \
	YS_FIELD(struct site_conf, m, ty, Y_REQUIRED | Y_POSITIVE, .unit = (u), .help = (h))
/* In the order read. */
static const struct yschema_field site_fields[] = {
	YS_FIELD(struct site_conf, source, YS_STR, Y_REQUIRED, .help = "why this chart size and window"),
	SITE(chart_width_pt, YS_NUM, "pt", "each series' history chart (SVG), 96 px per 72 pt"),
	SITE(chart_height_pt, YS_NUM, "pt", "its height"),
	SITE(alert_nights, YS_INT, "nights",
	     "the overview's recent change points: the newest nights searched"),
};
static const struct yschema site_schema = YS_TABLE("site", site_fields, 0);

int site_conf_load(struct site_conf *c, const struct tmpl *t, struct ydiag *diag)
{
	struct yctx y;
	struct ydoc_node *sec = tmpl_section_map(t, "site", diag, &y);
	size_t before = diag->n;

	memset(c, 0, sizeof *c);
	if (!sec)
		return DDT_EINPUT;
	moved_commit_url(&y, sec);
	yschema_read(&y, sec, &site_schema, c);
	return diag->n > before ? DDT_EINPUT : 0;
}

/* ---------------------------------------------------------------- escaping */

void site_html_escape(FILE *fp, const char *s)
{
	for (;;) {
		size_t n = strcspn(s, "&<>\"'");
		fwrite(s, 1, n, fp);
		s += n;
		switch (*s++) {
		case '&': fputs("&amp;", fp); break;
		case '<': fputs("&lt;", fp); break;
		case '>': fputs("&gt;", fp); break;
		case '"': fputs("&quot;", fp); break;
		case '\'': fputs("&#39;", fp); break;
		default: return; /* the end */
		}
	}
}

/* Appends s percent-encoded but for unreserved characters (and '/' when
 * keep_slash): a path or a revision inside an href. */
static void url_escape(FILE *fp, const char *s, int keep_slash)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    strchr("-._~", ch) || (keep_slash && ch == '/'))
			fputc(ch, fp);
		else
			fprintf(fp, "%%%02X", ch);
	}
}

/* ---------------------------------------------------------------- what is shown */

/* One series as the site shows it. */
struct site_series {
	char slug[24];        /* "s-<16 hex>": its page and chart, stable across nights */
	char label[512];      /* history_key_label */
	const struct hist_point *newest; /* its newest point; NULL: none */
	const struct hist_point *change; /* its newest change point; NULL: none */
	const struct regress_alert *alert; /* its alert in the night's list; NULL: none */
	int nchanges;
};

struct site {
	const struct site_in *in;
	const struct history *h;
	struct site_series *s; /* [h->n] */
	int (*night_count)[3]; /* [h->nruns]: regressions/drifts, suspects, improvements */
	unsigned char *docs;   /* [h->nruns]: which documents retention kept (bit per file),
				* 0x80 once looked up */
	char *dir;             /* the temporary folder the pages go into */
	size_t pages;
};

/* A change point of a series: a confirmed regression, improvement or drift
 * naming its first bad night (the chart's dashed lines). */
static int is_change(const struct history *h, const struct hist_point *p)
{
	return (p->verdict == REG_REGRESSION || p->verdict == REG_IMPROVEMENT ||
		p->verdict == REG_DRIFT) &&
	       p->bad_run < h->nruns;
}

/* A change that makes the series slower. */
static int is_slower(const struct hist_point *p)
{
	return p->verdict == REG_REGRESSION || (p->verdict == REG_DRIFT && p->delta_frac > 0);
}

/* The slug of a series: a hash of every field of its key. */
static void series_slug(const struct hist_key *k, char *buf, size_t len)
{
	const char *f[] = {k->op, k->variant, k->params, k->device, k->backend, k->build, k->machine};
	uint64_t x = FSX_HASH_SEED;
	for (size_t i = 0; i < sizeof f / sizeof *f; i++)
		x = fsx_hash(x, f[i], strlen(f[i]) + 1);
	snprintf(buf, len, "s-%016" PRIx64, x);
}

/* Fills what the site shows of series i: its newest point, its change
 * points and the state of the newest one. */
static void series_summarize(struct site *st, size_t i)
{
	const struct hist_series *hs = &st->h->series[i];
	struct site_series *s = &st->s[i];
	const struct regress_night *night = st->in->night;
	size_t last_bad = HIST_NO_RUN;

	series_slug(&hs->key, s->slug, sizeof s->slug);
	history_key_label(&hs->key, s->label, sizeof s->label);
	s->newest = hs->n ? &hs->pts[hs->n - 1] : NULL;
	for (size_t k = 0; k < hs->n; k++) {
		const struct hist_point *p = &hs->pts[k];
		int *c = st->night_count[p->run];
		c[0] += is_slower(p);
		c[1] += p->verdict == REG_SUSPECT;
		c[2] += p->verdict == REG_IMPROVEMENT || (p->verdict == REG_DRIFT && p->delta_frac <= 0);
		if (!is_change(st->h, p) || p->bad_run == last_bad)
			continue;
		last_bad = p->bad_run;
		s->change = p;
		s->nchanges++;
	}
	/* its alert as the night's documents list it: the same list, not a rule of
	 * the site's own */
	for (size_t k = 0; night && k < night->nalerts && !s->alert; k++)
		if (history_key_equal(&night->alerts[k].key, &hs->key))
			s->alert = &night->alerts[k];
}

/* ---------------------------------------------------------------- formats */

static void fmt_num(char *buf, size_t len, const char *fmt, double v)
{
	if (isfinite(v))
		snprintf(buf, len, fmt, v);
	else
		snprintf(buf, len, "-");
}

/* A time in µs with the digits that matter (report_fmt_us). */
static const char *us_text(char *buf, size_t len, double us)
{
	report_fmt_us(buf, len, us);
	return buf;
}

static const char *pct_text(char *buf, size_t len, double frac)
{
	fmt_num(buf, len, "%+.1f%%", frac * 100);
	return buf;
}

/* A revision as text (7 characters, as git shortens; "+" when dirty). */
static void write_rev(FILE *fp, const char *rev)
{
	size_t n = strcspn(rev, "+");
	char shown[8];
	if (!n) {
		fputs("?", fp);
		return;
	}
	snprintf(shown, sizeof shown, "%.*s", (int)n, rev);
	fputs("<code>", fp);
	site_html_escape(fp, shown);
	fprintf(fp, "%s</code>", rev[n] ? "+" : "");
}

/* "a1b2c3d..e4f5a6b": the revisions of a range, linked as one through
 * regress.commit_url when it is set and both are known (regress_range_url,
 * the alert lines' own link). */
static void write_range(FILE *fp, const struct site *st, const char *good, const char *bad)
{
	char url[1024], g[64], b[64];
	snprintf(g, sizeof g, "%.*s", (int)strcspn(good, "+"), good);
	snprintf(b, sizeof b, "%.*s", (int)strcspn(bad, "+"), bad);
	revrange_url(st->in->commit_url, strcmp(g, "unknown") ? g : "",
		     strcmp(b, "unknown") ? b : "", url, sizeof url);
	if (url[0]) {
		fputs("<a class=\"rev\" href=\"", fp);
		site_html_escape(fp, url);
		fputs("\">", fp);
	}
	write_rev(fp, good);
	fputs("..", fp);
	write_rev(fp, bad);
	if (url[0])
		fputs("</a>", fp);
}

/* The commits of a change point, last good..first bad. */
static void write_commits(FILE *fp, const struct site *st, const struct hist_point *p)
{
	const struct history *h = st->h;
	write_range(fp, st, p->good_run < h->nruns ? h->runs[p->good_run].git_rev : "",
		    h->runs[p->bad_run].git_rev);
}

static const char *const doc_files[] = {"report.pdf", "report.xlsx", "summary.txt"};

/* Which of night r's documents are under reports_dir/<id>/, a bit each,
 * looked up once per build (every series page lists every night). */
static unsigned docs_of(const struct site *st, size_t r)
{
	char p[PATH_MAX];
	struct stat sb;
	if (!(st->docs[r] & 0x80)) {
		st->docs[r] = 0x80;
		for (size_t i = 0; i < sizeof doc_files / sizeof *doc_files; i++) {
			snprintf(p, sizeof p, "%s/%s/%s", st->in->reports_dir, st->h->runs[r].run_id,
				 doc_files[i]);
			if (lstat(p, &sb) == 0 && S_ISREG(sb.st_mode))
				st->docs[r] |= (unsigned char)(1u << i);
		}
	}
	return st->docs[r];
}

/* Night r's documents that retention kept, linked ("-" none); up is "../"
 * from a series page, "" from the overview. */
static void write_docs(FILE *fp, const struct site *st, size_t r, const char *up)
{
	unsigned have = docs_of(st, r);
	int any = 0;
	for (size_t i = 0; i < sizeof doc_files / sizeof *doc_files; i++) {
		if (!(have & (1u << i)))
			continue;
		fprintf(fp, "%s<a href=\"%s", any++ ? " " : "", up);
		url_escape(fp, st->h->runs[r].run_id, 0);
		fprintf(fp, "/%s\">%s</a>", doc_files[i], strchr(doc_files[i], '.') + 1);
	}
	if (!any)
		fputs("-", fp);
}

/* ---------------------------------------------------------------- pages */

static const char site_css[] =
	"body{font-family:'DejaVu Sans',sans-serif;margin:1.5em auto;max-width:70em;padding:0 1em;"
	"color:#222}h1{font-size:1.4em}h1,td a,table.key td{overflow-wrap:anywhere}h2{font-size:1.15em;margin-top:1.6em}"
	"table{border-collapse:collapse;font-size:.85em}td,th{border-bottom:1px solid #ddd;"
	"padding:.2em .6em;text-align:left;vertical-align:top}th{background:#f3f3f3;white-space:nowrap}"
	"td.n{text-align:right;font-variant-numeric:tabular-nums}.meta{color:#555}"
	".v-regression,.v-drift,.v-failed,.a-open{color:#b00020;font-weight:bold}"
	".v-suspect{color:#b06000}.v-improvement{color:#1b7a1b}.a-acknowledged,.a-invalid{color:#555}"
	"img.chart{max-width:100%;height:auto;border:1px solid #eee}code{font-size:.95em}";

/* The page's head and opening; title is outside text. */
static void page_open(FILE *fp, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", fp);
	site_html_escape(fp, title);
	fprintf(fp, "</title>\n<style>%s</style>\n</head>\n<body>\n", site_css);
}

static void page_close(FILE *fp)
{
	fputs("<p class=\"meta\">Written by <code>ddt site</code> (and every nightly) from "
	      "runs/; no script, nothing fetched.</p>\n</body>\n</html>\n", fp);
}

/* A verdict as a cell with its class. */
static void verdict_cell(FILE *fp, enum regress_verdict v)
{
	const char *name = (unsigned)v < REG_COUNT ? regress_verdict_names[v] : "?";
	fprintf(fp, "<td class=\"v-%.*s\">%s</td>", (int)strcspn(name, " "), name, name);
}

/* The alert that change point p of series i opened, while the night's list
 * holds it; NULL none. */
static const struct regress_alert *change_alert(const struct site *st, size_t i,
						const struct hist_point *p)
{
	const struct regress_alert *a = st->s[i].alert;
	return a && !strcmp(a->bad_run_id, st->h->runs[p->bad_run].run_id) ? a : NULL;
}

/* An alert's state and id as a cell ("-" none). */
static void alert_cell(FILE *fp, const struct regress_alert *a)
{
	const char *state = !a ? "none" : (unsigned)a->state < ALERT_COUNT
						 ? regress_alert_state_names[a->state] : "?";
	fprintf(fp, "<td class=\"a-%s\">", state);
	if (!a) {
		fputs("-</td>", fp);
		return;
	}
	fprintf(fp, "%s <code>", state);
	site_html_escape(fp, a->id);
	fputs("</code></td>", fp);
}

/* A series' name linked to its page; dir is "site/" from the overview, ""
 * from a series page. */
static void series_link(FILE *fp, const struct site_series *s, const char *dir)
{
	fprintf(fp, "<a href=\"%s%s.html\">", dir, s->slug);
	site_html_escape(fp, s->label);
	fputs("</a>", fp);
}

/* One alert group, the k alerts of one id and state from a (a commit range;
 * regress_alert_group), as a row: state and id, age, each series with its
 * size and 95% interval (linked to its page), the range (linked), the night
 * that confirmed it with its documents, the answer. dir and up: "site/" and
 * "" from the overview, "" and "../" from a series page. */
static void alert_row(FILE *fp, const struct site *st, const struct regress_alert *a, size_t k,
		      const char *dir, const char *up)
{
	size_t at = (size_t)(a - st->in->night->alerts);
	long r = history_run_index(st->h, a->opened_run);

	fputs("<tr>", fp);
	alert_cell(fp, a);
	fprintf(fp, "<td class=\"n\">%d night%s (%.1f days)</td><td>", a->age_nights + 1,
		a->age_nights ? "s" : "", a->age_days);
	for (size_t j = 0; j < k; j++) {
		long i = history_find(st->h, &a[j].key);
		fputs(j ? "<br>" : "", fp);
		if (i >= 0)
			fprintf(fp, "<a href=\"%s%s.html\">", dir, st->s[i].slug);
		site_html_escape(fp, st->in->ntext->series_line[at + j]);
		fputs(i >= 0 ? "</a>" : "", fp);
	}
	fputs("</td><td>", fp);
	if (a->good_rev[0] || a->bad_rev[0])
		write_range(fp, st, a->good_rev, a->bad_rev);
	else
		site_html_escape(fp, a->commits[0] ? a->commits : "-");
	fputs("</td><td>", fp);
	site_html_escape(fp, a->opened_run);
	if (r >= 0) {
		fputs(" ", fp);
		write_docs(fp, st, (size_t)r, up);
	}
	fputs("</td><td>", fp);
	site_html_escape(fp, a->answer[0] ? a->answer : "-");
	fputs("</td></tr>\n", fp);
}

static const char alert_head[] =
	"<tr><th>alert</th><th>open for</th><th>series: size [95% interval] over nights on the new "
	"level</th><th>commits (last good..first bad)</th><th>confirmed</th><th>answer "
	"(ddt ack)</th></tr>\n";

/* The alerts of series i (its rows of the night's list). */
static void series_alerts(FILE *fp, const struct site *st, size_t i)
{
	const struct regress_night *night = st->in->night;
	int n = 0;

	fputs("<h2 id=\"alerts\">Alerts</h2>\n", fp);
	for (size_t k = 0; night && k < night->nalerts; k++) {
		if (!history_key_equal(&night->alerts[k].key, &st->h->series[i].key))
			continue;
		if (!n++)
			fprintf(fp, "<table class=\"alerts\">\n%s", alert_head);
		alert_row(fp, st, &night->alerts[k], 1, "", "../");
	}
	fputs(n ? "</table>\n" : night ? "<p>No alert (open or answered) as of the newest night.</p>\n"
				       : "<p>No verdicts stored for the newest night: alerts unknown.</p>\n", fp);
}

/* The change points of series i, newest first. */
static void series_changes(FILE *fp, const struct site *st, size_t i)
{
	const struct hist_series *hs = &st->h->series[i];
	size_t last_bad = HIST_NO_RUN;
	char d[32], b[32];
	int any = 0;

	fputs("<h2 id=\"changes\">Change points</h2>\n", fp);
	for (size_t k = hs->n; k-- > 0;) {
		const struct hist_point *p = &hs->pts[k];
		if (!is_change(st->h, p) || p->bad_run == last_bad)
			continue;
		if (!any++)
			fputs("<table class=\"changes\">\n<tr><th>first bad night</th><th>verdict</th>"
			      "<th>change</th><th>median (µs)</th><th>commits (last good..first bad)</th>"
			      "<th>alert</th></tr>\n", fp);
		last_bad = p->bad_run;
		fputs("<tr><td>", fp);
		site_html_escape(fp, st->h->runs[p->bad_run].run_id);
		fputs("</td>", fp);
		verdict_cell(fp, p->verdict);
		fprintf(fp, "<td class=\"n\">%s</td><td class=\"n\">%s</td><td>",
			pct_text(d, sizeof d, p->delta_frac), us_text(b, sizeof b, p->median_us));
		write_commits(fp, st, p);
		fputs("</td>", fp);
		alert_cell(fp, change_alert(st, i, p));
		fputs("</tr>\n", fp);
	}
	fputs(any ? "</table>\n" : "<p>No change point in this series' history.</p>\n", fp);
}

/* Every night of series i, newest first. */
static void series_nights(FILE *fp, const struct site *st, size_t i)
{
	const struct hist_series *hs = &st->h->series[i];
	char a[32], b[32], c[32];

	fputs("<h2 id=\"nights\">Nights</h2>\n<table class=\"nights\">\n<tr><th>night</th>"
	      "<th>project</th><th>median (µs)</th><th>baseline (µs)</th><th>change</th>"
	      "<th>verdict</th><th>note</th><th>documents</th></tr>\n", fp);
	for (size_t k = hs->n; k-- > 0;) {
		const struct hist_point *p = &hs->pts[k];
		const struct hist_run *r = &st->h->runs[p->run];
		fputs("<tr><td>", fp);
		site_html_escape(fp, r->run_id);
		fputs("</td><td>", fp);
		write_rev(fp, r->git_rev);
		fprintf(fp, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>",
			us_text(a, sizeof a, p->median_us), us_text(b, sizeof b, p->baseline_us),
			pct_text(c, sizeof c, p->delta_frac));
		verdict_cell(fp, p->verdict);
		fputs("<td>", fp);
		site_html_escape(fp, p->reason);
		fputs("</td><td>", fp);
		write_docs(fp, st, p->run, "../");
		fputs("</td></tr>\n", fp);
	}
	fputs("</table>\n", fp);
}

/* The key of series i as a table. */
static void series_key(FILE *fp, const struct hist_key *k)
{
	const char *names[] = {"op", "variant", "params", "device", "backend", "build", "machine"};
	const char *vals[] = {k->op, k->variant, k->params, k->device, k->backend, k->build,
			      k->machine};
	fputs("<table class=\"key\">\n", fp);
	for (size_t j = 0; j < sizeof names / sizeof *names; j++) {
		fprintf(fp, "<tr><th>%s</th><td>", names[j]);
		site_html_escape(fp, vals[j]);
		fputs("</td></tr>\n", fp);
	}
	fputs("</table>\n", fp);
}

/* Writes len bytes to dir/name (a fresh folder of ours: created, never
 * replaced). Returns 0 or DDT_EIO. */
static int put_file(const char *dir, const char *name, const char *data, size_t len)
{
	char p[PATH_MAX];
	int fd, rc = 0;

	snprintf(p, sizeof p, "%s/%s", dir, name);
	if ((fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0)
		return err_set(DDT_EIO, "%s: cannot create: %s", p, strerror(errno));
	for (size_t off = 0; !rc && off < len;) {
		ssize_t w = write(fd, data + off, len - off);
		if (w < 0 && errno != EINTR)
			rc = err_set(DDT_EIO, "%s: write failed: %s", p, strerror(errno));
		off += w > 0 ? (size_t)w : 0;
	}
	if (close(fd) != 0 && !rc)
		rc = err_set(DDT_EIO, "%s: write failed: %s", p, strerror(errno));
	return rc;
}

/* The page of series i and its chart. */
static int series_page(struct site *st, size_t i)
{
	const struct hist_series *hs = &st->h->series[i];
	const struct site_series *s = &st->s[i];
	int idx = (int)i, rc;
	char name[48], *svg = NULL, *html = NULL, title[600];
	size_t svg_len, html_len;
	struct chart_history ch = {st->h, st->h->nruns, &idx, 1, title};
	FILE *fp;

	snprintf(title, sizeof title, "History of %s/%s", hs->key.op, hs->key.variant);
	if ((rc = chart_svg(&svg, &svg_len, st->in->conf->chart_width_pt,
			    st->in->conf->chart_height_pt, chart_report_history, &ch)) != 0)
		return rc;
	snprintf(name, sizeof name, "%s.svg", s->slug);
	rc = put_file(st->dir, name, svg, svg_len);
	free(svg);
	if (rc || !(fp = open_memstream(&html, &html_len)))
		return rc ? rc : err_nomem();
	page_open(fp, s->label);
	fputs("<p><a href=\"../index.html\">overview</a></p>\n<h1>", fp);
	site_html_escape(fp, hs->key.op);
	fputs("/", fp);
	site_html_escape(fp, hs->key.variant);
	fputs(" ", fp);
	site_html_escape(fp, hs->key.params);
	fputs("</h1>\n", fp);
	series_key(fp, &hs->key);
	fprintf(fp, "<p><img class=\"chart\" src=\"%s.svg\" width=\"%.0f\" height=\"%.0f\" "
		"alt=\"history chart\"></p>\n", s->slug, st->in->conf->chart_width_pt * 4 / 3,
		st->in->conf->chart_height_pt * 4 / 3);
	series_alerts(fp, st, i);
	series_changes(fp, st, i);
	series_nights(fp, st, i);
	page_close(fp);
	fclose(fp);
	snprintf(name, sizeof name, "%s.html", s->slug);
	rc = html ? put_file(st->dir, name, html, html_len) : err_nomem();
	free(html);
	st->pages++;
	return rc;
}

/* ---------------------------------------------------------------- the overview */

/* The headline scenarios of the newest night: median tok/s and band. */
static void overview_headline(FILE *fp, const struct site *st, struct site_news *news)
{
	const struct report_data *d = st->in->d;
	char status[512];
	size_t off = 0;

	fputs("<h2 id=\"headline\">Headline</h2>\n", fp);
	if (!d) {
		fputs("<p>No documents' data for the newest night.</p>\n", fp);
		return;
	}
	fputs("<table class=\"headline\">\n<tr><th>scenario</th><th>target</th><th>C</th>"
	      "<th>median tok/s</th><th>p5-p95 tok/s</th></tr>\n", fp);
	for (int k = 0; k < d->spec.nheadline; k++) {
		long i = report_scenario_row(d, d->spec.headline[k]);
		struct report_figure f;
		char med[32], lo[32], hi[32];
		if (i < 0)
			continue;
		report_figure(d, (size_t)i, &f);
		report_fmt_tok(med, sizeof med, isfinite(f.tok_p50) ? f.tok_p50 : f.tok_s);
		report_fmt_tok(lo, sizeof lo, f.tok_p5);
		report_fmt_tok(hi, sizeof hi, f.tok_p95);
		fputs("<tr><td>", fp);
		site_html_escape(fp, f.est->sc.name);
		fputs("</td><td>", fp);
		site_html_escape(fp, f.est->target->name);
		fprintf(fp, "</td><td class=\"n\">%d</td><td class=\"n headline\">%s</td>"
			"<td class=\"n\">%s-%s</td></tr>\n", f.est->sc.concurrency, med, lo, hi);
		if (news && off < sizeof news->headline)
			off += (size_t)snprintf(news->headline + off, sizeof news->headline - off,
						"%s%s %s tok/s (p5-p95 %s-%s)", off ? "; " : "",
						f.est->sc.name, med, lo, hi);
	}
	report_regress_status(d, status, sizeof status);
	fputs("</table>\n<p>", fp);
	site_html_escape(fp, status);
	fputs("</p>\n", fp);
}

/* Every alert of the newest night's list, open ones first, one row per
 * commit range (what summary.txt lists; page one prints the open ones);
 * news gets the nightly's line of each open one. */
static void overview_alerts(FILE *fp, const struct site *st, struct site_news *news)
{
	const struct regress_night *night = st->in->night;

	fputs("<h2 id=\"alerts\">Alerts</h2>\n", fp);
	if (!night) {
		fputs("<p>No verdicts stored for the newest night: its alerts are unknown.</p>\n", fp);
		return;
	}
	fprintf(fp, "<p>%d open, %zu answered (<code>ddt ack SERIES|ALERT</code> answers one).</p>\n",
		night->open_alerts, night->nalerts - (size_t)night->open_alerts);
	if (!night->nalerts)
		return;
	fprintf(fp, "<table class=\"alerts\">\n%s", alert_head);
	for (int open = 1; open >= 0; open--)
		for (size_t i = 0, k; i < night->nalerts; i += k) {
			const struct regress_alert *a = &night->alerts[i];
			k = st->in->ntext->group[i];
			if ((a->state == ALERT_OPEN) != open)
				continue;
			alert_row(fp, st, a, k, SITE_DIR "/", "");
			if (!open || !news)
				continue;
			if (news->nalerts < SITE_NEWS_ALERTS)
				snprintf(news->alerts[news->nalerts], sizeof news->alerts[0], "%s",
					 st->in->ntext->group_line[i]);
			news->nalerts++;
		}
	fputs("</table>\n", fp);
}

/* The change points of every series whose first bad night is among the
 * newest alert_nights nights, newest first. */
static void overview_recent(FILE *fp, const struct site *st)
{
	const struct history *h = st->h;
	size_t from = h->nruns > (size_t)st->in->conf->alert_nights
			      ? h->nruns - (size_t)st->in->conf->alert_nights : 0;
	char a[32];
	int n = 0;

	fprintf(fp, "<h2 id=\"recent\">Change points of the newest %d nights</h2>\n",
		st->in->conf->alert_nights);
	for (size_t r = h->nruns; r-- > from;)
		for (size_t i = 0; i < h->n; i++) {
			const struct hist_point *p = st->s[i].change;
			/* a series' older change points on the same nights are on its page */
			if (!p || p->bad_run != r)
				continue;
			if (!n++)
				fputs("<table class=\"recent\">\n<tr><th>first bad night</th><th>series"
				      "</th><th>verdict</th><th>change</th><th>commits</th><th>alert</th>"
				      "</tr>\n", fp);
			fputs("<tr><td>", fp);
			site_html_escape(fp, h->runs[r].run_id);
			fputs("</td><td>", fp);
			series_link(fp, &st->s[i], SITE_DIR "/");
			fputs("</td>", fp);
			verdict_cell(fp, p->verdict);
			fprintf(fp, "<td class=\"n\">%s</td><td>", pct_text(a, sizeof a, p->delta_frac));
			write_commits(fp, st, p);
			fputs("</td>", fp);
			alert_cell(fp, change_alert(st, i, p));
			fputs("</tr>\n", fp);
		}
	fputs(n ? "</table>\n" : "<p>None.</p>\n", fp);
}

/* The newest night's verdicts that say something (verdicts.yaml). */
static void overview_tonight(FILE *fp, const struct site *st)
{
	const struct regress_night *v = st->in->night;
	char line[1024];
	int n = 0;

	fputs("<h2 id=\"tonight\">The newest night's verdicts</h2>\n", fp);
	for (size_t i = 0; v && i < v->n; i++) {
		enum regress_verdict w = v->entries[i].verdict;
		/* one line each for what changed; the counts of the rest (new, not
		 * judgeable, environment changed) are in the status line above */
		if (w == REG_OK || w == REG_NEW || w == REG_SHORT || w == REG_SKIPPED ||
		    w == REG_UNJUDGED || w == REG_ENV)
			continue;
		if (!n++)
			fputs("<table class=\"tonight\">\n<tr><th>verdict</th><th>what</th></tr>\n", fp);
		fputs("<tr>", fp);
		verdict_cell(fp, w);
		fputs("<td>", fp);
		snprintf(line, sizeof line, "%s", st->in->ntext->entry[i]); /* as the lines' width */
		site_html_escape(fp, line);
		fputs("</td></tr>\n", fp);
	}
	fputs(n ? "</table>\n" : v ? "<p>No regression, drift, suspect, improvement, outlier or "
				     "failure.</p>\n" : "<p>No verdicts stored for the newest night.</p>\n", fp);
}

/* Every series: its newest night and verdict, its change points, its alert. */
static void overview_series(FILE *fp, const struct site *st)
{
	char a[32], b[32];

	fprintf(fp, "<h2 id=\"series\">Series (%zu)</h2>\n<table class=\"series\">\n<tr><th>series"
		"</th><th>newest median (µs)</th><th>change</th><th>verdict</th><th>change points"
		"</th><th>alert</th></tr>\n", st->h->n);
	for (size_t i = 0; i < st->h->n; i++) {
		const struct site_series *s = &st->s[i];
		const struct hist_point *p = s->newest;
		fputs("<tr><td>", fp);
		series_link(fp, s, SITE_DIR "/");
		fprintf(fp, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td>",
			us_text(a, sizeof a, p ? p->median_us : NAN),
			pct_text(b, sizeof b, p ? p->delta_frac : NAN));
		if (p)
			verdict_cell(fp, p->verdict);
		else
			fputs("<td>-</td>", fp);
		fprintf(fp, "<td class=\"n\">%d</td>", s->nchanges);
		alert_cell(fp, s->alert);
		fputs("</tr>\n", fp);
	}
	fputs("</table>\n", fp);
}

/* Every night, newest first, with its counts and documents. */
static void overview_nights(FILE *fp, const struct site *st)
{
	fprintf(fp, "<h2 id=\"nights\">Nights (%zu)</h2>\n<table class=\"nights\">\n<tr><th>night"
		"</th><th>created</th><th>project</th><th>slower</th><th>suspect</th><th>faster"
		"</th><th>documents</th></tr>\n", st->h->nruns);
	for (size_t r = st->h->nruns; r-- > 0;) {
		const struct hist_run *run = &st->h->runs[r];
		const int *c = st->night_count[r];
		fputs("<tr><td>", fp);
		site_html_escape(fp, run->run_id);
		fputs("</td><td>", fp);
		site_html_escape(fp, run->created);
		fputs("</td><td>", fp);
		write_rev(fp, run->git_rev);
		fprintf(fp, "</td><td class=\"n\">%d</td><td class=\"n\">%d</td><td class=\"n\">%d"
			"</td><td>", c[0], c[1], c[2]);
		write_docs(fp, st, r, "");
		fputs("</td></tr>\n", fp);
	}
	fputs("</table>\n", fp);
}

/* index.html into *html (malloc'd). */
static int overview_page(struct site *st, struct site_news *news, char **html, size_t *len)
{
	const struct hist_run *r = &st->h->runs[st->h->nruns - 1];
	FILE *fp = open_memstream(html, len);

	if (!fp)
		return err_nomem();
	page_open(fp, "ddt nightly history");
	fputs("<h1>ddt nightly history</h1>\n<p class=\"meta\">Newest night <b id=\"newest\">", fp);
	site_html_escape(fp, r->run_id);
	fputs("</b> (", fp);
	site_html_escape(fp, r->created);
	fputs(", project ", fp);
	write_rev(fp, r->git_rev);
	fprintf(fp, "); %zu nights, %zu series. Documents: ", st->h->nruns, st->h->n);
	write_docs(fp, st, st->h->nruns - 1, "");
	fputs(".</p>\n", fp);
	overview_headline(fp, st, news);
	overview_alerts(fp, st, news);
	overview_recent(fp, st);
	overview_tonight(fp, st);
	overview_series(fp, st);
	overview_nights(fp, st);
	page_close(fp);
	fclose(fp);
	return *html ? 0 : err_nomem();
}

/* ---------------------------------------------------------------- writing */

/* Puts the folder of pages in place of reports_dir/site: its files synced
 * (one syncfs for the 200 files: each fsynced alone cost 3 ms apiece on the
 * development machine), then renamed in, or swapped whole with the one
 * before, which is then removed. */
static int pages_commit(const struct site *st, const char *final)
{
	int fd = open(st->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rc = 0;

	if (fd < 0 || syncfs(fd) != 0)
		rc = err_set(DDT_EIO, "%s: cannot sync: %s", st->dir, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (!rc && fsx_kind(final) == FSX_NONE)
		rc = fsx_rename(st->dir, final, FSX_NOREPLACE);
	else if (!rc && (rc = fsx_rename(st->dir, final, FSX_EXCHANGE)) == 0)
		rc = fsx_rm_rf(st->dir); /* the old pages, now under the temporary name */
	if (rc)
		fsx_rm_rf(st->dir);
	return rc;
}

static void site_free(struct site *st)
{
	if (st->dir)
		fsx_rm_rf(st->dir);
	free(st->dir);
	free(st->s);
	free(st->night_count);
	free(st->docs);
}

/* The series pages into the temporary folder, then in place. */
static int write_pages(struct site *st, const char *final)
{
	int rc = fsx_dir_begin(final, &st->dir);
	for (size_t i = 0; !rc && i < st->h->n; i++)
		rc = series_page(st, i);
	if (!rc) {
		rc = pages_commit(st, final); /* the temporary folder is gone either way */
		free(st->dir);
		st->dir = NULL;
	}
	return rc;
}

int site_write(const struct site_in *in, struct site_news *news, size_t *pages)
{
	struct site st = {in, in->h, NULL, NULL, NULL, NULL, 0};
	char *final = fsx_join(in->reports_dir, SITE_DIR), *index = fsx_join(in->reports_dir, "index.html");
	char *html = NULL;
	size_t len = 0;
	int rc = 0;

	if (news) {
		memset(news, 0, sizeof *news);
		if (in->d)
			report_regress_status(in->d, news->regress_status, sizeof news->regress_status);
	}
	if (!in->h->nruns)
		rc = err_set(DDT_ENOTFOUND, "no night to show: the history is empty");
	else if (!final || !index || !(st.s = calloc(in->h->n + 1, sizeof *st.s)) ||
		 !(st.night_count = calloc(in->h->nruns, sizeof *st.night_count)) ||
		 !(st.docs = calloc(in->h->nruns, 1)))
		rc = err_nomem();
	else if ((rc = fsx_mkdir_p(in->reports_dir)) == 0) {
		for (size_t i = 0; i < in->h->n; i++)
			series_summarize(&st, i);
		if (news)
			snprintf(news->run_id, sizeof news->run_id, "%s",
				 in->h->runs[in->h->nruns - 1].run_id);
		rc = write_pages(&st, final);
	}
	if (!rc && (rc = overview_page(&st, news, &html, &len)) == 0)
		rc = fsx_write_all(index, html, len);
	if (pages)
		*pages = rc ? 0 : st.pages + 1;
	free(html);
	free(final);
	free(index);
	site_free(&st);
	return rc;
}
