/* cpu_pool.c - a small persistent worker pool, so a parallel op pays microseconds, not a thread start, per run; the aligned allocator and the cache size beside it. */
#include "cpu_pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Workers spin this many polls (a millisecond or so) before sleeping:
 * back-to-back benchmark runs then wake them without a futex round trip, and
 * an idle pool still sleeps. */
#define POOL_SPIN 20000

static inline void pool_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause(); /* spares the sibling hyperthread and the memory bus */
#endif
}

struct pool {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	atomic_uint gen;    /* bumped once per job */
	atomic_int pending; /* workers yet to finish the current job */
	void (*fn)(void *, int, int);
	void *ctx;
	int nthr;
	int nworkers;
	pthread_t th[CPU_MAX_THREADS];
};

static struct pool pool = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
static pthread_mutex_t call_mu = PTHREAD_MUTEX_INITIALIZER;
static int threads_wanted;
static atomic_int threads_ran; /* most threads a cpu_parallel call used */
static atomic_int pool_quit; /* set at exit: workers return */
static pid_t pool_pid;       /* the process whose threads these are */

int cpu_online_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > CPU_MAX_THREADS ? CPU_MAX_THREADS : (int)n;
}

int cpu_threads_ran(void)
{
	int n = atomic_load(&threads_ran);
	return n ? n : 1;
}

int cpu_threads_ran_reset(void)
{
	return atomic_exchange(&threads_ran, 0);
}

void cpu_threads_ran_restore(int raw)
{
	atomic_store(&threads_ran, raw);
}

void cpu_threads_set(int n)
{
	threads_wanted = n <= 0 ? 0 : n > CPU_MAX_THREADS ? CPU_MAX_THREADS : n;
}

int cpu_threads(void)
{
	return threads_wanted ? threads_wanted : cpu_online_cores();
}

static void *worker(void *arg)
{
	int id = (int)(size_t)arg; /* 1-based: the caller is thread 0 */
	unsigned seen = 0;

	for (;;) {
		unsigned g;
		int spins = 0;
		while ((g = atomic_load_explicit(&pool.gen, memory_order_acquire)) == seen &&
		       spins < POOL_SPIN) {
			pool_relax();
			spins++;
		}
		if (g == seen) {
			pthread_mutex_lock(&pool.mu);
			while ((g = atomic_load(&pool.gen)) == seen)
				pthread_cond_wait(&pool.cv, &pool.mu);
			pthread_mutex_unlock(&pool.mu);
		}
		seen = g;
		if (atomic_load(&pool_quit))
			return NULL;
		if (id < pool.nthr)
			pool.fn(pool.ctx, id, pool.nthr);
		atomic_fetch_sub_explicit(&pool.pending, 1, memory_order_release);
	}
	return NULL;
}

/* At exit the workers return and are joined, so no thread of the pool
 * outlives the process's own teardown (valgrind then finds none of their
 * memory left). A forked child has none of them to join. */
static void pool_stop(void)
{
	if (getpid() != pool_pid)
		return;
	pthread_mutex_lock(&pool.mu);
	atomic_store(&pool_quit, 1);
	atomic_fetch_add(&pool.gen, 1);
	pthread_cond_broadcast(&pool.cv);
	pthread_mutex_unlock(&pool.mu);
	for (int i = 0; i < pool.nworkers; i++)
		if (!pthread_equal(pool.th[i], pthread_self()))
			pthread_join(pool.th[i], NULL);
	pool.nworkers = 0;
}

/* Starts workers up to want - 1 of them; keeps what it got on failure. */
static void pool_grow(int want)
{
	while (pool.nworkers < want - 1) {
		if (pthread_create(&pool.th[pool.nworkers], NULL, worker,
				   (void *)(size_t)(pool.nworkers + 1)) != 0)
			return;
		if (!pool_pid) {
			pool_pid = getpid();
			atexit(pool_stop);
		}
		pool.nworkers++;
	}
}

