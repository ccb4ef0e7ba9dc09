/* common.cuh - what every CUDA file shares: checked calls, device buffers, bf16 and mma helpers. */
#ifndef DDT_CUDA_COMMON_CUH
#define DDT_CUDA_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

extern "C" {
#include "err.h"
#include "op.h"
}

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

/* ---- device helpers ---- */

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

/* Four int4 pairs of one 32-bit word (nibbles i and i+4 form pair i; a nibble
 * q stands for q - 8) as exact bf16x2 values: OR the nibble into the mantissa
 * of 128.0 (ulp 1), then subtract 136. */
__device__ __forceinline__ void dequant8(uint32_t q, uint32_t out[4])
{
	const __nv_bfloat162 bias = __floats2bfloat162_rn(136.0f, 136.0f);
#pragma unroll
	for (int i = 0; i < 4; i++) {
		uint32_t v = ((q >> (4 * i)) & 0x000f000fu) | 0x43004300u;
		__nv_bfloat162 b;
		memcpy(&b, &v, sizeof b);
		b = __hsub2(b, bias);
		memcpy(&out[i], &b, sizeof b);
	}
}

/* D = A(16x16 bf16, row) x B(16x8 bf16, col) + D, fp32 accumulators. */
__device__ __forceinline__ void mma_bf16(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
		     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
	return (uint32_t)__cvta_generic_to_shared(p);
}

/* Four 8x8 b16 matrices from shared memory (rows given by lanes 0-31 in
 * groups of 8), optionally transposed. */
__device__ __forceinline__ void ldsm_x4(uint32_t r[4], const void *p)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(smem_addr(p)));
}

__device__ __forceinline__ void ldsm_x4_t(uint32_t r[4], const void *p)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(smem_addr(p)));
}

/* 16-byte asynchronous global-to-shared copy; src_bytes < 16 zero-fills. */
__device__ __forceinline__ void cp_async16(void *dst, const void *src, int src_bytes)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
		     :
		     : "r"(smem_addr(dst)), "l"(src), "r"(src_bytes));
}

__device__ __forceinline__ void cp_async_commit(void)
{
	asm volatile("cp.async.commit_group;\n" ::);
}

template <int N> __device__ __forceinline__ void cp_async_wait(void)
{
	asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* Streaming 16-byte load that skips L1 (weights are read once). */
__device__ __forceinline__ uint4 ld_stream(const void *p)
{
	uint4 v;
	asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n"
		     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
		     : "l"(p));
	return v;
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
