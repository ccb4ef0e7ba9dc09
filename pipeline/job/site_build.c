/* site_build.c - the history site made from runs/ alone (site_build.h). */
#include "site_build.h"

#include "chart.h"
#include "err.h"
#include "regress.h"
#include "report_load.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* The newest night's verdicts when its documents' data could not load:
 * verdicts.yaml with the answers of runs/acks.yaml (in h) applied, as
 * report_data does. Returns 1 when read. */
static int night_alone(struct regress_night *n, const char *runs_dir, const char *id,
		       const struct history *h)
{
	char path[PATH_MAX];
	struct ydiag diag = {0};
	int rc;

	snprintf(path, sizeof path, "%s/%s/verdicts.yaml", runs_dir, id);
	rc = regress_night_read(n, path, &diag);
	ydiag_free(&diag);
	if (!rc)
		regress_alerts_answer(n, h);
	return rc == 0;
}

int site_build(const char *runs_dir, const char *reports_dir, const char *home,
	       const struct site_conf *conf, struct site_news *news, size_t *pages)
{
	struct history h;
	struct ydiag warn = {0}, diag = {0};
	struct regress_conf rconf;
	struct report_data d;
	struct regress_night night = {0};
	char tmpl_path[PATH_MAX], fonts[PATH_MAX];
	int rc, have_d = 0, have_night = 0;

	memset(&d, 0, sizeof d);
	snprintf(fonts, sizeof fonts, "%s/fonts/fonts.conf", home);
	if ((rc = chart_fonts_init(fonts)) != 0)
		return rc;
	rc = history_load(&h, runs_dir, &warn);
	if (!rc && !h.nruns)
		rc = err_set(DDT_ENOTFOUND, "%s: no run yet: nothing to show", runs_dir);
	if (!rc) {
		const char *id = h.runs[h.nruns - 1].run_id;
		snprintf(tmpl_path, sizeof tmpl_path, "%s/%s/template/template.yaml", runs_dir, id);
		if ((rc = regress_conf_load_file(&rconf, tmpl_path)) == 0) {
			regress_history(&rconf, &h);
			/* a newest night whose documents' inputs are damaged still gets its
			 * pages; the overview then says its headline is missing */
			have_d = report_data_load(&d, runs_dir, id, &h, &diag) == 0;
			if (!have_d)
				have_night = night_alone(&night, runs_dir, id, &h);
		}
	}
	const struct regress_night *v = have_d && d.have_night ? &d.night
					: have_night ? &night : NULL;
	struct report_night_text text = {0};
	if (!rc && v)
		rc = report_night_text_make(&text, v, rconf.commit_url);
	if (!rc) {
		struct site_in in = {&h, have_d ? &d : NULL, v, v ? &text : NULL, rconf.commit_url,
				     conf, reports_dir};
		rc = site_write(&in, news, pages);
	}
	if (v)
		report_night_text_free(&text, v);
	regress_night_free(&night);
	report_data_free(&d);
	ydiag_free(&diag);
	ydiag_free(&warn);
	history_free(&h);
	return rc;
}
