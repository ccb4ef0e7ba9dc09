/* api.cu - the CUDA backend behind cuda_api.h: devices, versions, the timing loop, and one validated and timed op. */
#include "timing.cuh"

#include <dlfcn.h>
#include <math.h>
#ifndef DDT_NO_NCCL
#include <nccl.h>
#endif
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define CU_MAX_DEVICES 64
#define CU_COPY_BYTES ((size_t)512 << 20)
#define CU_PROBE_CYCLES 20000LL

/* ---- devices ---- */

static int g_count = -1;
static char g_reason[160];
static double g_copy_gbps[CU_MAX_DEVICES];

int cu_device_count(char *reason, size_t len)
{
	if (g_count < 0) {
		int n = 0;
		cudaError_t e = cudaGetDeviceCount(&n);
		if (e != cudaSuccess || n <= 0) {
			snprintf(g_reason, sizeof g_reason, "%s (%s)", CUDA_REASON_NO_DEVICE,
				 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
			(void)cudaGetLastError(); /* not sticky: clear it */
			n = 0;
		} else {
			g_reason[0] = '\0';
		}
		g_count = n > CU_MAX_DEVICES ? CU_MAX_DEVICES : n;
	}
	if (reason && len)
		snprintf(reason, len, "%s", g_reason);
	return g_count;
}

/* Each op's CUDA path (engine/cuda/<op>.cu), by op name. */
extern "C" const struct op_cuda op_cuda_memcpy, op_cuda_moe_w4a16, op_cuda_dense_gemv,
	op_cuda_tree_build, op_cuda_tree_attn, op_cuda_accept;
static const struct {
	const char *op;
	const struct op_cuda *path;
} cu_paths[] = {
	{"memcpy", &op_cuda_memcpy},         {"moe_w4a16", &op_cuda_moe_w4a16},
	{"dense_gemv", &op_cuda_dense_gemv}, {"tree_build", &op_cuda_tree_build},
	{"tree_attn", &op_cuda_tree_attn},   {"accept", &op_cuda_accept},
};

extern "C" const struct op_cuda *cuda_op_path(const char *op)
{
	for (size_t i = 0; i < sizeof cu_paths / sizeof cu_paths[0]; i++)
		if (!strcmp(cu_paths[i].op, op))
			return cu_paths[i].path;
	return NULL;
}

extern "C" int cuda_devices(int *count, char *reason, size_t len)
{
	*count = cu_device_count(reason, len);
	return 0;
}

/* Device-to-device copy of 2 x 512 MiB buffers, counting read + write. */
int cu_copy_gbps(int dev, double *gbps)
{
	void *a = NULL, *b = NULL;
	cudaEvent_t e0 = NULL, e1 = NULL;
	size_t free_b = 0, total_b = 0, bytes = CU_COPY_BYTES;
	double best = 0;
	int rc = 0;

	*gbps = NAN;
	if (dev < 0 || dev >= CU_MAX_DEVICES)
		return err_set(DDT_EINPUT, "CUDA device %d out of range", dev);
	if (g_copy_gbps[dev] > 0) {
		*gbps = g_copy_gbps[dev];
		return 0;
	}
	CK(cudaSetDevice(dev));
	CK(cudaMemGetInfo(&free_b, &total_b));
	while (bytes > ((size_t)1 << 20) && 2 * bytes > free_b / 2)
		bytes /= 2;
	if ((rc = CU(cudaMalloc(&a, bytes))) || (rc = CU(cudaMalloc(&b, bytes))) ||
	    (rc = CU(cudaMemset(a, 1, bytes))) || (rc = CU(cudaMemset(b, 2, bytes))) ||
	    (rc = CU(cudaEventCreate(&e0))) || (rc = CU(cudaEventCreate(&e1))))
		goto done;
	for (int i = 0; i < 23 && !rc; i++) {
		float ms = 0;
		if ((rc = CU(cudaEventRecord(e0, 0))) ||
		    (rc = CU(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0))) ||
		    (rc = CU(cudaEventRecord(e1, 0))) || (rc = CU(cudaEventSynchronize(e1))) ||
		    (rc = CU(cudaEventElapsedTime(&ms, e0, e1))))
			break;
		/* the best of 20 after 3 warm-ups: the ceiling, not the typical */
		if (i >= 3 && ms > 0 && 2.0 * bytes / (ms * 1e-3) / 1e9 > best)
			best = 2.0 * bytes / (ms * 1e-3) / 1e9;
	}
	if (!rc) {
		g_copy_gbps[dev] = best;
		*gbps = best;
	}
done:
	cu_free(a);
	cu_free(b);
	if (e0)
		cudaEventDestroy(e0);
	if (e1)
		cudaEventDestroy(e1);
	return rc;
}

