/* pool.c - a small persistent worker pool, so a parallel op pays microseconds, not a thread start, per run. */
#include "cpu/cpu.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
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

/* The mapping's length lives in a 64-byte header in front of the buffer. */
void *cpu_alloc(size_t bytes)
{
	if (!bytes)
		return NULL;
	size_t total = bytes + 64;
	void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (total >= (2u << 20))
		madvise(p, total, MADV_HUGEPAGE); /* advice only; fine when refused */
	*(size_t *)p = total;
	return (char *)p + 64;
}

void cpu_free(void *p)
{
	if (!p)
		return;
	char *base = (char *)p - 64;
	munmap(base, *(size_t *)base);
}

size_t cpu_llc_bytes(void)
{
	long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
	long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
	if (l3 > 0)
		return (size_t)l3;
	if (l2 > 0)
		return (size_t)l2;
	return 32u << 20;
}
