/* allreduce.c - the multi-node all-reduce: one rank per GPU under srun or mpirun,
 * NCCL bootstrapped through MPI (rank 0's unique id broadcast), or, where the
 * ranks have no GPU, MPI_Allreduce of the same bf16 messages (backend "mpi").
 *
 * Build: make build/ddt-allreduce    (needs mpicc; NCCL when nvcc and CUDA exist)
 * Run:   mpirun -np 2 build/ddt-allreduce
 *        srun -N 2 --ntasks-per-node=8 --mpi=pmix build/ddt-allreduce
 *
 * It all-reduces (sum) M x hidden bf16 for every M of the template's
 * fleet.allreduce_m (the decode step's two all-reduces per layer: FACTS.md
 * section 7) and rank 0 writes a run record: one row per M, op "allreduce",
 * variant "mpi_ranks", backend "nccl" or "mpi", params M, hidden, ranks and
 * nodes, the median/p10/p90 latency in µs, gbps = algbw = bytes / median;
 * busbw = algbw x 2 (ranks - 1) / ranks is derived where it is shown
 * (fleet_busbw), not stored, so it never splits a history series.
 *
 * Napkin math: bytes counts the message once (M x hidden x 2), as nccl-tests
 * does for algbw. One sample = barrier (untimed), then the all-reduce until its
 * result is usable on this rank (NCCL: stream synchronized); the sample is the
 * slowest rank's time (MPI_MAX), so every rank holds the same samples and the
 * engine's stopping rule (harness_enough) ends the loop on the same sample
 * everywhere. Inputs are 0/1 values, so the sum is exact in bf16 up to 512
 * ranks and is checked element by element on every rank.
 */
#include <mpi.h>

#include "bench_conf.h"
#include "paths.h"
#include "cpu/cpu.h"
#include "cuda_api.h"
#include "err.h"
#include "fleet.h"
#include "fsx.h"
#include "harness.h"
#include "ops/bf16.h"
#include "record.h"

#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DDT_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <nccl.h>
#endif

static const char usage[] =
	"usage: mpirun -np N ddt-allreduce [OPTIONS]\n"
	"       srun -N NODES --ntasks-per-node=GPUS --mpi=pmix ddt-allreduce [OPTIONS]\n"
	"\n"
	"All-reduces (sum) M x hidden bf16 across every rank for each M of the\n"
	"template's fleet.allreduce_m: NCCL with one rank per GPU, bootstrapped through\n"
	"MPI, or MPI_Allreduce where the ranks have no GPU (backend mpi). Rank 0 writes\n"
	"a run record: runs/<run-id>/run.yaml, or the file given by --record.\n"
	"\n"
	"  --backend B         auto (default: nccl when every rank has a GPU), nccl, mpi\n"
	"  --record PATH       write the run record to PATH instead of a run folder\n"
	"Timing follows the template's bench.timing (the stopping rule `ddt bench`\n"
	"uses); these override parts of it:\n"
	"  --min-time S        at least S seconds of samples per size\n"
	"  --max-samples N     at most N samples per size\n"
	"  --timeout S         stop sampling a size after S seconds\n"
	"  --calibration PATH  calibration folder or file (default: calibration/)\n"
	"  --template PATH     job template (default: templates/default.yaml)\n"
	"  --runs DIR          run records folder (default: runs/)\n"
	"  --reports DIR       documents folder (default: reports/)\n"
	"  -h, --help          this text\n";

enum backend { BK_AUTO, BK_NCCL, BK_MPI };

/* What every rank needs to agree on. */
struct ar_conf {
	int backend;        /* BK_NCCL or BK_MPI once decided */
	int nm;
	int m[FLEET_MAX_M];
	int hidden;
	struct harness_conf hc;
};

/* The world as this rank sees it. */
struct ar_world {
	int rank, size;      /* in MPI_COMM_WORLD */
	int local_rank, local_size;
	int nodes;           /* distinct hosts among the ranks */
	char host[MPI_MAX_PROCESSOR_NAME];
};

/* ---------------------------------------------------------------- the bf16 sum */

/* MPI has no bf16: a user op sums raw bf16 words the way NCCL's bf16 sum
 * does (in float, rounded to nearest even). */
static void bf16_sum_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
	const bf16_t *a = in;
	bf16_t *b = inout;
	(void)type;
	for (int i = 0; i < *len; i++)
		b[i] = bf16_from_float(bf16_to_float(a[i]) + bf16_to_float(b[i]));
}

