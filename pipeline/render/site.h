/* site.h - the history as a static web site: reports/index.html (the newest
 * night: headline, band, open alerts, every series and night) and one page per
 * series under reports/site/ (its history chart as SVG, drawn by the PDF's
 * chart code, its change points with commit links, its nights with links to
 * their report.pdf and report.xlsx). Plain HTML and CSS, no script, nothing
 * fetched: it reads the same from a file:// URL as from any server. */
#ifndef DDT_SITE_H
#define DDT_SITE_H

#include <stddef.h>

#include "history.h"
#include "report_data.h"
#include "tmpl.h"
#include "ydoc.h"

/* The template's `site:` section. Commit ranges are linked through
 * regress.commit_url, the key the alert lines use (regress.h). */
struct site_conf {
	double chart_width_pt, chart_height_pt; /* each series' chart */
	int alert_nights;      /* the overview lists change points of this many newest nights */
	char source[320];
};

/* Loads and checks the `site:` section of t (every key required, unknown
 * keys are errors, the old site.commit_url names where it went; problems
 * to diag as file:line:col). Returns 0 or DDT_EINPUT (also when the section
 * is missing). */
int site_conf_load(struct site_conf *c, const struct tmpl *t, struct ydiag *diag);

/* What the site says in a few lines: the notifier sends these. */
#define SITE_NEWS_ALERTS 16
struct site_news {
	char run_id[80];          /* the newest night; "" when there is none */
	char headline[512];       /* "b300-b8-native 462.9 tok/s (p5-p95 431.0-488.2)" */
	int nalerts;              /* open alerts, one per id (a commit range; all of
				   * them; the first SITE_NEWS_ALERTS kept) */
	char alerts[SITE_NEWS_ALERTS][1024]; /* the nightly's line of each
					      * (regress_alert_group_line) */
	char regress_status[512]; /* the newest night's line (report_regress_status) */
};

/* What the site is made from. */
struct site_in {
	const struct history *h;     /* analysed (regress_history); its newest night is shown */
	const struct report_data *d; /* the newest night's documents' data (its headline);
				      * NULL: the overview says there is none */
	/* the newest night's verdicts and alerts with the answers runs/acks.yaml
	 * holds now: what its report's page one and summary.txt print (d->night
	 * when d has it); NULL: none stored, the site says so */
	const struct regress_night *night;
	const struct report_night_text *ntext; /* night's lines, linked through commit_url
						* (report_night_text_make); NULL with night */
	const char *commit_url;      /* regress.commit_url ({good}, {bad}); NULL or "": none */
	const struct site_conf *conf;
	const char *reports_dir;     /* where each night's documents are looked for */
};

/* Writes the site for in into reports_dir: the series pages into
 * reports_dir/site/ (built under a temporary name and swapped in whole),
 * then reports_dir/index.html (atomically). The same input gives the same
 * bytes. news (may be NULL) receives the overview's lines; *pages (may be
 * NULL) how many pages were written. Returns 0, DDT_EIO or DDT_ENOMEM. */
int site_write(const struct site_in *in, struct site_news *news, size_t *pages);

/* Appends s to fp with &, <, >, " and ' escaped: every outside text (device
 * names, hosts, reasons) goes through it. */
void site_html_escape(FILE *fp, const char *s);

#endif
