/* site_build.h - the history site (site.h) made from runs/ alone: every
 * night judged, the newest night's documents' data and verdicts' lines. */
#ifndef DDT_SITE_BUILD_H
#define DDT_SITE_BUILD_H

#include "site.h"

/* The whole site from runs_dir alone: every night (history_load), judged with
 * the newest night's stored `regress:` settings, the newest night's documents'
 * data (report_data_load), the charts' fonts from home, under conf. Damaged
 * nights are skipped (history.h). Returns 0, DDT_ENOTFOUND (no run yet),
 * DDT_EINPUT, DDT_EIO or DDT_ENOMEM. */
int site_build(const char *runs_dir, const char *reports_dir, const char *home,
	       const struct site_conf *conf, struct site_news *news, size_t *pages);

#endif
