/* harness.c - the stopping rule, sample statistics and the CPU timing loop every measurement goes through. */
#include "harness.h"

#include "cpu_pool.h"
#include "err.h"
#include "sort.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void harness_conf_default(struct harness_conf *c)
{
	/* nvbench's defaults ([nvbench] in calibration/SOURCES.md); templates override them. */
	c->warmup = 1;
	c->min_samples = 10;
	c->max_samples = 10000;
	c->min_time_s = 0.5;
	c->target_rsd = 0.005;
	c->timeout_s = 15;
	c->cold = 1;
	c->min_clock_frac = 0.75;
	c->host_rsd = 0;
}

/* Two things kept every noisy measurement running to its timeout: the
 * sample spread had to fall under target_rsd, which cold samples (an L2
 * flush before each) never do, since their spread is the hardware's and
 * does not shrink with more samples; and the time rule counted only the
 * timed runs, which a cold microsecond kernel cannot accumulate before the
 * cap. What more samples do shrink is the uncertainty of the estimate: stop
 * once the standard error of the mean, rsd / sqrt(n), is under target_rsd
 * (at 3% spread that is 36 samples), after min_time_s of sampling. */
/* At least min_samples over min_time_s (timed work or elapsed). */
static int harness_ready(const struct harness_conf *c, int n, double total_s, double elapsed_s)
{
	return n >= c->min_samples && (total_s >= c->min_time_s || elapsed_s >= c->min_time_s);
}

int harness_enough(const struct harness_conf *c, int n, double total_s, double rsd,
		   double elapsed_s)
{
	if (n >= c->max_samples)
		return HARNESS_STOP_MAX_SAMPLES;
	if (elapsed_s >= c->timeout_s && n >= 1)
		return HARNESS_STOP_TIMEOUT;
	if (!harness_ready(c, n, total_s, elapsed_s))
		return HARNESS_GO_ON;
	return rsd / sqrt((double)n) < c->target_rsd ? HARNESS_STOP_RSD : HARNESS_GO_ON;
}

double harness_ci_target(const struct harness_conf *c)
{
	double host = c->host_rsd > 0 && c->min_samples > 0
			      ? c->host_rsd / sqrt((double)c->min_samples)
			      : 0;
	return host > c->target_rsd ? host : c->target_rsd;
}

/* The ranks j <= k (0-based) of the 95% distribution-free interval of the
 * median of n sorted samples: n/2 -+ 0.98 sqrt(n), widened to whole ranks
 * (Conover, Practical Nonparametric Statistics, the normal approximation
 * of the binomial(n, 1/2) bounds). */
int harness_enough_ci(const struct harness_conf *c, const double *sorted, int n, double total_s,
		      double elapsed_s)
{
	if (!harness_ready(c, n, total_s, elapsed_s) || n < 6)
		return HARNESS_GO_ON;
	double half = 0.98 * sqrt((double)n);
	int j = (int)floor(n / 2.0 - half), k = (int)ceil(n / 2.0 + half);
	j = j < 0 ? 0 : j;
	k = k > n - 1 ? n - 1 : k;
	double med = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
	if (!(med > 0))
		return HARNESS_GO_ON;
	double se = (sorted[k] - sorted[j]) / (2 * 1.96) / med;
	return se <= harness_ci_target(c) ? HARNESS_STOP_CI : HARNESS_GO_ON;
}

/* The q-quantile of sorted s[n] with linear interpolation between ranks. */
static double quantile(const double *s, int n, double q)
{
	double pos = q * (n - 1);
	int i = (int)pos;
	if (i >= n - 1)
		return s[n - 1];
	return s[i] + (pos - i) * (s[i + 1] - s[i]);
}

static double mean_of(const double *s, int n)
{
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += s[i];
	return sum / n;
}

/* Sample standard deviation (n - 1); 0 when n < 2. */
static double stdev_of(const double *s, int n)
{
	if (n < 2)
		return 0;
	double m = mean_of(s, n), ss = 0;
	for (int i = 0; i < n; i++)
		ss += (s[i] - m) * (s[i] - m);
	return sqrt(ss / (n - 1));
}

void harness_stats(double *samples_us, int n, struct rec_row *row)
{
	row->samples = n;
	if (n <= 0) {
		row->samples = 0;
		row->median_us = row->p10_us = row->p90_us = NAN;
		row->min_us = row->max_us = row->stdev_us = NAN;
		return;
	}
	qsort(samples_us, (size_t)n, sizeof *samples_us, sort_cmp_double);
	row->median_us = quantile(samples_us, n, 0.5);
	row->p10_us = quantile(samples_us, n, 0.1);
	row->p90_us = quantile(samples_us, n, 0.9);
	row->min_us = samples_us[0];
	row->max_us = samples_us[n - 1];
	row->stdev_us = stdev_of(samples_us, n);
}