/* Input of rank r at element i: 0 or 1, so every partial sum is an integer. */
static bf16_t input_of(size_t i, int r)
{
	return bf16_from_float((float)((i * 7 + (size_t)r) & 1));
}

/* The sum over n ranks at element i: how many ranks hold a 1 there. */
static double expected_at(size_t i, int n)
{
	return (i * 7) & 1 ? (n + 1) / 2 : n / 2;
}

/* Largest |got - expected| / max(1, expected) over count elements. */
static double max_error(const bf16_t *got, size_t count, int n)
{
	double worst = 0;
	for (size_t i = 0; i < count; i++) {
		double e = expected_at(i, n), g = bf16_to_float(got[i]);
		double d = isnan(g) ? INFINITY : fabs(g - e) / (e > 1 ? e : 1);
		if (d > worst)
			worst = d;
	}
	return worst;
}

/* ---------------------------------------------------------------- backends */

/* One backend: buffers of count bf16 on this rank, and one all-reduce. */
struct ar_bufs {
	size_t count;
	bf16_t *host_in, *host_out;  /* MPI works on these directly */
	void *dev_in, *dev_out;      /* NCCL: device buffers */
};

/* 1 when any rank says 1. Collective. */
static int any_rank(int mine)
{
	int all = 0;
	MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return all;
}

#ifdef DDT_HAVE_CUDA
static ncclComm_t nccl_comm;
static cudaStream_t nccl_stream;

/* Picks this rank's GPU (its rank on the host) and joins the NCCL
 * communicator whose id rank 0 broadcasts. Collective: every rank reaches the
 * broadcast and the agreement after it, so one rank's failure cannot leave
 * the others waiting in ncclCommInitRank. Returns 0 or an error code. */
static int nccl_open(const struct ar_world *w)
{
	ncclUniqueId id;
	int ndev = 0, rc = 0;

	memset(&id, 0, sizeof id);
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0)
		rc = err_set(DDT_EGENERIC, "%s: no CUDA device", w->host);
	else if (w->local_size > ndev)
		rc = err_set(DDT_EINPUT, "%s: %d ranks but %d GPUs: one rank per GPU", w->host,
			     w->local_size, ndev);
	else if (cudaSetDevice(w->local_rank) != cudaSuccess)
		rc = err_set(DDT_EGENERIC, "%s: cudaSetDevice(%d) failed", w->host, w->local_rank);
	else if (w->rank == 0 && ncclGetUniqueId(&id) != ncclSuccess)
		rc = err_set(DDT_EGENERIC, "ncclGetUniqueId failed");
	MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
	if (any_rank(rc != 0))
		return rc ? rc : err_set(DDT_EGENERIC, "another rank could not set up its GPU");
	ncclResult_t nr = ncclCommInitRank(&nccl_comm, w->size, id, w->rank);
	if (nr != ncclSuccess)
		return err_set(DDT_EGENERIC, "ncclCommInitRank: %s", ncclGetErrorString(nr));
	if (cudaStreamCreate(&nccl_stream) != cudaSuccess)
		return err_set(DDT_EGENERIC, "cudaStreamCreate failed");
	return 0;
}

static void nccl_close(void)
{
	if (nccl_comm)
		ncclCommDestroy(nccl_comm);
	if (nccl_stream)
		cudaStreamDestroy(nccl_stream);
}
#endif