extern "C" int cuda_device_describe(int dev, struct rec_device *out)
{
	cudaDeviceProp pr;
	int n = cu_device_count(NULL, 0), khz = 0, mem_khz = 0, rc;

	memset(out, 0, sizeof *out);
	if (dev < 0 || dev >= n)
		return err_set(DDT_ENOTFOUND, "CUDA device %d: %s", dev,
			       n ? "no such device" : g_reason);
	CK(cudaGetDeviceProperties(&pr, dev));
	snprintf(out->kind, sizeof out->kind, "cuda");
	out->index = dev;
	memcpy(out->name, pr.name, sizeof out->name - 1); /* truncates long names */
	out->name[sizeof out->name - 1] = '\0';
	snprintf(out->arch, sizeof out->arch, "sm_%d%d", pr.major, pr.minor);
	out->cores = pr.multiProcessorCount;
	out->mem_gb = (double)pr.totalGlobalMem / 1e9;
	out->sm_clock_mhz = cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) == cudaSuccess &&
				    khz > 0
			    ? khz / 1000.0
			    : NAN;
	out->mem_clock_mhz = cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev) ==
					     cudaSuccess &&
				     mem_khz > 0
			     ? mem_khz / 1000.0
			     : NAN;
	(void)cudaGetLastError();
	out->peak_gbps = NAN; /* the datasheet figure lives in the calibration catalog */
	if ((rc = cu_copy_gbps(dev, &out->copy_gbps)))
		return err_wrap(rc, "measuring the copy bandwidth of CUDA device %d", dev);
	return 0;
}

extern "C" int cuda_versions(char *runtime, char *driver, char *nccl, size_t len)
{
	int v = 0;
	if (!len)
		return 0;
	runtime[0] = driver[0] = nccl[0] = '\0';
	if (cudaRuntimeGetVersion(&v) == cudaSuccess && v > 0)
		snprintf(runtime, len, "%d.%d", v / 1000, v % 1000 / 10);
	v = 0;
	if (cudaDriverGetVersion(&v) == cudaSuccess && v > 0)
		snprintf(driver, len, "%d.%d", v / 1000, v % 1000 / 10);
	(void)cudaGetLastError();
#ifndef DDT_NO_NCCL
	v = 0;
	if (ncclGetVersion(&v) == ncclSuccess && v > 0) {
		/* NCCL >= 2.9 codes major*10000 + minor*100 + patch */
		if (v >= 20900)
			snprintf(nccl, len, "%d.%d.%d", v / 10000, v % 10000 / 100, v % 100);
		else
			snprintf(nccl, len, "%d.%d.%d", v / 1000, v % 1000 / 100, v % 100);
	}
#endif
	return 0;
}

/* ---- the SM clock ---- */

typedef int (*nvml_init_fn)(void);
typedef int (*nvml_by_pci_fn)(const char *, void **);
typedef int (*nvml_clock_fn)(void *, int, unsigned int *);

static struct {
	int tried, ok;
	nvml_clock_fn clock;
	void *dev[CU_MAX_DEVICES];
	int dev_tried[CU_MAX_DEVICES];
} g_nvml;

