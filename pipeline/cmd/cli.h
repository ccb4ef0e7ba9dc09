/* cli.h - the subcommands and what they share: project paths and common options. */
#ifndef DDT_CLI_H
#define DDT_CLI_H

#include <getopt.h>
#include <limits.h>
#include <stdio.h>

struct cli_command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv); /* returns the process exit status */
};

int cmd_estimate(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_backtest(int argc, char **argv);
int cmd_nightly(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_fleet(int argc, char **argv);

/* Where ddt reads and writes. Defaults come from the project folder (the
 * folder above build/ddt, or $DDT_HOME), so ddt runs from anywhere. */
struct cli_paths {
	char home[2048];            /* shorter, so the paths below always fit */
	char calibration[PATH_MAX]; /* folder or file */
	char template_path[PATH_MAX];
	char runs[PATH_MAX];
	char reports[PATH_MAX];
};

/* Fills p with the project's default folders; template is templates/<tmpl>.yaml. */
void cli_paths_init(struct cli_paths *p, const char *tmpl);

/* Long options every command that reads calibration and templates accepts;
 * put CLI_PATH_OPTIONS in a getopt_long table and pass unknown codes to
 * cli_path_option(). */
enum { OPT_CALIBRATION = 1000, OPT_TEMPLATE, OPT_RUNS, OPT_REPORTS, OPT_FIRST_FREE };
#define CLI_PATH_OPTIONS                                              \
	{"calibration", required_argument, NULL, OPT_CALIBRATION},    \
	{"template", required_argument, NULL, OPT_TEMPLATE},          \
	{"runs", required_argument, NULL, OPT_RUNS},                  \
	{"reports", required_argument, NULL, OPT_REPORTS}
#define CLI_PATH_HELP                                                                  \
	"  --calibration PATH  calibration folder or file (default: calibration/)\n"     \
	"  --template PATH     job template (default: templates/default.yaml)\n"         \
	"  --runs DIR          run records folder (default: runs/)\n"                   \
	"  --reports DIR       documents folder (default: reports/)\n"

/* Handles one of the path options; returns 1 when it was one, 0 otherwise. A
 * template given as a bare name ("cpu") means templates/<name>.yaml. */
int cli_path_option(struct cli_paths *p, int code, const char *arg);

/* Prints "ddt CMD: message" on stderr for the current error and returns the
 * exit status for code. */
int cli_fail(const char *cmd, int code);

/* Prints a usage error and returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* True when stderr is a terminal (progress lines are drawn only then). */
int cli_is_tty(void);

#endif
