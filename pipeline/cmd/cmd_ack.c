/* cmd_ack.c - `ddt ack SERIES|ALERT`: answer a regression alert, so that the nightly stops exiting 3 for it. */
#include "acks.h"
#include "cmd.h"
#include "err.h"
#include "history.h"
#include "regress.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ack_args {
	struct paths paths;
	const char *reason;
	int invalid;
};

typedef struct ack_args A;
static const struct cli_opt ack_opts[] = {
	CLI_OPT_KEY(A, reason, "reason", "TEXT", &acks_schema, "reason", "why (kept with the answer)"),
	CLI_OPT_FLAG(A, invalid, 0, "invalid", "the alert was a false alarm, not a real change"),
	CLI_OPTS_HISTORY_PATHS(A, paths),
	CLI_OPT_END,
};

const struct cli_spec cmd_ack_spec = {
	.name = "ack",
	.usage = "ack [OPTIONS] [SERIES|ALERT]",
	.about = "Answers an open regression alert: ALERT is its id (as the nightly, summary.txt\n"
		 "and the report print it: every series of that commit range), SERIES an op,\n"
		 "op/variant or the start of a series' label (\"tree_attn/cold M=9\"). The\n"
		 "answer goes to runs/acks.yaml; the alert stays listed, marked acknowledged\n"
		 "(or invalid), and no longer makes `ddt nightly` exit 3. Without an argument,\n"
		 "lists the alerts as of the newest night.",
	.opts = ack_opts,
	.takes_args = 1,
};

/* Whether alert a matches what the user named: its id, or its series. */
static int ack_matches(const struct regress_alert *a, const char *what, int *by_id)
{
	char label[512];
	size_t n = strlen(what);
	*by_id = !strcmp(a->id, what);
	history_key_label(&a->key, label, sizeof label);
	return *by_id || !strcmp(a->key.op, what) || !strncmp(label, what, n);
}

/* The answers to the alerts of night matching what into acks (room for
 * night->nalerts); their number. */
static size_t ack_collect(const struct regress_night *night, const char *what,
			  const struct ack_args *a, struct hist_ack *acks)
{
	char at[24];
	time_t now = time(NULL);
	const char *user = getenv("USER");
	size_t n = 0;
	strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	for (size_t i = 0; i < night->nalerts; i++) {
		const struct regress_alert *al = &night->alerts[i];
		int by_id;
		if (!ack_matches(al, what, &by_id))
			continue;
		if (by_id && n && !strcmp(acks[n - 1].alert, al->id))
			continue; /* one answer for the whole alert */
		struct hist_ack *k = &acks[n++];
		memset(k, 0, sizeof *k);
		snprintf(k->alert, sizeof k->alert, "%s", al->id);
		if (!by_id)
			history_key_label(&al->key, k->series, sizeof k->series);
		k->invalid = a->invalid;
		snprintf(k->reason, sizeof k->reason, "%s", a->reason ? a->reason : "");
		snprintf(k->at, sizeof k->at, "%s", at);
		snprintf(k->by, sizeof k->by, "%s", user ? user : "");
	}
	return n;
}

static void ack_list(const struct regress_night *night)
{
	char line[1024];
	if (!night->nalerts)
		printf("no alerts\n");
	for (size_t i = 0; i < night->nalerts; i++)
		printf("%s\n", regress_alert_line(&night->alerts[i], line, sizeof line));
}

/* The alerts as of the newest night of runs/ into night. */
static int ack_alerts(struct history *h, struct regress_night *night, const struct ack_args *a)
{
	struct regress_conf conf;
	struct ydiag warn = {0};
	int rc;

	memset(night, 0, sizeof *night);
	if ((rc = regress_conf_load_file(&conf, a->paths.template_path)) != 0)
		return rc;
	rc = history_load(h, a->paths.runs, &warn);
	for (size_t i = 0; i < warn.n; i++)
		fprintf(stderr, "ddt ack: warning: %s\n", warn.msgs[i]);
	ydiag_free(&warn);
	if (rc || !h->nruns)
		return rc;
	regress_history(&conf, h);
	return regress_night_build(night, h, h->nruns - 1, NULL);
}

int cmd_ack(int argc, char **argv)
{
	struct ack_args a = {0};
	struct regress_night night = {0};
	struct history h = {0};
	struct hist_ack *acks = NULL;
	int first, rc, status = 0;
	size_t n;

	paths_init(&a.paths, "default");
	if ((rc = cli_parse(&cmd_ack_spec, &a, argc, argv, &first)) >= 0)
		return rc;
	if (argc - first > 1)
		return cli_usage_error("ack", "expected one SERIES or ALERT");
	if ((rc = ack_alerts(&h, &night, &a)) != 0) {
		status = cli_fail("ack", rc);
		goto done;
	}
	if (argc == first) {
		ack_list(&night);
		goto done;
	}
	if (!(acks = calloc(night.nalerts + 1, sizeof *acks))) {
		status = cli_fail("ack", err_nomem());
		goto done;
	}
	if (!(n = ack_collect(&night, argv[first], &a, acks))) {
		status = cli_fail("ack", err_set(DDT_EINPUT, "no alert matches '%s' (ddt ack lists them)",
						 argv[first]));
		goto done;
	}
	if ((rc = acks_add(a.paths.runs, acks, n)) != 0) {
		status = cli_fail("ack", rc);
		goto done;
	}
	for (size_t i = 0; i < n; i++)
		printf("%s alert %s%s%s\n", a.invalid ? "marked invalid:" : "acknowledged:",
		       acks[i].alert, acks[i].series[0] ? " on " : " (every series)",
		       acks[i].series);
done:
	free(acks);
	regress_night_free(&night);
	history_free(&h);
	return status;
}
