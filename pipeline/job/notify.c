/* notify.c - the morning news: the night's verdict through a command and/or a
 * webhook (a small HTTP/1.1 POST over a socket), retried with backoff. */
#include "notify.h"

#include "err.h"
#include "fsx.h"
#include "yschema.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- settings */

/* webhook_url: "" or http://host[:port]/...; https is the command's job. */
static void check_url(struct yctx *y, struct ydoc_node *sec, const char *key, const char *url)
{
	struct ydoc_node *n = ydoc_get(sec, key);
	if (!url[0] || !n)
		return;
	if (!strncmp(url, "https://", 8))
		ydiag_add(y->diag, y->file, n->line, n->col,
			  "nightly.notify.%s: https is not supported by the built-in sender; use "
			  "`command:` with curl (ddt help nightly, \"History on the web\")", key);
	else if (strncmp(url, "http://", 7) || !url[7] || url[strcspn(url, " \r\n")])
		ydiag_add(y->diag, y->file, n->line, n->col,
			  "nightly.notify.%s: expected \"\" or http://host[:port]/path, got '%s'", key,
			  url);
}

static const struct yschema_name when_names[] = {
	{"always", NOTIFY_ALWAYS}, {"problems", NOTIFY_PROBLEMS}, {NULL, 0}};

#define NOTE(m, ty, fl, u, h)                                                             \
	YS_FIELD(struct notify_conf, m, ty, Y_REQUIRED | (fl), .unit = (u), .help = (h))
/* nightly.notify, in the order read. */
static const struct yschema_field notify_fields[] = {
	NOTE(source, YS_STR, 0, NULL, "why these tries and waits"),
	NOTE(command, YS_STR, 0, NULL, "run by sh -c with summary.txt on stdin; empty: none"),
	NOTE(webhook_url, YS_STR, 0, NULL, "http://host[:port]/path for a JSON POST; empty: none"),
	YS_FIELD(struct notify_conf, when, YS_ENUM, Y_REQUIRED, .names = when_names,
		 .help = "always, or problems (only when the exit status is not 0)"),
	NOTE(attempts, YS_INT, Y_POSITIVE, "tries", "tries per channel"),
	NOTE(backoff_first_s, YS_NUM, Y_NONNEG, "s",
	     "the wait before the second try, doubled before each next"),
	NOTE(timeout_s, YS_NUM, Y_POSITIVE, "s", "each try's limit"),
	NOTE(links_base_url, YS_STR, 0, NULL,
	     "where reports/ is served, for the links; empty: file:// paths"),
};
/* Read in two parts, webhook_url checked between them: up to webhook_url
 * (the table's first 3 entries), then the rest strictly (a key neither
 * part reads is unknown). */
#define NOTIFY_URL_AT 3
static const struct yschema notify_head = YS_PART("nightly.notify", notify_fields, NOTIFY_URL_AT);
static const struct yschema notify_tail =
	YS_PART("nightly.notify", notify_fields + NOTIFY_URL_AT,
		sizeof notify_fields / sizeof *notify_fields - NOTIFY_URL_AT);

int notify_conf_load(struct notify_conf *c, struct yctx *y, struct ydoc_node *sec)
{
	struct ydoc_node *n = NULL;
	size_t before = y->diag->n;

	memset(c, 0, sizeof *c);
	if (yget_node(y, sec, "notify", YDOC_MAP, 0, &n) || !n)
		return y->diag->n > before ? DDT_EINPUT : 0;
	yschema_read_fields(y, n, &notify_head, c);
	check_url(y, n, notify_fields[NOTIFY_URL_AT - 1].key, c->webhook_url); /* "" when unread */
	yschema_read(y, n, &notify_tail, c);
	return y->diag->n > before ? DDT_EINPUT : 0;
}

const char *notify_verdict(int status)
{
	switch (status) {
	case 0: return "ok";
	case 2: return "bad-input";
	case 3: return "regression";
	case 4: return "kernel-failed";
	default: return "failed";
	}
}

/* ---------------------------------------------------------------- the message */