/* NVML opened at run time (never linked): the driver's library, if any. */
static void nvml_open(void)
{
	g_nvml.tried = 1;
	void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return;
	nvml_init_fn init = (nvml_init_fn)dlsym(lib, "nvmlInit_v2");
	g_nvml.clock = (nvml_clock_fn)dlsym(lib, "nvmlDeviceGetClockInfo");
	if (!init || !g_nvml.clock || init() != 0)
		return;
	g_nvml.ok = 1;
	nvml_by_pci_fn by_pci = (nvml_by_pci_fn)dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
	for (int d = 0; by_pci && d < CU_MAX_DEVICES; d++) {
		char bus[32];
		if (cudaDeviceGetPCIBusId(bus, sizeof bus, d) != cudaSuccess)
			break;
		g_nvml.dev_tried[d] = 1;
		if (by_pci(bus, &g_nvml.dev[d]) != 0)
			g_nvml.dev[d] = NULL;
	}
	(void)cudaGetLastError();
}

__global__ void cu_spin(long long cycles)
{
	const long long t0 = clock64();
	while (clock64() - t0 < cycles) {
	}
}

double cu_clock_now_mhz(int dev, cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1)
{
	if (!g_nvml.tried)
		nvml_open();
	if (g_nvml.ok && dev >= 0 && dev < CU_MAX_DEVICES && g_nvml.dev[dev]) {
		unsigned int mhz = 0;
		if (g_nvml.clock(g_nvml.dev[dev], 1 /* NVML_CLOCK_SM */, &mhz) == 0 && mhz > 0)
			return mhz;
	}
	/* clock64() cycles over event time of one spinning thread */
	float ms = 0;
	if (cudaEventRecord(e0, s) != cudaSuccess)
		return NAN;
	cu_spin<<<1, 1, 0, s>>>(CU_PROBE_CYCLES);
	if (cudaGetLastError() != cudaSuccess || cudaEventRecord(e1, s) != cudaSuccess ||
	    cudaEventSynchronize(e1) != cudaSuccess || cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess ||
	    ms <= 0)
		return NAN;
	return (double)CU_PROBE_CYCLES / (ms * 1e3);
}

int cu_hold_stream(const struct cu_timer *t, double us)
{
	const double mhz = isfinite(t->clock_default_mhz) ? t->clock_default_mhz : 2000;
	CK(cu_launch(cu_spin, 1, 1, 0, t->s, (long long)(us * mhz)));
	return 0;
}

/* ---- the timer ---- */

int cu_timer_init(struct cu_timer *t, int dev, int cold)
{
	int l2 = 0, khz = 0;
	memset(t, 0, sizeof *t);
	t->dev = dev;
	t->clock_default_mhz = NAN;
	CK(cudaSetDevice(dev));
	CK(cudaStreamCreateWithFlags(&t->s, cudaStreamNonBlocking));
	CK(cudaEventCreate(&t->e0));
	CK(cudaEventCreate(&t->e1));
	if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) == cudaSuccess && khz > 0)
		t->clock_default_mhz = khz / 1000.0;
	(void)cudaGetLastError();
	if (cold) {
		CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
		t->flush_bytes = 2 * (size_t)(l2 > 0 ? l2 : 64 << 20);
		CK(cudaMalloc(&t->flush, t->flush_bytes));
		CK(cudaMalloc((void **)&t->sink, sizeof *t->sink));
		/* written once; one flush then evicts the memset's dirty lines */
		CK(cudaMemset(t->flush, 0x5a, t->flush_bytes));
		/* the memset ran on the default stream, t->s does not wait for it */
		CK(cudaDeviceSynchronize());
		if (cu_flush_l2(t))
			return DDT_EGENERIC;
		CK(cudaStreamSynchronize(t->s));
	}
	return 0;
}