double harness_rsd(const double *samples, int n)
{
	if (n < 2)
		return 0;
	double m = mean_of(samples, n);
	return m > 0 ? stdev_of(samples, n) / m : 0;
}

double harness_now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int harness_flush_init(struct harness_flush *f, size_t bytes)
{
	f->bytes = bytes ? bytes : 2 * cpu_llc_bytes();
	f->runs = f->evictions = 0;
	f->read_always = 0;
	f->buf = cpu_alloc(f->bytes);
	if (!f->buf) {
		size_t want = f->bytes;
		f->bytes = 0;
		return err_set(DDT_ENOMEM, "cannot allocate a %zu-byte cache flush buffer", want);
	}
	/* written once, so every page is its own: reads of a never-written
	 * mapping all land on the kernel's one zero page and evict nothing */
	memset(f->buf, 0x5a, f->bytes);
	return 0;
}

/* Reads one byte of every line: the caches end up full of the flush
 * buffer's clean lines, as they would be full of other layers' weights in
 * a real decode step. A writing flush would leave them dirty, and the next
 * sample would pay for writing back tens of MB that are not its own
 * traffic (at M = 1 the MoE layer reads 36 MB: the write-backs of a 32 MB
 * last-level cache nearly double what it moves). */
static void flush_part(void *ctx, int tid, int nthreads)
{
	struct harness_flush *f = ctx;
	size_t lo, hi;
	cpu_split(f->bytes, 64, tid, nthreads, &lo, &hi);
	const volatile unsigned char *b = f->buf; /* volatile: every read happens */
	for (size_t i = lo; i < hi; i += 64)
		(void)b[i];
}

int harness_flush_run(struct harness_flush *f)
{
	int evicted = 0;
	if (f && f->buf) {
		int ran = cpu_threads_ran_reset(); /* the op's threads, not the flush's */
		evicted = !f->read_always && cpu_alloc_evict(f->buf, f->bytes);
		if (!evicted)
			cpu_parallel(flush_part, f);
		cpu_threads_ran_restore(ran);
		f->runs++;
		f->evictions += (unsigned long)evicted;
	}
	return evicted;
}

void harness_flush_free(struct harness_flush *f)
{
	cpu_free(f->buf);
	f->buf = NULL;
	f->bytes = 0;
}

static struct harness_account account;

void harness_account_get(struct harness_account *a)
{
	*a = account;
}

/* Whether the median rule is worth asking at n samples: every sample up to
 * 64, then each time n has grown by a sixteenth (a sort per check). */
static int harness_ci_due(int n, int *last)
{
	if (n < 64 || n - *last >= n / 16) {
		*last = n;
		return 1;
	}
	return 0;
}

int harness_time_cpu(const struct harness_conf *c, int (*fn)(void *arg), void *arg,
		     struct harness_flush *flush, double *samples_us, int cap, int *n, int *stop)
{
	int rc = 0, why = HARNESS_GO_ON, last = 0, unused;
	double start, total_s = 0, *sorted = NULL;

	*n = 0;
	stop = stop ? stop : &unused;
	*stop = HARNESS_GO_ON;
	if (cap > 0 && !(sorted = malloc((size_t)cap * sizeof *sorted)))
		return err_nomem();
	start = harness_now_s();
	for (int i = 0; i < c->warmup; i++)
		if ((rc = fn(arg)) != 0)
			goto done;
	account.warmup_s += harness_now_s() - start;
	start = harness_now_s();
	while (*n < cap && !why) {
		if (c->cold) {
			double f0 = harness_now_s();
			account.evictions += (unsigned long)harness_flush_run(flush);
			account.flush_s += harness_now_s() - f0;
			account.flushes++;
		}
		double t0 = harness_now_s();
		rc = fn(arg);
		double dt = harness_now_s() - t0;
		if (rc)
			goto done;
		samples_us[(*n)++] = dt * 1e6;
		total_s += dt;
		account.timed_s += dt;
		account.samples++;
		double elapsed = harness_now_s() - start;
		why = harness_enough(c, *n, total_s, harness_rsd(samples_us, *n), elapsed);
		if (!why && harness_ci_due(*n, &last)) {
			memcpy(sorted, samples_us, (size_t)*n * sizeof *sorted);
			qsort(sorted, (size_t)*n, sizeof *sorted, sort_cmp_double);
			why = harness_enough_ci(c, sorted, *n, total_s, elapsed);
		}
	}
	*stop = why ? why : HARNESS_STOP_MAX_SAMPLES; /* else the caller's cap */
done:
	free(sorted);
	return rc;
}
