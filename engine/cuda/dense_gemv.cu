/* dense_gemv.cu - bf16 dense projection at small M through cuBLAS (bf16 operands, fp32 compute and output).
 *
 * What it computes: engine/ops/dense_gemv.h, out[M][N] = x[M][K] . w[N][K]^T.
 *
 * How: one cublasGemmEx in column-major terms: out^T (N x M, ld N) =
 * op_T(w as K x N, ld K) x (x^T as K x M, ld K), CUBLAS_COMPUTE_32F (no
 * reduced-precision shortcuts). One handle per device, created at the first
 * setup and kept for the process (creation costs ~100 ms); each instance sets
 * its own stream and a 32 MiB workspace so the call is graph-capturable.
 *
 * Napkin math (Kimi K2.x TP-8 slices, M = 16): lm_head slice N = 20480,
 * K = 7168: 294 MB of weights -> 69 us at 4.25 TB/s, 4.7 GFLOP (5 us of
 * tensor time): weight-bandwidth bound. Drafter MLP down slice N = 7168,
 * K = 2304: 33 MB -> 7.8 us.
 */
#include "timing.cuh"

#include <cublas_v2.h>
#include <math.h>
#include <stdlib.h>

extern "C" {
#include "ops/dense_gemv.h"
}

#define GEMV_MAX_DEVICES 64
#define GEMV_WORKSPACE (32u << 20)

static cublasHandle_t gemv_handles[GEMV_MAX_DEVICES];

static int cublas_fail(cublasStatus_t st, const char *what, int line)
{
	return err_set(DDT_EGENERIC, "%s:%d: %s: %s", __FILE__, line, what,
		       cublasGetStatusString(st));
}

