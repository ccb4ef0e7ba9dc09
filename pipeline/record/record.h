/* record.h - run records (runs/<run-id>/run.yaml): what one bench run measured,
 * on what, built how. Every later stage reads these, never console text. */
#ifndef DDT_RECORD_H
#define DDT_RECORD_H

#include <stddef.h>

#include "ydoc.h"

#define RECORD_SCHEMA 1
#define RECORD_MAX_PARAMS 12

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
	int device;           /* index into run_record.devices */
	int nparams;
	struct rec_param params[RECORD_MAX_PARAMS]; /* sorted by key */
	int samples;
	double median_us, p10_us, p90_us, min_us, max_us, stdev_us;
	double bytes, flops;  /* moved / done per run */
	double gbps;          /* bytes / median */
	double pct_peak;      /* gbps / device copy bandwidth x 100 */
	double max_err;       /* vs the C reference (NaN when not validated) */
	double sm_clock_mhz;  /* median SM clock while sampling (NaN: unknown) */
	enum rec_status status;
	char reason[160];     /* one line; empty when ok */
};

struct rec_provenance {
	char git_rev[48];      /* project revision, "+dirty" when modified */
	char compiler[96];
	char build[64];        /* build configuration: "O2-native+cuda" */
	char cuda_runtime[24]; /* "13.0" or "" */
	char cuda_driver[24];
	char nccl[24];
	char host[64];
};

struct run_record {
	int schema;
	char run_id[80];       /* YYYYMMDDTHHMMSSZ-host */
	char created[24];      /* ISO 8601 UTC, from the run id */
	char template_name[64];
	struct rec_provenance prov;
	size_t ndevices;
	struct rec_device *devices;
	size_t nrows;
	struct rec_row *rows;
};

/* Writes r to path atomically (temp, fsync, rename, fsync folder). */
int record_write(const struct run_record *r, const char *path);
/* Writes r as YAML to fp (no atomicity). */
int record_emit(const struct run_record *r, FILE *fp);

/* Reads a record; problems go to diag as file:line:col. r is zeroed first and
 * must be freed with record_free even on error. */
int record_read(struct run_record *r, const char *path, struct ydiag *diag);
/* The same from len bytes of buf, named name in messages. */
int record_read_buf(struct run_record *r, const char *name, const char *buf, size_t len,
		    struct ydiag *diag);
void record_free(struct run_record *r);

/* Appends a row (copied) / device; returns 0 or DDT_ENOMEM. */
int record_add_row(struct run_record *r, const struct rec_row *row);
int record_add_device(struct run_record *r, const struct rec_device *dev);

/* Sets a row's param (keeps them sorted); returns 0 or -1 when full. */
int rec_row_param_set(struct rec_row *row, const char *key, double val);
/* A param's value, or dflt. */
double rec_row_param(const struct rec_row *row, const char *key, double dflt);
/* "M=9,ctx=4096" into buf; returns buf. */
char *rec_row_params_str(const struct rec_row *row, char *buf, size_t len);

const char *rec_status_name(enum rec_status s);
/* Parses a status name; returns 0 or -1. */
int rec_status_parse(const char *s, enum rec_status *out);

/* A run id for now and this host: YYYYMMDDTHHMMSSZ-host (host sanitized to
 * [A-Za-z0-9-]). Also fills created (ISO 8601) when non-NULL. */
void record_make_run_id(char *id, size_t len, char *created, size_t clen);
/* True when s is a well-formed run id (safe as a folder name). */
int record_run_id_valid(const char *s);

#endif
