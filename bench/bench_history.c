/* bench_history.c - how long the history stage takes as runs/ grows: loading
 * N nights of run records from disk, and the verdict walk over them; then
 * records of 1,000 to 100,000 rows, whose cost per row must stay flat.
 *
 * Napkin math: a nightly on the GPU template writes ~100 rows; a year is 365
 * records of ~40 KB, ~15 MB of YAML. The verdict walk searches each night's
 * level (at most change_window_nights, 60) for change points, O(60^2) a
 * point: it grows per night until the windows are full, then stays flat.
 * A fleet's merged record holds up to RECORD_MAX_ROWS rows at ~400 bytes
 * each: parsing is linear, and each row finds its series by a hashed lookup
 * (the linear search it replaced made a 41,000-row record take 100 s: 8e8 key
 * comparisons). Beside each load, the same files read alone (no parsing),
 * measured in the same run: load/read is what the parse costs over the disk.
 * All in CPU time of this process: on a shared machine, wall time stretches
 * a seconds-long load and a 20 ms read unevenly (365 nights, same code:
 * load/read 133x to 442x in wall time from run to run).
 *
 * Then the index (runs/.index.sqlite): the first load through it (cold:
 * every record parsed and stored; the best of 5) against the parse alone
 * (the best of 5, each beside a cold load), limit 1.2x; a load that finds
 * every record indexed (warm, the best of 5), limit 20 ms for 365 nights x
 * 100 rows. Under callgrind the cold load runs 1.05x the parse's
 * instructions (the index's writes): the rest of a ratio above that is the
 * host's noise, which the best of 3 left at up to 1.21x.
 *
 * Last, many series (`bench_history --series` runs this table alone,
 * `--series NIGHTS SERIES [--noise PCT]` one shape, its nights' noise
 * uniform over PCT% (1 by default)): one night of 5,000 to RECORD_MAX_ROWS
 * series, and 365 nights of 4,096 twice, with 1% and with 7% of noise (the
 * quiet series let the change-point search be skipped on almost every
 * night, the noisy ones almost never): parse, verdict walk, the night's
 * verdicts, and the load through a full index; the walk of a year (365
 * nights, or more with `--series NIGHTS SERIES`) beside its limit,
 * WALK_LIMIT_S, in CPU seconds and wall seconds.
 * The cost per series-night must stay flat: a walk that compared every
 * pair of series made 40,000 series take 16 s. */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "fsx.h"
#include "hindex.h"
#include "history.h"
#include "record.h"
#include "regress.h"
#include "tmpl.h"

#define ROWS 100

static uint64_t rng = 7;

/* The width of a night's noise, uniform in +-noise_width / 2: 1% by default
 * (0.5% against the 1% minimum change: the change-point search can be
 * skipped on almost every series); `--noise PCT` sets it, and the series
 * table runs a year of series as noisy as bench_regress's beside it, where
 * the search runs on most series and nights. */
static double noise_width = 0.01;

/* The noisy variant's width: +-3.5%, a standard deviation of 2%. */
#define NOISY_WIDTH 0.07

static double noise(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return ((double)(rng >> 11) / 9007199254740992.0 - 0.5) * noise_width;
}

static void make_night_rows(struct run_record *r, int night, int rows)
{
	struct rec_device d = {.kind = "cuda", .name = "NVIDIA H200", .arch = "sm_90", .cores = 132,
			       .mem_gb = 141, .sm_clock_mhz = 1980, .mem_clock_mhz = 3201,
			       .peak_gbps = NAN, .copy_gbps = 4000};
	memset(r, 0, sizeof *r);
	r->schema = RECORD_SCHEMA;
	unsigned year = 2026 + (unsigned)night / 336 % 10, month = 1 + (unsigned)night / 28 % 12,
		 day = 1 + (unsigned)night % 28;
	snprintf(r->run_id, sizeof r->run_id, "%04u%02u%02uT020000Z-bench", year, month, day);
	snprintf(r->created, sizeof r->created, "%04u-%02u-%02uT02:00:00Z", year, month, day);
	snprintf(r->template_name, sizeof r->template_name, "gpu");
	snprintf(r->prov.build, sizeof r->prov.build, "O2-native+cuda");
	record_add_device(r, &d);
	for (int i = 0; i < rows; i++) {
		struct rec_row w = {.variant = "cold", .backend = "cuda", .samples = 100,
				    .status = REC_OK, .p10_us = NAN, .p90_us = NAN, .min_us = NAN,
				    .max_us = NAN, .stdev_us = NAN, .bytes = NAN, .flops = NAN,
				    .gbps = NAN, .pct_peak = NAN, .max_err = NAN,
				    .sm_clock_mhz = NAN};
		snprintf(w.op, sizeof w.op, "op%d", i % 6);
		rec_row_param_set(&w, "M", 1 + i % 4096);
		rec_row_param_set(&w, "ctx", 1024 * (1 + i / 4096));
		w.median_us = (10 + i) * (1 + noise());
		record_add_row(r, &w);
	}
}