/* s as a JSON string (quotes included). */
static void json_str(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(fp, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", fp);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(fp, "\\u%04x", ch);
		else
			fputc(ch, fp);
	}
	fputc('"', fp);
}

/* The address of reports_dir/rel: under links_base_url, else a file:// URL
 * of its absolute path, into buf. */
static void link_of(const struct notify_conf *c, const struct notify_msg *m, const char *rel,
		    char *buf, size_t len)
{
	char abs[PATH_MAX];
	if (c->links_base_url[0]) {
		size_t n = strlen(c->links_base_url);
		snprintf(buf, len, "%.*s/%s", (int)(n && c->links_base_url[n - 1] == '/' ? n - 1 : n),
			 c->links_base_url, rel);
	} else if (realpath(m->reports_dir, abs))
		snprintf(buf, len, "file://%s/%s", abs, rel);
	else
		snprintf(buf, len, "file://%s/%s", m->reports_dir, rel);
}

/* The message as people read it: Slack's `text`, the command's DDT_TEXT. */
static void message_text(const struct notify_conf *c, const struct notify_msg *m, FILE *fp)
{
	const struct site_news *n = m->news;
	char site[PATH_MAX + 600];

	fprintf(fp, "ddt nightly %s: %s (exit status %d)\n", m->run_id ? m->run_id : "(no run)",
		notify_verdict(m->status), m->status);
	if (n && n->headline[0])
		fprintf(fp, "headline: %s\n", n->headline);
	if (n && n->regress_status[0])
		fprintf(fp, "regressions: %s\n", n->regress_status);
	if (n && n->nalerts)
		fprintf(fp, "open alerts (%d):\n", n->nalerts);
	for (int i = 0; n && i < n->nalerts && i < SITE_NEWS_ALERTS; i++)
		fprintf(fp, "- %s\n", n->alerts[i]);
	if (n && n->nalerts > SITE_NEWS_ALERTS)
		fprintf(fp, "- and %d more\n", n->nalerts - SITE_NEWS_ALERTS);
	link_of(c, m, "index.html", site, sizeof site);
	if (n)
		fprintf(fp, "site: %s\n", site);
}

/* "links": the site and the night's documents. */
static void json_links(const struct notify_conf *c, const struct notify_msg *m, FILE *fp)
{
	static const char *const keys[] = {"report_pdf", "report_xlsx", "summary"};
	static const char *const files[] = {"report.pdf", "report.xlsx", "summary.txt"};
	char rel[200], url[PATH_MAX + 800];

	fputs(",\"links\":{", fp);
	link_of(c, m, "index.html", url, sizeof url);
	fputs("\"site\":", fp);
	json_str(fp, m->news ? url : "");
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		snprintf(rel, sizeof rel, "%s/%s", m->run_id ? m->run_id : "", files[i]);
		link_of(c, m, rel, url, sizeof url);
		fprintf(fp, ",\"%s\":", keys[i]);
		json_str(fp, m->run_id ? url : "");
	}
	fputs("}", fp);
}

int notify_json(const struct notify_conf *c, const struct notify_msg *m, char **json,
		size_t *len)
{
	const struct site_news *n = m->news;
	char *text = NULL;
	size_t tlen = 0;
	FILE *t = open_memstream(&text, &tlen), *fp;

	*json = NULL;
	if (!t)
		return err_nomem();
	message_text(c, m, t);
	if (fclose(t) != 0 || !(fp = open_memstream(json, len))) {
		free(text);
		return err_nomem();
	}
	fputs("{\"text\":", fp);
	json_str(fp, text);
	fputs(",\"run_id\":", fp);
	json_str(fp, m->run_id ? m->run_id : "");
	fprintf(fp, ",\"status\":%d,\"verdict\":", m->status);
	json_str(fp, notify_verdict(m->status));
	fputs(",\"headline\":", fp);
	json_str(fp, n ? n->headline : "");
	fputs(",\"regressions\":", fp);
	json_str(fp, n ? n->regress_status : "");
	fprintf(fp, ",\"open_alerts\":%d,\"alerts\":[", n ? n->nalerts : 0);
	for (int i = 0; n && i < n->nalerts && i < SITE_NEWS_ALERTS; i++) {
		fputs(i ? "," : "", fp);
		json_str(fp, n->alerts[i]);
	}
	fputs("]", fp);
	json_links(c, m, fp);
	fputs("}\n", fp);
	free(text);
	return fclose(fp) == 0 && *json ? 0 : err_nomem();
}

