/* test_notify.c - the morning news (pipeline/job/notify.h): the webhook's JSON
 * as a receiver on the loopback address gets it, retries against a receiver
 * that fails first, the command with the summary on stdin and the verdict in
 * its environment, time limits, settings errors; and a whole nightly that
 * writes reports/index.html and notifies, whose exit status a dead webhook
 * does not change. Every wait is bounded. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "err.h"
#include "fsx.h"
#include "helpers.h"
#include "notify.h"

static char root[256];

/* ---------------------------------------------------------------- the receiver */

#define MAX_REQ 8

/* An HTTP receiver on 127.0.0.1 (a port of its own, bound with port 0): it
 * answers request k with codes[k] (the last code for the rest) and keeps
 * every request, for at most 60 s. */
struct receiver {
	int fd, port;
	int codes[MAX_REQ], ncodes;
	int nreq, stop; /* stop: set by receiver_stop, read by the thread within its 200 ms poll */
	char req[MAX_REQ][16384];
	pthread_t th;
};

/* Reads one request (head and Content-Length body) into buf. */
static void read_request(int c, char *buf, size_t cap)
{
	size_t n = 0;
	char *body = NULL;
	long want = -1;
	while (n < cap - 1) {
		struct pollfd p = {c, POLLIN, 0};
		if (poll(&p, 1, 10000) != 1)
			break;
		ssize_t r = recv(c, buf + n, cap - 1 - n, 0);
		if (r <= 0)
			break;
		n += (size_t)r;
		buf[n] = '\0';
		if (!body && (body = strstr(buf, "\r\n\r\n")) != NULL) {
			const char *cl = strcasestr(buf, "Content-Length:");
			want = cl ? strtol(cl + 15, NULL, 10) : 0;
			body += 4;
		}
		if (body && (long)(buf + n - body) >= want)
			break;
	}
	buf[n] = '\0';
}

