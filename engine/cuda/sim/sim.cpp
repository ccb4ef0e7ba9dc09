/* sim.cpp - runs CUDA kernels compiled by the host compiler (sim.h): every thread of a block is a fiber, barriers and warp primitives are the only switch points, and the PTX that ptx.cuh wraps is emulated from the ISA's fragment tables.
 *
 * One block runs at a time, its threads resumed in the configured order
 * (forward, reverse or shuffled) between switch points, so a missing
 * barrier shows up as a result that changes with the order. Faults end the
 * launch with an error and a one-line description (sim_fault):
 *   - a barrier that not every live thread of the block reaches, a warp
 *     primitive that not every lane of its mask reaches (deadlock), lanes
 *     meeting at different primitives or masks, a shuffle from outside the
 *     mask;
 *   - a write past either end of a device buffer or of the dynamic shared
 *     memory (guard bytes checked after every block; under AddressSanitizer
 *     reads are caught too);
 *   - a misaligned 16-byte vector, ldmatrix row or cp.async address;
 *   - a launch over the dynamic shared-memory limit its kernel was given.
 * cp.async copies land only when a cp.async.wait_group covers them, so a
 * stage read before its wait reads stale bytes.
 */
#include "sim.h"
#include "sim_api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIM_ASAN 1
#endif
#endif
#ifdef SIM_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#define SIM_STACK (256 * 1024) /* bytes of stack per simulated thread */
#define SIM_GUARD 256          /* guard bytes around device buffers */
#define SIM_MAX_THREADS 1024
#define SIM_DEFAULT_SMEM (48 * 1024)
#define SIM_OPTIN_SMEM (227 * 1024)

/* ---- settings, statistics, faults ---- */

static struct sim_conf g_conf = {132, 1, SIM_FORWARD, 1};
static struct sim_stats g_stats;
static char g_fault[320];
static cudaError_t g_last = cudaSuccess;   /* cleared by cudaGetLastError */
static cudaError_t g_sticky = cudaSuccess; /* a kernel fault: stays */

extern "C" void sim_conf_default(struct sim_conf *c)
{
	c->sms = 132;
	c->blocks_per_sm = 1;
	c->order = SIM_FORWARD;
	c->seed = 1;
}

extern "C" void sim_configure(const struct sim_conf *c)
{
	g_conf = *c;
	g_sticky = g_last = cudaSuccess;
	g_fault[0] = '\0';
}

extern "C" void sim_stats_get(struct sim_stats *s)
{
	*s = g_stats;
}

extern "C" void sim_stats_reset(void)
{
	long live = g_stats.live_buffers;
	memset(&g_stats, 0, sizeof g_stats);
	g_stats.live_buffers = live;
}

extern "C" const char *sim_fault(void)
{
	return g_fault;
}

extern "C" const struct op_cuda *sim_op_path(const char *op)
{
	static const struct {
		const char *name;
		const struct op_cuda *cu;
	} paths[] = {
		{"moe_w4a16", &op_sim_moe_w4a16}, {"tree_attn", &op_sim_tree_attn},
		{"tree_build", &op_sim_tree_build}, {"accept", &op_sim_accept},
		{"memcpy", &op_sim_memcpy},
	};
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
		if (!strcmp(paths[i].name, op))
			return paths[i].cu;
	return NULL;
}

int sim_blocks_per_sm(void)
{
	return g_conf.blocks_per_sm;
}

/* Records a fault (first one wins) and the error it becomes. */
static cudaError_t sim_error(cudaError_t e, bool sticky, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static cudaError_t sim_error(cudaError_t e, bool sticky, const char *fmt, ...)
{
	if (!g_fault[0]) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(g_fault, sizeof g_fault, fmt, ap);
		va_end(ap);
	}
	if (sticky)
		g_sticky = e;
	g_last = e;
	return e;
}

/* ---- fp16 ---- */

/* m >> s rounded to nearest even (s in 1..31). */
static uint32_t rshift_rne(uint32_t m, int s)
{
	uint32_t q = m >> s, r = m & ((1u << s) - 1), h = 1u << (s - 1);
	return q + (r > h || (r == h && (q & 1)));
}

uint16_t sim_f2h(float f)
{
	uint32_t x = __float_as_uint(f), ax = x & 0x7fffffffu;
	uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
	int e = (int)(ax >> 23);
	if (ax > 0x7f800000u)
		return (uint16_t)(sign | 0x7e00u);
	if (e >= 143)
		return (uint16_t)(sign | 0x7c00u);
	if (e < 101)
		return sign; /* under 2^-26: rounds to zero */
	uint32_t h = e < 113 ? rshift_rne((ax & 0x7fffffu) | 0x800000u, 126 - e)
			     : ((uint32_t)(e - 112) << 10) + rshift_rne(ax & 0x7fffffu, 13);
	return (uint16_t)(sign | (h >= 0x7c00u ? 0x7c00u : h));
}

