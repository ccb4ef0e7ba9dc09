/* cmd_check.c - `ddt check`: validates calibration and templates, listing every problem. */
#include "calib.h"
#include "calibrate.h"
#include "fit.h"
#include "cmd.h"
#include "err.h"
#include "fsx.h"
#include "model.h"
#include "tmpl.h"

#include "bench_conf.h"
#include "fleet.h"
#include "nightly.h"
#include "project.h"
#include "regress.h"
#include "report_spec.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct check_args {
	struct paths paths;
	char templates[PATH_MAX]; /* "": every template of templates/ */
};

typedef struct check_args A;
static const struct cli_opt check_opts[] = {
	CLI_OPT_CALIBRATION(A, paths),
	CLI_OPT_BUF(A, templates, "template", "PATH", "template file or folder (default: templates/)"),
	CLI_OPT_BUF(A, paths.runs, "runs", "DIR", CLI_UNUSED),
	CLI_OPT_BUF(A, paths.reports, "reports", "DIR", CLI_UNUSED),
	CLI_OPT_END,
};

const struct cli_spec cmd_check_spec = {
	.name = "check",
	.usage = "check [--calibration PATH] [--template PATH]",
	.about = "Validates the calibration (a folder or one file) and job templates (a file,\n"
		 "or every template of a folder; default: all of templates/), and reports\n"
		 "every problem as file:line:column: message. Exit status 0 when all is\n"
		 "well, 2 when anything is wrong.",
	.opts = check_opts,
};

/* Every stage's section of a template, checked by the stage's own loader. */
union stage_conf {
	struct bench_conf bench;
	struct project_config projection;
	struct report_spec report;
	struct regress_conf regress;
	struct nightly_conf nightly;
	struct fleet_conf fleet;
};

static void check_sections(const struct tmpl *t, struct ydiag *diag)
{
	union stage_conf *c = calloc(1, sizeof *c);
	if (!c) {
		ydiag_add(diag, t->path, 0, 0, "out of memory");
		return;
	}
	bench_conf_load(&c->bench, t, diag);
	project_config_load(&c->projection, t, diag);
	report_spec_load(&c->report, t, diag);
	regress_conf_load(&c->regress, t, diag);
	nightly_conf_load(&c->nightly, t, diag);
	fleet_conf_load(&c->fleet, t, diag);
	free(c);
}

/* Checks one template: its scenarios, their targets, and every stage's section. */
static void check_template(const char *path, const struct calib *cal, int cal_ok,
			   struct ydiag *diag, int *files)
{
	struct tmpl t;
	if (tmpl_load(&t, path, diag) == 0)
		check_sections(&t, diag);
	for (size_t i = 0; cal_ok && i < t.nscenarios; i++)
		if (t.scenarios[i].target[0] && !calib_gpu(cal, t.scenarios[i].target))
			ydiag_add(diag, path, 0, 0, "scenario %s: target '%s' is not in the GPU catalog",
				  t.scenarios[i].name, t.scenarios[i].target);
	tmpl_free(&t);
	(*files)++;
}

static int yaml_entry(const struct dirent *e)
{
	size_t n = strlen(e->d_name);
	return !fsx_is_temp_name(e->d_name) && n > 5 && !strcmp(e->d_name + n - 5, ".yaml");
}

/* The model's problem with a calibration that loaded: as it is when it names
 * its own file:line:column (a value out of range), else on the calibration. */
static void check_model_problem(struct ydiag *diag, const struct calib *cal, const char *path)
{
	const char *msg = err_msg(), *at = cal->anchors_at.file;
	size_t n = strlen(at);

	if (n && !strncmp(msg, at, n) && msg[n] == ':')
		ydiag_add(diag, NULL, 0, 0, "%s", msg);
	else
		ydiag_add(diag, path, 0, 0, "%s", msg);
}

int cmd_check(int argc, char **argv)
{
	struct check_args a = {0};
	struct ydiag diag = {0};
	struct calib cal;
	struct calibration der;
	struct model m;
	struct stat st;
	int first, files = 0, status;
	char *templates = a.templates;

	paths_init(&a.paths, "default");
	if ((status = cli_parse(&cmd_check_spec, &a, argc, argv, &first)) >= 0)
		return status;
	if (!templates[0])
		snprintf(templates, sizeof a.templates, "%s/templates", a.paths.home);

	int cal_ok = calibrate_load(&cal, &der, a.paths.calibration, NULL, &diag) == 0;
	if (cal_ok && model_prepare(&m, &cal, &der, NULL) != 0)
		check_model_problem(&diag, &cal, a.paths.calibration);
	files++;
	if (stat(templates, &st) == 0 && S_ISDIR(st.st_mode)) {
		struct dirent **list;
		int n = scandir(templates, &list, yaml_entry, alphasort);
		for (int i = 0; i < n; i++) {
			char *p = fsx_join(templates, list[i]->d_name);
			if (p)
				check_template(p, &cal, cal_ok, &diag, &files);
			free(p);
			free(list[i]);
		}
		if (n > 0)
			free(list);
	} else
		check_template(templates, &cal, cal_ok, &diag, &files);

	calib_free(&cal);
	if (diag.n) {
		ydiag_print(&diag, stderr);
		fprintf(stderr, "ddt check: %zu problem%s\n", diag.n, diag.n == 1 ? "" : "s");
		ydiag_free(&diag);
		return 2;
	}
	printf("ddt check: calibration and %d template%s ok\n", files - 1, files == 2 ? "" : "s");
	return 0;
}
