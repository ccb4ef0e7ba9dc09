/* cli.c - project paths, common options and error printing for the subcommands. */
#include "cli.h"

#include "err.h"
#include "fsx.h"

#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The project folder: $DDT_HOME, else the parent of the folder holding the
 * binary (build/ddt -> .), else the current folder. */
static void find_home(char *home, size_t len)
{
	const char *env = getenv("DDT_HOME");
	char exe[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		snprintf(home, len, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *dir = dirname(exe); /* .../build */
		char *top = dirname(dir); /* ... */
		char probe[PATH_MAX];
		snprintf(probe, sizeof probe, "%s/calibration", top);
		if (fsx_exists(probe)) {
			snprintf(home, len, "%s", top);
			return;
		}
	}
	snprintf(home, len, ".");
}

void cli_paths_init(struct cli_paths *p, const char *tmpl)
{
	memset(p, 0, sizeof *p);
	find_home(p->home, sizeof p->home);
	snprintf(p->calibration, sizeof p->calibration, "%s/calibration", p->home);
	snprintf(p->template_path, sizeof p->template_path, "%s/templates/%s.yaml", p->home, tmpl);
	snprintf(p->runs, sizeof p->runs, "%s/runs", p->home);
	snprintf(p->reports, sizeof p->reports, "%s/reports", p->home);
}

int cli_path_option(struct cli_paths *p, int code, const char *arg)
{
	switch (code) {
	case OPT_CALIBRATION:
		snprintf(p->calibration, sizeof p->calibration, "%s", arg);
		return 1;
	case OPT_TEMPLATE:
		if (!strchr(arg, '/') && !strstr(arg, ".yaml") && strlen(arg) < 256)
			snprintf(p->template_path, sizeof p->template_path, "%s/templates/%.255s.yaml",
				 p->home, arg);
		else
			snprintf(p->template_path, sizeof p->template_path, "%s", arg);
		return 1;
	case OPT_RUNS:
		snprintf(p->runs, sizeof p->runs, "%s", arg);
		return 1;
	case OPT_REPORTS:
		snprintf(p->reports, sizeof p->reports, "%s", arg);
		return 1;
	}
	return 0;
}

int cli_fail(const char *cmd, int code)
{
	fprintf(stderr, "ddt %s: %s\n", cmd, err_msg()[0] ? err_msg() : "failed");
	return err_exit_status(code);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "ddt %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'ddt %s --help')\n", cmd);
	return 2;
}

int cli_is_tty(void)
{
	return isatty(STDERR_FILENO);
}
