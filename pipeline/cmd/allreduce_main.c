/* allreduce_main.c - ddt-allreduce: the multi-node all-reduce under srun or mpirun, into a run record.
 *
 * The timing is engine/mpi/allreduce.c's; this is the program around it: the
 * options, the template's fleet and bench sections (read on rank 0 and
 * shared), and rank 0's run record. Build: make build/ddt-allreduce (needs
 * mpicc).
 */
#include "cli.h"

#include "bench_conf.h"
#include "err.h"
#include "fleet.h"
#include "fsx.h"
#include "mpi/allreduce.h"
#include "record.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(FLEET_MAX_M <= ALLREDUCE_MAX_M, "the template's widths must fit the sweep's");

struct ar_args {
	struct paths paths;
	const char *record, *backend;
	double min_time_s, timeout_s; /* 0: the template's */
	int max_samples;              /* 0: the template's */
};

typedef struct ar_args A;
static const struct cli_opt ar_opts[] = {
	CLI_OPT_CHOICE(A, backend, "backend", "B", "auto|nccl|mpi",
		       "auto (default: nccl when every rank has a GPU), nccl, mpi"),
	CLI_OPT_STR(A, record, 0, "record", "PATH", "write the run record to PATH instead of a run folder"),
	CLI_OPT_NUM(A, min_time_s, "min-time", "S", 0.001, 86400,
		      "at least S seconds of samples per size (the template's\n"
		      "bench.timing otherwise, as for `ddt bench`)"),
	CLI_OPT_INT(A, max_samples, "max-samples", "N", 1, 1e9, "at most N samples per size"),
	CLI_OPT_NUM(A, timeout_s, "timeout", "S", 0.001, 86400, "stop sampling a size after S seconds"),
	CLI_OPT_PATHS(A, paths),
	CLI_OPT_END,
};

static const struct cli_spec ar_spec = {
	.name = "ddt-allreduce",
	.usage = "mpirun -np N ddt-allreduce [OPTIONS]\n"
		 "       srun -N NODES --ntasks-per-node=GPUS --mpi=pmix ddt-allreduce [OPTIONS]",
	.about = "All-reduces (sum) M x hidden bf16 across every rank for each M of the\n"
		 "template's fleet.allreduce_m: NCCL with one rank per GPU, bootstrapped through\n"
		 "MPI, or MPI_Allreduce where the ranks have no GPU (backend mpi). Rank 0 writes\n"
		 "a run record: runs/<run-id>/run.yaml, or the file given by --record.",
	.opts = ar_opts,
};

/* Parses argv the same way on every rank; only rank 0 prints. Returns -1 to
 * go on, else the exit status. */
static int parse_args(struct ar_args *a, int argc, char **argv, int rank)
{
	int first, status, out = dup(STDOUT_FILENO), err = dup(STDERR_FILENO);
	FILE *null = rank ? fopen("/dev/null", "w") : NULL;

	paths_init(&a->paths, "default");
	if (null) {
		fflush(stdout);
		dup2(fileno(null), STDOUT_FILENO);
		dup2(fileno(null), STDERR_FILENO);
	}
	status = cli_parse(&ar_spec, a, argc, argv, &first);
	if (null) {
		fflush(stdout);
		fflush(stderr);
		dup2(out, STDOUT_FILENO);
		dup2(err, STDERR_FILENO);
		fclose(null);
	}
	close(out);
	close(err);
	return status;
}

/* The template's widths and stopping rule into c (the options override
 * parts of the rule; messages stay in place between samples, as in
 * nccl-tests: never cold). Returns 0 or the error, printed. */
static int conf_load(struct allreduce_conf *c, const struct ar_args *a)
{
	struct tmpl t;
	struct fleet_conf fc;
	struct bench_conf *bc = malloc(sizeof *bc);
	struct ydiag diag = {0};
	int rc = bc ? tmpl_load(&t, a->paths.template_path, &diag) : err_nomem();

	if (!rc)
		rc = fleet_conf_load(&fc, &t, &diag);
	if (!rc)
		rc = bench_conf_load(bc, &t, &diag);
	if (rc)
		fprintf(stderr, "ddt-allreduce: %s\n", diag.n ? diag.msgs[0] : err_msg());
	else {
		c->nm = fc.nm;
		memcpy(c->m, fc.allreduce_m, sizeof fc.allreduce_m);
		c->hidden = fc.allreduce_hidden;
		c->hc = bc->timing;
		c->hc.cold = 0;
		if (a->min_time_s > 0)
			c->hc.min_time_s = a->min_time_s;
		if (a->timeout_s > 0)
			c->hc.timeout_s = a->timeout_s;
		if (a->max_samples > 0)
			c->hc.max_samples = a->max_samples;
	}
	free(bc);
	tmpl_free(&t);
	ydiag_free(&diag);
	return rc;
}