#define CKB(call)                                                            \
	do {                                                                 \
		cublasStatus_t ckb_s_ = (call);                              \
		if (ckb_s_ != CUBLAS_STATUS_SUCCESS)                         \
			return cublas_fail(ckb_s_, #call, __LINE__);         \
	} while (0)

struct gemv_dev {
	int M, K, N;
	cublasHandle_t h;
	void *x, *w, *out, *ws;
};

/* The current device's handle, created on first use. */
static int gemv_handle(cublasHandle_t *h)
{
	int dev;
	CK(cudaGetDevice(&dev));
	if (dev < 0 || dev >= GEMV_MAX_DEVICES)
		return err_set(DDT_EINPUT, "dense_gemv: device %d beyond the handle table", dev);
	if (!gemv_handles[dev])
		CKB(cublasCreate(&gemv_handles[dev]));
	*h = gemv_handles[dev];
	return 0;
}

void cu_gemv_forget(void)
{
	memset(gemv_handles, 0, sizeof gemv_handles);
}

static void gemv_teardown(void *dev)
{
	struct gemv_dev *d = (struct gemv_dev *)dev;
	if (!d)
		return;
	cu_free(d->x);
	cu_free(d->w);
	cu_free(d->out);
	cu_free(d->ws);
	free(d);
}

static int gemv_setup(void **dev, const void *inst)
{
	const struct dense_gemv_inst *in = (const struct dense_gemv_inst *)inst;
	struct gemv_dev *d;
	int rc;

	*dev = NULL;
	if (!(d = (struct gemv_dev *)calloc(1, sizeof *d)))
		return err_nomem();
	d->M = in->M;
	d->K = in->K;
	d->N = in->N;
	if ((rc = gemv_handle(&d->h)) ||
	    (rc = cu_upload(&d->x, in->x, (size_t)in->M * in->K * 2)) ||
	    (rc = cu_upload(&d->w, in->w, (size_t)in->N * in->K * 2)) ||
	    (rc = cu_alloc(&d->out, (size_t)in->M * in->N * 4)) ||
	    (rc = cu_alloc(&d->ws, GEMV_WORKSPACE)) ||
	    (rc = CU(cudaMemset(d->out, 0xff, (size_t)in->M * in->N * 4)))) {
		gemv_teardown(d);
		return rc;
	}
	*dev = d;
	return 0;
}

static int gemv_run(void *dev, void *stream)
{
	struct gemv_dev *d = (struct gemv_dev *)dev;
	const float one = 1.0f, zero = 0.0f;

	CKB(cublasSetStream(d->h, (cudaStream_t)stream));
	CKB(cublasSetWorkspace(d->h, d->ws, GEMV_WORKSPACE));
	CKB(cublasGemmEx(d->h, CUBLAS_OP_T, CUBLAS_OP_N, d->N, d->M, d->K, &one, d->w,
			 CUDA_R_16BF, d->K, d->x, CUDA_R_16BF, d->K, &zero, d->out, CUDA_R_32F,
			 d->N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
	CK_LAUNCH();
	return 0;
}

static int gemv_fetch(void *dev, void *inst)
{
	struct gemv_dev *d = (struct gemv_dev *)dev;
	struct dense_gemv_inst *in = (struct dense_gemv_inst *)inst;

	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(in->out, d->out, (size_t)d->M * d->N * 4, cudaMemcpyDeviceToHost));
	return 0;
}

extern "C" const struct op_cuda op_cuda_dense_gemv = {gemv_setup, gemv_run, gemv_fetch,
						      gemv_teardown};

/* ---- the tensor ceiling (cuda_api.h) ---- */

/* n bf16 values uniform in [-1, 1) (never zeros: a product of zeros runs
 * faster than real data). */
static void ceil_fill(uint16_t *v, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		float f = (float)((double)(x >> 11) / 9007199254740992.0 * 2.0 - 1.0);
		uint32_t u;
		memcpy(&u, &f, sizeof u);
		v[i] = (uint16_t)(u >> 16);
	}
}

/* 13 products of m[0] x m[1] into m[2], events around the last 10. */
static int ceil_time(cublasHandle_t h, int n, void *const m[3], cudaEvent_t e0, cudaEvent_t e1,
		     float *ms)
{
	const float one = 1.0f, zero = 0.0f;
	CKB(cublasSetStream(h, 0));
	for (int i = 0; i < 13; i++) {
		if (i == 3)
			CK(cudaEventRecord(e0, 0));
		CKB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, m[0], CUDA_R_16BF, n,
				 m[1], CUDA_R_16BF, n, &zero, m[2], CUDA_R_16BF, n,
				 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
	}
	CK(cudaEventRecord(e1, 0));
	CK(cudaEventSynchronize(e1));
	CK(cudaEventElapsedTime(ms, e0, e1));
	return *ms > 0 ? 0 : err_set(DDT_EGENERIC, "cuBLAS bf16 %d^3: no time elapsed", n);
}

extern "C" int cuda_tensor_tflops(int n, double *tflops)
{
	size_t elems = (size_t)n * n;
	uint16_t *host = NULL;
	void *m[3] = {NULL, NULL, NULL};
	cublasHandle_t h = NULL;
	cudaEvent_t e0 = NULL, e1 = NULL;
	float ms = 0;
	int rc;

	*tflops = NAN;
	if (n < 256)
		return err_set(DDT_EINPUT, "the tensor ceiling: n = %d, under 256", n);
	if (!(host = (uint16_t *)malloc(elems * sizeof *host)))
		return err_nomem();
	if ((rc = CU(cudaSetDevice(0))) || (rc = gemv_handle(&h)))
		goto done;
	for (int i = 0; i < 3 && !rc; i++) {
		ceil_fill(host, elems, (uint64_t)i + 1);
		if (!(rc = CU(cudaMalloc(&m[i], elems * 2))))
			rc = CU(cudaMemcpy(m[i], host, elems * 2, cudaMemcpyHostToDevice));
	}
	if (rc || (rc = CU(cudaDeviceSynchronize())) || (rc = CU(cudaEventCreate(&e0))) ||
	    (rc = CU(cudaEventCreate(&e1))))
		goto done;
	if (!(rc = ceil_time(h, n, m, e0, e1, &ms)))
		*tflops = 2.0 * n * (double)n * n * 10 / (ms * 1e-3) / 1e12;
done:
	if (e0)
		cudaEventDestroy(e0);
	if (e1)
		cudaEventDestroy(e1);
	for (int i = 0; i < 3; i++)
		cu_free(m[i]);
	free(host);
	return rc;
}