/* CPU seconds of this process: on a shared machine, what the load cost
 * itself, not what the others' jobs cost it. */
static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Wall-clock seconds: the walk's, printed beside its CPU time (on a loaded
 * host the two part). */
static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The floor of any load: every run.yaml under dir read into memory, nothing
 * parsed. Returns the CPU seconds it took, or -1 when a file cannot be read. */
static double read_alone_s(const char *dir)
{
	double t0 = cpu_s();
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char *sub, *p, *buf = NULL;
		size_t len = 0;
		if (e->d_name[0] == '.')
			continue;
		sub = fsx_join(dir, e->d_name);
		p = sub ? fsx_join(sub, "run.yaml") : NULL;
		int rc = !p || fsx_read_all(p, (size_t)64 << 20, &buf, &len);
		free(buf);
		free(p);
		free(sub);
		if (rc) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return cpu_s() - t0;
}

static void make_night(struct run_record *r, int night)
{
	make_night_rows(r, night, ROWS);
}

/* Writes the night's record under dir. Returns 0 or -1. */
static int store(const char *dir, const struct run_record *r)
{
	char *sub = fsx_join(dir, r->run_id), *p = sub ? fsx_join(sub, "run.yaml") : NULL;
	int rc = !p || fsx_mkdir_p(sub) || record_write(r, p) ? -1 : 0;
	free(p);
	free(sub);
	return rc;
}

/* Writes `nights` records of `rows` rows each into dir. Returns 0 or -1. */
static int store_nights(const char *dir, int nights, int rows)
{
	for (int n = 0; n < nights; n++) {
		struct run_record r;
		make_night_rows(&r, n, rows);
		int bad = store(dir, &r);
		record_free(&r);
		if (bad)
			return -1;
	}
	return 0;
}

/* Loads `nights` records of `rows` rows each from a fresh folder; returns the
 * CPU seconds history_load took (negative on failure), the series in
 * *series. */
static double time_rows(int nights, int rows, size_t *series)
{
	char dir[] = "/tmp/ddt-bench-rows-XXXXXX";
	struct history h;
	struct ydiag warn = {0};
	double t = -1;

	if (!mkdtemp(dir))
		return -1;
	if (store_nights(dir, nights, rows))
		goto done;
	double t0 = cpu_s();
	if (history_load_with(&h, dir, NULL, HISTORY_RECORDS_ONLY, &warn) == 0 && !warn.n &&
	    h.nruns == (size_t)nights) {
		t = cpu_s() - t0;
		*series = h.n;
	}
	history_free(&h);
	ydiag_free(&warn);
done:
	fsx_rm_rf(dir);
	return t;
}

/* Records of growing size, one run: the cost per row at each size against
 * the smallest's. Linear: ~1x at every size. */