float sim_h2f(uint16_t h)
{
	uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 31u, m = h & 1023u;
	if (e == 31)
		return __uint_as_float(s | 0x7f800000u | (m << 13));
	if (e == 0) {
		float v = ldexpf((float)m, -24);
		return s ? -v : v;
	}
	return __uint_as_float(s | ((e + 112) << 23) | (m << 13));
}

/* ---- device memory: guarded, poisoned, bounds-checked ---- */

struct sim_buf {
	size_t bytes;
	unsigned char *base; /* bytes + 2 SIM_GUARD, user data at base + SIM_GUARD */
};
static std::map<uintptr_t, sim_buf> g_bufs; /* by user address */

static void guard_fill(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(0xa5 ^ (i & 0xff));
}

static bool guard_ok(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)(0xa5 ^ (i & 0xff)))
			return false;
	return true;
}

static void guard_poison(const void *p, size_t n, bool on)
{
#ifdef SIM_ASAN
	if (on)
		ASAN_POISON_MEMORY_REGION(p, n);
	else
		ASAN_UNPOISON_MEMORY_REGION(p, n);
#else
	(void)p;
	(void)n;
	(void)on;
#endif
}

cudaError_t cudaMalloc(void **p, size_t bytes)
{
	*p = NULL;
	size_t total = (bytes + 2 * SIM_GUARD + 255) / 256 * 256;
	unsigned char *base = (unsigned char *)aligned_alloc(256, total);
	if (!base)
		return sim_error(cudaErrorMemoryAllocation, false, "cudaMalloc(%zu): out of memory",
				 bytes);
	guard_fill(base, SIM_GUARD);
	/* cudaMalloc's memory is not zeroed: all ones is NaN in every float
	 * format and -1 in every integer, so a read of it shows */
	memset(base + SIM_GUARD, 0xff, bytes);
	guard_fill(base + SIM_GUARD + bytes, total - SIM_GUARD - bytes);
	guard_poison(base, SIM_GUARD, true);
	guard_poison(base + SIM_GUARD + bytes, total - SIM_GUARD - bytes, true);
	*p = base + SIM_GUARD;
	g_bufs[(uintptr_t)*p] = sim_buf{bytes, base};
	g_stats.live_buffers++;
	return cudaSuccess;
}

/* Checks both guards of b; returns false (and faults) when one changed. */
static bool buf_check(uintptr_t user, const sim_buf &b, const char *when)
{
	size_t total = (b.bytes + 2 * SIM_GUARD + 255) / 256 * 256;
	guard_poison(b.base, total, false);
	bool ok = guard_ok(b.base, SIM_GUARD) &&
		  guard_ok(b.base + SIM_GUARD + b.bytes, total - SIM_GUARD - b.bytes);
	guard_poison(b.base, SIM_GUARD, true);
	guard_poison(b.base + SIM_GUARD + b.bytes, total - SIM_GUARD - b.bytes, true);
	if (!ok)
		sim_error(cudaErrorIllegalAddress, true,
			  "%s: a write landed outside the %zu-byte device buffer at %#lx", when,
			  b.bytes, (unsigned long)user);
	return ok;
}

cudaError_t cudaFree(void *p)
{
	if (!p)
		return cudaSuccess;
	auto it = g_bufs.find((uintptr_t)p);
	if (it == g_bufs.end())
		return sim_error(cudaErrorInvalidDevicePointer, false, "cudaFree(%p): not a device "
				 "buffer", p);
	buf_check(it->first, it->second, "cudaFree");
	size_t total = (it->second.bytes + 2 * SIM_GUARD + 255) / 256 * 256;
	guard_poison(it->second.base, total, false);
	free(it->second.base);
	g_bufs.erase(it);
	g_stats.live_buffers--;
	return cudaSuccess;
}

/* Whether [p, p + n) lies inside one device buffer. */
static bool dev_range(const void *p, size_t n)
{
	auto it = g_bufs.upper_bound((uintptr_t)p);
	if (it == g_bufs.begin())
		return false;
	--it;
	return (uintptr_t)p + n <= it->first + it->second.bytes;
}

static cudaError_t copy_check(void *dst, const void *src, size_t n, cudaMemcpyKind kind,
			      const char *what)
{
	bool dd = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
	bool sd = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
	if (g_sticky)
		return g_sticky;
	if (n && ((dd && !dev_range(dst, n)) || (sd && !dev_range(src, n))))
		return sim_error(cudaErrorInvalidValue, false, "%s of %zu bytes reaches outside "
				 "a device buffer", what, n);
	return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind kind)
{
	cudaError_t e = copy_check(dst, src, n, kind, "cudaMemcpy");
	if (!e && n)
		memmove(dst, src, n);
	return e;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, cudaMemcpyKind kind, cudaStream_t s)
{
	(void)s;
	return cudaMemcpy(dst, src, n, kind);
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
			 size_t height, cudaMemcpyKind kind)
{
	if (!height || !width)
		return cudaSuccess;
	if (width > dpitch || width > spitch)
		return sim_error(cudaErrorInvalidValue, false, "cudaMemcpy2D: width %zu over a "
				 "pitch", width);
	cudaError_t e = copy_check(dst, src, (height - 1) * dpitch + width,
				   kind == cudaMemcpyDeviceToHost ? cudaMemcpyHostToHost : kind,
				   "cudaMemcpy2D (destination)");
	if (!e)
		e = copy_check(dst, src, (height - 1) * spitch + width,
			       kind == cudaMemcpyHostToDevice ? cudaMemcpyHostToHost : kind,
			       "cudaMemcpy2D (source)");
	for (size_t r = 0; !e && r < height; r++)
		memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
	return e;
}