void cpu_parallel(void (*fn)(void *ctx, int tid, int nthreads), void *ctx)
{
	pthread_mutex_lock(&call_mu);
	int n = cpu_threads();
	pool_grow(n);
	if (n > pool.nworkers + 1)
		n = pool.nworkers + 1;
	if (n > atomic_load(&threads_ran))
		atomic_store(&threads_ran, n);
	if (n == 1) {
		fn(ctx, 0, 1);
		pthread_mutex_unlock(&call_mu);
		return;
	}
	pool.fn = fn;
	pool.ctx = ctx;
	pool.nthr = n;
	atomic_store(&pool.pending, pool.nworkers);
	pthread_mutex_lock(&pool.mu);
	atomic_fetch_add_explicit(&pool.gen, 1, memory_order_release);
	pthread_cond_broadcast(&pool.cv);
	pthread_mutex_unlock(&pool.mu);
	fn(ctx, 0, n);
	while (atomic_load_explicit(&pool.pending, memory_order_acquire) > 0)
		sched_yield();
	pthread_mutex_unlock(&call_mu);
}

void cpu_split(size_t n, size_t align, int tid, int nthreads, size_t *lo, size_t *hi)
{
	size_t chunks = (n + align - 1) / align;
	size_t a = chunks * (size_t)tid / (size_t)nthreads;
	size_t b = chunks * (size_t)(tid + 1) / (size_t)nthreads;
	*lo = a * align < n ? a * align : n;
	*hi = b * align < n ? b * align : n;
}

/*
 * Large buffers freed are kept for the next large cpu_alloc, zeroed again
 * there: on a virtual machine the first touch of a fresh page costs a
 * hypervisor fault besides the kernel's zeroing, 6 s a GiB measured on a
 * shared 2-vCPU guest (perf: clear_page_erms, most of a bench's setup),
 * against 0.1 s a GiB for memset on pages already backed. A bench that sets
 * up one op's gigabyte of inputs after another's then pays it once.
 */
#define ALLOC_KEEP 8                /* mappings kept at most */
#define ALLOC_KEEP_MIN (2u << 20)   /* smaller ones go straight back */

/* The 64 bytes in front of every buffer: its mapping's length, the bytes
 * asked for, and its place in the list of live buffers (what a cold
 * sample's eviction walks). */
struct alloc_head {
	size_t len;
	size_t bytes;
	struct alloc_head *prev, *next;
};
_Static_assert(sizeof(struct alloc_head) <= 64, "the header fits the 64 bytes before a buffer");

static struct {
	char *base;
	size_t len;
} kept[ALLOC_KEEP];
static int nkept;
static struct alloc_head *live;
static pthread_mutex_t alloc_mu = PTHREAD_MUTEX_INITIALIZER; /* kept[] and live */

/* A kept mapping of at least total bytes and at most twice that, else the
 * largest smaller one grown by mremap (its new pages fresh), with the first
 * total bytes zeroed; NULL when none fits. Called with alloc_mu held. */
static char *alloc_reuse(size_t total, size_t *len_out)
{
	int best = -1;
	for (int i = 0; i < nkept; i++) {
		size_t len = kept[i].len;
		int fits = len >= total && len / 2 <= total;
		int grows = len < total;
		if (!fits && !grows)
			continue;
		if (best < 0)
			best = i;
		else if (fits && (kept[best].len < total || len < kept[best].len))
			best = i; /* the tightest fit */
		else if (grows && kept[best].len < total && len > kept[best].len)
			best = i; /* else the largest to grow */
	}
	if (best < 0)
		return NULL;
	char *base = kept[best].base;
	size_t len = kept[best].len;
	kept[best] = kept[--nkept];
	if (len < total) {
		void *q = mremap(base, len, total, MREMAP_MAYMOVE);
		if (q == MAP_FAILED) {
			munmap(base, len);
			return NULL;
		}
		madvise(q, total, MADV_HUGEPAGE);
		memset(q, 0, len); /* the rest is the kernel's fresh zero */
		base = q;
		len = total;
	} else {
		memset(base, 0, total);
	}
	*len_out = len;
	return base;
}

/* A fresh mapping of total bytes (zero pages), or NULL. */
static char *alloc_map(size_t total)
{
	void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (total >= (2u << 20))
		madvise(p, total, MADV_HUGEPAGE); /* advice only; fine when refused */
	return p;
}