/* ---------------------------------------------------------------- HTTP */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Milliseconds left until deadline (at least 0). */
static int left_ms(double deadline)
{
	double l = (deadline - now_s()) * 1e3;
	return l > 0 ? (int)ceil(l) : 0;
}

/* Splits http://host[:port]/path. Returns 0 or DDT_EINPUT. */
static int url_split(const char *url, char *host, size_t hlen, char *port, size_t plen,
		     const char **path)
{
	const char *h = url + 7, *end;
	if (strncmp(url, "http://", 7))
		return err_set(DDT_EINPUT, "%s: only http:// is supported", url);
	end = h + strcspn(h, "/");
	*path = *end ? end : "/";
	const char *colon = memchr(h, ':', (size_t)(end - h));
	size_t hl = (size_t)((colon ? colon : end) - h);
	if (!hl || hl >= hlen)
		return err_set(DDT_EINPUT, "%s: no host", url);
	snprintf(host, hlen, "%.*s", (int)hl, h);
	snprintf(port, plen, "%.*s", colon ? (int)(end - colon - 1) : 2, colon ? colon + 1 : "80");
	return 0;
}

/* A socket connected to host:port before deadline, or -1 (message set). */
static int http_connect(const char *host, const char *port, double deadline)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
	int fd = -1, gai = getaddrinfo(host, port, &hints, &res);

	if (gai) {
		err_set(DDT_EIO, "%s:%s: %s", host, port, gai_strerror(gai));
		return -1;
	}
	for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
		struct pollfd p;
		int e = 0;
		socklen_t el = sizeof e;
		if ((fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
			continue;
		if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS)
			e = errno;
		p = (struct pollfd){fd, POLLOUT, 0};
		if (!e && poll(&p, 1, left_ms(deadline)) != 1)
			e = ETIMEDOUT;
		if (!e && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0)
			e = errno;
		if (e) {
			err_set(DDT_EIO, "%s:%s: cannot connect: %s", host, port, strerror(e));
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	return fd;
}

/* Writes all of buf before deadline. Returns 0 or -1. */
static int send_all(int fd, const char *buf, size_t len, double deadline)
{
	for (size_t off = 0; off < len;) {
		struct pollfd p = {fd, POLLOUT, 0};
		if (poll(&p, 1, left_ms(deadline)) != 1)
			return -1;
		ssize_t w = send(fd, buf + off, len - off, MSG_NOSIGNAL);
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		off += w > 0 ? (size_t)w : 0;
	}
	return 0;
}

/* Reads until the status line is in, before deadline: its code, or 0. */
static int read_status(int fd, double deadline)
{
	char buf[256];
	size_t n = 0;
	int code = 0;
	while (n < sizeof buf - 1 && !memchr(buf, '\n', n)) {
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, left_ms(deadline)) != 1)
			break;
		ssize_t r = recv(fd, buf + n, sizeof buf - 1 - n, 0);
		if (r <= 0 && !(r < 0 && (errno == EAGAIN || errno == EINTR)))
			break;
		n += r > 0 ? (size_t)r : 0;
		buf[n] = '\0';
	}
	buf[n] = '\0';
	if (sscanf(buf, "HTTP/1.%*d %d", &code) != 1)
		code = 0;
	return code;
}

