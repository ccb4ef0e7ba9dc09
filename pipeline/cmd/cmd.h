/* cmd.h - the subcommands of ddt: one cmd_<name>.c each, a thin layer over the stages and jobs. */
#ifndef DDT_CMD_H
#define DDT_CMD_H

#include "cli.h"

/* One subcommand. */
struct cmd {
	const char *name;
	const char *summary;              /* one line for `ddt --help` */
	int (*run)(int argc, char **argv); /* argv[0] is the name; returns the exit status */
	const struct cli_spec *specs[3];  /* its option tables (a subcommand's too), NULL-ended */
};

/* Every subcommand, in the order `ddt --help` lists them. */
extern const struct cmd cmd_list[];
extern const size_t cmd_count;

/* The subcommand named name; NULL when none is. */
const struct cmd *cmd_find(const char *name);

int cmd_estimate(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_backtest(int argc, char **argv);
int cmd_acceptance(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_nightly(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_ack(int argc, char **argv);
int cmd_bisect(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_fleet(int argc, char **argv);
int cmd_site(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_list_run(int argc, char **argv); /* `ddt list` (cmd_list is the table above) */

/* `ddt --help`: the usage line, every command with its summary, exit codes. */
void cmd_usage(FILE *fp);
/* Every command's name, ", " between them, into buf (for "unknown command"). */
void cmd_names(char *buf, size_t len);
/* The same of a template's scenarios and of a calibration's GPU catalog. */
struct tmpl;
struct calib;
void cmd_scenario_names(const struct tmpl *t, char *buf, size_t len);
void cmd_gpu_names(const struct calib *c, char *buf, size_t len);
/* 0 when op is NULL or an op the bench knows; else prints the usage error
 * "ddt CMD: --op: unknown op 'x'; the ops: ..." and returns 2. */
int cmd_check_op(const char *cmd, const char *op);
/* True when h has a series of op (op NULL: false). */
struct history;
int cmd_history_has_op(const struct history *h, const char *op);

/* Writes as JSON (json.h) what write_yaml writes of obj as YAML (yout), so
 * a command's JSON holds exactly its YAML's fields. Returns 0, or an error
 * code with the message set. */
int cmd_write_json(FILE *out, void (*write_yaml)(const void *obj, FILE *fp), const void *obj);

/* `ddt fleet submit` and `ddt nightly --slurm` (name: "fleet submit" or "nightly"). */
int cmd_fleet_submit(const char *name, int argc, char **argv);

extern const struct cli_spec cmd_estimate_spec, cmd_check_spec, cmd_backtest_spec, cmd_bench_spec,
	cmd_nightly_spec, cmd_history_spec, cmd_compare_spec, cmd_report_spec,
	cmd_fleet_submit_spec, cmd_fleet_merge_spec, cmd_acceptance_spec, cmd_ack_spec, cmd_bisect_spec,
	cmd_site_spec, cmd_help_spec, cmd_list_spec;

#endif
