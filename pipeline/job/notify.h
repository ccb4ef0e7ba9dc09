/* notify.h - the morning news: after the documents, the night's verdict sent
 * where people read it, by a command (the summary on stdin, the verdict in the
 * environment) and/or a webhook (a JSON POST, Slack-compatible `text`), each
 * retried with backoff; never a reason for the nightly to fail. */
#ifndef DDT_NOTIFY_H
#define DDT_NOTIFY_H

#include <stddef.h>

#include "site.h"
#include "ydoc.h"

enum notify_when { NOTIFY_ALWAYS, NOTIFY_PROBLEMS };

/* The template's `nightly.notify` section. */
struct notify_conf {
	char command[1024];      /* run by /bin/sh -c; "" none */
	char webhook_url[1024];  /* http://host[:port]/path; "" none (https: use the command) */
	enum notify_when when;   /* every night, or only when its exit status is not 0 */
	int attempts;            /* tries per channel */
	double backoff_first_s;  /* the wait before the second try; doubled before each next */
	double timeout_s;        /* each try's limit */
	char links_base_url[512]; /* where reports/ is served; "": file:// links */
	char source[320];
};

/* Loads `notify` of the nightly section sec (NULL, or no `notify` key:
 * nothing configured, no channel). Problems go to y as file:line:col.
 * Returns 0 or DDT_EINPUT. */
int notify_conf_load(struct notify_conf *c, struct yctx *y, struct ydoc_node *sec);

/* What a night tells. */
struct notify_msg {
	const char *run_id;            /* NULL: no run was committed */
	int status;                    /* the nightly's exit status */
	const struct site_news *news;  /* NULL: no site was written */
	const char *reports_dir;       /* summary.txt, report.pdf, index.html are under it */
};

/* "ok", "failed", "bad-input", "regression", "kernel-failed" of an exit status. */
const char *notify_verdict(int status);

/* The webhook's JSON body into *json (malloc'd, *len bytes): text (Slack's
 * field: the whole message), run_id, status, verdict, headline,
 * regressions, open_alerts, alerts, links {site, report_pdf, report_xlsx,
 * summary}. Returns 0 or DDT_ENOMEM. */
int notify_json(const struct notify_conf *c, const struct notify_msg *m, char **json,
		size_t *len);

/* One HTTP/1.1 POST of body to url (http:// only) within timeout_s;
 * *http_status receives the response's status (0: none came). Returns 0 on
 * a 2xx, else DDT_EIO with the message set. */
int notify_http_post(const char *url, const char *body, size_t len, double timeout_s,
		     int *http_status);

/* Sends m through every configured channel (the command, then the webhook),
 * each tried up to c->attempts times with backoff, unless c->when skips
 * this night. A line per channel ("webhook: sent (HTTP 200, 2nd try)") into
 * report (len bytes). Returns 0 when every channel delivered (or none is
 * configured), else the last failure (message set): the caller reports it
 * and goes on. */
int notify_send(const struct notify_conf *c, const struct notify_msg *m, char *report,
		size_t len);

#endif