int notify_http_post(const char *url, const char *body, size_t len, double timeout_s,
		     int *http_status)
{
	char host[256], port[16], *head = NULL;
	const char *path = "/";
	double deadline = now_s() + timeout_s;
	int fd, rc;

	*http_status = 0;
	if ((rc = url_split(url, host, sizeof host, port, sizeof port, &path)) != 0)
		return rc;
	if ((fd = http_connect(host, port, deadline)) < 0)
		return DDT_EIO;
	if (asprintf(&head, "POST %s HTTP/1.1\r\nHost: %s%s%s\r\nUser-Agent: ddt-nightly\r\n"
		     "Content-Type: application/json; charset=utf-8\r\nContent-Length: %zu\r\n"
		     "Connection: close\r\n\r\n", path, host, strcmp(port, "80") ? ":" : "",
		     strcmp(port, "80") ? port : "", len) < 0) {
		close(fd);
		return err_nomem();
	}
	if (send_all(fd, head, strlen(head), deadline) || send_all(fd, body, len, deadline))
		rc = err_set(DDT_EIO, "%s: sending failed: %s", url,
			     left_ms(deadline) ? strerror(errno) : "timed out");
	else if ((*http_status = read_status(fd, deadline)) < 200 || *http_status > 299)
		rc = err_set(DDT_EIO, "%s: %s", url,
			     *http_status ? "the server answered an error" : "no answer in time");
	if (rc == DDT_EIO && *http_status)
		err_set(DDT_EIO, "%s: HTTP %d", url, *http_status);
	free(head);
	close(fd);
	return rc;
}

/* ---------------------------------------------------------------- the command */

static void env_free(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

#define NOTIFY_ENV 8

/* The command's environment: ours without the variables below, then them:
 * the verdict and where things are (malloc'd, NULL-ended; env_free). Made
 * before the fork: the child of a threaded process may only exec. NULL
 * when out of memory. */
static char **command_env(const struct notify_conf *c, const struct notify_msg *m, const char *text)
{
	extern char **environ;
	char st[16], na[16], site[PATH_MAX + 600], rel[200], pdf[PATH_MAX + 800];
	size_t n = 0, k = 0;
	char **env;

	snprintf(st, sizeof st, "%d", m->status);
	snprintf(na, sizeof na, "%d", m->news ? m->news->nalerts : 0);
	link_of(c, m, "index.html", site, sizeof site);
	snprintf(rel, sizeof rel, "%s/report.pdf", m->run_id ? m->run_id : "");
	link_of(c, m, rel, pdf, sizeof pdf);
	const char *kv[NOTIFY_ENV][2] = {
		{"DDT_STATUS", st}, {"DDT_VERDICT", notify_verdict(m->status)},
		{"DDT_RUN_ID", m->run_id ? m->run_id : ""},
		{"DDT_HEADLINE", m->news ? m->news->headline : ""}, {"DDT_OPEN_ALERTS", na},
		{"DDT_TEXT", text}, {"DDT_SITE", m->news ? site : ""},
		{"DDT_REPORT_PDF", m->run_id ? pdf : ""}};
	while (environ[n])
		n++;
	if (!(env = calloc(n + NOTIFY_ENV + 1, sizeof *env)))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		int ours = 0;
		for (int j = 0; j < NOTIFY_ENV; j++) {
			size_t l = strlen(kv[j][0]);
			ours |= !strncmp(environ[i], kv[j][0], l) && environ[i][l] == '=';
		}
		if (!ours && !(env[k++] = strdup(environ[i])))
			goto fail;
	}
	for (int j = 0; j < NOTIFY_ENV; j++)
		if (asprintf(&env[k++], "%s=%s", kv[j][0], kv[j][1]) < 0) {
			env[--k] = NULL;
			goto fail;
		}
	return env;
fail:
	env_free(env);
	return NULL;
}

/* Runs the command once, summary.txt on its stdin (else nothing), output to
 * the nightly's stderr, killed at timeout. Returns 0 when it exits 0. */
