/* cmd_bench.c - `ddt bench`: measure the engine's kernels on this machine into a run record. */
#include "cmd.h"

#include "bench.h"
#include "bench_conf.h"
#include "cuda_api.h"
#include "err.h"
#include "fsx.h"
#include "record.h"
#include "tmpl.h"

#include <stdlib.h>
#include <string.h>

struct bench_args {
	struct paths paths;
	const char *ops;
	int threads; /* -1: the template's bench.cpu.threads */
};

typedef struct bench_args A;
static const struct cli_opt bench_opts[] = {
	CLI_OPT_CALL(A, paths, "template", "T", cli_template_arg,
		     "job template: a name under templates/ or a path\n"
		     "(default: gpu when a CUDA device is present and\n"
		     "templates/gpu.yaml exists, else cpu)"),
	CLI_OPT_STR(A, ops, 0, "ops", "LIST",
		    "only these ops, comma-separated (allreduce and launch\n"
		    "name the CUDA-only benchmarks); default: every op of\n"
		    "the template"),
	CLI_OPT_KEY(A, threads, "threads", "N", &bench_conf_cpu_schema, "threads",
		    "CPU threads for the fast paths, 0: every online core\n"
		    "(default: the template's bench.cpu.threads)"),
	CLI_OPT_RUNS(A, paths),
	CLI_OPT_BUF(A, paths.calibration, "calibration", "PATH", CLI_UNUSED),
	CLI_OPT_BUF(A, paths.reports, "reports", "DIR", CLI_UNUSED),
	CLI_OPT_END,
};

const struct cli_spec cmd_bench_spec = {
	.name = "bench",
	.usage = "bench [--template T] [--ops LIST] [--threads N] [--runs DIR]",
	.about = "Measures the engine's kernels on this machine: detects the devices (the CPU\n"
		 "with its measured copy bandwidth, and every CUDA device), validates each op\n"
		 "against its C reference on seeded inputs, times it as the template's bench\n"
		 "section says (cold samples with caches flushed, hot ones, or both), prints a\n"
		 "table and writes the run record runs/<run-id>/run.yaml, which appears only\n"
		 "when complete. An op that fails or cannot run here is a row with its status\n"
		 "and reason; the run goes on.",
	.opts = bench_opts,
	.after = "exit status: 0 every row ok or skipped, 1 error (nothing written), 2 usage\n"
		 "or template error, 4 a kernel failed validation or failed to run",
};

/* The default template: gpu.yaml where CUDA devices are present, else cpu. */
static void default_template(struct paths *paths)
{
	char reason[160], gpu[PATH_MAX];
	int n = 0;
	cuda_devices(&n, reason, sizeof reason);
	snprintf(gpu, sizeof gpu, "%s/templates/gpu.yaml", paths->home);
	paths_set_template(paths, n > 0 && fsx_exists(gpu) ? "gpu" : "cpu");
}

/* The devices, the table and where the record went. */
static void print_run(const struct run_record *r, const char *folder)
{
	for (size_t i = 0; i < r->ndevices; i++) {
		const struct rec_device *d = &r->devices[i];
		printf("device %zu: %s %s, %s", i, d->kind, d->name, d->arch);
		if (!strcmp(d->kind, "cuda"))
			printf(", %d SMs", d->cores);
		printf(", %.1f GB, copy %.1f GB/s\n", d->mem_gb, d->copy_gbps);
	}
	printf("\n");
	bench_print_table(r, stdout);
	printf("\nrun %s: %zu rows -> %s/run.yaml\n", r->run_id, r->nrows, folder);
}

/* Loads the template's bench section into bc; returns 0 or the exit status,
 * the error printed. */
static int load_conf(struct bench_conf *bc, struct tmpl *t, const struct bench_args *a)
{
	struct ydiag diag = {0};
	int rc = tmpl_load(t, a->paths.template_path, &diag);
	if (!rc)
		rc = bench_conf_load(bc, t, &diag);
	if (rc)
		ydiag_print(&diag, stderr);
	ydiag_free(&diag);
	if (rc)
		return cli_fail("bench", rc);
	if (!bc->nops)
		return cli_usage_error("bench", "%s has no bench ops", a->paths.template_path);
	if ((rc = bench_check_only(a->ops)))
		return cli_usage_error("bench", "%s", err_msg());
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	struct bench_args a = {.threads = -1};
	struct bench_conf *bc = NULL;
	struct tmpl t;
	struct run_record r = {0};
	struct bench_opts o = {.progress = cli_is_tty()};
	char folder[PATH_MAX];
	int first, rc, status;

	paths_init(&a.paths, "cpu");
	if ((status = cli_parse(&cmd_bench_spec, &a, argc, argv, &first)) >= 0)
		return status;
	if (!a.paths.template_given)
		default_template(&a.paths);
	memset(&t, 0, sizeof t);
	if (!(bc = malloc(sizeof *bc)))
		return cli_fail("bench", err_nomem());
	if ((status = load_conf(bc, &t, &a)) != 0)
		goto done;
	o.home = a.paths.home;
	o.only = a.ops;
	if (a.threads >= 0) /* this run's bench.cpu.threads */
		bc->cpu_threads = a.threads;
	bench_record_init(&r, t.name[0] ? t.name : "unnamed", a.paths.home);
	if ((rc = bench_run(bc, &o, &r)) == 0)
		rc = bench_write_run(&r, a.paths.runs, folder, sizeof folder);
	if (rc) {
		status = cli_fail("bench", rc);
		goto done;
	}
	print_run(&r, folder);
	for (size_t i = 0; i < r.nrows; i++)
		if (r.rows[i].status == REC_FAILED)
			status = 4;
done:
	record_free(&r);
	tmpl_free(&t);
	free(bc);
	return status;
}