cudaError_t cudaMemset(void *p, int v, size_t n)
{
	if (g_sticky)
		return g_sticky;
	if (n && !dev_range(p, n))
		return sim_error(cudaErrorInvalidValue, false, "cudaMemset of %zu bytes reaches "
				 "outside a device buffer", n);
	memset(p, v, n);
	return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s)
{
	(void)s;
	return cudaMemset(p, v, n);
}

cudaError_t cudaDeviceSynchronize(void)
{
	return g_sticky;
}

cudaError_t cudaDeviceReset(void)
{
	for (auto &b : g_bufs) {
		size_t total = (b.second.bytes + 2 * SIM_GUARD + 255) / 256 * 256;
		guard_poison(b.second.base, total, false);
		free(b.second.base);
		g_stats.live_buffers--;
	}
	g_bufs.clear();
	g_sticky = g_last = cudaSuccess;
	g_fault[0] = '\0';
	return cudaSuccess;
}

extern "C" int sim_recover(void)
{
	(void)cudaGetLastError();
	if (cudaDeviceSynchronize() == cudaSuccess)
		return 0;
	(void)cudaDeviceReset();
	return 1;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
	(void)s;
	return g_sticky;
}

cudaError_t cudaGetLastError(void)
{
	cudaError_t e = g_last;
	g_last = g_sticky;
	return e;
}

const char *cudaGetErrorString(cudaError_t e)
{
	static char buf[400];
	const char *name = e == cudaSuccess		       ? "no error"
			   : e == cudaErrorInvalidValue	       ? "invalid argument"
			   : e == cudaErrorMemoryAllocation     ? "out of memory"
			   : e == cudaErrorInvalidConfiguration ? "invalid configuration argument"
			   : e == cudaErrorIllegalAddress	       ? "an illegal memory access was encountered"
			   : e == cudaErrorLaunchFailure	       ? "unspecified launch failure"
							       : "invalid device pointer";
	snprintf(buf, sizeof buf, "%s%s%s", name, e && g_fault[0] ? " (simulator: " : "",
		 e && g_fault[0] ? g_fault : "");
	if (e && g_fault[0])
		strncat(buf, ")", sizeof buf - strlen(buf) - 1);
	return buf;
}

cudaError_t cudaGetDevice(int *dev)
{
	*dev = 0;
	return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr attr, int dev)
{
	(void)dev;
	switch (attr) {
	case cudaDevAttrMultiProcessorCount:
		*v = g_conf.sms;
		return cudaSuccess;
	case cudaDevAttrMaxSharedMemoryPerBlockOptin:
		*v = SIM_OPTIN_SMEM;
		return cudaSuccess;
	case cudaDevAttrL2CacheSize:
		*v = 50 << 20;
		return cudaSuccess;
	case cudaDevAttrClockRate:
		*v = 1980000;
		return cudaSuccess;
	}
	return sim_error(cudaErrorInvalidValue, false, "cudaDeviceGetAttribute(%d): not simulated",
			 (int)attr);
}

static std::map<const void *, int> g_dyn_limit; /* kernel -> max dynamic smem */

cudaError_t sim_func_set_attribute(const void *fn, cudaFuncAttribute attr, int v)
{
	if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize || v < 0 || v > SIM_OPTIN_SMEM)
		return sim_error(cudaErrorInvalidValue, false, "cudaFuncSetAttribute(%d, %d): "
				 "invalid", (int)attr, v);
	g_dyn_limit[fn] = v;
	return cudaSuccess;
}

cudaError_t sim_func_get_attributes(cudaFuncAttributes *a, const void *fn)
{
	(void)fn;
	a->sharedSizeBytes = 0;
	a->maxThreadsPerBlock = SIM_MAX_THREADS;
	return cudaSuccess;
}

long long sim_clock(void)
{
	static long long t;
	return t += 4;
}

/* ---- fibers ---- */

enum { T_RUN, T_BAR, T_WARP, T_DONE };

struct sim_cp {
	void *dst;
	const void *src;
	int bytes;
	unsigned group;
};

struct sim_thread {
	void *sp;             /* saved stack pointer (x86-64) */
#if !defined(__x86_64__)
	ucontext_t uc;
#endif
	unsigned char *stack; /* lowest address of its SIM_STACK bytes */
	void *fake;           /* AddressSanitizer's fake stack */
	uint3 idx;
	int lin, lane, warp, state;
	unsigned wgen;        /* the warp primitive generation it waits on */
	unsigned committed;   /* cp.async groups committed */
	std::vector<sim_cp> cp;
};

