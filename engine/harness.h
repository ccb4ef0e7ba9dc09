/* harness.h - timing settings and sample statistics shared by every backend. */
#ifndef DDT_HARNESS_H
#define DDT_HARNESS_H

#include "rec.h"

/* How to sample one measurement (the template's bench.timing section;
 * defaults from nvbench's, [nvbench] in calibration/SOURCES.md). */
struct harness_conf {
	int warmup;          /* untimed runs first */
	int min_samples;     /* at least this many samples (10) */
	int max_samples;     /* never more (safety cap) */
	double min_time_s;   /* and at least this long sampling (0.5) */
	double target_rsd;   /* stop once the relative standard error of the mean
				(relative stdev / sqrt(samples)) is under this (0.005) */
	double timeout_s;    /* stop regardless after this (15) */
	int cold;            /* flush caches before each sample */
	double min_clock_frac; /* GPU: discard samples below this share of the default SM clock (0.75) */
	double host_rsd;     /* the host's measured noise: the relative sigma of a
				workload with no spread of its own (0: not measured) */
};

/* Which rule ended a measurement: what harness_enough answers (0: go on)
 * and each row records. */
enum harness_stop {
	HARNESS_GO_ON,
	HARNESS_STOP_RSD,         /* the mean's relative standard error under target_rsd */
	HARNESS_STOP_CI,          /* the median known as well (harness_enough_ci) */
	HARNESS_STOP_TIMEOUT,     /* timeout_s of sampling */
	HARNESS_STOP_MAX_SAMPLES, /* max_samples, or the caller's cap */
};

/* "rsd", "ci", "timeout", "max_samples"; "" for HARNESS_GO_ON. */
static inline const char *harness_stop_name(int stop)
{
	static const char *const names[] = {"", "rsd", "ci", "timeout", "max_samples"};
	return stop > 0 && stop <= HARNESS_STOP_MAX_SAMPLES ? names[stop] : "";
}

/* The defaults above. */
void harness_conf_default(struct harness_conf *c);

/* The rule that says enough (an enum harness_stop), or 0: n samples taking
 * total_s seconds of timed work with relative stdev rsd, elapsed_s since
 * the first sample: the cap, the timeout, or at least min_samples over
 * min_time_s (timed work or elapsed) with rsd / sqrt(n) under target_rsd. */
int harness_enough(const struct harness_conf *c, int n, double total_s, double rsd,
		   double elapsed_s);

/* The rule for a shared host, where preemptions give samples a long tail
 * that keeps the mean's error high however many samples come: once
 * min_samples over min_time_s are in, HARNESS_STOP_CI when the 95%
 * distribution-free confidence interval of the median (order statistics)
 * spans at most +-1.96 x the median x harness_ci_target(c), i.e. the
 * median's standard error under that share; else 0. sorted: the n samples
 * in ascending order. */
int harness_enough_ci(const struct harness_conf *c, const double *sorted, int n, double total_s,
		      double elapsed_s);
/* target_rsd, or on a host noisier than that allows the precision a
 * workload with no spread of its own reaches there in min_samples samples:
 * max(target_rsd, host_rsd / sqrt(min_samples)). */
double harness_ci_target(const struct harness_conf *c);

/* Fills row's samples, median/p10/p90/min/max/stdev (µs) from n samples in µs
 * (the array is sorted in place). n may be 0 (all NaN). */
void harness_stats(double *samples_us, int n, struct rec_row *row);

/* Relative stdev of n samples (0 when n < 2). */
double harness_rsd(const double *samples, int n);

/* ---- CPU timing ---- */

/* What a cold sample starts from: none of the op's data in any cache. When
 * the live cpu_alloc buffers (the op's instance) come to at most the
 * buffer's bytes and the CPU can, their own lines are evicted (clflush:
 * microseconds for a small op); else every line of a buffer larger than
 * the last-level cache is read, which evicts the op's data from every
 * level and leaves the caches clean (milliseconds, whatever the op). */
struct harness_flush {
	unsigned char *buf;
	size_t bytes;
	unsigned long runs;      /* flushes so far */
	unsigned long evictions; /* of them, by evicting the op's own lines */
	int read_always;         /* never evict: read the buffer (to compare the two) */
};

/* bytes 0 means twice the last-level cache. Returns 0 or DDT_ENOMEM. */
int harness_flush_init(struct harness_flush *f, size_t bytes);
/* Empties the caches of the op's data as the struct says, on the pool
 * threads; returns 1 when it evicted the op's lines, 0 when it read the
 * buffer (or f has none). Cannot fail. */
int harness_flush_run(struct harness_flush *f);
void harness_flush_free(struct harness_flush *f);

/* Times fn(arg) on this CPU: c->warmup untimed runs, then samples (µs) until
 * harness_enough or harness_enough_ci; with c->cold each sample is preceded
 * by an untimed flush (flush must then be set up). At most cap samples go
 * to samples_us; *n receives how many, *stop (may be NULL) the rule that
 * ended them (0 when fn failed). Returns 0, DDT_ENOMEM, or fn's error code
 * (the samples so far stay). */
int harness_time_cpu(const struct harness_conf *c, int (*fn)(void *arg), void *arg,
		     struct harness_flush *flush, double *samples_us, int cap, int *n, int *stop);

/* Where this process's CPU timing loops spent their time, so a suite can
 * say what share of its wall time was measurement. One loop runs at a
 * time (the benches are sequential); the totals only grow. */
struct harness_account {
	double timed_s;        /* the timed samples */
	double warmup_s;       /* untimed warmup runs */
	double flush_s;        /* cold flushes before samples */
	unsigned long samples;
	unsigned long flushes, evictions; /* cold flushes, and of them evictions */
};
void harness_account_get(struct harness_account *a);

/* Monotonic seconds, for callers that time things themselves. */
double harness_now_s(void);

#endif
