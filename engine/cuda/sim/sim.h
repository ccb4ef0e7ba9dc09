/* sim.h - CUDA C++ for a host compiler: the keywords, built-in variables, vector and bf16/fp16 types, warp primitives and runtime calls that the .cu files under engine/cuda use, so the same sources run on the CPU under sim.cpp (threads of a block as fibers).
 *
 * common.cuh includes this instead of the CUDA headers when the compiler is
 * not nvcc. What runs here is the kernels' own source: only the few PTX
 * instructions (ptx.cuh) have a host body, and those call the emulation in
 * sim.cpp. What the simulator checks besides the results (sim.cpp):
 * barriers every live thread reaches, warp primitives every lane of the mask
 * reaches with the same mask, cp.async data visible only after its
 * wait_group, 16-byte alignment of vector and async accesses, device buffers
 * and dynamic shared memory written only inside their bounds, and the
 * dynamic shared-memory limit of the launch.
 */
#ifndef DDT_CUDA_SIM_H
#define DDT_CUDA_SIM_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- keywords ---- */

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
/* One block runs at a time, so a function-scope static is the block's
 * shared memory (sim.cpp never runs two blocks at once). */
#define __shared__ static

/* ---- vector types ---- */

struct dim3 {
	unsigned x, y, z;
	constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint3 {
	unsigned x, y, z;
};
struct alignas(8) uint2 {
	unsigned x, y;
};
struct alignas(16) uint4 {
	unsigned x, y, z, w;
};
struct alignas(16) int4 {
	int x, y, z, w;
};
struct alignas(8) float2 {
	float x, y;
};
struct alignas(16) float4 {
	float x, y, z, w;
};

static inline uint2 make_uint2(unsigned x, unsigned y)
{
	return uint2{x, y};
}
static inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w)
{
	return uint4{x, y, z, w};
}
static inline int4 make_int4(int x, int y, int z, int w)
{
	return int4{x, y, z, w};
}
static inline float2 make_float2(float x, float y)
{
	return float2{x, y};
}
static inline float4 make_float4(float x, float y, float z, float w)
{
	return float4{x, y, z, w};
}

/* ---- bits and 16-bit floats ---- */

