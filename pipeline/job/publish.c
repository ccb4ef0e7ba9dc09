/* publish.c - after a night's documents: the history site, then the news. */
#include "publish.h"

#include "err.h"
#include "site_build.h"

#include <stdarg.h>
#include <string.h>

/* A line into the log, and on stdout unless quiet (warn: on stderr always). */
static void say(const struct publish_night *p, int warn, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(const struct publish_night *p, int warn, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (p->log)
		fprintf(p->log, "[publish] %s%s\n", warn ? "warning: " : "", line);
	if (warn) {
		fflush(stdout);
		fprintf(stderr, "ddt nightly: warning: %s\n", line);
	} else if (!p->quiet)
		printf("%s\n", line);
}

/* The site from runs/, its overview's lines into news. Returns 0 or the error. */
static int publish_site(const struct publish_night *p, struct site_news *news)
{
	struct site_conf conf;
	struct ydiag diag = {0};
	size_t pages = 0;
	int rc = site_conf_load(&conf, p->t, &diag);

	if (rc)
		err_set(rc, "%s", diag.n ? diag.msgs[0] : "site: bad settings");
	ydiag_free(&diag);
	if (!rc)
		rc = site_build(p->paths->runs, p->paths->reports, p->paths->home, &conf, news,
				&pages);
	if (rc)
		say(p, 1, "site not rebuilt: %s", err_msg());
	else
		say(p, 0, "site: %s/index.html, %zu series page%s", p->paths->reports, pages - 1,
		    pages == 2 ? "" : "s");
	return rc;
}

void publish_night(const struct publish_night *p)
{
	struct site_news news;
	struct notify_msg m = {p->run_id, p->status, NULL, p->paths->reports};
	char report[1400];

	if (p->run_id && publish_site(p, &news) == 0)
		m.news = &news;
	if (notify_send(p->notify, &m, report, sizeof report) != 0)
		say(p, 1, "notify: %s", report);
	else if (report[0])
		say(p, 0, "notify: %s", report);
}