static void *receiver_main(void *arg)
{
	struct receiver *r = arg;
	time_t end = time(NULL) + 60;
	while (time(NULL) < end && r->nreq < MAX_REQ && !__atomic_load_n(&r->stop, __ATOMIC_SEQ_CST)) {
		struct pollfd p = {r->fd, POLLIN, 0};
		if (poll(&p, 1, 200) != 1)
			continue;
		int c = accept(r->fd, NULL, NULL);
		if (c < 0)
			continue;
		int k = r->nreq;
		read_request(c, r->req[k], sizeof r->req[k]);
		int code = r->codes[k < r->ncodes ? k : r->ncodes - 1];
		char resp[200];
		snprintf(resp, sizeof resp, "HTTP/1.1 %d X\r\nContent-Length: 2\r\nConnection: close\r\n"
			 "\r\nok", code);
		(void)!send(c, resp, strlen(resp), MSG_NOSIGNAL);
		close(c);
		__atomic_store_n(&r->nreq, k + 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

/* Starts a receiver answering codes (0-ended). */
static void receiver_start(struct receiver *r, const int *codes)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	memset(r, 0, sizeof *r);
	for (; codes[r->ncodes]; r->ncodes++)
		r->codes[r->ncodes] = codes[r->ncodes];
	assert_true((r->fd = socket(AF_INET, SOCK_STREAM, 0)) >= 0);
	assert_int_equal(bind(r->fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(r->fd, 8), 0);
	assert_int_equal(getsockname(r->fd, (struct sockaddr *)&a, &al), 0);
	r->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&r->th, NULL, receiver_main, r), 0);
}

/* A loopback port nobody listens on: bound, then let go. */
static int dead_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* Stops it once it has n requests (or 60 s passed). */
static void receiver_stop(struct receiver *r, int n)
{
	for (int i = 0; i < 600 && __atomic_load_n(&r->nreq, __ATOMIC_SEQ_CST) < n; i++)
		usleep(100 * 1000);
	/* asked to stop, not cancelled: a thread cancelled inside poll() is
	 * unwound past its locals' scopes, which AddressSanitizer then reports
	 * as a use after scope when the thread is destroyed */
	__atomic_store_n(&r->stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(r->th, NULL);
	close(r->fd);
}

/* ---------------------------------------------------------------- fixtures */

static struct site_news news = {
	.run_id = "20260101T020000Z-lab",
	.headline = "b300-b8-native 432.4 tok/s (p5-p95 393.7-465.3)",
	.nalerts = 1,
	.alerts = {"regression +25.5% since 20250107T020000Z-fixture: moe_w4a16/cold M=9 "
		   "[cpu, \"GPU\" <x>, O2, lab:1]"},
	.regress_status = "1 regression: moe_w4a16/cold",
};

static void conf_for(struct notify_conf *c, int port)
{
	memset(c, 0, sizeof *c);
	if (port)
		snprintf(c->webhook_url, sizeof c->webhook_url, "http://127.0.0.1:%d/hooks/ddt", port);
	c->when = NOTIFY_ALWAYS;
	c->attempts = 4;
	c->backoff_first_s = 0.01;
	c->timeout_s = 10;
	snprintf(c->links_base_url, sizeof c->links_base_url, "http://reports.example/ddt/");
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof root, "/tmp/ddt-notify-XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	fsx_rm_rf(root);
	return 0;
}

/* ---------------------------------------------------------------- tests */

static void test_notify__webhook_receives_the_json(void **state)
{
	(void)state;
	struct receiver r;
	struct notify_conf c;
	struct notify_msg m = {news.run_id, 3, &news, root};
	char report[600];
	receiver_start(&r, (int[]){200, 0});
	conf_for(&c, r.port);
	assert_int_equal(notify_send(&c, &m, report, sizeof report), 0);
	receiver_stop(&r, 1);
	assert_int_equal(r.nreq, 1);
	const char *q = r.req[0], *body = strstr(q, "\r\n\r\n") + 4;
	assert_true(!strncmp(q, "POST /hooks/ddt HTTP/1.1\r\n", 26));
	assert_non_null(strstr(q, "Content-Type: application/json"));
	/* Slack's text, then the fields, escaped as JSON */
	assert_true(!strncmp(body, "{\"text\":\"ddt nightly 20260101T020000Z-lab: regression (exit "
			     "status 3)\\nheadline: b300-b8-native 432.4 tok/s", 98));
	assert_non_null(strstr(body, "\"status\":3,\"verdict\":\"regression\""));
	assert_non_null(strstr(body, "\"headline\":\"b300-b8-native 432.4 tok/s (p5-p95 393.7-465.3)\""));
	assert_non_null(strstr(body, "\"open_alerts\":1,\"alerts\":[\"regression +25.5% since "));
	assert_non_null(strstr(body, "[cpu, \\\"GPU\\\" <x>, O2, lab:1]\"]"));
	assert_non_null(strstr(body, "\"links\":{\"site\":\"http://reports.example/ddt/index.html\","
				     "\"report_pdf\":\"http://reports.example/ddt/20260101T020000Z-lab/"
				     "report.pdf\""));
	assert_string_equal(report, "webhook: sent (HTTP 200), try 1 of 4");
}

static void test_notify__webhook_retries_a_receiver_that_fails_first(void **state)
{
	(void)state;
	struct receiver r;
	struct notify_conf c;
	struct notify_msg m = {news.run_id, 0, &news, root};
	char report[600];
	receiver_start(&r, (int[]){503, 502, 200, 0});
	conf_for(&c, r.port);
	assert_int_equal(notify_send(&c, &m, report, sizeof report), 0);
	receiver_stop(&r, 3);
	assert_int_equal(r.nreq, 3);
	assert_string_equal(report, "webhook: sent (HTTP 200), try 3 of 4");
	/* the same message each time */
	assert_string_equal(strstr(r.req[0], "\r\n\r\n"), strstr(r.req[2], "\r\n\r\n"));
}

static void test_notify__webhook_gives_up_after_its_attempts(void **state)
{
	(void)state;
	struct receiver r;
	struct notify_conf c;
	struct notify_msg m = {news.run_id, 0, &news, root};
	char report[600];
	receiver_start(&r, (int[]){503, 0});
	conf_for(&c, r.port);
	c.attempts = 3;
	assert_int_equal(notify_send(&c, &m, report, sizeof report), DDT_EIO);
	receiver_stop(&r, 3);
	assert_int_equal(r.nreq, 3);
	assert_non_null(strstr(report, "webhook: not sent: "));
	assert_non_null(strstr(report, "HTTP 503"));
	/* a request the server refuses is not sent again */
	receiver_start(&r, (int[]){400, 0});
	conf_for(&c, r.port);
	assert_int_equal(notify_send(&c, &m, report, sizeof report), DDT_EIO);
	receiver_stop(&r, 1);
	assert_int_equal(r.nreq, 1);
	/* nobody listening: each try fails at once, bounded */
	conf_for(&c, dead_port());
	c.attempts = 2;
	assert_int_equal(notify_send(&c, &m, report, sizeof report), DDT_EIO);
	assert_non_null(strstr(report, "cannot connect"));
}

static void test_notify__command_gets_summary_and_verdict(void **state)
{
	(void)state;
	struct notify_conf c;
	struct notify_msg m = {news.run_id, 3, &news, root};
	char report[600], dir[400], p[500];
	snprintf(dir, sizeof dir, "%s/%s", root, news.run_id);
	snprintf(p, sizeof p, "%s/summary.txt", dir);
	assert_int_equal(fsx_mkdir_p(dir), 0);
	assert_int_equal(fsx_write_all(p, "ddt report X\nregressions: 1\n", 28), 0);
	conf_for(&c, 0);
	snprintf(c.command, sizeof c.command,
		 "cat > %s/stdin.txt; env | grep ^DDT_ | sort > %s/env.txt", root, root);
	assert_int_equal(notify_send(&c, &m, report, sizeof report), 0);
	assert_string_equal(report, "command: sent, try 1 of 4");
	snprintf(p, sizeof p, "%s/stdin.txt", root);
	char *in = helpers_slurp(p);
	assert_string_equal(in, "ddt report X\nregressions: 1\n");
	snprintf(p, sizeof p, "%s/env.txt", root);
	char *env = helpers_slurp(p);
	assert_non_null(strstr(env, "DDT_VERDICT=regression\n"));
	assert_non_null(strstr(env, "DDT_STATUS=3\n"));
	assert_non_null(strstr(env, "DDT_RUN_ID=20260101T020000Z-lab\n"));
	assert_non_null(strstr(env, "DDT_OPEN_ALERTS=1\n"));
	assert_non_null(strstr(env, "DDT_REPORT_PDF=http://reports.example/ddt/20260101T020000Z-lab/"
				    "report.pdf\n"));
	free(in);
	free(env);
}

static void test_notify__command_retried_then_bounded_in_time(void **state)
{
	(void)state;
	struct notify_conf c;
	struct notify_msg m = {NULL, 1, NULL, root};
	char report[600];
	conf_for(&c, 0);
	/* fails on its first try only */
	snprintf(c.command, sizeof c.command, "test -e %s/m || { touch %s/m; exit 1; }", root, root);
	assert_int_equal(notify_send(&c, &m, report, sizeof report), 0);
	assert_string_equal(report, "command: sent, try 2 of 4");
	/* one that hangs is killed at timeout_s, each try */
	snprintf(c.command, sizeof c.command, "sleep 30");
	c.attempts = 2;
	c.timeout_s = 0.3;
	time_t t0 = time(NULL);
	assert_int_equal(notify_send(&c, &m, report, sizeof report), DDT_EIO);
	assert_true(time(NULL) - t0 < 20);
	assert_non_null(strstr(report, "killed after 0.3 s"));
	/* only on problems: a good night sends nothing */
	c.when = NOTIFY_PROBLEMS;
	m.status = 0;
	assert_int_equal(notify_send(&c, &m, report, sizeof report), 0);
	assert_string_equal(report, "");
}

/* Loads a template text's nightly.notify; returns the first problem or "". */
static const char *load_notify(const char *yaml, struct notify_conf *c)
{
	static char msg[400];
	struct ydiag diag = {0};
	struct ydoc *doc = NULL;
	msg[0] = '\0';
	assert_int_equal(ydoc_load_buf(&doc, "t.yaml", yaml, strlen(yaml), &diag), 0);
	struct yctx y = {"t.yaml", &diag, NULL};
	notify_conf_load(c, &y, ydoc_get(doc->root, "nightly"));
	if (diag.n)
		snprintf(msg, sizeof msg, "%s", diag.msgs[0]);
	ydiag_free(&diag);
	ydoc_free(doc);
	return msg;
}

static void test_notify__settings_errors_name_file_line_column(void **state)
{
	(void)state;
	struct notify_conf c;
	const char *head = "nightly:\n  notify:\n    source: s\n    command: \"\"\n";
	const char *tail = "    when: always\n    attempts: 2\n    backoff_first_s: 1\n"
			   "    timeout_s: 5\n    links_base_url: \"\"\n";
	char y[800];
	snprintf(y, sizeof y, "%s    webhook_url: \"https://hooks.slack.com/x\"\n%s", head, tail);
	assert_non_null(strstr(load_notify(y, &c), "t.yaml:5:18: nightly.notify.webhook_url: https "
						  "is not supported"));
	snprintf(y, sizeof y, "%s    webhook_url: \"\"\n%s    colour: red\n", head, tail);
	assert_non_null(strstr(load_notify(y, &c), "t.yaml:11:5: unknown key 'colour'"));
	snprintf(y, sizeof y, "%s    webhook_url: \"http://h/x\"\n%s", head, tail);
	assert_string_equal(load_notify(y, &c), "");
	assert_string_equal(c.webhook_url, "http://h/x");
	assert_int_equal(c.when, NOTIFY_ALWAYS);
	/* when: by its names */
	snprintf(y, sizeof y, "%s    webhook_url: \"\"\n    when: problems\n%s", head,
		 strstr(tail, "    attempts:"));
	assert_string_equal(load_notify(y, &c), "");
	assert_int_equal(c.when, NOTIFY_PROBLEMS);
	snprintf(y, sizeof y, "%s    webhook_url: \"\"\n    when: sometimes\n%s", head,
		 strstr(tail, "    attempts:"));
	assert_string_equal(load_notify(y, &c),
			    "t.yaml:6:11: when: expected always or problems, got 'sometimes'");
	assert_string_equal(load_notify("nightly:\n  source: x\n", &c), "");
	assert_string_equal(c.webhook_url, "");
	assert_string_equal(c.command, "");
}

/* ---------------------------------------------------------------- a whole night */

/* A home with templates/{default,tiny}.yaml, tiny's nightly notifying
 * port (its webhook) and a command writing root/cmd.txt. */
static void night_home(const char *home, int port)
{
	char p[600], cmd[1200], *dflt = NULL;
	size_t len;
	snprintf(p, sizeof p, "./templates/default.yaml");
	assert_int_equal(fsx_read_all(p, 1 << 20, &dflt, &len), 0);
	snprintf(p, sizeof p, "%s/templates", home);
	assert_int_equal(fsx_mkdir_p(p), 0);
	snprintf(p, sizeof p, "%s/templates/default.yaml", home);
	assert_int_equal(fsx_write_all(p, dflt, len), 0);
	snprintf(p, sizeof p, "%s/templates/tiny.yaml", home);
	snprintf(cmd, sizeof cmd,
		 "%snightly:\n  source: test\n  keep_documents_runs: 5\n  lock_hung_after_min: 60\n"
		 "  notify:\n    source: test\n    command: \"echo $DDT_VERDICT > %s/cmd.txt\"\n"
		 "    webhook_url: \"http://127.0.0.1:%d/hook\"\n    when: always\n    attempts: 2\n"
		 "    backoff_first_s: 0.01\n    timeout_s: 20\n    links_base_url: \"\"\n",
		 helpers_tiny_yaml, root, port);
	assert_int_equal(fsx_write_all(p, cmd, strlen(cmd)), 0);
	free(dflt);
}

static void test_notify__nightly_writes_the_site_and_notifies(void **state)
{
	(void)state;
	struct receiver r;
	char home[400], args[2400], p[600], *out = NULL;
	snprintf(home, sizeof home, "%s/home", root);
	receiver_start(&r, (int[]){200, 0});
	night_home(home, r.port);
	snprintf(args, sizeof args,
		 "nightly --quiet --template %s/templates/tiny.yaml --calibration calibration "
		 "--runs %s/runs --reports %s/reports", home, root, root);
	int st = helpers_ddt(&out, args);
	receiver_stop(&r, 1);
	if (st != 0)
		fail_msg("ddt nightly: exit status %d:\n%s", st, out);
	free(out);
	snprintf(p, sizeof p, "%s/reports/index.html", root);
	assert_true(fsx_exists(p));
	assert_int_equal(r.nreq, 1);
	const char *body = strstr(r.req[0], "\r\n\r\n");
	assert_non_null(body);
	assert_non_null(strstr(body, "\"verdict\":\"ok\""));
	assert_non_null(strstr(body, "\"headline\":\"b300-b8-native "));
	assert_non_null(strstr(body, "/reports/index.html\""));
	snprintf(p, sizeof p, "%s/cmd.txt", root);
	out = helpers_slurp(p);
	assert_string_equal(out, "ok\n");
	free(out);

	/* a dead webhook: a warning, the same exit status */
	night_home(home, dead_port());
	st = helpers_ddt(&out, args);
	if (st != 0)
		fail_msg("ddt nightly with a dead webhook: exit status %d:\n%s", st, out);
	assert_non_null(strstr(out, "ddt nightly: warning: notify: command: sent, try 1 of 2; "
				    "webhook: not sent: "));
	free(out);
}

/* install-cron's --mailto and the systemd failure unit. */
static void test_notify__install_cron_mailto_and_failure_unit(void **state)
{
	(void)state;
	char *out = NULL;
	assert_int_equal(helpers_run(&out, "tools/install-cron --print --mailto ops@example.com"), 0);
	/* the MAILTO= line under its marker, right above the entry it governs */
	const char *m = strstr(out, "mailto\nMAILTO=ops@example.com\n");
	assert_non_null(m);
	assert_non_null(strstr(m, "\n30 2 * * * cd '"));
	free(out);
	assert_int_equal(helpers_run(&out, "tools/install-cron --print --systemd --mailto "
					   "ops@example.com"), 0);
	assert_non_null(strstr(out, "\nOnFailure=ddt-nightly-failure.service\n"));
	assert_non_null(strstr(out, "\nEnvironment=DDT_MAILTO=ops@example.com\n"));
	free(out);
	assert_int_equal(helpers_run(&out, "tools/install-cron --print --mailto 'a;b'"), 2);
	assert_non_null(strstr(out, "is not a mail address"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notify__webhook_receives_the_json),
		cmocka_unit_test(test_notify__webhook_retries_a_receiver_that_fails_first),
		cmocka_unit_test(test_notify__webhook_gives_up_after_its_attempts),
		cmocka_unit_test(test_notify__command_gets_summary_and_verdict),
		cmocka_unit_test(test_notify__command_retried_then_bounded_in_time),
		cmocka_unit_test(test_notify__settings_errors_name_file_line_column),
		cmocka_unit_test(test_notify__nightly_writes_the_site_and_notifies),
		cmocka_unit_test(test_notify__install_cron_mailto_and_failure_unit),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
