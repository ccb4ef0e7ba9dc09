/* test_harness.c - the stopping rule, sample statistics and the CPU timing loop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/cpu.h"
#include "err.h"
#include "harness.h"

static void test_harness__defaults_are_nvbench(void **state)
{
	(void)state;
	struct harness_conf c;
	harness_conf_default(&c);
	assert_int_equal(c.min_samples, 10);
	assert_float_equal(c.min_time_s, 0.5, 0);
	assert_float_equal(c.target_rsd, 0.005, 0);
	assert_float_equal(c.timeout_s, 15, 0);
	assert_float_equal(c.min_clock_frac, 0.75, 0);
	assert_true(c.cold);
	assert_true(c.max_samples >= c.min_samples);
}

static void test_harness__stops_only_when_every_rule_agrees(void **state)
{
	(void)state;
	struct harness_conf c;
	harness_conf_default(&c);
	c.max_samples = 100;
	assert_false(harness_enough(&c, 9, 1.0, 0.001, 1.0));   /* too few samples */
	assert_false(harness_enough(&c, 10, 0.4, 0.001, 0.4));  /* too little time */
	assert_false(harness_enough(&c, 10, 0.6, 0.02, 1.0));   /* too noisy: 0.63% */
	assert_int_equal(harness_enough(&c, 10, 0.6, 0.015, 1.0), HARNESS_STOP_RSD); /* 0.47% */
	assert_int_equal(harness_enough(&c, 3, 0.1, 0.5, 15.0), HARNESS_STOP_TIMEOUT);
	assert_false(harness_enough(&c, 0, 0, 0, 20.0));        /* never with no sample */
	assert_int_equal(harness_enough(&c, 100, 0.1, 0.5, 1.0), HARNESS_STOP_MAX_SAMPLES);
	assert_string_equal(harness_stop_name(HARNESS_STOP_CI), "ci");
	assert_string_equal(harness_stop_name(HARNESS_GO_ON), "");
}

/* A shared host: most samples tight, a tenth preempted to three times as
 * long. The mean's error stays over 2% (the tail), the median is known to
 * well under it: the median rule stops where the mean's runs to the
 * timeout. A spread the median cannot beat does not stop it, unless the
 * host's measured noise says no row here can do better. */
static void test_harness__the_median_rule_stops_a_long_tail(void **state)
{
	(void)state;
	struct harness_conf c;
	double s[40];
	harness_conf_default(&c);
	c.target_rsd = 0.02;
	c.min_time_s = 0;
	for (int i = 0; i < 40; i++)
		s[i] = i < 36 ? 100 + 0.05 * i : 300;
	double rsd = harness_rsd(s, 40);
	assert_false(harness_enough(&c, 40, 1.0, rsd, 1.0)); /* the mean: about 9% */
	assert_int_equal(harness_enough_ci(&c, s, 40, 1.0, 1.0), HARNESS_STOP_CI);
	assert_false(harness_enough_ci(&c, s, 9, 1.0, 1.0)); /* under min_samples */
	/* +-25% uniform: 10 samples put the median between ranks 1 and 9, a
	 * standard error of 11% */
	for (int i = 0; i < 10; i++)
		s[i] = 75 + 50.0 * i / 9;
	assert_false(harness_enough_ci(&c, s, 10, 1.0, 1.0));
	c.host_rsd = 0.3; /* a host this noisy grants 0.3 / sqrt(10) = 9.5%: not yet */
	assert_float_equal(harness_ci_target(&c), 0.3 / sqrt(10), 1e-12);
	assert_false(harness_enough_ci(&c, s, 10, 1.0, 1.0));
	c.host_rsd = 0.4; /* 12.6% */
	assert_int_equal(harness_enough_ci(&c, s, 10, 1.0, 1.0), HARNESS_STOP_CI);
	c.host_rsd = 0.01; /* a quiet host: target_rsd stands */
	assert_float_equal(harness_ci_target(&c), 0.02, 0);
}

/* Cold GPU samples: microseconds of kernel each (the flush between them is
 * not timed) and a spread of a few percent that more samples do not shrink.
 * The rule still ends on precision, not at the cap or the timeout. */
static void test_harness__cold_samples_stop_on_precision(void **state)
{
	(void)state;
	struct harness_conf c;
	harness_conf_default(&c);
	c.min_time_s = 0.1;
	c.timeout_s = 1;
	c.max_samples = 2000;
	assert_false(harness_enough(&c, 30, 30 * 5e-6, 0.03, 0.2)); /* 0.55% */
	assert_true(harness_enough(&c, 40, 40 * 5e-6, 0.03, 0.2));  /* 0.47% */
	assert_false(harness_enough(&c, 40, 40 * 5e-6, 0.03, 0.05)); /* under 0.1 s */
}

