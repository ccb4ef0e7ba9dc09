/* cuda_backend.h - the interface between ddt and its CUDA backend, the shared object libddt-cuda.so that ddt opens at run time. */
#ifndef DDT_CUDA_BACKEND_H
#define DDT_CUDA_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "harness.h"
#include "op.h"
#include "rec.h"

/* Bumped whenever either table below changes: a backend built from other
 * sources than ddt is refused, not called. */
#define CUDA_BACKEND_ABI 3

/* The backend's file name and the one symbol it exports. */
#define CUDA_BACKEND_FILE "libddt-cuda.so"
#define CUDA_BACKEND_ENTRY "ddt_cuda_backend"

/* What the backend calls back into ddt for (engine/cuda/backend.c forwards
 * its own err_set, harness_*, op_* and result functions to these, so errors
 * set in the backend are ddt's errors and there is one op table). */
struct cuda_host {
	int abi;
	int (*err_set)(int code, const char *fmt, ...);
	int (*err_wrap)(int code, const char *fmt, ...);
	int (*err_nomem)(void);
	const char *(*err_msg)(void);
	double (*harness_now_s)(void);
	int (*harness_enough)(const struct harness_conf *c, int n, double total_s, double rsd,
			      double elapsed_s);
	void (*harness_stats)(double *samples_us, int n, struct rec_row *row);
	double (*harness_rsd)(const double *samples, int n);
	const struct op_desc *(*op_find)(const char *name);
	double (*op_param)(const struct op_params *p, const char *key, double dflt);
	int (*op_param_set)(struct op_params *p, const char *key, double val);
	int (*rec_rows_add)(struct rec_rows *l, const struct rec_row *row);
	int (*rec_row_param_set)(struct rec_row *row, const char *key, double val);
};

/* The backend's functions: those of cuda_api.h, same contracts. */
struct cuda_backend {
	int abi;
	int (*devices)(int *count, char *reason, size_t len);
	int (*device_describe)(int dev, struct rec_device *out);
	int (*versions)(char *runtime, char *driver, char *nccl, size_t len);
	int (*time_op)(const struct op_desc *op, const struct op_params *p, int dev,
		       const struct harness_conf *hc, uint64_t seed, struct rec_row *row);
	int (*bench_allreduce)(struct rec_rows *r, const int *ms, int nm, int hidden,
			       const struct harness_conf *hc, int rec_device);
	int (*bench_launch)(struct rec_rows *r, const struct op_params *p,
			    const struct harness_conf *hc, int rec_device);
	const struct op_cuda *(*op_path)(const char *op);
	int (*recover)(void);
	int (*tensor_tflops)(int n, double *tflops);
};

/* The type of CUDA_BACKEND_ENTRY: keeps host for the life of the process and
 * returns the backend's table (its abi field says which ABI it speaks), or
 * NULL when host->abi is not the ABI it was built for. */
typedef const struct cuda_backend *(*cuda_backend_entry_fn)(const struct cuda_host *host);

#endif