/* Reads n 16-byte words through L2 (ld.global.cg: not kept in L1) and
 * stores only when their XOR hits one 32-bit value in 2^32: the loads stay,
 * the store practically never happens. */
__global__ void cu_flush_read(const uint4 *buf, size_t n, unsigned *sink)
{
	unsigned x = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		const uint4 v = __ldcg(buf + i);
		x ^= v.x ^ v.y ^ v.z ^ v.w;
	}
	if (x == 0x9e3779b9u)
		*sink = x;
}

int cu_flush_l2(struct cu_timer *t)
{
	if (!t->flush)
		return 0;
	CK(cu_launch(cu_flush_read, 4 * cu_sm_count(), 256, 0, t->s, (const uint4 *)t->flush,
		     t->flush_bytes / 16, t->sink));
	return 0;
}

void cu_timer_free(struct cu_timer *t)
{
	if (t->s)
		cudaStreamDestroy(t->s);
	if (t->e0)
		cudaEventDestroy(t->e0);
	if (t->e1)
		cudaEventDestroy(t->e1);
	cu_free(t->flush);
	cu_free(t->sink);
	memset(t, 0, sizeof *t);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int cu_time(struct cu_timer *t, const struct harness_conf *hc, cu_enqueue_fn fn, void *arg,
	    int calls, struct rec_row *row)
{
	int cap = hc->max_samples > 0 ? hc->max_samples : 10000, n = 0, dropped = 0, rc = 0;
	int stop = HARNESS_GO_ON;
	double *us = (double *)malloc((size_t)cap * sizeof *us);
	double *mhz = (double *)malloc((size_t)cap * sizeof *mhz);
	double total_s = 0, start;

	if (!us || !mhz) {
		free(us);
		free(mhz);
		return err_nomem();
	}
	if (calls < 1)
		calls = 1;
	for (int i = 0; i < hc->warmup && !rc; i++)
		rc = fn(arg, t->s);
	if (!rc)
		rc = CU(cudaStreamSynchronize(t->s));
	start = harness_now_s();
	while (!rc) {
		float ms = 0;
		if ((rc = cu_flush_l2(t)))
			break;
		if ((rc = CU(cudaEventRecord(t->e0, t->s))))
			break;
		for (int c = 0; c < calls && !rc; c++)
			rc = fn(arg, t->s);
		if (rc || (rc = CU(cudaEventRecord(t->e1, t->s))) ||
		    (rc = CU(cudaEventSynchronize(t->e1))) ||
		    (rc = CU(cudaEventElapsedTime(&ms, t->e0, t->e1))))
			break;
		double clk = cu_clock_now_mhz(t->dev, t->s, t->e0, t->e1);
		double s_us = (double)ms * 1e3 / calls;
		if (isfinite(clk) && isfinite(t->clock_default_mhz) &&
		    clk < hc->min_clock_frac * t->clock_default_mhz) {
			dropped++;
		} else if (n < cap) {
			us[n] = s_us;
			mhz[n++] = clk;
			total_s += s_us * calls * 1e-6;
		}
		double elapsed = harness_now_s() - start;
		if (n >= cap || (n == 0 && elapsed >= hc->timeout_s)) {
			stop = n >= cap ? HARNESS_STOP_MAX_SAMPLES : HARNESS_STOP_TIMEOUT;
			break;
		}
		if (n > 0 && (stop = harness_enough(hc, n, total_s, harness_rsd(us, n), elapsed)))
			break;
	}
	if (!rc && n == 0)
		rc = err_set(DDT_EGENERIC, "all %d samples ran below %.0f%% of the %.0f MHz default "
			     "SM clock (throttled)", dropped, 100 * hc->min_clock_frac,
			     t->clock_default_mhz);
	if (!rc) {
		int nc = 0;
		for (int i = 0; i < n; i++)
			if (isfinite(mhz[i]))
				mhz[nc++] = mhz[i];
		qsort(mhz, (size_t)nc, sizeof *mhz, cmp_dbl);
		row->sm_clock_mhz = nc ? (nc % 2 ? mhz[nc / 2] : 0.5 * (mhz[nc / 2 - 1] + mhz[nc / 2]))
				       : NAN;
		harness_stats(us, n, row);
		snprintf(row->stop, sizeof row->stop, "%s", harness_stop_name(stop));
	}
	free(us);
	free(mhz);
	return rc;
}

/* ---- recovery ---- */

int cu_recover(void)
{
	(void)cudaGetLastError();
	if (cudaDeviceSynchronize() == cudaSuccess)
		return 0;
	/* a sticky error (a kernel fault) poisons the context: start a fresh one
	 * so the next rows can still run; cached handles die with it */
	(void)cudaGetLastError();
	(void)cudaDeviceReset();
	(void)cudaGetLastError();
	cu_gemv_forget();
	if (cudaFree(NULL) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
		(void)cudaGetLastError();
		return -1;
	}
	return 1;
}

extern "C" int cuda_recover(void)
{
	return cu_recover();
}

/* ---- rows ---- */

void cu_row_init(struct rec_row *row, const char *op, const char *variant, const char *backend,
		 int device)
{
	memset(row, 0, sizeof *row);
	snprintf(row->op, sizeof row->op, "%s", op);
	snprintf(row->variant, sizeof row->variant, "%s", variant);
	snprintf(row->backend, sizeof row->backend, "%s", backend);
	row->device = device;
	row->median_us = row->p10_us = row->p90_us = NAN;
	row->min_us = row->max_us = row->stdev_us = NAN;
	row->bytes = row->flops = row->gbps = row->pct_peak = NAN;
	row->max_err = row->sm_clock_mhz = NAN;
	row->status = REC_OK;
}

void cu_row_status(struct rec_row *row, enum rec_status st, const char *fmt, ...)
{
	va_list ap;
	row->status = st;
	va_start(ap, fmt);
	vsnprintf(row->reason, sizeof row->reason, fmt, ap);
	va_end(ap);
	for (char *c = row->reason; *c; c++)
		if (*c == '\n' || *c == '\r' || *c == '\t')
			*c = ' ';
}

void cu_row_rates(struct rec_row *row, double copy_gbps)
{
	if (isfinite(row->bytes) && row->median_us > 0) {
		row->gbps = row->bytes / (row->median_us * 1e3);
		if (copy_gbps > 0)
			row->pct_peak = 100.0 * row->gbps / copy_gbps;
	}
}

/* ---- one op ---- */

/* The C reference, run on its own thread while the GPU works. */
struct ref_job {
	const struct op_desc *op;
	void *inst;
	int rc;
	char msg[160];
};

static void *ref_thread(void *arg)
{
	struct ref_job *j = (struct ref_job *)arg;
	j->rc = j->op->reference(j->inst);
	if (j->rc)
		snprintf(j->msg, sizeof j->msg, "%s", err_msg());
	return NULL;
}

struct op_call {
	const struct op_cuda *cu;
	void *dev;
};

static int op_enqueue(void *arg, cudaStream_t s)
{
	struct op_call *c = (struct op_call *)arg;
	return c->cu->run(c->dev, (void *)s);
}

/* The first run's outputs (still in inst) against the reference, then the
 * last timed run's (fetched over a new poison): both within the tolerance
 * and equal, else the row fails (a race or a stale buffer shows here). */
static void time_op_validate(const struct op_desc *op, const struct op_call *call, void *inst,
			     const struct ref_job *job, struct rec_row *row)
{
	if (job->rc) {
		cu_row_status(row, REC_FAILED, "reference: %s", job->msg);
		return;
	}
	row->max_err = op->max_error(inst);
	if (!(row->max_err <= op->tol)) {
		cu_row_status(row, REC_FAILED, "max error %.3g over the tolerance %.3g",
			      row->max_err, op->tol);
		return;
	}
	op->poison(inst);
	if (call->cu->fetch(call->dev, inst)) {
		cu_row_status(row, REC_FAILED, "fetch after timing: %s", err_msg());
		return;
	}
	const double after = op->max_error(inst);
	if (after != row->max_err)
		cu_row_status(row, REC_FAILED, "after timing the outputs give error %.3g, the "
			      "first run %.3g: a race or a stale buffer", after, row->max_err);
}

extern "C" int cuda_time_op(const struct op_desc *op, const struct op_params *p, int dev,
			    const struct harness_conf *hc, uint64_t seed, struct rec_row *row)
{
	char reason[160];
	void *inst = NULL;
	struct op_call call = {cuda_op_path(op->name), NULL};
	struct cu_timer t;
	struct ref_job job = {op, NULL, 0, ""};
	pthread_t ref_tid;
	int ref_started = 0, rc, n = cu_device_count(reason, sizeof reason);
	double copy = NAN;

	memset(&t, 0, sizeof t);
	cu_row_init(row, op->name, hc->cold ? "cold" : "hot", "cuda", dev);
	for (int i = 0; i < p->n; i++)
		rec_row_param_set(row, p->keys[i], p->vals[i]);
	if (op->bytes)
		row->bytes = op->bytes(p);
	if (op->flops)
		row->flops = op->flops(p);
	if (n == 0) {
		cu_row_status(row, REC_SKIPPED, "%s", reason);
		return 0;
	}
	if (dev < 0 || dev >= n) {
		cu_row_status(row, REC_SKIPPED, "no CUDA device %d (found %d)", dev, n);
		return 0;
	}
	if (!call.cu) {
		cu_row_status(row, REC_UNSUPPORTED, "no CUDA path");
		return 0;
	}
	if ((rc = op->setup(&inst, p, seed))) {
		cu_row_status(row, rc == DDT_ENOMEM ? REC_SKIPPED : REC_FAILED, "setup: %s", err_msg());
		op->teardown(inst);
		return 0;
	}
	op->poison(inst);
	job.inst = inst;
	if (pthread_create(&ref_tid, NULL, ref_thread, &job) == 0)
		ref_started = 1;
	else
		ref_thread(&job);

	if ((rc = cu_timer_init(&t, dev, hc->cold))) {
		cu_row_status(row, REC_FAILED, "%s", err_msg());
		goto done;
	}
	if ((rc = cu_copy_gbps(dev, &copy)))
		copy = NAN;
	if ((rc = call.cu->setup(&call.dev, inst))) {
		int unsup = rc == DDT_EINPUT && !strncmp(err_msg(), "unsupported", 11);
		cu_row_status(row, unsup ? REC_UNSUPPORTED : REC_FAILED, "cuda setup: %s", err_msg());
		goto done;
	}
	/* setup's copies and memsets ran on the default stream, which t.s (a
	 * non-blocking stream) does not wait for: finish them first */
	if ((rc = CU(cudaDeviceSynchronize()))) {
		cu_row_status(row, REC_FAILED, "cuda setup: %s", err_msg());
		goto done;
	}
	/* one run into poisoned outputs, fetched before any timing run */
	if ((rc = call.cu->run(call.dev, (void *)t.s)) || (rc = call.cu->fetch(call.dev, inst))) {
		cu_row_status(row, REC_FAILED, "run: %s", err_msg());
		goto done;
	}
	if ((rc = cu_time(&t, hc, op_enqueue, &call, 1, row))) {
		cu_row_status(row, REC_FAILED, "timing: %s", err_msg());
		goto done;
	}
	cu_row_rates(row, copy);
done:
	if (ref_started)
		pthread_join(ref_tid, NULL);
	if (row->status == REC_OK)
		time_op_validate(op, &call, inst, &job, row);
	if (call.dev)
		call.cu->teardown(call.dev);
	cu_timer_free(&t);
	op->teardown(inst);
	cu_recover();
	return 0;
}
