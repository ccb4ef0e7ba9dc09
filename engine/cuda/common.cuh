/* common.cuh - what every CUDA file shares: checked calls, device buffers, bf16 and mma helpers. */
#ifndef DDT_CUDA_COMMON_CUH
#define DDT_CUDA_COMMON_CUH

#ifdef __CUDACC__
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#else
#include "sim/sim.h" /* a host compiler: the kernels run on the CPU (sim/sim.cpp) */
#endif
#include <stdint.h>
#include <string.h>

extern "C" {
#include "err.h"
#include "op.h"
}

/* The op table entry a .cu file exports: op_cuda_<op> from nvcc, op_sim_<op>
 * (sim/sim_api.h) from the host compiler. */
#ifdef __CUDACC__
#define CU_OP_TABLE(op) op_cuda_##op
#else
#define CU_OP_TABLE(op) op_sim_##op
#endif

/* Declares the kernel's dynamic shared memory as name[] of type. */
#ifdef __CUDACC__
#define CU_DYN_SMEM(type, name) extern __shared__ __align__(16) type name[]
#else
#define CU_DYN_SMEM(type, name) type *name = (type *)sim_dyn_smem()
#endif

/* Launches kernel<<<grid, block, smem, stream>>>(args...) (the simulator
 * runs it on the CPU); returns the launch error. */
#ifdef __CUDACC__
#define cu_launch(kernel, grid, block, smem, stream, ...)                     \
	(kernel<<<(grid), (block), (smem), (stream)>>>(__VA_ARGS__), cudaGetLastError())
#else
#define cu_launch(kernel, grid, block, smem, stream, ...)                     \
	sim_launch(#kernel, kernel, (grid), (block), (smem), (stream), __VA_ARGS__)
#endif

/* Turns a failed CUDA call into err_set("file:line: call: message") and
 * returns the error code from the enclosing function. */
static inline int cuda_fail(cudaError_t e, const char *what, const char *file, int line)
{
	return err_set(DDT_EGENERIC, "%s:%d: %s: %s", file, line, what, cudaGetErrorString(e));
}

#define CK(call)                                                              \
	do {                                                                  \
		cudaError_t ck_e_ = (call);                                   \
		if (ck_e_ != cudaSuccess)                                     \
			return cuda_fail(ck_e_, #call, __FILE__, __LINE__);   \
	} while (0)

/* After every kernel launch: a bad configuration shows up here. */
#define CK_LAUNCH() CK(cudaGetLastError())

/* The same without returning: 0 or the error code (for goto-cleanup code). */
static inline int cu_err(cudaError_t e, const char *what, const char *file, int line)
{
	return e == cudaSuccess ? 0 : cuda_fail(e, what, file, line);
}
#define CU(call) cu_err((call), #call, __FILE__, __LINE__)

/* After launches: the launch error, else (sync) the execution error. */
static inline int cu_check(const char *what, bool sync, const char *file, int line)
{
	cudaError_t e = cudaGetLastError();
	if (e == cudaSuccess && sync)
		e = cudaDeviceSynchronize();
	return cu_err(e, what, file, line);
}
#define CU_CHECK(what, sync) cu_check((what), (sync), __FILE__, __LINE__)

/* Allocates bytes of device memory into *d and copies host bytes there when
 * h is non-NULL. Returns 0 or an error code. */
static inline int cu_alloc(void **d, size_t bytes)
{
	*d = NULL;
	if (bytes == 0)
		bytes = 16;
	CK(cudaMalloc(d, bytes));
	return 0;
}

static inline int cu_upload(void **d, const void *h, size_t bytes)
{
	int rc = cu_alloc(d, bytes);
	if (rc)
		return rc;
	if (h && bytes)
		CK(cudaMemcpy(*d, h, bytes, cudaMemcpyHostToDevice));
	return 0;
}

/* cudaFree that ignores NULL and errors (teardown cannot fail). */
static inline void cu_free(void *d)
{
	if (d)
		(void)cudaFree(d);
}

static inline int cdiv(int a, int b)
{
	return (a + b - 1) / b;
}

static inline int round_up(int a, int b)
{
	return cdiv(a, b) * b;
}

/* The multiprocessor count of the current device (1 when unknown). */
static inline int cu_sm_count(void)
{
	int dev = 0, n = 1;
	if (cudaGetDevice(&dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
		return 1;
	return n > 0 ? n : 1;
}

/* Gives kernel dyn bytes of dynamic shared memory per block: its static
 * shared memory plus dyn must fit the device's per-block limit (else an
 * "unsupported" error says by how much), and the kernel's dynamic limit is
 * raised to dyn (launches over 48 KB fail without it). Returns 0 or an
 * error code. */
template <typename K> static inline int cu_smem_allow(K *kernel, size_t dyn, const char *name)
{
	cudaFuncAttributes fa;
	int dev = 0, optin = 0;
	CK(cudaGetDevice(&dev));
	CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
	CK(cudaFuncGetAttributes(&fa, kernel));
	if (fa.sharedSizeBytes + dyn > (size_t)optin)
		return err_set(DDT_EINPUT, "unsupported: %s needs %zu bytes of static and %zu of "
			       "dynamic shared memory; the device allows %d per block", name,
			       (size_t)fa.sharedSizeBytes, dyn, optin);
	CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn));
	return 0;
}

/* ---- device helpers ---- */

#include "ptx.cuh"

__device__ __forceinline__ float bf_lo(uint32_t w)
{
	return __uint_as_float(w << 16);
}

__device__ __forceinline__ float bf_hi(uint32_t w)
{
	return __uint_as_float(w & 0xffff0000u);
}

__device__ __forceinline__ float bf_at(const uint16_t *p, size_t i)
{
	return __uint_as_float((uint32_t)p[i] << 16);
}

/* Two floats as a bf16x2 register (lo in the low half), round to nearest even. */
__device__ __forceinline__ uint32_t pack_bf2(float lo, float hi)
{
	__nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
	uint32_t u;
	memcpy(&u, &v, sizeof u);
	return u;
}

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

__device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
	for (int o = 16; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

#endif
