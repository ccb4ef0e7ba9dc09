/* allreduce.cu - NCCL all-reduce of M x hidden bf16 over every local GPU: latency, algbw and busbw per M.
 *
 * One communicator across all local GPUs (ncclCommInitAll, one process),
 * sum in place of nothing: out-of-place so every sample does the same work.
 * One host thread per GPU launches that GPU's part (GPU 0's: the timing
 * thread; the others: workers started with the communicator, released
 * together by a barrier for each all-reduce), so a small all-reduce is not
 * timed behind one thread's n launches in a row. Each sample is 20
 * back-to-back all-reduces timed with events on GPU 0's stream (the
 * collective cannot finish on GPU 0 before every peer joined); the row's
 * time is per all-reduce. algbw = bytes / time, busbw = algbw x
 * 2 (n - 1) / n (nccl-tests' convention). The first call per M is checked
 * against the exact sum (small integers, exact in bf16).
 *
 * Napkin math (Kimi K2.x decode): 7168 x M bf16 = 14 KB at M = 1, 129 KB at
 * M = 9, 473 KB at M = 33, 3.7 MB at M = 257; [aic-095f58a-allreduce]: NCCL on 8
 * H200 ~18-26 us up to 1 MB (latency bound, not bandwidth bound).
 */
#include "timing.cuh"

extern "C" {
#include "ops/bf16.h"
}

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef DDT_NO_NCCL

/* Built without NCCL: every row says so. */
extern "C" int cuda_bench_allreduce(struct rec_rows *r, const int *ms, int nm, int hidden,
				    const struct harness_conf *hc, int rec_device)
{
	char reason[160];
	int n = cu_device_count(reason, sizeof reason);
	(void)hc;
	for (int i = 0; i < nm; i++) {
		struct rec_row row;
		cu_row_init(&row, "allreduce", "nccl", "nccl", rec_device);
		rec_row_param_set(&row, "M", ms[i]);
		rec_row_param_set(&row, "hidden", hidden);
		rec_row_param_set(&row, "gpus", n);
		row.bytes = (double)ms[i] * hidden * 2;
		cu_row_status(&row, REC_SKIPPED, "%s", n ? "built without NCCL" : reason);
		if (rec_rows_add(r, &row))
			return err_nomem();
	}
	return 0;
}

#else

#include <nccl.h>

#define AR_CALLS 20

static int nccl_fail(ncclResult_t r, const char *what, int line)
{
	return err_set(DDT_EGENERIC, "%s:%d: %s: %s", __FILE__, line, what, ncclGetErrorString(r));
}

static int nc_err(ncclResult_t r, const char *what, int line)
{
	return r == ncclSuccess ? 0 : nccl_fail(r, what, line);
}

#define NC(call) nc_err((call), #call, __LINE__)

struct ar_ctx {
	int n;
	size_t count;
	ncclComm_t *comms;
	cudaStream_t *streams; /* streams[0] is the timer's */
	void **send, **recv;
	/* the workers, GPUs 1..n-1: each round (gen) releases them all, and the
	 * timing thread waits until every part is launched (pending 0) */
	pthread_t *tids;
	int started, stop, pending;
	unsigned gen;
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	ncclResult_t *res; /* each worker's first failure */
};

struct ar_worker {
	struct ar_ctx *c;
	int i;
};

/* GPU i's part of the all-reduce on comms[i], streams[i]. */
static ncclResult_t ar_part(struct ar_ctx *c, int i)
{
	return ncclAllReduce(c->send[i], c->recv[i], c->count, ncclBfloat16, ncclSum, c->comms[i],
			     c->streams[i]);
}

