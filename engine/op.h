/* op.h - the engine's op table: one row per kernel, with its C reference, its
 * fast CPU path, its optional CUDA path, and its byte and flop formulas. */
#ifndef DDT_OP_H
#define DDT_OP_H

#include <stddef.h>
#include <stdint.h>

#define OP_MAX_PARAMS 12

/* An op's size parameters by name (M, ctx, b, B, tp, hidden, ...). Keys are
 * static strings. */
struct op_params {
	int n;
	const char *keys[OP_MAX_PARAMS];
	double vals[OP_MAX_PARAMS];
};

/* The value of key, or dflt when absent. */
double op_param(const struct op_params *p, const char *key, double dflt);
/* Sets (or adds) key; returns 0 or -1 when full. key must outlive p. */
int op_param_set(struct op_params *p, const char *key, double val);

/* The CUDA path of an op, defined in engine/cuda/<op>.cu and found by name
 * with cuda_op_path() (cuda_api.h) once the CUDA backend is loaded. The host
 * instance (inst) holds inputs and outputs in the layout of engine/ops/<op>.h; the CUDA
 * side may repack inputs as it likes when it uploads them. Every function
 * returns 0 or an error code with err_set() called; none exits. */
struct op_cuda {
	/* allocate device buffers for inst and upload its inputs */
	int (*setup)(void **dev, const void *inst);
	/* launch the op once on stream (a cudaStream_t); asynchronous */
	int (*run)(void *dev, void *stream);
	/* synchronize and copy the outputs into inst's output buffers */
	int (*fetch)(void *dev, void *inst);
	/* free device buffers; dev may be NULL */
	void (*teardown)(void *dev);
};

/* One size parameter an op's setup reads: its name, the value it takes when
 * the template leaves it out (Kimi K2.x geometry, [kimi-k2-config]), and a
 * line for --help. */
struct op_param_spec {
	const char *key;
	double dflt;
	const char *doc;
};

struct op_desc {
	const char *name;    /* "moe_w4a16" */
	const char *summary; /* one line for --help and reports */
	/* allocate an instance for p and fill its inputs from a seeded generator
	 * (never zeros); returns 0 or an error code */
	int (*setup)(void **inst, const struct op_params *p, uint64_t seed);
	void (*teardown)(void *inst);
	/* optional: what setup(p, seed) makes, taking over prev (an instance of
	 * this op, or NULL), which is either reshaped, keeping the inputs p
	 * leaves as they were (the weights across a sweep of M) and drawing the
	 * rest from the same streams, or torn down; prev is the caller's no
	 * longer, error or not. The result equals a fresh setup(p, seed). */
	int (*setup_from)(void **inst, void *prev, const struct op_params *p, uint64_t seed);
	/* the obviously correct version: writes the reference output */
	int (*reference)(void *inst);
	/* the fast CPU path: writes the output buffer (NULL: unsupported) */
	int (*run_cpu)(void *inst);
	/* fills the output buffer with NaN so unwritten elements fail compare */
	void (*poison)(void *inst);
	/* output vs reference over every element: the largest normalized error
	 * (NaN counts as infinite) */
	double (*max_error)(const void *inst);
	/* optional, a cheaper check of the same output: the output as rows
	 * independent of each other (what a row is, the op says: a token's
	 * hidden vector, a query head's latent, an output feature); the
	 * reference for the rows listed only (ascending, each < check_rows);
	 * and the largest normalized error over those rows, +Inf when any
	 * element of the whole output is not finite (left poisoned). NULL:
	 * reference and max_error over everything. */
	size_t (*check_rows)(const void *inst);
	int (*reference_rows)(void *inst, const size_t *rows, size_t n);
	double (*max_error_rows)(const void *inst, const size_t *rows, size_t n);
	/* bytes that must move and flops that must be done for one run at p */
	double (*bytes)(const struct op_params *p);
	double (*flops)(const struct op_params *p);
	double tol; /* max_error at or under this passes */
	/* the params setup reads, ending at a NULL key: templates may set only
	 * these, and records list all of them (defaults included) */
	const struct op_param_spec *params;
};

/* The table, NULL-terminated, in report order. */
extern const struct op_desc *const op_table[];

/* The op of that name, or NULL. */
const struct op_desc *op_find(const char *name);

/* p with every param of op's spec that p lacks set to its default; returns 0
 * or DDT_EINPUT naming a key the op does not read. */
int op_params_complete(const struct op_desc *op, const struct op_params *p,
		       struct op_params *out);

#endif