static inline float __uint_as_float(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}
static inline uint32_t __float_as_uint(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

struct __nv_bfloat16 {
	uint16_t x;
};
struct alignas(4) __nv_bfloat162 {
	__nv_bfloat16 x, y;
};
struct __half {
	uint16_t x;
};
struct alignas(4) __half2 {
	__half x, y;
};

/* float -> bf16, round to nearest even; NaN stays NaN. */
static inline __nv_bfloat16 __float2bfloat16_rn(float f)
{
	uint32_t u = __float_as_uint(f);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return __nv_bfloat16{(uint16_t)((u >> 16) | 0x40u)};
	u += 0x7fffu + ((u >> 16) & 1u);
	return __nv_bfloat16{(uint16_t)(u >> 16)};
}
static inline float __bfloat162float(__nv_bfloat16 b)
{
	return __uint_as_float((uint32_t)b.x << 16);
}
static inline __nv_bfloat162 __floats2bfloat162_rn(float lo, float hi)
{
	return __nv_bfloat162{__float2bfloat16_rn(lo), __float2bfloat16_rn(hi)};
}
/* The bf16x2 arithmetic rounds once, from the exact result (double holds
 * the exact sum and product of bf16 operands at the magnitudes used here). */
static inline __nv_bfloat16 sim_bf16_of(double v)
{
	return __float2bfloat16_rn((float)v);
}
static inline __nv_bfloat162 __hsub2(__nv_bfloat162 a, __nv_bfloat162 b)
{
	return __nv_bfloat162{
		sim_bf16_of((double)__bfloat162float(a.x) - __bfloat162float(b.x)),
		sim_bf16_of((double)__bfloat162float(a.y) - __bfloat162float(b.y))};
}
static inline __nv_bfloat162 __hfma2(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c)
{
	return __nv_bfloat162{
		sim_bf16_of((double)__bfloat162float(a.x) * __bfloat162float(b.x) +
			    __bfloat162float(c.x)),
		sim_bf16_of((double)__bfloat162float(a.y) * __bfloat162float(b.y) +
			    __bfloat162float(c.y))};
}

/* float -> fp16, round to nearest even, subnormals and overflow included. */
uint16_t sim_f2h(float f);
float sim_h2f(uint16_t h);
static inline __half __float2half_rn(float f)
{
	return __half{sim_f2h(f)};
}
static inline float __half2float(__half h)
{
	return sim_h2f(h.x);
}
static inline __half2 __floats2half2_rn(float lo, float hi)
{
	return __half2{__float2half_rn(lo), __float2half_rn(hi)};
}

static inline int min(int a, int b)
{
	return a < b ? a : b;
}
static inline int max(int a, int b)
{
	return a > b ? a : b;
}
static inline int __ffs(int x)
{
	return __builtin_ffs(x);
}
static inline int __popc(unsigned x)
{
	return __builtin_popcount(x);
}
template <typename T> static inline T __ldg(const T *p)
{
	return *p;
}
/* Fibers switch only at barriers and warp primitives: a read-modify-write
 * is atomic by construction. */
template <typename T> static inline T atomicAdd(T *p, T v)
{
	T old = *p;
	*p = old + v;
	return old;
}
long long sim_clock(void);
static inline long long clock64(void)
{
	return sim_clock();
}
static inline size_t __cvta_generic_to_shared(const void *p)
{
	return (size_t)p;
}

/* ---- built-in variables ---- */

const uint3 &sim_thread_idx(void);
extern uint3 sim_block_idx;
extern dim3 sim_block_dim, sim_grid_dim;
#define threadIdx (sim_thread_idx())
#define blockIdx sim_block_idx
#define blockDim sim_block_dim
#define gridDim sim_grid_dim
#define warpSize 32

/* ---- barriers and warp primitives (sim.cpp) ---- */

enum sim_shfl_mode { SIM_SHFL_IDX, SIM_SHFL_UP, SIM_SHFL_DOWN, SIM_SHFL_XOR };

void __syncthreads(void);
void __syncwarp(unsigned mask = 0xffffffffu);
uint64_t sim_shfl(unsigned mask, uint64_t v, enum sim_shfl_mode mode, int arg, int width);
unsigned __ballot_sync(unsigned mask, int pred);
unsigned __reduce_add_sync(unsigned mask, unsigned v);
static inline int __any_sync(unsigned mask, int pred)
{
	return __ballot_sync(mask, pred) != 0;
}
static inline int __all_sync(unsigned mask, int pred)
{
	return __ballot_sync(mask, pred) == mask;
}

template <typename T> static inline T sim_shfl_t(unsigned m, T v, sim_shfl_mode mode, int a, int w)
{
	static_assert(sizeof(T) <= 8, "shuffles move at most 8 bytes");
	uint64_t u = 0;
	memcpy(&u, &v, sizeof v);
	u = sim_shfl(m, u, mode, a, w);
	memcpy(&v, &u, sizeof v);
	return v;
}
template <typename T> static inline T __shfl_sync(unsigned m, T v, int src, int w = 32)
{
	return sim_shfl_t(m, v, SIM_SHFL_IDX, src, w);
}
template <typename T> static inline T __shfl_up_sync(unsigned m, T v, unsigned d, int w = 32)
{
	return sim_shfl_t(m, v, SIM_SHFL_UP, (int)d, w);
}
template <typename T> static inline T __shfl_down_sync(unsigned m, T v, unsigned d, int w = 32)
{
	return sim_shfl_t(m, v, SIM_SHFL_DOWN, (int)d, w);
}
template <typename T> static inline T __shfl_xor_sync(unsigned m, T v, int lm, int w = 32)
{
	return sim_shfl_t(m, v, SIM_SHFL_XOR, lm, w);
}

/* The PTX that ptx.cuh wraps (mma.sync m16n8k16, ldmatrix x4, cp.async). */
void sim_mma(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1, bool f16);
void sim_ldsm_x4(uint32_t r[4], const void *p, bool trans);
void sim_cp_async16(void *dst, const void *src, int src_bytes);
void sim_cp_async_commit(void);
void sim_cp_async_wait(int pending);
/* Faults the running kernel when p is not n-byte aligned (vector accesses). */
void sim_check_align(const void *p, unsigned n, const char *what);

/* ---- runtime ---- */

enum cudaError {
	cudaSuccess = 0,
	cudaErrorInvalidValue = 1,
	cudaErrorMemoryAllocation = 2,
	cudaErrorInvalidConfiguration = 9,
	cudaErrorInvalidDevicePointer = 17,
	cudaErrorIllegalAddress = 700,
	cudaErrorLaunchFailure = 719,
};
typedef enum cudaError cudaError_t;
typedef struct sim_stream *cudaStream_t;
enum cudaMemcpyKind {
	cudaMemcpyHostToHost,
	cudaMemcpyHostToDevice,
	cudaMemcpyDeviceToHost,
	cudaMemcpyDeviceToDevice,
	cudaMemcpyDefault
};
enum cudaDeviceAttr {
	cudaDevAttrClockRate = 13,
	cudaDevAttrMultiProcessorCount = 16,
	cudaDevAttrL2CacheSize = 38,
	cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
};
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
struct cudaFuncAttributes {
	size_t sharedSizeBytes; /* static shared memory: unknown here, 0 */
	int maxThreadsPerBlock;
};

cudaError_t cudaMalloc(void **p, size_t bytes);
cudaError_t cudaFree(void *p);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, cudaMemcpyKind kind,
			    cudaStream_t s = 0);
cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
			 size_t height, cudaMemcpyKind kind);
cudaError_t cudaMemset(void *p, int v, size_t n);
cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s = 0);
cudaError_t cudaDeviceSynchronize(void);
/* Ends the context: every device buffer freed, the sticky error cleared. */
cudaError_t cudaDeviceReset(void);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaGetLastError(void);
const char *cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetDevice(int *dev);
cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr attr, int dev);
cudaError_t sim_func_set_attribute(const void *fn, cudaFuncAttribute attr, int v);
cudaError_t sim_func_get_attributes(cudaFuncAttributes *a, const void *fn);
int sim_blocks_per_sm(void);

template <typename K> static inline cudaError_t cudaFuncSetAttribute(K *fn, cudaFuncAttribute a, int v)
{
	return sim_func_set_attribute((const void *)fn, a, v);
}
template <typename K> static inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *a, K *fn)
{
	return sim_func_get_attributes(a, (const void *)fn);
}
template <typename K>
static inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, K *fn, int threads,
									size_t smem)
{
	(void)fn;
	(void)threads;
	(void)smem;
	*n = sim_blocks_per_sm();
	return cudaSuccess;
}

/* Runs body(ctx) as every thread of every block of grid x block, one block
 * at a time; returns the launch's error (also kept for cudaGetLastError). */
cudaError_t sim_run(const char *name, const void *fn, dim3 grid, dim3 block, size_t smem,
		    void (*body)(void *), void *ctx);
/* The dynamic shared memory of the running block. */
void *sim_dyn_smem(void);

template <typename... P, typename... A>
static inline cudaError_t sim_launch(const char *name, void (*k)(P...), dim3 grid, dim3 block,
				     size_t smem, cudaStream_t s, const A &...args)
{
	(void)s;
	auto call = [&]() { k(args...); };
	return sim_run(name, (const void *)k, grid, block, smem,
		       [](void *c) { (*static_cast<decltype(call) *>(c))(); }, &call);
}

#endif