void *cpu_alloc(size_t bytes)
{
	if (!bytes)
		return NULL;
	size_t total = bytes + 64, len = total;
	char *base = NULL;
	pthread_mutex_lock(&alloc_mu);
	if (total >= ALLOC_KEEP_MIN)
		base = alloc_reuse(total, &len);
	if (!base)
		base = alloc_map(total);
	if (base) {
		struct alloc_head *h = (struct alloc_head *)base;
		*h = (struct alloc_head){.len = len, .bytes = bytes, .next = live};
		if (live)
			live->prev = h;
		live = h;
	}
	pthread_mutex_unlock(&alloc_mu);
	return base ? base + 64 : NULL;
}

void cpu_free(void *p)
{
	if (!p)
		return;
	struct alloc_head *h = (struct alloc_head *)((char *)p - 64);
	size_t len = h->len;
	pthread_mutex_lock(&alloc_mu);
	if (h->prev)
		h->prev->next = h->next;
	else
		live = h->next;
	if (h->next)
		h->next->prev = h->prev;
	int keep = len >= ALLOC_KEEP_MIN && nkept < ALLOC_KEEP;
	if (keep)
		kept[nkept].base = (char *)h, kept[nkept++].len = len;
	pthread_mutex_unlock(&alloc_mu);
	if (!keep)
		munmap(h, len);
}

void cpu_alloc_trim(void)
{
	pthread_mutex_lock(&alloc_mu);
	while (nkept > 0) {
		nkept--;
		munmap(kept[nkept].base, kept[nkept].len);
	}
	pthread_mutex_unlock(&alloc_mu);
}

/* Bytes of the live buffers but except's, each rounded up to a multiple of
 * `round` (a power of two). Called with alloc_mu held. */
static size_t live_sum(const void *except, size_t round)
{
	size_t sum = 0;
	for (const struct alloc_head *h = live; h; h = h->next)
		if ((const char *)h + 64 != except)
			sum += (h->bytes + round - 1) & ~(round - 1);
	return sum;
}

size_t cpu_alloc_live_bytes(const void *except)
{
	pthread_mutex_lock(&alloc_mu);
	size_t sum = live_sum(except, 1);
	pthread_mutex_unlock(&alloc_mu);
	return sum;
}

/*
 * Evicting a line: x86's clflush (every x86-64 has it) or clflushopt
 * (unordered among themselves, where the CPU has it) write a dirty line
 * back and drop it from every cache of every core. Measured on the 2-core
 * development guest (32 MiB L3): reading 64 KiB, 1 MiB, 4 MiB or 16 MiB
 * after their lines were flushed so takes as long as after a 64 MiB read
 * of other data, and the flush costs 3 us, 39 us, 145 us and 590 us
 * instead of 5 ms. Elsewhere there is no eviction here: the caller reads
 * its flush buffer instead.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>

__attribute__((target("clflushopt"))) static void evict_lines_opt(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i += 64)
		_mm_clflushopt((void *)(p + i));
}

static void evict_lines(const char *p, size_t n)
{
	static int opt = -1;
	if (opt < 0) {
		/* CPUID leaf 7, EBX bit 23: CLFLUSHOPT (clang's __builtin_cpu_supports
		 * does not know the name, and the fuzz build is clang's) */
		unsigned a, b, c, d;
		opt = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b >> 23 & 1);
	}
	if (opt) {
		evict_lines_opt(p, n);
	} else {
		for (size_t i = 0; i < n; i += 64)
			_mm_clflush(p + i);
	}
}
#define EVICT_FENCE() _mm_mfence()
#define HAVE_EVICT 1
#else
#define HAVE_EVICT 0
#endif

#if HAVE_EVICT
struct evict_job {
	const void *except;
	size_t total; /* bytes to evict */
};

/* Thread tid's share of the live buffers taken end to end as one range,
 * cut at cache lines. Called with alloc_mu held by the caller of the job. */
static void evict_part(void *ctx, int tid, int nthreads)
{
	const struct evict_job *j = ctx;
	size_t lo, hi, at = 0;
	cpu_split(j->total, 64, tid, nthreads, &lo, &hi);
	for (const struct alloc_head *h = live; h && at < hi; h = h->next) {
		const char *buf = (const char *)h + 64;
		if (buf == j->except)
			continue;
		size_t n = (h->bytes + 63) & ~(size_t)63;
		size_t a = lo > at ? lo - at : 0, b = hi - at < n ? hi - at : n;
		if (a < b)
			evict_lines(buf + a, b - a);
		at += n;
	}
	EVICT_FENCE();
}
#endif