/* Rank 0's run record: id, template name, provenance and this rank's device. */
static int record_begin(struct run_record *r, const struct allreduce_conf *c,
			const struct allreduce_world *w, const struct paths *paths)
{
	struct rec_device d;
	const char *slash = strrchr(paths->template_path, '/');
	const char *name = slash ? slash + 1 : paths->template_path;
	int rc;

	memset(r, 0, sizeof *r);
	r->schema = RECORD_SCHEMA;
	record_make_run_id(r->run_id, sizeof r->run_id, r->created, sizeof r->created);
	snprintf(r->template_name, sizeof r->template_name, "%.*s", (int)strcspn(name, "."), name);
	if ((rc = allreduce_describe(c, w, paths->home, &d, &r->prov)) != 0)
		return rc;
	return record_add_device(r, &d);
}

/* Writes r to path, or as a run folder under runs when path is NULL. */
static int record_store(const struct run_record *r, const char *path, const char *runs)
{
	char *folder = NULL, *tmp = NULL, *file = NULL;
	int rc;

	if (path) {
		if ((rc = record_write(r, path)) == 0)
			printf("ddt-allreduce: %s\n", path);
		return rc;
	}
	if ((rc = fsx_mkdir_p(runs)) != 0)
		return rc;
	if (!(folder = fsx_join(runs, r->run_id)))
		return err_nomem();
	if ((rc = fsx_dir_begin(folder, &tmp)) == 0) {
		if (!(file = fsx_join(tmp, "run.yaml")))
			rc = err_nomem();
		else if ((rc = record_write(r, file)) == 0)
			rc = fsx_dir_commit(tmp, folder);
		if (rc)
			fsx_rm_rf(tmp);
	}
	if (!rc)
		printf("ddt-allreduce: %s/run.yaml\n", folder);
	free(file);
	free(tmp);
	free(folder);
	return rc;
}

/* One size's row on rank 0: the line, the record. Returns 0 or DDT_ENOMEM. */
static int row_report(struct run_record *r, const struct rec_row *row,
		      const struct allreduce_world *w, int m)
{
	printf("ddt-allreduce: %-4s M=%-5d %9.0f bytes %3d ranks %2d nodes  median %9.2f us  "
	       "algbw %7.3f GB/s  busbw %7.3f GB/s  %s%s%s\n",
	       row->backend, m, row->bytes, w->size, w->nodes, row->median_us, row->gbps,
	       fleet_busbw(row->gbps, w->size), rec_status_name(row->status),
	       row->reason[0] ? ": " : "", row->reason);
	return record_add_row(r, row);
}

/* Measures every size and, on rank 0, stores the record. Collective.
 * Returns the exit status. */
static int run(const struct allreduce_conf *c, const struct allreduce_world *w,
	       const struct ar_args *a)
{
	struct run_record r = {0};
	int rc, failed = 0;

	if ((rc = allreduce_open(c, w)) != 0)
		goto done;
	if (w->rank == 0 && (rc = record_begin(&r, c, w, &a->paths)) != 0)
		fprintf(stderr, "ddt-allreduce: %s\n", err_msg());
	if (allreduce_any(rc != 0)) {
		rc = rc ? rc : DDT_EGENERIC;
		goto done;
	}
	for (int i = 0; i < c->nm; i++) {
		struct rec_row row;
		allreduce_measure(c, w, c->m[i], &row);
		if (w->rank != 0)
			continue;
		failed |= row.status != REC_OK;
		if ((rc = row_report(&r, &row, w, c->m[i])) != 0)
			break;
	}
	if (w->rank == 0 && !rc && (rc = record_store(&r, a->record, a->paths.runs)) != 0)
		fprintf(stderr, "ddt-allreduce: %s\n", err_msg());
	allreduce_share(&rc, sizeof rc);
	allreduce_share(&failed, sizeof failed);
done:
	allreduce_close(c);
	record_free(&r);
	return rc ? err_exit_status(rc) : failed ? 4 : 0;
}

int main(int argc, char **argv)
{
	struct allreduce_world w;
	struct allreduce_conf c;
	struct ar_args a = {0};
	int status, rc = 0;

	allreduce_start(&argc, &argv, &w);
	if ((status = parse_args(&a, argc, argv, w.rank)) >= 0)
		goto done;
	memset(&c, 0, sizeof c);
	if (w.rank == 0)
		rc = conf_load(&c, &a);
	allreduce_share(&rc, sizeof rc);
	allreduce_share(&c, sizeof c);
	if (rc) {
		status = 2;
		goto done;
	}
	c.backend = !a.backend || !strcmp(a.backend, "auto") ? ALLREDUCE_AUTO
		    : !strcmp(a.backend, "nccl")               ? ALLREDUCE_NCCL
							       : ALLREDUCE_MPI;
	if (allreduce_backend_decide(&c)) {
		if (w.rank == 0)
			fprintf(stderr, "ddt-allreduce: %s\n", err_msg());
		status = 2;
		goto done;
	}
	status = run(&c, &w, &a);
done:
	allreduce_end();
	return status;
}