static void test_harness__stats_of_known_samples(void **state)
{
	(void)state;
	double s[] = {5, 1, 3, 2, 4};
	struct rec_row row;
	harness_stats(s, 5, &row);
	assert_int_equal(row.samples, 5);
	assert_float_equal(row.median_us, 3, 1e-12);
	assert_float_equal(row.min_us, 1, 0);
	assert_float_equal(row.max_us, 5, 0);
	assert_float_equal(row.p10_us, 1.4, 1e-12);
	assert_float_equal(row.p90_us, 4.6, 1e-12);
	assert_float_equal(row.stdev_us, sqrt(2.5), 1e-12);
	assert_float_equal(s[0], 1, 0); /* sorted in place */
	double even[] = {4, 1, 3, 2};
	harness_stats(even, 4, &row);
	assert_float_equal(row.median_us, 2.5, 1e-12);
	harness_stats(NULL, 0, &row);
	assert_int_equal(row.samples, 0);
	assert_true(isnan(row.median_us) && isnan(row.p90_us) && isnan(row.stdev_us));
}

static void test_harness__relative_stdev(void **state)
{
	(void)state;
	double flat[] = {2, 2, 2}, two[] = {1, 3};
	assert_float_equal(harness_rsd(flat, 3), 0, 0);
	assert_float_equal(harness_rsd(two, 2), sqrt(2) / 2, 1e-12);
	assert_float_equal(harness_rsd(two, 1), 0, 0);
}

struct counter {
	int calls;
	int fail_at;
	struct harness_flush *flush;
	unsigned long seen;  /* the flush count at the last call */
	int flushed;         /* calls that found it changed since the one before */
};

static int count_run(void *arg)
{
	struct counter *k = arg;
	if (++k->calls == k->fail_at)
		return err_set(DDT_EGENERIC, "planned failure");
	if (k->flush) {
		k->flushed += k->flush->runs != k->seen;
		k->seen = k->flush->runs;
	}
	return 0;
}

static void test_harness__warmup_then_samples_up_to_the_cap(void **state)
{
	(void)state;
	struct harness_conf c;
	struct counter k = {0};
	double s[64];
	int n;
	harness_conf_default(&c);
	c.warmup = 3;
	c.min_samples = 1000; /* never satisfied: the cap stops it */
	c.max_samples = 20;
	c.cold = 0;
	assert_int_equal(harness_time_cpu(&c, count_run, &k, NULL, s, 64, &n, NULL), 0);
	assert_int_equal(n, 20);
	assert_int_equal(k.calls, 23);
	for (int i = 0; i < n; i++)
		assert_true(s[i] >= 0);
	/* the buffer bounds it too */
	k.calls = 0;
	c.max_samples = 1000;
	assert_int_equal(harness_time_cpu(&c, count_run, &k, NULL, s, 7, &n, NULL), 0);
	assert_int_equal(n, 7);
}

static void test_harness__cold_samples_flush_first(void **state)
{
	(void)state;
	struct harness_conf c;
	struct harness_flush f;
	struct counter k = {0};
	double s[16];
	int n;
	assert_int_equal(harness_flush_init(&f, 1 << 20), 0);
	assert_int_equal(f.bytes, 1 << 20);
	k.flush = &f;
	harness_conf_default(&c);
	c.warmup = 0;
	c.min_samples = 1000;
	c.max_samples = 8;
	c.cold = 1;
	assert_int_equal(harness_time_cpu(&c, count_run, &k, &f, s, 16, &n, NULL), 0);
	assert_int_equal(n, 8);
	assert_int_equal(k.flushed, 8); /* every sample saw a fresh flush */
	k.flushed = 0;
	c.cold = 0;
	assert_int_equal(harness_time_cpu(&c, count_run, &k, &f, s, 16, &n, NULL), 0);
	assert_int_equal(k.flushed, 0);
	harness_flush_free(&f);
	assert_null(f.buf);
	/* 0 bytes: twice the last-level cache */
	assert_int_equal(harness_flush_init(&f, 0), 0);
	assert_true(f.bytes >= 2 * cpu_llc_bytes());
	harness_flush_free(&f);
}

/* Writes root/cpuN/cache/indexI/{type,level,size,shared_cpu_list}. */
static void fake_cache(const char *root, int cpu, int idx, const char *type, int level,
		       const char *size, const char *shared)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "d=%s/cpu%d/cache/index%d && mkdir -p $d && echo %s >$d/type && "
		 "echo %d >$d/level && echo %s >$d/size && echo %s >$d/shared_cpu_list",
		 root, cpu, idx, type, level, size, shared);
	assert_int_equal(system(cmd), 0);
}