/* Lanes meet in a warp primitive: each deposits its operands, the last to
 * arrive computes every lane's result into out (two generations, so a lane
 * that runs ahead to the next primitive cannot overwrite unread results). */
enum { W_SYNC, W_SHFL, W_BALLOT, W_REDUCE, W_MMA_BF16, W_MMA_F16, W_LDSM, W_LDSM_T };
static const char *const w_names[] = {"__syncwarp", "shfl", "ballot", "reduce_add",
				      "mma.bf16", "mma.f16", "ldmatrix", "ldmatrix.trans"};

struct sim_slot {
	uint32_t v[10];
};

struct sim_warp {
	unsigned arrived, mask, gen;
	int kind;
	sim_slot in[32];
	uint32_t out[2][32][4];
};

static struct {
	const char *name;
	void (*body)(void *);
	void *ctx;
	int n, live, bar;
	sim_thread th[SIM_MAX_THREADS];
	sim_warp warps[SIM_MAX_THREADS / 32];
	int order[SIM_MAX_THREADS];
	unsigned char *smem; /* dynamic shared memory + guard */
	size_t smem_bytes;
	bool aborted;
} g_blk;

static sim_thread *g_cur;
static void *g_sched_sp;
#if !defined(__x86_64__)
static ucontext_t g_sched_uc;
#endif
#ifdef SIM_ASAN
static const void *g_main_bottom;
static size_t g_main_size;
static void *g_main_fake;
#endif
uint3 sim_block_idx;
dim3 sim_block_dim, sim_grid_dim;

const uint3 &sim_thread_idx(void)
{
	return g_cur->idx;
}

void *sim_dyn_smem(void)
{
	return g_blk.smem;
}

#if defined(__x86_64__)
/* Saves the callee-saved registers, the SSE and x87 control words and the
 * stack pointer into *save_sp, and resumes the context saved at new_sp. */
extern "C" void sim_switch(void **save_sp, void *new_sp);
__asm__(".text\n"
	".globl sim_switch\n"
	".type sim_switch,@function\n"
	"sim_switch:\n"
	"\tpushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n"
	"\tsubq $8, %rsp\n\tstmxcsr (%rsp)\n\tfnstcw 4(%rsp)\n"
	"\tmovq %rsp, (%rdi)\n\tmovq %rsi, %rsp\n"
	"\tldmxcsr (%rsp)\n\tfldcw 4(%rsp)\n\taddq $8, %rsp\n"
	"\tpopq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n"
	"\tret\n"
	".size sim_switch,.-sim_switch\n");
#endif

static void fiber_main(void);

/* Prepares t's stack so that the first switch to it enters fiber_main. */
static void fiber_init(sim_thread *t)
{
#if defined(__x86_64__)
	uint64_t *top = (uint64_t *)(t->stack + SIM_STACK);
	top[-1] = 0;                        /* fiber_main's return address: none */
	top[-2] = (uint64_t)&fiber_main;    /* where sim_switch's ret goes */
	for (int i = 3; i <= 8; i++)
		top[-i] = 0;                /* rbp rbx r12 r13 r14 r15 */
	top[-9] = 0x1f80 | (0x037fULL << 32); /* mxcsr, x87 control word */
	t->sp = &top[-9];
#else
	getcontext(&t->uc);
	t->uc.uc_stack.ss_sp = t->stack;
	t->uc.uc_stack.ss_size = SIM_STACK;
	t->uc.uc_link = NULL;
	makecontext(&t->uc, fiber_main, 0);
#endif
}

/* Scheduler -> fiber t; returns when t yields or ends. */
static void fiber_enter(sim_thread *t)
{
	g_cur = t;
	g_stats.switches++;
#ifdef SIM_ASAN
	__sanitizer_start_switch_fiber(&g_main_fake, t->stack, SIM_STACK);
#endif
#if defined(__x86_64__)
	sim_switch(&g_sched_sp, t->sp);
#else
	swapcontext(&g_sched_uc, &t->uc);
#endif
#ifdef SIM_ASAN
	__sanitizer_finish_switch_fiber(g_main_fake, NULL, NULL);
#endif
	g_cur = NULL;
}

/* Fiber -> scheduler; returns when the scheduler resumes this fiber (never
 * when it has ended: final). */
static void fiber_yield(bool final)
{
	sim_thread *t = g_cur;
#ifdef SIM_ASAN
	__sanitizer_start_switch_fiber(final ? NULL : &t->fake, g_main_bottom, g_main_size);
#endif
#if defined(__x86_64__)
	sim_switch(&t->sp, g_sched_sp);
#else
	swapcontext(&t->uc, &g_sched_uc);
#endif
#ifdef SIM_ASAN
	__sanitizer_finish_switch_fiber(t->fake, NULL, NULL);
#endif
	(void)final;
}

static void cp_complete(sim_thread *t, unsigned upto);

