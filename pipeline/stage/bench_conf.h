/* bench_conf.h - the template's bench section: timing rules, CPU settings, and the ops to measure at which sizes. */
#ifndef DDT_BENCH_CONF_H
#define DDT_BENCH_CONF_H

#include <stdint.h>
#include <stdio.h>

#include "harness.h"
#include "op.h"
#include "tmpl.h"
#include "ydoc.h"
#include "yschema.h"

#define BENCH_MAX_OPS 48
#define BENCH_MAX_VALS 16
#define BENCH_MAX_POINTS 256

enum { BENCH_CPU = 1, BENCH_CUDA = 2 };  /* backends */
enum { BENCH_COLD = 1, BENCH_HOT = 2 };  /* variants: caches flushed before each sample, or not */

/* One size parameter: a single value, or a list that is swept. */
struct bench_param {
	char key[24];
	int nvals;
	double vals[BENCH_MAX_VALS];
};

/* One entry of bench.ops. op is an op table name, or one of the CUDA-only
 * benchmarks "allreduce" (params M, hidden) and "launch" (the synthetic
 * step's sizes; see cuda_api.h). */
struct bench_op {
	char op[32];
	unsigned backends;   /* BENCH_CPU | BENCH_CUDA (CUDA-only benchmarks: BENCH_CUDA) */
	unsigned variants;   /* BENCH_COLD | BENCH_HOT */
	int nparams;
	struct bench_param params[OP_MAX_PARAMS];
	int line;            /* position in the template, for messages */
};

/* Bounds of cpu.copy_mib, in MiB: a copy under 1 MiB sits in the caches, and
 * one over 64 GiB (twice that with its destination) is no bandwidth probe. */
#define BENCH_COPY_MIB_MIN 1.0
#define BENCH_COPY_MIB_MAX 65536.0

struct bench_conf {
	struct harness_conf timing; /* cold is set per variant by the runner */
	uint64_t seed;       /* inputs of every op come from this seed */
	int cpu_threads;     /* pool threads for the CPU fast paths; 0 = online cores */
	double flush_mib;    /* cold-sample cache flush buffer; 0 = twice the last-level cache */
	double copy_mib;     /* the copy that measures the CPU's bandwidth, within
			      * [BENCH_COPY_MIB_MIN, BENCH_COPY_MIB_MAX] */
	int check_rows;      /* rows of an op's output its CPU check compares with
			      * the reference (ops that can check some); 0 = all */
	unsigned backends;   /* an entry's backends when it names none (bench.backends) */
	unsigned variants;   /* and its variants (bench.variants) */
	int nops;
	struct bench_op ops[BENCH_MAX_OPS];
};

/* Reads the bench section of t (the template's own, else the one it
 * extends) into out. Defaults: harness_conf_default, seed 1, backends
 * [cpu, cuda], variants [cold], cpu threads 0, flush 0, copy 512 MiB, check
 * every row. A
 * template without a bench section gives those defaults and no ops.
 * Unknown keys, unknown ops, parameters an op does not read and values out
 * of range are errors; every problem goes to diag as file:line:col and the
 * return is DDT_EINPUT (0 when all is well). */
int bench_conf_load(struct bench_conf *out, const struct tmpl *t, struct ydiag *diag);

/* Writes b as a template's bench section ("bench:" and its keys; the
 * sources are the template's alone) to fp: what bench_conf_load reads
 * back to b. */
void bench_conf_emit(const struct bench_conf *b, FILE *fp);

/* How many size points an entry sweeps (the product of its list lengths). */
int bench_conf_op_points(const struct bench_op *o);

/* The params of point i < bench_conf_op_points(o), the last key varying fastest;
 * keys point into o, which must outlive p. */
void bench_conf_op_point(const struct bench_op *o, int i, struct op_params *p);

/* True for the names of the CUDA-only benchmarks. */
int bench_conf_is_cuda_only(const char *op);

/* The CUDA-only benchmarks (name, summary), beside the op table (op.h). */
struct bench_conf_cuda_op {
	const char *name, *summary;
};
/* bench.cpu's keys, whose threads ddt bench --threads takes too. */
extern const struct yschema bench_conf_cpu_schema;

extern const struct bench_conf_cuda_op bench_conf_cuda_ops[];
extern const int bench_conf_ncuda_ops;

/* Every op name a template or --ops takes, ", " between them, into buf. */
void bench_conf_op_names(char *buf, size_t len);

#endif