static int run_command(const struct notify_conf *c, const struct notify_msg *m, const char *text)
{
	char summary[PATH_MAX];
	double deadline = now_s() + c->timeout_s;
	int status = 0, in;
	pid_t pid, w = 0;
	char **env = command_env(c, m, text);
	char *argv[] = {"sh", "-c", (char *)c->command, NULL};

	snprintf(summary, sizeof summary, "%s/%s/summary.txt", m->reports_dir,
		 m->run_id ? m->run_id : "-");
	if (!env)
		return err_nomem();
	if ((in = open(m->run_id ? summary : "/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
		in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	fflush(NULL);
	if ((pid = fork()) < 0) {
		close(in);
		env_free(env);
		return err_set(DDT_EIO, "notify command: cannot start: %s", strerror(errno));
	}
	if (pid == 0) {
		setpgid(0, 0);
		dup2(in, 0);
		dup2(2, 1); /* its output goes where the nightly's warnings go */
		execve("/bin/sh", argv, env);
		_exit(127);
	}
	close(in);
	env_free(env);
	while ((w = waitpid(pid, &status, WNOHANG)) == 0 && left_ms(deadline))
		nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
	if (w == 0) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return err_set(DDT_EIO, "notify command: killed after %g s (nightly.notify.timeout_s)",
			       c->timeout_s);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return err_set(DDT_EIO, "notify command: exit status %d",
			       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return 0;
}

/* ---------------------------------------------------------------- sending */

/* Tries one channel up to c->attempts times, waiting backoff_first_s, then
 * twice as long before each next try; says how it went into line. */
static int with_retries(const struct notify_conf *c, const char *what, char *line, size_t len,
			int (*try_once)(const struct notify_conf *, const void *, int *), const void *arg)
{
	double wait_s = c->backoff_first_s;
	int rc = 0, code = 0;

	for (int k = 1; k <= c->attempts; k++) {
		if (k > 1) {
			struct timespec ts = {(time_t)wait_s, (long)((wait_s - floor(wait_s)) * 1e9)};
			nanosleep(&ts, NULL);
			wait_s *= 2;
		}
		if ((rc = try_once(c, arg, &code)) == 0) {
			snprintf(line, len, "%s: sent%s%.0d%s, try %d of %d", what, code ? " (HTTP " : "",
				 code, code ? ")" : "", k, c->attempts);
			return 0;
		}
		/* a request the server refuses will be refused again */
		if (code >= 400 && code < 500 && code != 408 && code != 429)
			break;
	}
	snprintf(line, len, "%s: not sent: %s", what, err_msg());
	return rc;
}

struct post_arg {
	const char *json;
	size_t len;
};

static int try_post(const struct notify_conf *c, const void *arg, int *code)
{
	const struct post_arg *p = arg;
	return notify_http_post(c->webhook_url, p->json, p->len, c->timeout_s, code);
}

struct command_arg {
	const struct notify_msg *m;
	const char *text;
};

static int try_command(const struct notify_conf *c, const void *arg, int *code)
{
	const struct command_arg *a = arg;
	*code = 0;
	return run_command(c, a->m, a->text);
}

int notify_send(const struct notify_conf *c, const struct notify_msg *m, char *report, size_t len)
{
	char *json = NULL, *text = NULL, l1[600] = "", l2[600] = "";
	size_t jlen = 0, tlen = 0;
	int rc = 0, wrc = 0;
	FILE *t;

	report[0] = '\0';
	if ((!c->command[0] && !c->webhook_url[0]) || (c->when == NOTIFY_PROBLEMS && !m->status))
		return 0;
	if (!(t = open_memstream(&text, &tlen)))
		return err_nomem();
	message_text(c, m, t);
	fclose(t);
	if (!text || (rc = notify_json(c, m, &json, &jlen)) != 0) {
		free(text);
		return rc ? rc : err_nomem();
	}
	if (c->command[0])
		rc = with_retries(c, "command", l1, sizeof l1, try_command,
				  &(struct command_arg){m, text});
	if (c->webhook_url[0])
		wrc = with_retries(c, "webhook", l2, sizeof l2, try_post,
				   &(struct post_arg){json, jlen});
	snprintf(report, len, "%s%s%s", l1, l1[0] && l2[0] ? "; " : "", l2);
	if (rc && !wrc) /* the message of the one that failed */
		snprintf(l2, sizeof l2, "%s", l1 + strlen("command: not sent: "));
	free(json);
	free(text);
	if (rc && !wrc)
		err_set(rc, "%s", l2);
	return wrc ? wrc : rc;
}
