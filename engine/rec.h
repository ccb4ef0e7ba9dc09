/* rec.h - what the engine measures: one row per measurement, the device it
 * ran on and the build; run records (pipeline/record/) store these. */
#ifndef DDT_REC_H
#define DDT_REC_H

#include <stddef.h>

#define REC_MAX_PARAMS 12

enum rec_status { REC_OK, REC_FAILED, REC_SKIPPED, REC_UNSUPPORTED };

struct rec_device {
	char kind[8];          /* "cpu" or "cuda" */
	int index;             /* CUDA ordinal; 0 for the CPU */
	char name[128];        /* "NVIDIA H200", "AMD EPYC 9654 (2 cores)" */
	char arch[16];         /* "sm_90"; "x86_64" for the CPU */
	int cores;             /* SMs or CPU cores */
	double mem_gb;         /* device memory (RAM for the CPU) */
	double sm_clock_mhz;   /* default SM clock (NaN when unknown) */
	double mem_clock_mhz;  /* memory clock (NaN when unknown) */
	double peak_gbps;      /* datasheet bandwidth (NaN when unknown) */
	double copy_gbps;      /* measured copy bandwidth, the %-of-peak base */
};

struct rec_param {
	char key[24];
	double val;
};

struct rec_row {
	char op[32];          /* op table name */
	char variant[32];     /* "cold", "hot", "eager", "graph", ... */
	char backend[8];      /* "cpu", "cuda", "nccl", "mpi" */
	int device;           /* which device: the run record's device index */
	int nparams;
	struct rec_param params[REC_MAX_PARAMS]; /* sorted by key */
	int samples;
	double median_us, p10_us, p90_us, min_us, max_us, stdev_us;
	double bytes, flops;  /* moved / done per run */
	double gbps;          /* bytes / median */
	double pct_peak;      /* gbps / device copy bandwidth x 100 */
	double max_err;       /* vs the C reference (NaN when not validated) */
	double sm_clock_mhz;  /* median SM clock while sampling (NaN: unknown) */
	enum rec_status status;
	char reason[160];     /* one line; empty when ok */
	char stop[16];        /* the rule that ended the samples: "rsd", "ci", "timeout",
			       * "max_samples" (harness_stop_name); "" when none were taken */
};

struct rec_provenance {
	char git_rev[48];      /* project revision, "+dirty" when modified */
	char compiler[96];
	char build[64];        /* build configuration: "O2-native+cuda" */
	char cuda_runtime[24]; /* "13.0" or "" */
	char cuda_driver[24];
	char nccl[24];
	char host[64];
	char engine_rev[48];   /* the engine's own revision when built apart; "" */
};

/* The rows of a benchmark that makes several (the all-reduce sweep, the
 * launch benchmarks); they own their memory. */
struct rec_rows {
	size_t n;
	struct rec_row *rows;
};

/* Appends a copy of row; returns 0 or DDT_ENOMEM. */
int rec_rows_add(struct rec_rows *l, const struct rec_row *row);
void rec_rows_free(struct rec_rows *l);

/* Sets a row's param (keeps them sorted); returns 0 or -1 when full. */
int rec_row_param_set(struct rec_row *row, const char *key, double val);
/* A param's value, or dflt. */
double rec_row_param(const struct rec_row *row, const char *key, double dflt);
/* "M=9,ctx=4096" into buf; returns buf. */
char *rec_row_params_str(const struct rec_row *row, char *buf, size_t len);

const char *rec_status_name(enum rec_status s);
/* Parses a status name; returns 0 or -1. */
int rec_status_parse(const char *s, enum rec_status *out);

#endif
