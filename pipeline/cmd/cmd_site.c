/* cmd_site.c - `ddt site`: the history as a static web site, reports/index.html. */
#include "cmd.h"

#include "err.h"
#include "site_build.h"

#include <stdio.h>

struct site_args {
	struct paths paths;
	int quiet;
};

typedef struct site_args A;
static const struct cli_opt site_opts[] = {
	CLI_OPT_TEMPLATE_AS(A, paths,
			    "job template whose site: section is used: a name\n"
			    "under templates/ or a path\n"
			    "(default: templates/default.yaml)"),
	CLI_OPT_RUNS(A, paths),
	CLI_OPT_REPORTS(A, paths),
	CLI_OPT_FLAG(A, quiet, 'q', "quiet", "print nothing on success"),
	CLI_OPT_BUF(A, paths.calibration, "calibration", "PATH", CLI_UNUSED),
	CLI_OPT_END,
};

const struct cli_spec cmd_site_spec = {
	.name = "site",
	.usage = "site [OPTIONS]",
	.about = "Writes the history as a static web site: reports/index.html (the newest\n"
		 "night's headline and band, open alerts, its verdicts, every series and\n"
		 "night) and one page per series under reports/site/ (its history chart as\n"
		 "SVG, its change points with commit links, every night with links to its\n"
		 "report.pdf and report.xlsx while retention keeps them). No server and no\n"
		 "network are needed to read it: open reports/index.html in a browser. Every\n"
		 "nightly writes it too; the template's `site:` section sets the commit links.",
	.opts = site_opts,
};

int cmd_site(int argc, char **argv)
{
	struct site_args a = {0};
	struct site_conf conf;
	struct tmpl t;
	struct ydiag diag = {0};
	size_t pages = 0;
	int first, rc;

	paths_init(&a.paths, "default");
	if ((rc = cli_parse(&cmd_site_spec, &a, argc, argv, &first)) >= 0)
		return rc;
	if (first != argc)
		return cli_usage_error("site", "takes no arguments");
	if ((rc = tmpl_load(&t, a.paths.template_path, &diag)) == 0)
		rc = site_conf_load(&conf, &t, &diag);
	tmpl_free(&t);
	if (rc) {
		ydiag_print(&diag, stderr);
		ydiag_free(&diag);
		return err_exit_status(rc);
	}
	ydiag_free(&diag);
	if ((rc = site_build(a.paths.runs, a.paths.reports, a.paths.home, &conf, NULL, &pages)) != 0)
		return cli_fail("site", rc);
	if (!a.quiet)
		printf("wrote %s/index.html and %zu series page%s under %s/site/\n", a.paths.reports,
		       pages - 1, pages == 2 ? "" : "s", a.paths.reports);
	return 0;
}