static void test_harness__llc_is_each_distinct_top_level_cache_once(void **state)
{
	(void)state;
	char root[] = "/tmp/ddt-llc-XXXXXX", cmd[64];
	assert_non_null(mkdtemp(root));
	/* four CPUs, two 16 MiB L3 slices of two CPUs each, private L2s */
	for (int c = 0; c < 4; c++) {
		char shared[8];
		snprintf(shared, sizeof shared, "%d-%d", c / 2 * 2, c / 2 * 2 + 1);
		fake_cache(root, c, 0, "Data", 1, "32K", shared);
		fake_cache(root, c, 1, "Instruction", 1, "32K", shared);
		fake_cache(root, c, 2, "Unified", 2, "512K", shared);
		fake_cache(root, c, 3, "Unified", 3, "16384K", shared);
	}
	int all[] = {0, 1, 2, 3}, one_slice[] = {0, 1}, one_each[] = {1, 2}, none[] = {9};
	assert_int_equal(cpu_llc_bytes_sysfs(root, all, 4), 32u << 20);
	assert_int_equal(cpu_llc_bytes_sysfs(root, one_slice, 2), 16u << 20);
	assert_int_equal(cpu_llc_bytes_sysfs(root, one_each, 2), 32u << 20);
	assert_int_equal(cpu_llc_bytes_sysfs(root, none, 1), 0);
	/* a CPU with no L3 listed counts its L2 only while no L3 is seen */
	fake_cache(root, 9, 0, "Unified", 2, "1M", "9");
	int mixed[] = {9, 0};
	assert_int_equal(cpu_llc_bytes_sysfs(root, mixed, 2), 16u << 20);
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
	/* this machine's figure is one of the sizes above, never 0 */
	assert_true(cpu_llc_bytes() > 0);
}

/* A large freed buffer serves the next allocation of about its size,
 * zeroed again; a larger one grows it (old bytes zeroed, new ones fresh);
 * much smaller ones and small buffers get their own; trim gives them back. */
static void test_harness__large_buffers_are_reused_zeroed(void **state)
{
	(void)state;
	size_t mib = 1u << 20;
	cpu_alloc_trim();
	unsigned char *a = cpu_alloc(8 * mib);
	assert_non_null(a);
	memset(a, 0x5a, 8 * mib);
	cpu_free(a);
	unsigned char *b = cpu_alloc(6 * mib); /* within twice: the same mapping */
	assert_ptr_equal(b, a);
	for (size_t i = 0; i < 6 * mib; i += 4093)
		assert_int_equal(b[i], 0);
	assert_int_equal(b[6 * mib - 1], 0);
	memset(b, 0x33, 6 * mib);
	cpu_free(b);
	unsigned char *c = cpu_alloc(mib); /* under half: a fresh one */
	assert_true(c != b);
	unsigned char *d = cpu_alloc(20 * mib); /* grows the kept one */
	assert_non_null(d);
	for (size_t i = 0; i < 20 * mib; i += 4093)
		assert_int_equal(d[i], 0);
	assert_int_equal(d[20 * mib - 1], 0);
	memset(d, 1, 20 * mib);
	cpu_free(c);
	cpu_free(d);
	cpu_alloc_trim();
	unsigned char *e = cpu_alloc(20 * mib);
	assert_int_equal(e[0], 0);
	cpu_free(e);
	cpu_alloc_trim();
}

/* A cold flush evicts the live cpu_alloc buffers' own lines when they fit
 * the flush buffer (x86: clflush; elsewhere it always reads), keeping
 * their bytes; an op larger than the buffer, or read_always, gets the read;
 * the account counts both. */
static void test_harness__a_small_op_is_evicted_a_large_one_read(void **state)
{
	(void)state;
#if defined(__x86_64__) || defined(__i386__)
	const unsigned long can = 1;
#else
	const unsigned long can = 0;
#endif
	struct harness_flush f;
	struct harness_account a0, a1;
	struct harness_conf c;
	struct counter k = {0};
	double s[8];
	int n;
	assert_int_equal(harness_flush_init(&f, 1u << 20), 0);
	size_t base = cpu_alloc_live_bytes(f.buf);
	unsigned char *small = cpu_alloc(100000);
	assert_non_null(small);
	assert_int_equal(cpu_alloc_live_bytes(f.buf), base + 100000);
	assert_int_equal(cpu_alloc_live_bytes(NULL), base + 100000 + f.bytes);
	for (size_t i = 0; i < 100000; i++)
		small[i] = (unsigned char)(i * 7);
	harness_flush_run(&f);
	assert_int_equal(f.runs, 1);
	assert_int_equal(f.evictions, can);
	for (size_t i = 0; i < 100000; i++) /* written back, not dropped */
		assert_int_equal(small[i], (unsigned char)(i * 7));
	f.read_always = 1;
	harness_flush_run(&f);
	assert_int_equal(f.evictions, can);
	f.read_always = 0;
	harness_conf_default(&c);
	c.warmup = 0;
	c.min_samples = 1000;
	c.max_samples = 4;
	harness_account_get(&a0);
	assert_int_equal(harness_time_cpu(&c, count_run, &k, &f, s, 8, &n, NULL), 0);
	harness_account_get(&a1);
	assert_int_equal(a1.flushes - a0.flushes, 4);
	assert_int_equal(a1.evictions - a0.evictions, 4 * can);
	unsigned char *large = cpu_alloc(f.bytes); /* with small: more than the buffer */
	assert_non_null(large);
	harness_flush_run(&f);
	assert_int_equal(f.evictions, 5 * can); /* unchanged */
	cpu_free(large);
	cpu_free(small);
	assert_int_equal(cpu_alloc_live_bytes(f.buf), base);
	assert_int_equal(cpu_alloc_evict(f.buf, 0), base == 0 && can);
	harness_flush_free(&f);
	cpu_alloc_trim();
}

