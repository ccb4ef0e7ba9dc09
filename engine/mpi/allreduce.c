/* allreduce.c - the multi-node all-reduce: one rank per GPU under srun or mpirun,
 * NCCL bootstrapped through MPI (rank 0's unique id broadcast), or, where the
 * ranks have no GPU, MPI_Allreduce of the same bf16 messages (backend "mpi").
 *
 * Build: make build/ddt-allreduce    (needs mpicc; NCCL when nvcc and CUDA exist)
 * Run:   mpirun -np 2 build/ddt-allreduce
 *        srun -N 2 --ntasks-per-node=8 --mpi=pmix build/ddt-allreduce
 *
 * It all-reduces (sum) M x hidden bf16 for every M of the template's
 * fleet.allreduce_m (the decode step's two all-reduces per layer:
 * [aic-095f58a-allreduce]) into one result row per M, op "allreduce", variant "mpi_ranks",
 * backend "nccl" or "mpi", params M, hidden, ranks and nodes, the
 * median/p10/p90 latency in µs, gbps = algbw = bytes / median, which the
 * command (pipeline/cmd/allreduce_main.c) writes as rank 0's run record;
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
#include "mpi/allreduce.h"

#include <mpi.h>

#include "cpu/cpu.h"
#include "cuda_api.h"
#include "err.h"
#include "ops/bf16.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DDT_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <nccl.h>
#endif

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

int allreduce_any(int mine)
{
	int all = 0;
	MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return all;
}

static int nccl_dev = -1; /* this rank's device among those it sees (NCCL) */

#ifdef DDT_HAVE_CUDA
static ncclComm_t nccl_comm;
static cudaStream_t nccl_stream;

/* Whether the ranks of this host got distinct GPUs (PCI bus ids compared:
 * two ranks that each see one GPU may see the same one); have: this rank
 * has set its device. Collective over the host's ranks, so every rank calls
 * it, failed or not. Returns 0 or DDT_EINPUT naming the pair. */
static int nccl_distinct(const struct allreduce_world *w, int have)
{
	char bus[32] = "", *all = malloc((size_t)w->local_size * sizeof bus);
	MPI_Comm local;
	int rc = 0;

	if (!have || cudaDeviceGetPCIBusId(bus, sizeof bus, nccl_dev) != cudaSuccess)
		snprintf(bus, sizeof bus, "none-%d", w->local_rank); /* never a duplicate */
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w->rank, MPI_INFO_NULL, &local);
	if (all)
		MPI_Allgather(bus, sizeof bus, MPI_CHAR, all, sizeof bus, MPI_CHAR, local);
	MPI_Comm_free(&local);
	if (!all)
		return err_nomem();
	for (int i = 0; i < w->local_size && !rc; i++)
		if (i != w->local_rank && !strcmp(all + i * sizeof bus, bus))
			rc = err_set(DDT_EINPUT, "%s: local ranks %d and %d both got GPU %s: bind one "
				     "GPU per task (srun --gpus-per-task=1) or let every rank see all",
				     w->host, i, w->local_rank, bus);
	free(all);
	return rc;
}

/* Picks this rank's GPU (cuda_local_device: its own under per-task binding,
 * else its rank on the host) and joins the NCCL
 * communicator whose id rank 0 broadcasts. Collective: every rank reaches the
 * broadcast and the agreement after it, so one rank's failure cannot leave
 * the others waiting in ncclCommInitRank. Returns 0 or an error code. */
static int nccl_open(const struct allreduce_world *w)
{
	ncclUniqueId id;
	int ndev = 0, rc = 0;

	memset(&id, 0, sizeof id);
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0)
		rc = err_set(DDT_EGENERIC, "%s: no CUDA device", w->host);
	else if ((rc = cuda_local_device(ndev, w->local_rank, w->local_size, &nccl_dev)))
		err_wrap(rc, "%s", w->host);
	else if (cudaSetDevice(nccl_dev) != cudaSuccess)
		rc = err_set(DDT_EGENERIC, "%s: cudaSetDevice(%d) failed", w->host, nccl_dev);
	int dup = nccl_distinct(w, rc == 0);
	rc = rc ? rc : dup;
	if (!rc && w->rank == 0 && ncclGetUniqueId(&id) != ncclSuccess)
		rc = err_set(DDT_EGENERIC, "ncclGetUniqueId failed");
	MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
	if (allreduce_any(rc != 0))
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
	/* calloc: GCC cannot see the fill below reach every element that
	 * MPI_Allreduce reads (-Wmaybe-uninitialized without CUDA) */
	b->host_in = calloc(count ? count : 1, sizeof *b->host_in);
	b->host_out = calloc(count ? count : 1, sizeof *b->host_out);
	if (!b->host_in || !b->host_out)
		return err_nomem();
	for (size_t i = 0; i < count; i++) {
		b->host_in[i] = input_of(i, rank);
		b->host_out[i] = 0x7fc0; /* NaN: an element the reduce misses fails the check */
	}