/* A worker: its GPU's part once per round, until told to stop. */
static void *ar_worker_main(void *arg)
{
	struct ar_worker *w = (struct ar_worker *)arg;
	struct ar_ctx *c = w->c;
	const int i = w->i;
	unsigned seen = 0;
	free(w);
	if (cudaSetDevice(i) != cudaSuccess)
		c->res[i] = ncclUnhandledCudaError;
	pthread_mutex_lock(&c->mu);
	for (;;) {
		while (c->gen == seen && !c->stop)
			pthread_cond_wait(&c->go, &c->mu);
		if (c->stop)
			break;
		seen = c->gen;
		pthread_mutex_unlock(&c->mu);
		if (c->res[i] == ncclSuccess)
			c->res[i] = ar_part(c, i);
		pthread_mutex_lock(&c->mu);
		if (--c->pending == 0)
			pthread_cond_signal(&c->done);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* Starts the workers (after the communicator); 0 or an error code
 * (ar_workers_stop stops those started either way). */
static int ar_workers_start(struct ar_ctx *c)
{
	c->tids = (pthread_t *)calloc((size_t)c->n, sizeof *c->tids);
	c->res = (ncclResult_t *)calloc((size_t)c->n, sizeof *c->res);
	if (!c->tids || !c->res)
		return err_nomem();
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->go, NULL);
	pthread_cond_init(&c->done, NULL);
	for (int i = 1; i < c->n; i++) {
		struct ar_worker *w = (struct ar_worker *)malloc(sizeof *w);
		if (!w)
			return err_nomem();
		w->c = c, w->i = i;
		if (pthread_create(&c->tids[i], NULL, ar_worker_main, w)) {
			free(w);
			return err_set(DDT_EGENERIC, "starting the host thread of GPU %d failed", i);
		}
		c->started = i;
	}
	return 0;
}

/* Stops and joins the workers started. */
static void ar_workers_stop(struct ar_ctx *c)
{
	if (c->tids && c->res) {
		pthread_mutex_lock(&c->mu);
		c->stop = 1;
		pthread_cond_broadcast(&c->go);
		pthread_mutex_unlock(&c->mu);
		for (int i = 1; i <= c->started; i++)
			pthread_join(c->tids[i], NULL);
		pthread_cond_destroy(&c->go);
		pthread_cond_destroy(&c->done);
		pthread_mutex_destroy(&c->mu);
	}
	free(c->tids);
	free(c->res);
}

/* One all-reduce on every GPU: GPU 0's part on s by this thread, the others
 * by their workers, all released at once; returns once every part is
 * launched. */
static int ar_enqueue(void *arg, cudaStream_t s)
{
	struct ar_ctx *c = (struct ar_ctx *)arg;
	ncclResult_t r;
	c->streams[0] = s;
	pthread_mutex_lock(&c->mu);
	c->pending = c->n - 1;
	c->gen++;
	pthread_cond_broadcast(&c->go);
	pthread_mutex_unlock(&c->mu);
	r = ar_part(c, 0);
	pthread_mutex_lock(&c->mu);
	while (c->pending > 0)
		pthread_cond_wait(&c->done, &c->mu);
	pthread_mutex_unlock(&c->mu);
	for (int i = 1; i < c->n && r == ncclSuccess; i++)
		r = c->res[i];
	return r == ncclSuccess ? 0 : nccl_fail(r, "ncclAllReduce", __LINE__);
}

/* GPU i's value at k: small integers, so the bf16 sum is exact. */
static float ar_value(int i, size_t k)
{
	return (float)((int)((k * 7 + (size_t)i * 3) % 9) - 4) * (float)(i % 3 + 1);
}

/* Fills every GPU's send buffer for count elements. */
static int ar_fill(struct ar_ctx *c, size_t count)
{
	uint16_t *h = (uint16_t *)malloc(count * 2);
	int rc = 0;
	if (!h)
		return err_nomem();
	for (int i = 0; i < c->n && !rc; i++) {
		for (size_t k = 0; k < count; k++)
			h[k] = bf16_from_float(ar_value(i, k));
		/* a copy from pageable memory may still be in flight when it
		 * returns; the non-blocking streams do not wait for it */
		if (!(rc = CU(cudaSetDevice(i))) &&
		    !(rc = CU(cudaMemcpy(c->send[i], h, count * 2, cudaMemcpyHostToDevice))))
			rc = CU(cudaDeviceSynchronize());
	}
	free(h);
	return rc;
}

/* Runs one all-reduce and compares GPU 0's result with the exact sum; the
 * error is max |out - ref| / rms(ref). */
static int ar_check(struct ar_ctx *c, cudaStream_t s, double *err)
{
	uint16_t *h = (uint16_t *)malloc(c->count * 2);
	double ss = 0, worst = 0;
	int rc;
	*err = INFINITY;
	if (!h)
		return err_nomem();
	if ((rc = ar_enqueue(c, s)))
		goto done;
	for (int i = 0; i < c->n && !rc; i++)
		if (!(rc = CU(cudaSetDevice(i))))
			rc = CU(cudaStreamSynchronize(c->streams[i]));
	if (rc || (rc = CU(cudaSetDevice(0))) ||
	    (rc = CU(cudaMemcpy(h, c->recv[0], c->count * 2, cudaMemcpyDeviceToHost))))
		goto done;
	for (size_t k = 0; k < c->count; k++) {
		double ref = 0;
		for (int i = 0; i < c->n; i++)
			ref += ar_value(i, k);
		double d = fabs((double)bf16_to_float(h[k]) - ref);
		ss += ref * ref;
		if (!(d == d))
			d = INFINITY;
		worst = d > worst ? d : worst;
	}
	*err = worst / (ss > 0 ? sqrt(ss / (double)c->count) : 1.0);
done:
	free(h);
	return rc;
}

static void ar_row(struct rec_row *row, int M, int hidden, int n, int rec_device)
{
	cu_row_init(row, "allreduce", "nccl", "nccl", rec_device);
	rec_row_param_set(row, "M", M);
	rec_row_param_set(row, "hidden", hidden);
	rec_row_param_set(row, "gpus", n);
	row->bytes = (double)M * hidden * 2;
	row->flops = (double)M * hidden * (n > 1 ? n - 1 : 0);
}

/* Appends one row per M with status st and the reason. */
static int ar_rows_status(struct rec_rows *r, const int *ms, int nm, int hidden, int n,
			  int rec_device, enum rec_status st, const char *reason)
{
	for (int i = 0; i < nm; i++) {
		struct rec_row row;
		ar_row(&row, ms[i], hidden, n, rec_device);
		cu_row_status(&row, st, "%s", reason);
		if (rec_rows_add(r, &row))
			return err_nomem();
	}
	return 0;
}

extern "C" int cuda_bench_allreduce(struct rec_rows *r, const int *ms, int nm, int hidden,
				    const struct harness_conf *hc, int rec_device)
{
	char reason[160];
	int n = cu_device_count(reason, sizeof reason), rc = 0, maxm = 1;
	struct ar_ctx c;
	struct cu_timer t;
	struct harness_conf h = *hc;

	if (n == 0)
		return ar_rows_status(r, ms, nm, hidden, 0, rec_device, REC_SKIPPED, reason);
	if (n < 2) {
		snprintf(reason, sizeof reason, "needs 2 or more GPUs, found %d", n);
		return ar_rows_status(r, ms, nm, hidden, n, rec_device, REC_SKIPPED, reason);
	}
	for (int i = 0; i < nm; i++)
		maxm = ms[i] > maxm ? ms[i] : maxm;
	const size_t bytes = (size_t)maxm * hidden * 2;
	memset(&c, 0, sizeof c);
	memset(&t, 0, sizeof t);
	c.n = n;
	c.comms = (ncclComm_t *)calloc((size_t)n, sizeof *c.comms);
	c.streams = (cudaStream_t *)calloc((size_t)n, sizeof *c.streams);
	c.send = (void **)calloc((size_t)n, sizeof *c.send);
	c.recv = (void **)calloc((size_t)n, sizeof *c.recv);
	int *devs = (int *)calloc((size_t)n, sizeof *devs);
	if (!c.comms || !c.streams || !c.send || !c.recv || !devs) {
		rc = err_nomem();
		goto out;
	}
	for (int i = 0; i < n; i++)
		devs[i] = i;
	for (int i = 0; i < n && !rc; i++) {
		if (!(rc = CU(cudaSetDevice(i))) && !(rc = CU(cudaMalloc(&c.send[i], bytes))) &&
		    !(rc = CU(cudaMalloc(&c.recv[i], bytes))) && i > 0)
			rc = CU(cudaStreamCreateWithFlags(&c.streams[i], cudaStreamNonBlocking));
	}
	if (!rc)
		rc = NC(ncclCommInitAll(c.comms, n, devs));
	if (!rc)
		rc = ar_workers_start(&c);
	/* all-reduce latency is what matters: no L2 flush between samples */
	h.cold = 0;
	if (!rc)
		rc = cu_timer_init(&t, 0, 0);
	if (rc) {
		rc = ar_rows_status(r, ms, nm, hidden, n, rec_device, REC_FAILED, err_msg());
		goto out;
	}
	for (int i = 0; i < nm && !rc; i++) {
		struct rec_row row;
		double err = INFINITY;
		ar_row(&row, ms[i], hidden, n, rec_device);
		c.count = (size_t)ms[i] * hidden;
		if (ar_fill(&c, c.count) || CU(cudaSetDevice(0)) || ar_check(&c, t.s, &err)) {
			cu_row_status(&row, REC_FAILED, "%s", err_msg());
		} else if ((row.max_err = err) > 0) {
			cu_row_status(&row, REC_FAILED, "the sum differs from the exact one (error %.3g)",
				      err);
		} else if (cu_time(&t, &h, ar_enqueue, &c, AR_CALLS, &row)) {
			cu_row_status(&row, REC_FAILED, "timing: %s", err_msg());
		} else {
			cu_row_rates(&row, NAN);
			rec_row_param_set(&row, "busbw_gbps", row.gbps * 2.0 * (n - 1) / n);
		}
		rc = rec_rows_add(r, &row) ? err_nomem() : 0;
	}
out:
	ar_workers_stop(&c);
	cu_timer_free(&t);
	for (int i = 0; c.comms && i < n; i++)
		if (c.comms[i])
			ncclCommDestroy(c.comms[i]);
	for (int i = 0; c.send && i < n; i++) {
		cudaSetDevice(i);
		cu_free(c.send[i]);
		cu_free(c.recv[i]);
		if (i > 0 && c.streams[i])
			cudaStreamDestroy(c.streams[i]);
	}
	cudaSetDevice(0);
	cu_recover();
	free(c.comms);
	free(c.streams);
	free(c.send);
	free(c.recv);
	free(devs);
	return rc;
}

#endif
