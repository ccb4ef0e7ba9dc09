/* bench.h - the bench stage: measure the template's ops on this machine's devices into a run record. */
#ifndef DDT_BENCH_H
#define DDT_BENCH_H

#include <stdio.h>

#include "bench_conf.h"
#include "harness.h"
#include "op.h"
#include "record.h"

/* Where a suite's wall time went besides the timing loops (those are
 * harness_account's): make bench says what share of it was measurement. */
struct bench_spent {
	double setup_s;  /* making each op's inputs (op setup, the probe's too) and teardown */
	double check_s;  /* validation: the C reference, poison, the fast path once */
	double probe_s;  /* the copy-bandwidth probe: its inputs and samples */
	double host_rsd; /* the host noise the stopping rule adapted to (bench_cpu_run) */
};

struct bench_opts {
	const char *home;      /* project folder: its git revision goes into the record */
	const char *only;      /* comma-separated op names to run; NULL: all */
	int progress;          /* draw a progress line on stderr */
	struct bench_spent *spent; /* NULL, or where the seconds are added up */
};

/* Fills r's schema, run id, template name and provenance (CPU side, and the
 * CUDA and NCCL versions when the CUDA backend is built). r must be zeroed
 * or freed; free it with record_free. Returns 0 or DDT_ENOMEM. */
int bench_record_init(struct run_record *r, const char *template_name, const char *home);

/* Checks that every name of the comma-separated list only (may be NULL) is an
 * op or a CUDA-only benchmark. Returns 0 or DDT_EINPUT naming the first that
 * is not. */
int bench_check_only(const char *only);

/* Detects the devices (the CPU first, with its copy bandwidth measured now;
 * then each CUDA device), runs every op entry of bc at every size point on
 * every backend and variant it asks for, and appends one row per
 * measurement to r. An op that fails, is unsupported, or cannot run here is
 * a row with that status and its reason; the run goes on. Returns 0, or
 * DDT_EINPUT for an unknown name in o->only, or DDT_ENOMEM. */
int bench_run(const struct bench_conf *bc, const struct bench_opts *o, struct run_record *r);

/* What the CPU measurements of a run share, and the instance one point
 * hands the next. */
struct bench_cpu_run {
	uint64_t seed;                 /* inputs of every op */
	const struct harness_conf *hc; /* the stopping rule; cold set per row */
	int check_rows;                /* output rows checked against the reference; 0: all */
	struct harness_flush *flush;   /* for cold rows */
	double copy_gbps;              /* the %-of-peak base */
	double host_rsd;               /* the copy probe's relative sigma: the host's noise
					* the stopping rule adapts to (harness_conf) */
	struct bench_spent *spent;     /* NULL, or where the seconds are added up */
	const struct op_desc *keep_op; /* the last point's op and instance, kept */
	void *keep;                    /* for its setup_from (a sweep draws its weights once) */
};

/* One CPU measurement of op at p (params completed by the caller) with an
 * instance from run->seed (the kept one reshaped when op has setup_from):
 * validation against the reference (over run->check_rows rows of the
 * output when the op can check some, the whole output still written and
 * finite), then timing under run->hc. rows are filled in full (status
 * failed with the reason when the op fails or misses its tolerance).
 * Returns 0, or DDT_ENOMEM when even the row cannot be made. */
int bench_cpu_measure(struct bench_cpu_run *run, const struct op_desc *op,
		      const struct op_params *p, int variants, struct rec_row *rows, int *nrows);
/* Tears down the instance run keeps. */
void bench_cpu_run_end(struct bench_cpu_run *run);

/* The CPU's copy bandwidth in GB/s (bytes read + written per second) into
 * *gbps, measured with the memcpy op over mib MiB from run->seed: the
 * median of hot samples under run->hc; their robust relative sigma into
 * run->host_rsd. The instance stays in run for a memcpy row of the same
 * size. Returns 0, or an error code with the
 * message set (the buffers cannot be had, no sample) and *gbps NaN. */
int bench_cpu_copy_gbps(struct bench_cpu_run *run, double mib, double *gbps);

/* The fixed-width table of r's rows (op, device/variant, params, median,
 * p10, p90 in µs, GB/s, % of copy bandwidth, max error, status) with the
 * reason of every row that is not ok. */
void bench_print_table(const struct run_record *r, FILE *fp);

/* Writes r as runs_dir/<run id>/run.yaml so the folder appears only
 * complete (built under a temporary name, fsynced, renamed). path receives
 * the folder. Returns 0 or an error code. */
int bench_write_run(const struct run_record *r, const char *runs_dir, char *path, size_t len);

#endif
