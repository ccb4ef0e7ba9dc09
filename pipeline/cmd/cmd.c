/* cmd.c - the list of ddt's subcommands. */
#include "cmd.h"

#include "err.h"
#include "json.h"
#include "ydoc.h"

#include <stdlib.h>
#include <string.h>

const struct cmd cmd_list[] = {
	{"estimate", "project decode throughput for scenarios (what-if)", cmd_estimate,
	 {&cmd_estimate_spec}},
	{"check", "validate calibration and template YAML", cmd_check, {&cmd_check_spec}},
	{"backtest", "how the MoE transfer bands held on GPUs they were not fitted to", cmd_backtest,
	 {&cmd_backtest_spec}},
	{"acceptance", "mean acceptance vs budget replayed from a drafter trace", cmd_acceptance,
	 {&cmd_acceptance_spec}},
	{"bench", "measure the engine's kernels on this machine into a run record", cmd_bench,
	 {&cmd_bench_spec}},
	{"nightly", "run the whole nightly job", cmd_nightly,
	 {&cmd_nightly_spec, &cmd_fleet_submit_spec}},
	{"history", "kernel series over the nights, with regression verdicts", cmd_history,
	 {&cmd_history_spec}},
	{"compare", "two runs side by side, with verdicts", cmd_compare, {&cmd_compare_spec}},
	{"ack", "answer a regression alert (acknowledged, or --invalid)", cmd_ack, {&cmd_ack_spec}},
	{"bisect", "the first commit of a range that made a series slower", cmd_bisect,
	 {&cmd_bisect_spec}},
	{"report", "render the documents of a stored run (PDF, spreadsheet, charts)", cmd_report,
	 {&cmd_report_spec}},
	{"site", "the history as a web site, reports/index.html", cmd_site,
	 {&cmd_site_spec}},
	{"fleet", "the nightly across a Slurm cluster's nodes (ddt nightly --slurm)", cmd_fleet,
	 {&cmd_fleet_submit_spec, &cmd_fleet_merge_spec}},
	{"list", "the names commands take: scenarios, gpus or ops", cmd_list_run, {&cmd_list_spec}},
	{"help", "a documentation topic (docs/), or a command's --help", cmd_help, {&cmd_help_spec}},
};
const size_t cmd_count = sizeof cmd_list / sizeof *cmd_list;

const struct cmd *cmd_find(const char *name)
{
	for (size_t i = 0; i < cmd_count; i++)
		if (!strcmp(cmd_list[i].name, name))
			return &cmd_list[i];
	return NULL;
}

int cmd_write_json(FILE *out, void (*write_yaml)(const void *obj, FILE *fp), const void *obj)
{
	char *buf = NULL;
	size_t len = 0;
	struct ydoc *doc = NULL;
	struct ydiag diag = {0};
	/* what ddt wrote itself: no cap but memory's */
	const struct ydoc_caps caps = {(size_t)-1, (size_t)-1};
	FILE *m = open_memstream(&buf, &len);
	int rc;
	if (!m)
		return err_nomem();
	write_yaml(obj, m);
	if (fclose(m) != 0) {
		free(buf);
		return err_nomem();
	}
	rc = ydoc_load_buf_capped(&doc, "the YAML output", buf, len, &caps, &diag);
	if (!rc)
		json_write_ydoc(out, doc->root);
	ydoc_free(doc);
	ydiag_free(&diag);
	free(buf);
	return rc;
}