static void fiber_main(void)
{
#ifdef SIM_ASAN
	__sanitizer_finish_switch_fiber(NULL, &g_main_bottom, &g_main_size);
#endif
	sim_thread *t = g_cur;
	g_blk.body(g_blk.ctx);
	cp_complete(t, ~0u); /* copies nobody waited for still land */
	t->state = T_DONE;
	g_blk.live--;
	fiber_yield(true);
	abort(); /* never resumed */
}

/* Ends the running kernel with a fault described by fmt (from a fiber). */
[[noreturn]] static void sim_fault_here(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] static void sim_fault_here(const char *fmt, ...)
{
	char what[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	sim_thread *t = g_cur;
	sim_error(cudaErrorLaunchFailure, true, "%s, block (%u,%u,%u) thread (%u,%u,%u): %s",
		  g_blk.name, blockIdx.x, blockIdx.y, blockIdx.z, t->idx.x, t->idx.y, t->idx.z, what);
	g_blk.aborted = true;
	t->state = T_DONE;
	fiber_yield(true);
	abort();
}

/* ---- barriers and warp primitives ---- */

void __syncthreads(void)
{
	sim_thread *t = g_cur;
	if (g_blk.live != g_blk.n)
		sim_fault_here("__syncthreads after %d of the block's %d threads exited",
			       g_blk.n - g_blk.live, g_blk.n);
	t->state = T_BAR;
	if (++g_blk.bar == g_blk.live) {
		for (int i = 0; i < g_blk.n; i++)
			if (g_blk.th[i].state == T_BAR)
				g_blk.th[i].state = T_RUN;
		g_blk.bar = 0;
	}
	fiber_yield(false);
}

static void warp_complete(sim_warp *w);

/* Lane g_cur meets its warp at a primitive of kind with operands in;
 * returns its result once every lane of mask has arrived. */
static const uint32_t *warp_meet(int kind, unsigned mask, const sim_slot &in)
{
	sim_thread *t = g_cur;
	sim_warp *w = &g_blk.warps[t->warp];
	if (!((mask >> t->lane) & 1u))
		sim_fault_here("lane %d calls %s with mask %#x, which leaves it out", t->lane,
			       w_names[kind], mask);
	if (w->arrived == 0) {
		w->mask = mask;
		w->kind = kind;
	} else if (w->mask != mask || w->kind != kind) {
		sim_fault_here("lanes of warp %d meet at %s (mask %#x) and %s (mask %#x)", t->warp,
			       w_names[w->kind], w->mask, w_names[kind], mask);
	}
	w->in[t->lane] = in;
	w->arrived |= 1u << t->lane;
	t->state = T_WARP;
	t->wgen = w->gen;
	if (w->arrived == mask) {
		warp_complete(w);
		w->gen++;
		w->arrived = 0;
		for (int l = 0; l < 32; l++)
			if ((mask >> l) & 1u)
				g_blk.th[t->warp * 32 + l].state = T_RUN;
	}
	fiber_yield(false);
	return w->out[t->wgen & 1][t->lane];
}

void __syncwarp(unsigned mask)
{
	warp_meet(W_SYNC, mask, sim_slot{});
}

uint64_t sim_shfl(unsigned mask, uint64_t v, enum sim_shfl_mode mode, int arg, int width)
{
	sim_slot s = {};
	if (width < 1 || width > 32 || (width & (width - 1)))
		sim_fault_here("shuffle width %d is not a power of two up to 32", width);
	s.v[0] = (uint32_t)v;
	s.v[1] = (uint32_t)(v >> 32);
	s.v[2] = (uint32_t)mode;
	s.v[3] = (uint32_t)arg;
	s.v[4] = (uint32_t)width;
	const uint32_t *r = warp_meet(W_SHFL, mask, s);
	return (uint64_t)r[0] | (uint64_t)r[1] << 32;
}

unsigned __ballot_sync(unsigned mask, int pred)
{
	sim_slot s = {};
	s.v[0] = pred != 0;
	return warp_meet(W_BALLOT, mask, s)[0];
}

unsigned __reduce_add_sync(unsigned mask, unsigned v)
{
	sim_slot s = {};
	s.v[0] = v;
	return warp_meet(W_REDUCE, mask, s)[0];
}

void sim_mma(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1, bool f16)
{
	sim_slot s;
	memcpy(s.v, a, 16);
	s.v[4] = b0;
	s.v[5] = b1;
	memcpy(s.v + 6, d, 16);
	memcpy(d, warp_meet(f16 ? W_MMA_F16 : W_MMA_BF16, 0xffffffffu, s), 16);
}

void sim_ldsm_x4(uint32_t r[4], const void *p, bool trans)
{
	sim_slot s = {};
	uintptr_t u = (uintptr_t)p;
	s.v[0] = (uint32_t)u;
	s.v[1] = (uint32_t)((uint64_t)u >> 32);
	memcpy(r, warp_meet(trans ? W_LDSM_T : W_LDSM, 0xffffffffu, s), 16);
}

void sim_check_align(const void *p, unsigned n, const char *what)
{
	if ((uintptr_t)p % n)
		sim_fault_here("%s at %p is not %u-byte aligned", what, p, n);
}

/* The source lane of lane l for a shuffle slot, or -1 for "keep its own". */
static int shfl_src(const sim_slot &s, int l)
{
	const int mode = (int)s.v[2], arg = (int)s.v[3], w = (int)s.v[4], base = l & ~(w - 1);
	int src = mode == SIM_SHFL_IDX	   ? base + (arg & (w - 1))
		  : mode == SIM_SHFL_UP	   ? l - arg
		  : mode == SIM_SHFL_DOWN ? l + arg
					  : l ^ arg;
	if (src < base || src >= base + w)
		return -1;
	return src;
}

static float frag_val(uint32_t w, int half, bool f16)
{
	uint16_t h = (uint16_t)(half ? w >> 16 : w & 0xffffu);
	return f16 ? sim_h2f(h) : __uint_as_float((uint32_t)h << 16);
}

/* mma.sync.m16n8k16.row.col.f32.{bf16,f16}: the fragment tables of the PTX
 * ISA (lane = 4 g + c; A regs (g, k<8) (g+8, k<8) (g, k>=8) (g+8, k>=8) at
 * k = 2c, 2c+1 (+8); B regs (k = 2c..2c+1 (+8), n = g); D (g | g+8, 2c..2c+1)). */
static void mma_complete(sim_warp *w, uint32_t out[32][4], bool f16)
{
	float A[16][16], B[16][8];
	for (int l = 0; l < 32; l++) {
		const int g = l >> 2, c = l & 3;
		const uint32_t *v = w->in[l].v;
		for (int h = 0; h < 2; h++) {
			A[g][2 * c + h] = frag_val(v[0], h, f16);
			A[g + 8][2 * c + h] = frag_val(v[1], h, f16);
			A[g][2 * c + 8 + h] = frag_val(v[2], h, f16);
			A[g + 8][2 * c + 8 + h] = frag_val(v[3], h, f16);
			B[2 * c + h][g] = frag_val(v[4], h, f16);
			B[2 * c + 8 + h][g] = frag_val(v[5], h, f16);
		}
	}
	for (int l = 0; l < 32; l++) {
		const int g = l >> 2, c = l & 3;
		for (int i = 0; i < 4; i++) {
			const int row = g + 8 * (i >> 1), col = 2 * c + (i & 1);
			double s = 0;
			for (int k = 0; k < 16; k++)
				s += (double)A[row][k] * B[k][col];
			float acc;
			memcpy(&acc, &w->in[l].v[6 + i], 4);
			const float d = (float)((double)acc + s);
			memcpy(&out[l][i], &d, 4);
		}
	}
}

/* ldmatrix.x4 (.trans): lane 8i + j gives the address of row j of matrix i;
 * register i of lane 4g + c holds matrix i's (g, 2c..2c+1), or with .trans
 * its (2c..2c+1, g). */
static void ldsm_complete(sim_warp *w, uint32_t out[32][4], bool trans)
{
	const uint16_t *rows[32];
	for (int l = 0; l < 32; l++) {
		uintptr_t u = (uintptr_t)w->in[l].v[0] | (uintptr_t)((uint64_t)w->in[l].v[1] << 32);
		if (u % 16)
			sim_fault_here("ldmatrix row address %#lx of lane %d is not 16-byte aligned",
				       (unsigned long)u, l);
		rows[l] = (const uint16_t *)u;
	}
	for (int l = 0; l < 32; l++) {
		const int g = l >> 2, c = l & 3;
		for (int i = 0; i < 4; i++) {
			uint16_t lo, hi;
			if (trans) {
				lo = rows[8 * i + 2 * c][g];
				hi = rows[8 * i + 2 * c + 1][g];
			} else {
				lo = rows[8 * i + g][2 * c];
				hi = rows[8 * i + g][2 * c + 1];
			}
			out[l][i] = (uint32_t)lo | (uint32_t)hi << 16;
		}
	}
}

static void warp_complete(sim_warp *w)
{
	uint32_t(*out)[4] = w->out[w->gen & 1];
	const unsigned m = w->mask;
	switch (w->kind) {
	case W_SYNC:
		break;
	case W_SHFL:
		for (int l = 0; l < 32; l++) {
			if (!((m >> l) & 1u))
				continue;
			int src = shfl_src(w->in[l], l);
			if (src >= 0 && !((m >> src) & 1u))
				sim_fault_here("lane %d shuffles from lane %d, outside mask %#x", l,
					       src, m);
			const sim_slot &s = w->in[src < 0 ? l : src];
			out[l][0] = s.v[0];
			out[l][1] = s.v[1];
		}
		break;
	case W_BALLOT:
	case W_REDUCE: {
		unsigned r = 0;
		for (int l = 0; l < 32; l++)
			if ((m >> l) & 1u)
				r += w->kind == W_BALLOT ? (w->in[l].v[0] << l) : w->in[l].v[0];
		for (int l = 0; l < 32; l++)
			out[l][0] = r;
		break;
	}
	case W_MMA_BF16:
	case W_MMA_F16:
		mma_complete(w, out, w->kind == W_MMA_F16);
		break;
	default:
		ldsm_complete(w, out, w->kind == W_LDSM_T);
	}
}

/* ---- cp.async ---- */

void sim_cp_async16(void *dst, const void *src, int src_bytes)
{
	sim_thread *t = g_cur;
	if ((uintptr_t)dst % 16 || (src_bytes > 0 && (uintptr_t)src % 16))
		sim_fault_here("cp.async 16 from %p to %p: not 16-byte aligned", src, dst);
	if (src_bytes < 0 || src_bytes > 16)
		sim_fault_here("cp.async 16 with src-size %d", src_bytes);
	t->cp.push_back(sim_cp{dst, src, src_bytes, t->committed});
}

void sim_cp_async_commit(void)
{
	g_cur->committed++;
}

/* Lands, in issue order, every copy of a group below upto. */
static void cp_complete(sim_thread *t, unsigned upto)
{
	size_t keep = 0;
	for (size_t i = 0; i < t->cp.size(); i++) {
		const sim_cp &c = t->cp[i];
		if (c.group < upto) {
			memcpy(c.dst, c.src, (size_t)c.bytes);
			memset((char *)c.dst + c.bytes, 0, (size_t)(16 - c.bytes));
		} else {
			t->cp[keep++] = c;
		}
	}
	t->cp.resize(keep);
}

void sim_cp_async_wait(int pending)
{
	sim_thread *t = g_cur;
	cp_complete(t, t->committed > (unsigned)pending ? t->committed - (unsigned)pending : 0);
}

/* ---- launches ---- */

static unsigned char *g_stacks; /* SIM_MAX_THREADS stacks, guard page below each */

static int stacks_init(void)
{
	if (g_stacks)
		return 0;
	const size_t page = 4096, each = SIM_STACK + page;
	void *p = mmap(NULL, each * SIM_MAX_THREADS, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	g_stacks = (unsigned char *)p;
	for (int i = 0; i < SIM_MAX_THREADS; i++) {
		mprotect(g_stacks + i * each, page, PROT_NONE);
		g_blk.th[i].stack = g_stacks + i * each + page;
	}
	return 0;
}

static uint64_t g_rng;
static unsigned rng_next(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return (unsigned)(g_rng >> 11);
}

/* The resume order of n items under the configured order. */
static void order_fill(int *ord, int n)
{
	for (int i = 0; i < n; i++)
		ord[i] = g_conf.order == SIM_REVERSE ? n - 1 - i : i;
	if (g_conf.order == SIM_SHUFFLE)
		for (int i = n - 1; i > 0; i--)
			std::swap(ord[i], ord[rng_next() % (unsigned)(i + 1)]);
}

/* Says why nothing can run although threads are live. */
static void deadlock_fault(void)
{
	int bar = 0, warp = -1;
	for (int i = 0; i < g_blk.n; i++) {
		bar += g_blk.th[i].state == T_BAR;
		if (g_blk.th[i].state == T_WARP && warp < 0)
			warp = g_blk.th[i].warp;
	}
	if (warp >= 0)
		sim_error(cudaErrorLaunchFailure, true, "%s, block (%u,%u,%u): deadlock: warp %d "
			  "waits in %s for lanes %#x that never arrive (%d threads at a barrier)",
			  g_blk.name, blockIdx.x, blockIdx.y, blockIdx.z, warp,
			  w_names[g_blk.warps[warp].kind],
			  g_blk.warps[warp].mask & ~g_blk.warps[warp].arrived, bar);
	else
		sim_error(cudaErrorLaunchFailure, true, "%s, block (%u,%u,%u): deadlock at a "
			  "barrier", g_blk.name, blockIdx.x, blockIdx.y, blockIdx.z);
}

/* Runs the current block to its end; false on a fault. */
static bool block_run(void)
{
	const int n = g_blk.n;
	for (int i = 0; i < n; i++) {
		sim_thread *t = &g_blk.th[i];
		t->idx = uint3{(unsigned)i % blockDim.x, (unsigned)i / blockDim.x % blockDim.y,
			       (unsigned)i / (blockDim.x * blockDim.y)};
		t->lin = i;
		t->lane = i % 32;
		t->warp = i / 32;
		t->state = T_RUN;
		t->committed = 0;
		t->cp.clear();
		t->fake = NULL;
		fiber_init(t);
	}
	memset(g_blk.warps, 0, sizeof g_blk.warps[0] * (size_t)((n + 31) / 32));
	g_blk.live = n;
	g_blk.bar = 0;
	g_blk.aborted = false;
	order_fill(g_blk.order, n);
	while (g_blk.live > 0) {
		bool ran = false;
		for (int k = 0; k < n && !g_blk.aborted; k++) {
			sim_thread *t = &g_blk.th[g_blk.order[k]];
			if (t->state == T_RUN) {
				fiber_enter(t);
				ran = true;
			}
		}
		if (g_blk.aborted)
			return false;
		if (!ran && g_blk.live > 0) {
			deadlock_fault();
			return false;
		}
	}
	return true;
}

/* Checks the launch configuration; 0 or the error. */
static cudaError_t launch_check(const char *name, const void *fn, dim3 grid, dim3 block,
				size_t smem)
{
	const unsigned n = block.x * block.y * block.z;
	if (!n || n > SIM_MAX_THREADS || !grid.x || !grid.y || !grid.z || grid.y > 65535 ||
	    grid.z > 65535)
		return sim_error(cudaErrorInvalidConfiguration, false, "%s: launch of grid "
				 "(%u,%u,%u) x block (%u,%u,%u)", name, grid.x, grid.y, grid.z,
				 block.x, block.y, block.z);
	auto it = g_dyn_limit.find(fn);
	const size_t limit = it == g_dyn_limit.end() ? SIM_DEFAULT_SMEM : (size_t)it->second;
	if (smem > limit)
		return sim_error(cudaErrorInvalidValue, false, "%s: launch with %zu bytes of "
				 "dynamic shared memory over the kernel's limit of %zu "
				 "(cudaFuncSetAttribute)", name, smem, limit);
	return cudaSuccess;
}

/* Allocates (or reuses) the dynamic shared memory and its guard. */
static bool smem_prepare(size_t bytes)
{
	static size_t cap;
	if (bytes + SIM_GUARD > cap) {
		free(g_blk.smem);
		cap = (bytes + SIM_GUARD + 4095) / 4096 * 4096;
		g_blk.smem = (unsigned char *)aligned_alloc(1024, cap);
		if (!g_blk.smem) {
			cap = 0;
			return false;
		}
	}
	g_blk.smem_bytes = bytes;
	return true;
}

/* Fills the dynamic shared memory with garbage (shared memory starts
 * undefined) and arms its guard. */
static void smem_arm(void)
{
	memset(g_blk.smem, 0xff, g_blk.smem_bytes);
	guard_fill(g_blk.smem + g_blk.smem_bytes, SIM_GUARD);
	guard_poison(g_blk.smem + g_blk.smem_bytes, SIM_GUARD, true);
}

static bool smem_check(void)
{
	guard_poison(g_blk.smem + g_blk.smem_bytes, SIM_GUARD, false);
	if (guard_ok(g_blk.smem + g_blk.smem_bytes, SIM_GUARD))
		return true;
	sim_error(cudaErrorIllegalAddress, true, "%s, block (%u,%u,%u): a write landed past the "
		  "end of the %zu bytes of dynamic shared memory", g_blk.name, blockIdx.x,
		  blockIdx.y, blockIdx.z, g_blk.smem_bytes);
	return false;
}

/* Every device buffer's guards, after a launch. */
static bool bufs_check(const char *name)
{
	for (const auto &b : g_bufs)
		if (!buf_check(b.first, b.second, name))
			return false;
	return true;
}

static struct {
	enum sim_inject what;
	int left;
} g_inject;

extern "C" void sim_inject(enum sim_inject what, int nth_launch)
{
	g_inject.what = nth_launch > 0 ? what : SIM_INJECT_NONE;
	g_inject.left = nth_launch;
}

/* Whether this launch is the one sim_inject named: a fault returns its
 * error, a hang never returns. */
static bool inject_now(const char *name, cudaError_t *e)
{
	if (g_inject.what == SIM_INJECT_NONE || --g_inject.left > 0)
		return false;
	const enum sim_inject what = g_inject.what;
	g_inject.what = SIM_INJECT_NONE;
	if (what == SIM_INJECT_HANG)
		for (;;)
			pause();
	*e = sim_error(cudaErrorIllegalAddress, true, "%s: a fault injected by sim_inject", name);
	return true;
}

cudaError_t sim_run(const char *name, const void *fn, dim3 grid, dim3 block, size_t smem,
		    void (*body)(void *), void *ctx)
{
	cudaError_t e;
	if (g_sticky)
		return g_sticky;
	if (inject_now(name, &e))
		return e;
	if ((e = launch_check(name, fn, grid, block, smem)))
		return e;
	if (stacks_init() || !smem_prepare(smem))
		return sim_error(cudaErrorMemoryAllocation, false, "%s: no memory for the "
				 "simulator", name);
	g_stats.launches++;
	g_blk.name = name;
	g_blk.body = body;
	g_blk.ctx = ctx;
	g_blk.n = (int)(block.x * block.y * block.z);
	sim_block_dim = block;
	sim_grid_dim = grid;
	g_rng = g_conf.seed * 0x9e3779b97f4a7c15ULL + g_stats.launches;
	const int nb = (int)(grid.x * grid.y * grid.z);
	std::vector<int> border((size_t)nb);
	order_fill(border.data(), nb);
	for (int k = 0; k < nb; k++) {
		const unsigned b = (unsigned)border[(size_t)k];
		sim_block_idx = uint3{b % grid.x, b / grid.x % grid.y, b / (grid.x * grid.y)};
		smem_arm();
		g_stats.blocks++;
		if (!block_run() || !smem_check())
			return g_last;
	}
	if (!bufs_check(name))
		return g_last;
	return cudaSuccess;
}
