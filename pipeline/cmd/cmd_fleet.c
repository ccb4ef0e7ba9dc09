/* cmd_fleet.c - `ddt fleet` (and `ddt nightly --slurm`): the nightly across a Slurm cluster's nodes. */
#include "cmd.h"

#include "err.h"
#include "fleet.h"
#include "record.h"

#include <stdlib.h>
#include <string.h>

struct fleet_args {
	struct fleet_opts o;
	int slurm; /* --slurm: how `ddt nightly` came here */
};

/* --time: a Slurm time limit. */
static int time_arg(void *field, const char *arg)
{
	double min;
	if (strlen(arg) >= sizeof ((struct fleet_opts *)0)->time_limit || fleet_time_min(arg, &min) ||
	    min <= 0)
		return err_set(DDT_EINPUT, "--time '%s': not a Slurm time limit", arg);
	snprintf(field, sizeof ((struct fleet_opts *)0)->time_limit, "%s", arg);
	return 0;
}

/* --gres: one word such as gpu:8 (it goes into the job scripts). */
static int gres_arg(void *field, const char *arg)
{
	if (strlen(arg) >= sizeof ((struct fleet_opts *)0)->gres || strpbrk(arg, " \t\n'\""))
		return err_set(DDT_EINPUT, "--gres '%s': not a GRES (gpu:8)", arg);
	snprintf(field, sizeof ((struct fleet_opts *)0)->gres, "%s", arg);
	return 0;
}

typedef struct fleet_args A;
static const struct cli_opt submit_opts[] = {
	CLI_OPT_KEY(A, o.partition, "partition", "P", &fleet_plan_schema, "partition",
		    "Slurm partition (default: the cluster's default)"),
	CLI_OPT_BUF(A, o.nodes, "nodes", "LIST",
		    "nodes to measure, Slurm hostlist syntax (gpu[01-08]); a\n"
		    "node listed twice gets two tasks (default: every node\n"
		    "of the partition)"),
	CLI_OPT_CALL(A, o.time_limit, "time", "LIMIT", time_arg,
		     "each node's bench limit, Slurm syntax (default: the\n"
		     "template's fleet.task_time_min)"),
	CLI_OPT_CALL(A, o.gres, "gres", "SPEC", gres_arg,
		     "generic resources each task asks for (gpu:8): where Slurm\n"
		     "hides GPUs a job did not ask for, the node's GPUs"),
	CLI_OPT_FLAG(A, o.shared, 0, "slurm-shared", "tasks do not hold their node alone"),
	CLI_OPT_FLAG(A, o.no_allreduce, 0, "no-allreduce", "no all-reduce job"),
	CLI_OPT_KEY(A, o.mpi_launcher, "mpi-launcher", "L", &fleet_plan_schema, "mpi_launcher",
		    "srun (--mpi=pmix) or mpirun for the all-reduce (default:\n"
		    "srun when Slurm has the PMIx plugin, else mpirun)"),
	CLI_OPT_FLAG(A, o.no_wait, 0, "no-wait", "print the job ids and return at once"),
	CLI_OPT_FLAG(A, o.quiet, 'q', "quiet",
		     "print nothing when the night is clean (exit 0); else\n"
		     "the job ids and the merge's summary (for cron)"),
	CLI_OPT_KEY(A, o.bench_command, "bench-command", "CMD", &fleet_plan_schema, "bench_command",
		    "each task runs CMD (with --template, --calibration and\n"
		    "--runs appended) instead of `ddt bench`: to try the\n"
		    "fault paths"),
	CLI_OPT_FLAG(A, slurm, 0, "slurm", "(ddt nightly --slurm) the night across the cluster"),
	CLI_OPT_PATHS(A, o.paths),
	CLI_OPT_END,
};