static int rows_table(void)
{
	static const int shape[][2] = {{1, 1000}, {1, 10000}, {1, 100000}, {2, 100000}};
	double base = 0;
	struct rusage ru;

	printf("\n%-8s %8s %10s %12s %14s %16s\n", "nights", "rows", "series", "load_cpu_s",
	       "us/row", "vs 1,000 rows");
	for (size_t k = 0; k < sizeof shape / sizeof *shape; k++) {
		size_t series = 0, rows = (size_t)shape[k][0] * (size_t)shape[k][1];
		double t = time_rows(shape[k][0], shape[k][1], &series);
		if (t < 0)
			return 1;
		double per_row = t * 1e6 / (double)rows;
		if (!k)
			base = per_row;
		printf("%-8d %8d %10zu %12.2f %14.2f %15.2fx\n", shape[k][0], shape[k][1], series, t,
		       per_row, per_row / base);
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("peak RSS %.0f MB (one 100,000-row record parsed at a time)\n", ru.ru_maxrss / 1024.0);
	return 0;
}

/* CPU seconds of one load of dir (src); negative on failure or a warning. */
static double time_load(const char *dir, enum history_source src, size_t nights)
{
	struct history h;
	struct ydiag warn = {0};
	double t0 = cpu_s();
	int bad = history_load_with(&h, dir, NULL, src, &warn) || warn.n || h.nruns != nights;
	double t = cpu_s() - t0;
	history_free(&h);
	ydiag_free(&warn);
	return bad ? -1 : t;
}

/* The index against the parse it saves, on the nights in dir. */
static int index_table(const char *dir, size_t nights)
{
	char *ix = fsx_join(dir, HINDEX_NAME);
	double parse = 1e9, cold = 1e9, warm = 1e9;
	for (int i = 0; i < 5; i++) { /* the best of 5: a loaded host's noise is +-20% */
		double p = time_load(dir, HISTORY_RECORDS_ONLY, nights);
		fsx_rm_rf(ix);
		double c = time_load(dir, HISTORY_INDEXED, nights);
		parse = p < 0 || parse < 0 ? -1 : p < parse ? p : parse;
		cold = c < 0 || cold < 0 ? -1 : c < cold ? c : cold;
	}
	for (int i = 0; i < 5; i++) {
		double t = time_load(dir, HISTORY_INDEXED, nights);
		if (t < 0)
			cold = -1;
		warm = t < warm ? t : warm;
	}
	free(ix);
	if (parse < 0 || cold < 0)
		return 1;
	printf("\nhistory index, %zu nights x %d rows (CPU time)\n", nights, ROWS);
	printf("%-34s %10s %12s %10s\n", "", "ms", "vs", "limit");
	printf("%-34s %10.1f\n", "parse (records only)", parse * 1e3);
	printf("%-34s %10.1f %11.2fx %9.2fx\n", "cold: first load, index built", cold * 1e3,
	       cold / parse, 1.2);
	printf("%-34s %10.1f %11.3fx %9.3fx  (vs 20 ms: %.2fx)\n", "warm: every record indexed",
	       warm * 1e3, warm / parse, 0.020 / parse, warm / 0.020);
	return 0;
}

/* The phases of one night of `rows` series on top of `nights - 1` earlier
 * nights: the load (parse), the verdict walk (regress_history) and the
 * night's verdicts (regress_night_build, as the nightly writes them), then
 * a load through the index once every record is in it (what a nightly
 * does), in CPU seconds into t[0..3]; the walk's wall time into t[4].
 * Returns 0 or -1. */
static int time_series(int nights, int rows, const struct regress_conf *conf, double t[5])
{
	char dir[] = "/tmp/ddt-bench-series-XXXXXX";
	struct history h;
	struct regress_night night;
	struct ydiag warn = {0};
	int rc = -1;

	if (!mkdtemp(dir))
		return -1;
	if (store_nights(dir, nights, rows))
		goto done;
	double t0 = cpu_s();
	if (history_load_with(&h, dir, NULL, HISTORY_RECORDS_ONLY, &warn) || warn.n)
		goto done;
	double t1 = cpu_s(), w1 = wall_s();
	regress_history(conf, &h);
	double t2 = cpu_s();
	t[4] = wall_s() - w1;
	rc = regress_night_build(&night, &h, h.nruns - 1, NULL) ? -1 : 0;
	double t3 = cpu_s();
	regress_night_free(&night);
	history_free(&h);
	t[0] = t1 - t0, t[1] = t2 - t1, t[2] = t3 - t2;
	if (rc || time_load(dir, HISTORY_INDEXED, (size_t)nights) < 0 ||
	    (t[3] = time_load(dir, HISTORY_INDEXED, (size_t)nights)) < 0)
		rc = -1;
done:
	ydiag_free(&warn);
	fsx_rm_rf(dir);
	return rc;
}

/* The verdict walk's limit for a year of nights (365 nights x 4,096
 * series "in a few seconds"), CPU seconds; the last measured walk is
 * in docs/performance.md, "Big records". */
#define WALK_LIMIT_S 5.0

/* Many series: one night at 5,000 to RECORD_MAX_ROWS rows, and a year of
 * 4,096 series, quiet and noisy. Each phase's cost per series must stay
 * flat (linear). A shape is {nights, series, noise width in 1e-4}. */
static int series_table(const struct regress_conf *conf, int nights, int series, int width)
{
	int shape[][3] = {{1, 5000, 100},  {1, 20000, 100},   {1, 40000, 100},
			  {1, RECORD_MAX_ROWS, 100}, {365, 4096, 100}, {365, 4096, 700}};
	size_t nshape = sizeof shape / sizeof *shape;
	double base = 0;
	struct rusage ru;

	printf("\n%-7s %8s %6s %10s %12s %10s %14s %10s %12s\n", "nights", "series", "noise",
	       "parse_s", "verdicts_s", "night_s", "us/series/night", "vs first", "indexed_s");
	if (nights > 0 && series > 0) /* one shape alone (profiling) */
		shape[0][0] = nights, shape[0][1] = series, shape[0][2] = width, nshape = 1;
	for (size_t k = 0; k < nshape; k++) {
		double t[5];
		noise_width = shape[k][2] * 1e-4;
		if (time_series(shape[k][0], shape[k][1], conf, t))
			return 1;
		double per = (t[0] + t[1] + t[2]) * 1e6 / ((double)shape[k][0] * shape[k][1]);
		if (!k)
			base = per;
		printf("%-7d %8d %5.1f%% %10.2f %12.2f %10.2f %14.2f %9.2fx %12.2f\n", shape[k][0],
		       shape[k][1], shape[k][2] * 1e-2, t[0], t[1], t[2], per, per / base, t[3]);
		if (shape[k][0] >= 365) /* a year of 4,096 series in a few seconds */
			printf("  verdict walk %.2f s CPU, limit %.1f s (%.2fx); %.2f s wall\n", t[1],
			       WALK_LIMIT_S, t[1] / WALK_LIMIT_S, t[4]);
		fflush(stdout);
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("peak RSS %.0f MB\n", ru.ru_maxrss / 1024.0);
	return 0;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/ddt-bench-history-XXXXXX";
	int sizes[] = {30, 90, 365};
	struct regress_conf conf;

	if (regress_conf_load_file(&conf, "templates/default.yaml")) {
		fprintf(stderr, "bench_history: %s\n", err_msg());
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "--series")) { /* this table alone, or one shape */
		int a = 2, nights = 0, series = 0, width = 100;
		if (argc > a + 1 && strcmp(argv[a], "--noise"))
			nights = atoi(argv[a]), series = atoi(argv[a + 1]), a += 2;
		if (argc > a + 1 && !strcmp(argv[a], "--noise"))
			width = (int)lround(atof(argv[a + 1]) * 100), a += 2;
		if (a != argc || (nights <= 0) != (series <= 0) || width < 0 || width > 5000 ||
		    (width != 100 && nights <= 0)) {
			fprintf(stderr, "usage: bench_history [--series [NIGHTS SERIES] "
					"[--noise PCT]]\n");
			return 2;
		}
		return series_table(&conf, nights, series, width);
	}
	if (!mkdtemp(dir))
		return 1;
	printf("CPU time of this process (a shared machine's other jobs stretch wall time\n"
	       "unevenly: a 20 ms read and a 2 s load are not stretched alike)\n");
	printf("%-8s %10s %10s %10s %12s %12s %14s %12s\n", "nights", "series", "read_ms",
	       "parse_ms", "parse/read", "verdicts_ms", "verdicts/parse", "ms/night");
	for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
		struct history h;
		struct ydiag warn = {0};
		for (int n = k ? sizes[k - 1] : 0; n < sizes[k]; n++) {
			struct run_record r;
			make_night(&r, n);
			int bad = store(dir, &r);
			record_free(&r);
			if (bad)
				return 1;
		}
		double read_s = read_alone_s(dir);
		double t0 = cpu_s();
		if (read_s < 0 || history_load_with(&h, dir, NULL, HISTORY_RECORDS_ONLY, &warn) ||
		    warn.n)
			return 1;
		double t1 = cpu_s();
		regress_history(&conf, &h);
		double t2 = cpu_s();
		printf("%-8d %10zu %10.1f %10.1f %11.1fx %12.1f %13.2fx %12.2f\n", sizes[k], h.n,
		       read_s * 1e3, (t1 - t0) * 1e3, (t1 - t0) / read_s, (t2 - t1) * 1e3,
		       (t2 - t1) / (t1 - t0), (t2 - t0) * 1e3 / sizes[k]);
		history_free(&h);
		ydiag_free(&warn);
	}
	if (index_table(dir, 365))
		return 1;
	fsx_rm_rf(dir);
	return rows_table() || series_table(&conf, 0, 0, 100);
}