#ifdef DDT_HAVE_CUDA
	if (backend == ALLREDUCE_NCCL) {
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
	if (backend == ALLREDUCE_NCCL) {
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
	if (backend == ALLREDUCE_NCCL &&
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
static int measure_size(const struct allreduce_conf *c, const struct allreduce_world *w, int m, MPI_Op op,
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
	bad = allreduce_any(rc != 0);
	MPI_Allreduce(&err, &all_err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	row->max_err = all_err;
	for (int i = 0; !bad && i < c->hc.warmup; i++) {
		if ((rc = allreduce_once(&b, c->backend, op)) != 0)
			snprintf(why, sizeof why, "rank %d on %.40s: %.90s", w->rank, w->host, err_msg());
		bad = allreduce_any(rc != 0);
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

void allreduce_start(int *argc, char ***argv, struct allreduce_world *w)
{
	MPI_Comm local;
	int len = 0, is_leader;

	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &w->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &w->size);
	MPI_Get_processor_name(w->host, &len); /* MPI_MAX_PROCESSOR_NAME <= 256 */
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w->rank, MPI_INFO_NULL, &local);
	MPI_Comm_rank(local, &w->local_rank);
	MPI_Comm_size(local, &w->local_size);
	MPI_Comm_free(&local);
	is_leader = w->local_rank == 0;
	MPI_Allreduce(&is_leader, &w->nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

int allreduce_backend_decide(struct allreduce_conf *c)
{
	int have = 0, all = 0;
#ifdef DDT_HAVE_CUDA
	int ndev = 0;
	have = cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0;
#endif
	MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (c->backend == ALLREDUCE_NCCL && !all)
		return err_set(DDT_EINPUT, "--backend nccl: %s",
#ifdef DDT_HAVE_CUDA
			       "a rank has no CUDA device"
#else
			       "built without CUDA (nvcc not found)"
#endif
		);
	if (c->backend == ALLREDUCE_AUTO)
		c->backend = all ? ALLREDUCE_NCCL : ALLREDUCE_MPI;
	return 0;
}

void allreduce_end(void)
{
	MPI_Finalize();
}

void allreduce_share(void *buf, size_t len)
{
	MPI_Bcast(buf, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD);
}

/* ---------------------------------------------------------------- the sweep */

static MPI_Op sum_op = MPI_OP_NULL;

int allreduce_open(const struct allreduce_conf *c, const struct allreduce_world *w)
{
	int rc = 0;
	MPI_Op_create(bf16_sum_op, 1, &sum_op);
#ifdef DDT_HAVE_CUDA
	if (c->backend == ALLREDUCE_NCCL && allreduce_any((rc = nccl_open(w)) != 0)) {
		if (rc)
			fprintf(stderr, "ddt-allreduce: rank %d: %s\n", w->rank, err_msg());
		return rc ? rc : err_set(DDT_EGENERIC, "another rank could not open NCCL");
	}
#else
	(void)c;
	(void)w;
#endif
	return rc;
}

void allreduce_close(const struct allreduce_conf *c)
{
#ifdef DDT_HAVE_CUDA
	if (c->backend == ALLREDUCE_NCCL)
		nccl_close();
#else
	(void)c;
#endif
	if (sum_op != MPI_OP_NULL)
		MPI_Op_free(&sum_op);
}

int allreduce_describe(const struct allreduce_conf *c, const struct allreduce_world *w,
		       const char *home, struct rec_device *d, struct rec_provenance *prov)
{
	char runtime[24], driver[24], nccl[24];

	cpu_provenance(prov, home);
	cuda_versions(runtime, driver, nccl, sizeof runtime);
	snprintf(prov->cuda_runtime, sizeof prov->cuda_runtime, "%s", runtime);
	snprintf(prov->cuda_driver, sizeof prov->cuda_driver, "%s", driver);
	snprintf(prov->nccl, sizeof prov->nccl, "%s", nccl);
	if (c->backend == ALLREDUCE_NCCL)
		return cuda_device_describe(nccl_dev >= 0 ? nccl_dev : w->local_rank, d);
	cpu_device_detect(d);
	return 0;
}

void allreduce_measure(const struct allreduce_conf *c, const struct allreduce_world *w, int m,
		       struct rec_row *row)
{
	memset(row, 0, sizeof *row);
	snprintf(row->op, sizeof row->op, "allreduce");
	snprintf(row->variant, sizeof row->variant, "mpi_ranks");
	snprintf(row->backend, sizeof row->backend, "%s",
		 c->backend == ALLREDUCE_NCCL ? "nccl" : "mpi");
	rec_row_param_set(row, "M", m);
	rec_row_param_set(row, "hidden", c->hidden);
	rec_row_param_set(row, "ranks", w->size);
	rec_row_param_set(row, "nodes", w->nodes);
	row->flops = NAN;
	row->gbps = row->pct_peak = row->sm_clock_mhz = NAN;
	measure_size(c, w, m, sum_op, row);
}
