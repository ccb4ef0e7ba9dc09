/* publish.h - after a night's documents: the history site rebuilt, then the
 * night's news sent (site.h, notify.h); neither can fail the night. */
#ifndef DDT_PUBLISH_H
#define DDT_PUBLISH_H

#include <stdio.h>

#include "notify.h"
#include "paths.h"
#include "tmpl.h"

struct publish_night {
	const struct paths *paths;
	const struct tmpl *t;              /* its `site:` section (checked before the night) */
	const struct notify_conf *notify;  /* nightly.notify */
	const char *run_id;                /* NULL: no run was committed (no site rebuilt) */
	int status;                        /* the night's exit status so far */
	int quiet;                         /* print only what went wrong (on stderr) */
	FILE *log;                         /* the night's log: a line per step (may be NULL) */
};

/* Rebuilds reports/index.html and reports/site/ from runs/, then sends the
 * night's news. What went wrong is printed on stderr as a warning and logged;
 * nothing is returned: the night's exit status stays what the stages made. */
void publish_night(const struct publish_night *p);

#endif
