/* cmd_nightly.c - `ddt nightly`: the whole nightly job on this machine, or across a cluster. */
#include "cmd.h"

#include "nightly.h"

#include <string.h>

struct nightly_args {
	struct nightly_opts o;
	int slurm; /* never set here: --slurm hands the call to `ddt fleet submit` */
};

typedef struct nightly_args A;
static const struct cli_opt nightly_opts[] = {
	CLI_OPT_FLAG(A, o.quiet, 'q', "quiet",
		     "print nothing on success; otherwise only regressions\n"
		     "and errors (for cron, which mails what is printed)"),
	CLI_OPT_FLAG(A, slurm, 0, "slurm",
		     "the night across a Slurm cluster's nodes (ddt nightly\n"
		     "--slurm --help)"),
	CLI_OPT_CALIBRATION(A, o.paths),
	CLI_OPT_TEMPLATE_AS(A, o.paths,
			    "job template: a name under templates/ or a path\n"
			    "(default: gpu when CUDA devices are present, else\n"
			    "cpu; default when that one is missing)"),
	CLI_OPT_RUNS(A, o.paths),
	CLI_OPT_REPORTS(A, o.paths),
	CLI_OPT_END,
};

const struct cli_spec cmd_nightly_spec = {
	.name = "nightly",
	.usage = "nightly [OPTIONS]",
	.about = "The nightly job. Takes runs/.nightly.lock (held by another nightly: exit 75\n"
		 "at once), picks the template (gpu when CUDA devices are present, else cpu;\n"
		 "or --template), then: bench -> run record -> history -> regression verdicts\n"
		 "and their cost in projected tok/s -> projection -> documents -> retention.\n"
		 "The run appears whole as runs/<run-id>/ (run.yaml, verdicts.yaml,\n"
		 "projection.yaml, the calibration and template used, nightly.log) and the\n"
		 "documents as reports/<run-id>/. A stage that fails is reported and the\n"
		 "stages that can still run do. Only the documents of the newest\n"
		 "nightly.keep_documents_runs runs are kept; run records are kept forever.",
	.opts = nightly_opts,
	.after = "exit status: 0 ok; 1 a stage failed; 2 bad input (template, calibration);\n"
		 "3 a regression was confirmed tonight; 4 a kernel failed validation;\n"
		 "75 another nightly holds the lock. When several apply: 2, 1, 4, then 3.",
};

int cmd_nightly(int argc, char **argv)
{
	struct nightly_args a = {0};
	int first, status;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--slurm"))
			return cmd_fleet_submit("nightly", argc, argv);
	paths_init(&a.o.paths, "default");
	if ((status = cli_parse(&cmd_nightly_spec, &a, argc, argv, &first)) >= 0)
		return status;
	a.o.tty = cli_is_tty();
	return nightly_run(&a.o);
}
