/* cpu_pool.h - the host's worker pool, 64-byte aligned allocator and
 * last-level cache size: what the CPU backend's kernels run on and what the
 * harness's cold-cache flush uses. Knows nothing of records or ops, so the
 * harness (engine/) and the backends (engine/cpu, engine/mpi) both include
 * it without a folder including one that includes it back. */
#ifndef DDT_CPU_POOL_H
#define DDT_CPU_POOL_H

#include <stddef.h>

#define CPU_MAX_THREADS 64

/* Threads the fast paths use (default: the online cores). n <= 0 means the
 * online cores; larger than CPU_MAX_THREADS is capped. Not thread-safe: set
 * it between runs. */
void cpu_threads_set(int n);
int cpu_threads(void);
/* The machine's online cores (sysconf), at most CPU_MAX_THREADS. */
int cpu_online_cores(void);
/* The most threads a cpu_parallel call ran on since cpu_threads_ran_reset
 * (fewer than cpu_threads() when workers could not be started; 1 when no
 * call ran: the caller alone). What a record says ran. */
int cpu_threads_ran(void);
/* Starts the count afresh and returns the one it had (0: no call), which
 * work that is not to count (the cold flush between samples) gives back
 * with cpu_threads_ran_restore. */
int cpu_threads_ran_reset(void);
void cpu_threads_ran_restore(int raw);

/* Runs fn(ctx, tid, nthreads) for tid = 0..cpu_threads()-1 on the pool (the
 * caller runs tid 0) and returns when every call has returned. fn must not
 * call cpu_parallel. Cannot fail: if worker threads cannot be started the
 * calls run one after another on the caller. */
void cpu_parallel(void (*fn)(void *ctx, int tid, int nthreads), void *ctx);

/* [lo, hi) of tid's share of n items, split in chunks of `align` items. */
void cpu_split(size_t n, size_t align, int tid, int nthreads, size_t *lo, size_t *hi);

/* 64-byte aligned, zeroed allocation (NULL on failure, or for 0 bytes);
 * free with cpu_free. Large buffers are backed by huge pages when the
 * kernel offers them, which keeps TLB misses out of the bandwidth figures. */
void *cpu_alloc(size_t bytes);
/* Frees p (NULL: nothing); a buffer of 2 MiB or more is kept (up to 8) for
 * the next cpu_alloc of about its size, which zeroes it again: pages
 * already backed cost far less than fresh ones on a virtual machine. */
void cpu_free(void *p);
/* Gives the kept buffers back to the system (the end of a bench). */
void cpu_alloc_trim(void);
/* Bytes asked for by every cpu_alloc buffer not yet freed, but except's
 * (NULL: none): what an op instance holds when it is the only one alive. */
size_t cpu_alloc_live_bytes(const void *except);
/* Writes back and drops from every cache level each line of every live
 * cpu_alloc buffer but except's, on the pool's threads, when they come to
 * at most `most` bytes and this CPU has an instruction for it (x86:
 * clflushopt or clflush); returns 1 when it did, 0 when it did nothing.
 * Not from inside a cpu_parallel job; the allocator stays locked while it
 * runs, so no buffer goes away under it (nor can a job on another thread
 * cpu_alloc or cpu_free meanwhile). */
int cpu_alloc_evict(const void *except, size_t most);

/* The last-level cache this process's CPUs can fill, in bytes: each
 * distinct instance of the highest cache level among the CPUs it may run
 * on, summed (sysfs); else what sysconf says; else 32 MiB. Read once. */
size_t cpu_llc_bytes(void);
/* The same from root, a copy of /sys/devices/system/cpu, for the n CPU ids
 * in cpus; 0 when root names no cache of theirs. */
size_t cpu_llc_bytes_sysfs(const char *root, const int *cpus, int n);

#endif
