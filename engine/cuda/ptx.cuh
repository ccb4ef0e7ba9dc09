/* ptx.cuh - every PTX instruction the kernels use, one function each: inline assembly when nvcc builds them, the simulator's emulation (sim/sim.cpp) when a host compiler builds them for the CPU. */
#ifndef DDT_CUDA_PTX_CUH
#define DDT_CUDA_PTX_CUH

#include <stdint.h>
#include <string.h>

/* D = A(16x16, row) x B(16x8, col) + D with fp32 accumulators; A and B are
 * bf16 (mma_bf16) or fp16 (mma_f16) pairs in the fragment layout of the PTX
 * ISA's mma.m16n8k16. */
__device__ __forceinline__ void mma_bf16(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
#ifdef __CUDACC__
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
		     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
	sim_mma(d, a, b0, b1, false);
#endif
}

__device__ __forceinline__ void mma_f16(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
#ifdef __CUDACC__
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
		     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
	sim_mma(d, a, b0, b1, true);
#endif
}

#ifdef __CUDACC__
__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
	return (uint32_t)__cvta_generic_to_shared(p);
}
#endif

/* A shared-memory byte address, converted from a generic pointer once so that
 * loops add offsets to it instead of converting every access. */
#ifdef __CUDACC__
typedef uint32_t sptr_t;
__device__ __forceinline__ sptr_t sptr(const void *p)
{
	return smem_addr(p);
}
#else
typedef uintptr_t sptr_t;
static inline sptr_t sptr(const void *p)
{
	return (uintptr_t)p;
}
#endif

/* ldmatrix.x4 (.trans) at a shared byte address (see ldsm_x4). */
__device__ __forceinline__ void ldsm_x4_at(uint32_t r[4], sptr_t a, bool trans)
{
#ifdef __CUDACC__
	if (trans)
		asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
			     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
			     : "r"(a));
	else
		asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
			     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
			     : "r"(a));
#else
	sim_ldsm_x4(r, (const void *)a, trans);
#endif
}

/* cp_async16 to a shared byte address. */
__device__ __forceinline__ void cp_async16_at(sptr_t dst, const void *src, int src_bytes)
{
#ifdef __CUDACC__
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
		     "r"(src_bytes));
#else
	sim_cp_async16((void *)dst, src, src_bytes);
#endif
}

/* Four 8x8 b16 matrices from shared memory (lane 8i + j gives row j of
 * matrix i), optionally transposed. */
__device__ __forceinline__ void ldsm_x4(uint32_t r[4], const void *p)
{
#ifdef __CUDACC__
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(smem_addr(p)));
#else
	sim_ldsm_x4(r, p, false);
#endif
}

__device__ __forceinline__ void ldsm_x4_t(uint32_t r[4], const void *p)
{
#ifdef __CUDACC__
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(smem_addr(p)));
#else
	sim_ldsm_x4(r, p, true);
#endif
}

/* 16-byte asynchronous global-to-shared copy; src_bytes < 16 zero-fills the
 * rest. The data is there only after a cp_async_wait that covers its group. */
__device__ __forceinline__ void cp_async16(void *dst, const void *src, int src_bytes)
{
#ifdef __CUDACC__
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
		     :
		     : "r"(smem_addr(dst)), "l"(src), "r"(src_bytes));
#else
	sim_cp_async16(dst, src, src_bytes);
#endif
}

/* An L2 policy that evicts first the lines it is given to: for weights that
 * stream through once, so they do not push the activations out of L2. */
__device__ __forceinline__ uint64_t l2_evict_first(void)
{
	uint64_t pol = 0;
#ifdef __CUDACC__
	asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(pol));
#endif
	return pol;
}

/* cp_async16 under L2 policy pol (l2_evict_first); the simulator has no L2:
 * the copy alone. */
__device__ __forceinline__ void cp_async16_pol(void *dst, const void *src, int src_bytes,
					       uint64_t pol)
{
#ifdef __CUDACC__
	asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n"
		     :
		     : "r"(smem_addr(dst)), "l"(src), "r"(src_bytes), "l"(pol));
#else
	(void)pol;
	sim_cp_async16(dst, src, src_bytes);
#endif
}

/* The same, always 16 bytes (no source-size operand to compute). */
__device__ __forceinline__ void cp_async16_full(void *dst, const void *src)
{
#ifdef __CUDACC__
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst)), "l"(src));
#else
	sim_cp_async16(dst, src, 16);
#endif
}

__device__ __forceinline__ void cp_async_commit(void)
{
#ifdef __CUDACC__
	asm volatile("cp.async.commit_group;\n" ::);
#else
	sim_cp_async_commit();
#endif
}

/* Waits until at most N committed groups of this thread are in flight. */
template <int N> __device__ __forceinline__ void cp_async_wait(void)
{
#ifdef __CUDACC__
	asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#else
	sim_cp_async_wait(N);
#endif
}

/* Streaming 16-byte load that skips L1 (data read once). */
__device__ __forceinline__ uint4 ld_stream(const void *p)
{
	uint4 v;
#ifdef __CUDACC__
	asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n"
		     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
		     : "l"(p));
#else
	sim_check_align(p, 16, "ld.global.v4");
	memcpy(&v, p, 16);
#endif
	return v;
}

/* 2^x in one MUFU.EX2 (flushing results under 2^-126 to zero, fine for
 * softmax weights); exp2f would add a range fix-up around it. */
__device__ __forceinline__ float fast_exp2(float x)
{
	float y;
#ifdef __CUDACC__
	asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
#else
	y = exp2f(x);
	if (y < 1.17549435e-38f)
		y = 0.f;
#endif
	return y;
}

/* Any three-input bitwise function in one instruction: bit i of LUT is the
 * result for (a, b, c) bits (i >> 2, i >> 1 & 1, i & 1); (a & b) | c is
 * (0xf0 & 0xcc) | 0xaa. */
template <int LUT> __device__ __forceinline__ uint32_t lop3(uint32_t a, uint32_t b, uint32_t c)
{
	uint32_t d;
#ifdef __CUDACC__
	asm("lop3.b32 %0, %1, %2, %3, %4;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c), "n"(LUT));
#else
	d = 0;
	for (int i = 0; i < 8; i++)
		if ((LUT >> i) & 1)
			d |= ((i & 4) ? a : ~a) & ((i & 2) ? b : ~b) & ((i & 1) ? c : ~c);
#endif
	return d;
}

/* Byte permute: byte i of the result is byte (sel >> 4i) & 7 of {b, a}
 * (a's bytes 0-3, b's 4-7), or that byte's sign replicated when bit 3 of
 * the selector nibble is set. */
__device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel)
{
	uint32_t d;
#ifdef __CUDACC__
	asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
#else
	const uint64_t ab = (uint64_t)a | (uint64_t)b << 32;
	d = 0;
	for (int i = 0; i < 4; i++) {
		const uint32_t s = (sel >> (4 * i)) & 15u;
		uint32_t byte = (uint32_t)(ab >> (8 * (s & 7))) & 0xffu;
		if (s & 8)
			byte = (byte & 0x80u) ? 0xffu : 0;
		d |= byte << (8 * i);
	}
#endif
	return d;
}

#endif