static void test_harness__a_failing_run_stops_the_loop(void **state)
{
	(void)state;
	struct harness_conf c;
	struct counter k = {.fail_at = 6};
	double s[16];
	int n;
	harness_conf_default(&c);
	c.warmup = 2;
	c.cold = 0;
	assert_int_equal(harness_time_cpu(&c, count_run, &k, NULL, s, 16, &n, NULL), DDT_EGENERIC);
	assert_int_equal(n, 3); /* two warm-ups, three samples, then the failure */
	assert_string_equal(err_msg(), "planned failure");
}

static int sleepy(void *arg)
{
	(void)arg;
	struct timespec t = {0, 1000000};
	nanosleep(&t, NULL);
	return 0;
}

static void test_harness__time_limit_ends_a_noisy_measurement(void **state)
{
	(void)state;
	struct harness_conf c;
	static double s[100000];
	int n;
	harness_conf_default(&c);
	c.min_samples = 100000;
	c.max_samples = 100000;
	c.timeout_s = 0.02;
	c.cold = 0;
	int stop = 0;
	assert_int_equal(harness_time_cpu(&c, sleepy, NULL, NULL, s, 100000, &n, &stop), 0);
	assert_true(n >= 1 && n < 100000);
	assert_int_equal(stop, HARNESS_STOP_TIMEOUT);
	/* the caller's cap under max_samples, with a limit no loaded machine's
	 * oversleeping reaches */
	c.timeout_s = 600;
	assert_int_equal(harness_time_cpu(&c, sleepy, NULL, NULL, s, 3, &n, &stop), 0);
	assert_int_equal(n, 3);
	assert_int_equal(stop, HARNESS_STOP_MAX_SAMPLES);
}

static void par_fill(void *ctx, int tid, int nthreads)
{
	int *v = ctx;
	size_t lo, hi;
	cpu_split(1000, 16, tid, nthreads, &lo, &hi);
	for (size_t i = lo; i < hi; i++)
		v[i]++;
}

static void test_harness__pool_covers_every_item_once(void **state)
{
	(void)state;
	int v[1000];
	int saved = cpu_threads();
	for (int t = 1; t <= 5; t++) {
		cpu_threads_set(t);
		memset(v, 0, sizeof v);
		for (int rep = 0; rep < 50; rep++)
			cpu_parallel(par_fill, v);
		for (int i = 0; i < 1000; i++)
			assert_int_equal(v[i], 50);
	}
	size_t lo, hi, covered = 0;
	for (int tid = 0; tid < 3; tid++) {
		cpu_split(100, 16, tid, 3, &lo, &hi);
		assert_true(lo % 16 == 0 && lo == covered);
		covered = hi;
	}
	assert_int_equal(covered, 100);
	cpu_threads_set(saved);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_harness__defaults_are_nvbench),
		cmocka_unit_test(test_harness__stops_only_when_every_rule_agrees),
		cmocka_unit_test(test_harness__cold_samples_stop_on_precision),
		cmocka_unit_test(test_harness__stats_of_known_samples),
		cmocka_unit_test(test_harness__relative_stdev),
		cmocka_unit_test(test_harness__warmup_then_samples_up_to_the_cap),
		cmocka_unit_test(test_harness__cold_samples_flush_first),
		cmocka_unit_test(test_harness__a_small_op_is_evicted_a_large_one_read),
		cmocka_unit_test(test_harness__a_failing_run_stops_the_loop),
		cmocka_unit_test(test_harness__large_buffers_are_reused_zeroed),
		cmocka_unit_test(test_harness__the_median_rule_stops_a_long_tail),
		cmocka_unit_test(test_harness__llc_is_each_distinct_top_level_cache_once),
		cmocka_unit_test(test_harness__time_limit_ends_a_noisy_measurement),
		cmocka_unit_test(test_harness__pool_covers_every_item_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