static int bufs_alloc(struct ar_bufs *b, size_t count, int backend, int rank)
{
	memset(b, 0, sizeof *b);
	b->count = count;
	b->host_in = malloc(count * sizeof *b->host_in);
	b->host_out = malloc(count * sizeof *b->host_out);
	if (!b->host_in || !b->host_out)
		return err_nomem();
	for (size_t i = 0; i < count; i++) {
		b->host_in[i] = input_of(i, rank);
		b->host_out[i] = 0x7fc0; /* NaN: an element the reduce misses fails the check */
	}
#ifdef DDT_HAVE_CUDA
	if (backend == BK_NCCL) {
		size_t bytes = count * sizeof(bf16_t);
		if (cudaMalloc(&b->dev_in, bytes) != cudaSuccess ||
		    cudaMalloc(&b->dev_out, bytes) != cudaSuccess)
			return err_set(DDT_ENOMEM, "cudaMalloc of %zu bytes failed", bytes);
		if (cudaMemcpy(b->dev_in, b->host_in, bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
		    cudaMemcpy(b->dev_out, b->host_out, bytes, cudaMemcpyHostToDevice) != cudaSuccess)
			return err_set(DDT_EGENERIC, "cudaMemcpy to the device failed");
	}
#else
	(void)backend;
#endif
	return 0;
}

static void bufs_free(struct ar_bufs *b)
{
	free(b->host_in);
	free(b->host_out);
#ifdef DDT_HAVE_CUDA
	cudaFree(b->dev_in);
	cudaFree(b->dev_out);
#endif
	memset(b, 0, sizeof *b);
}

/* One all-reduce, complete on this rank when it returns. */
static int allreduce_once(struct ar_bufs *b, int backend, MPI_Op op)
{
#ifdef DDT_HAVE_CUDA
	if (backend == BK_NCCL) {
		ncclResult_t nr = ncclAllReduce(b->dev_in, b->dev_out, b->count, ncclBfloat16, ncclSum,
						nccl_comm, nccl_stream);
		if (nr != ncclSuccess)
			return err_set(DDT_EGENERIC, "ncclAllReduce: %s", ncclGetErrorString(nr));
		if (cudaStreamSynchronize(nccl_stream) != cudaSuccess)
			return err_set(DDT_EGENERIC, "cudaStreamSynchronize failed");
		return 0;
	}
#else
	(void)backend;
#endif
	if (MPI_Allreduce(b->host_in, b->host_out, (int)b->count, MPI_UINT16_T, op,
			  MPI_COMM_WORLD) != MPI_SUCCESS)
		return err_set(DDT_EGENERIC, "MPI_Allreduce failed");
	return 0;
}

/* The result as rank-local host memory, for the check. */
static int fetch_result(struct ar_bufs *b, int backend)
{
#ifdef DDT_HAVE_CUDA
	if (backend == BK_NCCL &&
	    cudaMemcpy(b->host_out, b->dev_out, b->count * sizeof(bf16_t), cudaMemcpyDeviceToHost) !=
		    cudaSuccess)
		return err_set(DDT_EGENERIC, "cudaMemcpy from the device failed");
#else
	(void)b;
	(void)backend;
#endif
	return 0;
}

/* ---------------------------------------------------------------- one size */

/* Times the all-reduce of M x hidden on every rank under the harness's
 * stopping rule and fills row on rank 0 (the others' rows are not used).
 * Collective. A failure on any rank becomes a failed row with rank 0's or
 * the failing rank's reason; returns 0 unless memory for samples is missing
 * on rank 0. */
static int measure_size(const struct ar_conf *c, const struct ar_world *w, int m, MPI_Op op,
			struct rec_row *row)
{
	struct ar_bufs b = {0};
	size_t count = (size_t)m * (size_t)c->hidden;
	int cap = c->hc.max_samples > 0 ? c->hc.max_samples : 1, n = 0, rc, bad;
	double *samples = malloc((size_t)cap * sizeof *samples), err = 0, all_err = 0;
	double start, total_s = 0;
	char why[160] = "";

	row->bytes = (double)count * sizeof(bf16_t);
	rc = samples ? bufs_alloc(&b, count, c->backend, w->rank) : err_nomem();
	if (!rc && !(rc = allreduce_once(&b, c->backend, op)) && !(rc = fetch_result(&b, c->backend)))
		err = max_error(b.host_out, count, w->size);
	if (rc)
		snprintf(why, sizeof why, "rank %d on %.40s: %.90s", w->rank, w->host, err_msg());
	bad = any_rank(rc != 0);
	MPI_Allreduce(&err, &all_err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	row->max_err = all_err;
	for (int i = 0; !bad && i < c->hc.warmup; i++) {
		if ((rc = allreduce_once(&b, c->backend, op)) != 0)
			snprintf(why, sizeof why, "rank %d on %.40s: %.90s", w->rank, w->host, err_msg());
		bad = any_rank(rc != 0);
	}
	start = harness_now_s();
	while (!bad) {
		int more = 1;
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = harness_now_s();
		rc = allreduce_once(&b, c->backend, op);
		/* the slowest rank's time and whether any rank failed, in one reduce */
		double mine[2] = {harness_now_s() - t0, rc != 0}, all[2];
		if (rc)
			snprintf(why, sizeof why, "rank %d on %.40s: %.90s", w->rank, w->host, err_msg());
		MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		if (all[1] > 0) {
			bad = 1;
			break;
		}
		samples[n++] = all[0] * 1e6;
		total_s += all[0];
		/* rank 0 decides, so every rank stops on the same sample */
		if (w->rank == 0)
			more = n < cap && !harness_enough(&c->hc, n, total_s, harness_rsd(samples, n),
							   harness_now_s() - start);
		MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
		if (!more)
			break;
	}
	if (bad) {
		/* the lowest failing rank's reason reaches rank 0 */
		int who = why[0] ? w->rank : w->size, first = 0;
		MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
		if (first < w->size && first != 0) {
			if (w->rank == first)
				MPI_Send(why, sizeof why, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
			else if (w->rank == 0)
				MPI_Recv(why, sizeof why, MPI_CHAR, first, 7, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
		}
		row->status = REC_FAILED;
		snprintf(row->reason, sizeof row->reason, "%s", why[0] ? why : "all-reduce failed");
		harness_stats(samples, 0, row);
	} else {
		harness_stats(samples, n, row);
		row->gbps = row->bytes / (row->median_us * 1e-6) / 1e9;
		double tol = w->size <= 512 ? 0 : 1.0 / 128;
		row->status = all_err <= tol ? REC_OK : REC_FAILED;
		if (row->status == REC_FAILED)
			snprintf(row->reason, sizeof row->reason,
				 "sum differs from the expected count by %.3g (relative)", all_err);
	}
	bufs_free(&b);
	free(samples);
	return 0;
}

/* ---------------------------------------------------------------- set-up */

/* Ranks on this rank's host, and how many hosts there are. Collective. */
static void world_init(struct ar_world *w)
{
	MPI_Comm local;
	int len = 0, is_leader;

	MPI_Comm_rank(MPI_COMM_WORLD, &w->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &w->size);
	MPI_Get_processor_name(w->host, &len);
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w->rank, MPI_INFO_NULL, &local);
	MPI_Comm_rank(local, &w->local_rank);
	MPI_Comm_size(local, &w->local_size);
	MPI_Comm_free(&local);
	is_leader = w->local_rank == 0;
	MPI_Allreduce(&is_leader, &w->nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

/* Decides the backend together: nccl only when every rank has a GPU and the
 * build has NCCL. Returns 0 or DDT_EINPUT (nccl asked for but impossible). */
static int backend_decide(struct ar_conf *c)
{
	int have = 0, all = 0;
#ifdef DDT_HAVE_CUDA
	int ndev = 0;
	have = cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0;
#endif
	MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (c->backend == BK_NCCL && !all)
		return err_set(DDT_EINPUT, "--backend nccl: %s",
#ifdef DDT_HAVE_CUDA
			       "a rank has no CUDA device"
#else
			       "built without CUDA (nvcc not found)"
#endif
		);
	if (c->backend == BK_AUTO)
		c->backend = all ? BK_NCCL : BK_MPI;
	return 0;
}

/* Rank 0 reads the template's fleet section into c; the result and a status
 * reach every rank. Returns 0 or the error (on every rank). */
static int conf_share(struct ar_conf *c, const struct paths *paths, int rank)
{
	int rc = 0;
	if (rank == 0) {
		struct tmpl t;
		struct fleet_conf fc;
		struct bench_conf *bc = malloc(sizeof *bc);
		struct ydiag diag = {0};
		rc = bc ? tmpl_load(&t, paths->template_path, &diag) : err_nomem();
		if (!rc)
			rc = fleet_conf_load(&fc, &t, &diag);
		if (!rc)
			rc = bench_conf_load(bc, &t, &diag);
		if (rc)
			fprintf(stderr, "ddt-allreduce: %s\n", diag.n ? diag.msgs[0] : err_msg());
		else {
			c->nm = fc.nm;
			memcpy(c->m, fc.allreduce_m, sizeof c->m);
			c->hidden = fc.allreduce_hidden;
			/* the template's stopping rule, as `ddt bench` uses it; the
			 * command line may override parts of it */
			struct harness_conf over = c->hc;
			c->hc = bc->timing;
			c->hc.cold = 0;
			if (isfinite(over.min_time_s))
				c->hc.min_time_s = over.min_time_s;
			if (isfinite(over.timeout_s))
				c->hc.timeout_s = over.timeout_s;
			if (over.max_samples > 0)
				c->hc.max_samples = over.max_samples;
		}
		free(bc);
		tmpl_free(&t);
		ydiag_free(&diag);
	}
	MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Bcast(c, sizeof *c, MPI_BYTE, 0, MPI_COMM_WORLD);
	return rc;
}

/* ---------------------------------------------------------------- the record */

/* Rank 0's device and the build, into r. */
static int record_begin(struct run_record *r, const struct ar_conf *c, const struct ar_world *w,
			const struct paths *paths)
{
	struct rec_device d;
	char runtime[24], driver[24], nccl[24];
	const char *slash = strrchr(paths->template_path, '/');

	memset(r, 0, sizeof *r);
	r->schema = RECORD_SCHEMA;
	record_make_run_id(r->run_id, sizeof r->run_id, r->created, sizeof r->created);
	snprintf(r->template_name, sizeof r->template_name, "%.*s",
		 (int)strcspn(slash ? slash + 1 : paths->template_path, "."),
		 slash ? slash + 1 : paths->template_path);
	cpu_provenance(&r->prov, paths->home);
	cuda_versions(runtime, driver, nccl, sizeof runtime);
	snprintf(r->prov.cuda_runtime, sizeof r->prov.cuda_runtime, "%s", runtime);
	snprintf(r->prov.cuda_driver, sizeof r->prov.cuda_driver, "%s", driver);
	snprintf(r->prov.nccl, sizeof r->prov.nccl, "%s", nccl);
	if (c->backend == BK_NCCL) {
		int rc = cuda_device_describe(w->local_rank, &d);
		if (rc)
			return rc;
	} else
		cpu_device_detect(&d);
	return record_add_device(r, &d);
}

static void row_begin(struct rec_row *row, const struct ar_conf *c, const struct ar_world *w,
		      int m)
{
	memset(row, 0, sizeof *row);
	snprintf(row->op, sizeof row->op, "allreduce");
	snprintf(row->variant, sizeof row->variant, "mpi_ranks");
	snprintf(row->backend, sizeof row->backend, "%s", c->backend == BK_NCCL ? "nccl" : "mpi");
	rec_row_param_set(row, "M", m);
	rec_row_param_set(row, "hidden", c->hidden);
	rec_row_param_set(row, "ranks", w->size);
	rec_row_param_set(row, "nodes", w->nodes);
	row->flops = NAN;
	row->gbps = row->pct_peak = row->sm_clock_mhz = NAN;
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

/* ---------------------------------------------------------------- main */

struct ar_args {
	struct paths paths;
	const char *record;
	int backend;
	double min_time_s, timeout_s;
	int max_samples;
};

/* Parses argv on every rank the same way; returns -1 to go on, else an exit status. */
static int parse_args(struct ar_args *a, int argc, char **argv, int rank)
{
	enum { OPT_BACKEND = 1000, OPT_RECORD, OPT_MIN_TIME, OPT_MAX_SAMPLES, OPT_TIMEOUT,
	       OPT_CALIBRATION, OPT_TEMPLATE, OPT_RUNS, OPT_REPORTS };
	static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
					     {"backend", required_argument, NULL, OPT_BACKEND},
					     {"record", required_argument, NULL, OPT_RECORD},
					     {"min-time", required_argument, NULL, OPT_MIN_TIME},
					     {"max-samples", required_argument, NULL, OPT_MAX_SAMPLES},
					     {"timeout", required_argument, NULL, OPT_TIMEOUT},
					     {"calibration", required_argument, NULL, OPT_CALIBRATION},
					     {"template", required_argument, NULL, OPT_TEMPLATE},
					     {"runs", required_argument, NULL, OPT_RUNS},
					     {"reports", required_argument, NULL, OPT_REPORTS},
					     {NULL, 0, NULL, 0}};
	int opt;
	char *end;

	memset(a, 0, sizeof *a);
	a->min_time_s = a->timeout_s = NAN;
	paths_init(&a->paths, "default");
	opterr = rank == 0;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_CALIBRATION:
			snprintf(a->paths.calibration, sizeof a->paths.calibration, "%s", optarg);
			break;
		case OPT_TEMPLATE:
			paths_set_template(&a->paths, optarg);
			break;
		case OPT_RUNS:
			snprintf(a->paths.runs, sizeof a->paths.runs, "%s", optarg);
			break;
		case OPT_REPORTS:
			snprintf(a->paths.reports, sizeof a->paths.reports, "%s", optarg);
			break;
		case 'h':
			if (rank == 0)
				fputs(usage, stdout);
			return 0;
		case OPT_BACKEND:
			if (!strcmp(optarg, "auto"))
				a->backend = BK_AUTO;
			else if (!strcmp(optarg, "nccl"))
				a->backend = BK_NCCL;
			else if (!strcmp(optarg, "mpi"))
				a->backend = BK_MPI;
			else
				goto bad;
			break;
		case OPT_RECORD:
			a->record = optarg;
			break;
		case OPT_MIN_TIME:
		case OPT_TIMEOUT: {
			double v = strtod(optarg, &end);
			if (*end || !(v > 0))
				goto bad;
			*(opt == OPT_MIN_TIME ? &a->min_time_s : &a->timeout_s) = v;
			break;
		}
		case OPT_MAX_SAMPLES:
			a->max_samples = (int)strtol(optarg, &end, 10);
			if (*end || a->max_samples < 1)
				goto bad;
			break;
		default:
			goto bad;
		}
	}
	if (optind == argc)
		return -1;
bad:
	if (rank == 0)
		fprintf(stderr, "ddt-allreduce: bad option or value (see --help)\n");
	return 2;
}

/* Measures every size and, on rank 0, stores the record. Collective. */
static int run(struct ar_conf *c, const struct ar_world *w, const struct ar_args *a)
{
	struct run_record r = {0};
	MPI_Op op;
	int rc = 0, failed = 0;

	MPI_Op_create(bf16_sum_op, 1, &op);
#ifdef DDT_HAVE_CUDA
	if (c->backend == BK_NCCL && any_rank((rc = nccl_open(w)) != 0)) {
		if (rc)
			fprintf(stderr, "ddt-allreduce: rank %d: %s\n", w->rank, err_msg());
		rc = DDT_EGENERIC;
		goto done;
	}
#endif
	if (w->rank == 0 && (rc = record_begin(&r, c, w, &a->paths)) != 0)
		fprintf(stderr, "ddt-allreduce: %s\n", err_msg());
	if (any_rank(rc != 0)) {
		rc = rc ? rc : DDT_EGENERIC;
		goto done;
	}
	for (int i = 0; i < c->nm; i++) {
		struct rec_row row;
		row_begin(&row, c, w, c->m[i]);
		measure_size(c, w, c->m[i], op, &row);
		if (w->rank != 0)
			continue;
		failed |= row.status != REC_OK;
		printf("ddt-allreduce: %-4s M=%-5d %9.0f bytes %3d ranks %2d nodes  median %9.2f us  "
		       "algbw %7.3f GB/s  busbw %7.3f GB/s  %s%s%s\n",
		       row.backend, c->m[i], row.bytes, w->size, w->nodes, row.median_us, row.gbps,
		       fleet_busbw(row.gbps, w->size), rec_status_name(row.status),
		       row.reason[0] ? ": " : "", row.reason);
		if ((rc = record_add_row(&r, &row)) != 0)
			break;
	}
	if (w->rank == 0 && !rc && (rc = record_store(&r, a->record, a->paths.runs)) != 0)
		fprintf(stderr, "ddt-allreduce: %s\n", err_msg());
	MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
done:
#ifdef DDT_HAVE_CUDA
	if (c->backend == BK_NCCL)
		nccl_close();
#endif
	MPI_Op_free(&op);
	record_free(&r);
	return rc ? err_exit_status(rc) : failed ? 4 : 0;
}

int main(int argc, char **argv)
{
	struct ar_world w;
	struct ar_conf c;
	struct ar_args a;
	int status;

	MPI_Init(&argc, &argv);
	world_init(&w);
	status = parse_args(&a, argc, argv, w.rank);
	if (status >= 0)
		goto done;
	/* command-line overrides travel to rank 0 in c.hc (NaN / 0: not given);
	 * messages stay in place between samples, as in nccl-tests: never cold */
	memset(&c, 0, sizeof c);
	c.hc.min_time_s = a.min_time_s;
	c.hc.timeout_s = a.timeout_s;
	c.hc.max_samples = a.max_samples;
	if (conf_share(&c, &a.paths, w.rank)) {
		status = 2;
		goto done;
	}
	c.backend = a.backend;
	if (backend_decide(&c)) {
		if (w.rank == 0)
			fprintf(stderr, "ddt-allreduce: %s\n", err_msg());
		status = 2;
		goto done;
	}
	status = run(&c, &w, &a);
done:
	MPI_Finalize();
	return status;
}