int cpu_alloc_evict(const void *except, size_t most)
{
#if HAVE_EVICT
	pthread_mutex_lock(&alloc_mu);
	struct evict_job j = {.except = except, .total = live_sum(except, 64)};
	int ok = j.total <= most;
	if (ok)
		cpu_parallel(evict_part, &j); /* the pool's threads take no alloc_mu */
	pthread_mutex_unlock(&alloc_mu);
	return ok;
#else
	(void)except;
	(void)most;
	return 0;
#endif
}

/* The first line of root/rel into buf; 0 or -1. */
static int llc_read(const char *root, const char *rel, char *buf, size_t len)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return ok ? 0 : -1;
}

/* cpu's highest-level data or unified cache: its level, its size in bytes
 * and the CPUs sharing it (which name the instance); 0 or -1. */
static int llc_of_cpu(const char *root, int cpu, int *level, size_t *bytes, char *who,
		      size_t len)
{
	char rel[96], buf[256];
	*level = 0;
	for (int i = 0; i < 16; i++) {
		char *end;
		snprintf(rel, sizeof rel, "cpu%d/cache/index%d/type", cpu, i);
		if (llc_read(root, rel, buf, sizeof buf))
			break;
		if (!strcmp(buf, "Instruction"))
			continue;
		snprintf(rel, sizeof rel, "cpu%d/cache/index%d/level", cpu, i);
		int lv = llc_read(root, rel, buf, sizeof buf) ? 0 : atoi(buf);
		snprintf(rel, sizeof rel, "cpu%d/cache/index%d/size", cpu, i);
		if (lv <= *level || llc_read(root, rel, buf, sizeof buf))
			continue;
		size_t sz = strtoull(buf, &end, 10);
		sz <<= *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
		snprintf(rel, sizeof rel, "cpu%d/cache/index%d/shared_cpu_list", cpu, i);
		if (!sz || llc_read(root, rel, who, len))
			continue;
		*level = lv;
		*bytes = sz;
	}
	return *level ? 0 : -1;
}

size_t cpu_llc_bytes_sysfs(const char *root, const int *cpus, int n)
{
	char seen[CPU_MAX_THREADS][128];
	int nseen = 0, top = 0;
	size_t sum = 0;
	for (int i = 0; i < n; i++) {
		char who[128];
		size_t bytes;
		int level;
		if (llc_of_cpu(root, cpus[i], &level, &bytes, who, sizeof who))
			continue;
		if (level > top) /* a higher level than seen so far: start again */
			top = level, sum = 0, nseen = 0;
		if (level < top)
			continue;
		int dup = 0;
		for (int k = 0; k < nseen && !dup; k++)
			dup = !strcmp(seen[k], who);
		if (dup || nseen == CPU_MAX_THREADS)
			continue;
		snprintf(seen[nseen++], sizeof seen[0], "%s", who);
		sum += bytes;
	}
	return sum;
}

/* The sysfs figure for the CPUs this process may run on; glibc's sysconf
 * is the fallback, though on some virtual machines it reports the host's
 * whole L3 (256 MiB on a host whose guest shares one 32 MiB slice). */
size_t cpu_llc_bytes(void)
{
	static size_t cached;
	cpu_set_t set;
	int cpus[CPU_MAX_THREADS], n = 0;
	if (cached)
		return cached;
	if (!sched_getaffinity(0, sizeof set, &set))
		for (int c = 0; c < CPU_SETSIZE && n < CPU_MAX_THREADS; c++)
			if (CPU_ISSET(c, &set))
				cpus[n++] = c;
	cached = cpu_llc_bytes_sysfs("/sys/devices/system/cpu", cpus, n);
	if (!cached) {
		long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
		long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
		cached = l3 > 0 ? (size_t)l3 : l2 > 0 ? (size_t)l2 : 32u << 20;
	}
	return cached;
}