const struct cli_spec cmd_fleet_submit_spec = {
	.name = "fleet submit",
	.usage = "nightly --slurm [OPTIONS]     (also: ddt fleet submit [OPTIONS])\n"
		 "       ddt fleet merge FLEET [--runs DIR]\n"
		 "       ddt fleet task DIR | ddt fleet allreduce DIR   (run by Slurm)",
	.about = "Runs one nightly across the nodes of a Slurm cluster. Submits `ddt bench` as\n"
		 "a job array, one task per node holding the node alone, each writing its own\n"
		 "run folder into the shared runs/; then the all-reduce across the nodes\n"
		 "(build/ddt-allreduce, one rank per GPU, when it was built); then a merge job\n"
		 "(afterany) that folds every node's record into one: history and verdicts per\n"
		 "node, the projection from every device measured tonight, one set of\n"
		 "documents under reports/<fleet-id>/, and devices.txt / devices.csv with a\n"
		 "section per device and the cross-device table (each kernel's time on one\n"
		 "device projected from another by their copy bandwidth, beside what it\n"
		 "measured). A node that fails, hangs past its limit or never starts is a named\n"
		 "failed row. It prints the job ids, waits for the merge and exits with the\n"
		 "night's status. The working folder is runs/.fleet/<fleet-id>/. Without\n"
		 "--template each node's bench picks its own (gpu where it has GPUs, else cpu)\n"
		 "and the merge reads templates/default.yaml, which both extend.",
	.opts = submit_opts,
	.after = "FLEET is a fleet id (YYYYMMDDTHHMMSSZ-fleet-host) or its working folder.\n"
		 "\n"
		 "exit status: 0 ok, 1 a node or a stage failed, 2 usage, 3 regression found,\n"
		 "4 a kernel failed validation",
};

static const struct cli_opt merge_opts[] = {
	CLI_OPT_RUNS(A, o.paths),
	CLI_OPT_BUF(A, o.paths.calibration, "calibration", "PATH",
		    "accepted for symmetry; unused here (the plan names it)"),
	CLI_OPT_TEMPLATE_AS(A, o.paths,
			    "accepted for symmetry; unused here (the plan names it)"),
	CLI_OPT_BUF(A, o.paths.reports, "reports", "DIR",
		    "accepted for symmetry; unused here (the plan names it)"),
	CLI_OPT_END,
};

const struct cli_spec cmd_fleet_merge_spec = {
	.name = "fleet merge",
	.usage = "fleet merge FLEET [--runs DIR]",
	.about = "The last job of a night across the cluster, run by Slurm after the others\n"
		 "whatever became of them: folds every node's run record into one, with\n"
		 "history and verdicts per node, the projection, one set of documents under\n"
		 "reports/<fleet-id>/ and the cross-device table. FLEET is a fleet id\n"
		 "(YYYYMMDDTHHMMSSZ-fleet-host) or its working folder.",
	.opts = merge_opts,
	.takes_args = 1,
	.after = "exit status: 0 ok, 1 a node or a stage failed, 2 usage, 3 regression found,\n"
		 "4 a kernel failed validation",
};

int cmd_fleet_submit(const char *name, int argc, char **argv)
{
	struct cli_spec spec = cmd_fleet_submit_spec;
	struct fleet_args a = {0};
	int first, status;

	spec.name = name;
	paths_init(&a.o.paths, "default");
	if ((status = cli_parse(&spec, &a, argc, argv, &first)) >= 0)
		return status;
	if (fleet_submit(&a.o, &status) != 0)
		fprintf(stderr, "ddt %s%s: %s\n", name, strcmp(name, "nightly") ? "" : " --slurm",
			err_msg());
	return status;
}

static int fleet_merge_cmd(int argc, char **argv)
{
	struct fleet_args a = {0};
	char *dir;
	int first, status;

	paths_init(&a.o.paths, "default");
	if ((status = cli_parse(&cmd_fleet_merge_spec, &a, argc, argv, &first)) >= 0)
		return status;
	if (first != argc - 1)
		return cli_usage_error("fleet merge", "give one FLEET (an id or its folder)");
	if (strchr(argv[first], '/'))
		dir = strdup(argv[first]);
	else if (!record_run_id_valid(argv[first]))
		return cli_usage_error("fleet merge", "'%s' is not a fleet id", argv[first]);
	else
		dir = fleet_dir_of(a.o.paths.runs, argv[first]);
	if (!dir)
		return cli_fail("fleet merge", err_nomem());
	fleet_merge(dir, &status);
	free(dir);
	return status;
}

int cmd_fleet(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		cli_help(&cmd_fleet_submit_spec, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "submit"))
		return cmd_fleet_submit("fleet submit", argc - 1, argv + 1);
	if (!strcmp(argv[1], "merge"))
		return fleet_merge_cmd(argc - 1, argv + 1);
	if (!strcmp(argv[1], "task") && argc == 3)
		return fleet_task_run(argv[2]);
	if (!strcmp(argv[1], "allreduce") && argc == 3)
		return fleet_allreduce_run(argv[2]);
	return cli_usage_error("fleet", "unknown subcommand '%s'", argv[1]);
}
