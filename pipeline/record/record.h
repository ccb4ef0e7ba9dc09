/* record.h - run records (runs/<run-id>/run.yaml): what one bench run measured,
 * on what, built how. Every later stage reads these, never console text. */
#ifndef DDT_RECORD_H
#define DDT_RECORD_H

#include <stddef.h>

#include "rec.h"
#include "ydoc.h"
#include "yschema.h"

/* Schema 2 adds the optional `machine:` section and provenance.engine_rev;
 * schema 3 each row's `stop`, the stopping rule that ended its samples;
 * schema 4 the integrity trailer, the record's last line, written last:
 * "# ddt-record-end rows=N fnv1a64=HEX" (a YAML comment: the row count and
 * the FNV-1a 64 of every byte before the line), so a record cut at any byte
 * or changed after it was written is named damaged. It tells damage, not
 * authorship: who may write a record is the trust rule's business (fsx.h).
 * Older records read as before, the machine state unknown, no stop; a
 * record of schema 4 or later without its trailer is damaged. */
#define RECORD_SCHEMA 4
#define RECORD_TRAILER "# ddt-record-end "
#define RECORD_MAX_GPU_STATES 16

/* One GPU's state while the run measured (NVML; NaN / -1 when unknown). */
struct rec_gpu_state {
	int index;             /* CUDA ordinal */
	double sm_clock_mhz;   /* current SM clock at the end of the run */
	double mem_clock_mhz;
	double temp_c;
	char throttle[96];     /* NVML clock-event reasons, comma-separated; "" none */
	int other_procs;       /* compute processes on the GPU besides this one */
};

/* The machine's state over the run: what says whether the night was
 * contended. known is 0 for records without it (schema 1). */
struct rec_machine {
	int known;
	double load_avg_1m;    /* when the run began */
	double cpu_steal_pct;  /* CPU time stolen by the hypervisor during the run */
	double cpu_others_pct; /* CPU time other processes took during the run, % of all */
	double cpu_mhz;        /* mean current frequency of the online CPUs */
	int cpus;              /* online CPUs */
	int ngpus;
	struct rec_gpu_state gpus[RECORD_MAX_GPU_STATES];
};

/* The most rows one record holds: a fleet's merged record of 64 nodes x 8
 * GPUs x 256 kernel shapes. The YAML reader's caps for a record scale with
 * it: a row is at most RECORD_ROW_VALUES values (20 keys and their values,
 * the row, its params and 12 params) and, honestly written, under 1 KiB. */
#define RECORD_MAX_ROWS 131072
#define RECORD_ROW_VALUES 66
#define RECORD_MAX_BYTES ((size_t)RECORD_MAX_ROWS << 10)
#define RECORD_MAX_VALUES ((size_t)RECORD_MAX_ROWS * RECORD_ROW_VALUES + 65536)

struct run_record {
	int schema;
	char run_id[80];       /* YYYYMMDDTHHMMSSZ-host */
	char created[24];      /* ISO 8601 UTC, from the run id */
	char template_name[64];
	struct rec_provenance prov;
	struct rec_machine machine;
	size_t ndevices;
	struct rec_device *devices;
	size_t nrows;
	struct rec_row *rows;
};

/* Writes r to path atomically (temp, fsync, rename, fsync folder). */
int record_write(const struct run_record *r, const char *path);
/* Writes r as YAML to fp (no atomicity), its trailer last (RECORD_TRAILER). */
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

/* The names a record gives a row's status (enum rec_status) and its stop
 * (enum harness_stop; rec_row.stop holds the name), for the schema tables. */
extern const struct yschema_name record_status_names[];
extern const struct yschema_name record_stop_names[];

/* A run id for now and this host: YYYYMMDDTHHMMSSZ-host (host sanitized to
 * [A-Za-z0-9-]). Also fills created (ISO 8601) when non-NULL. */
void record_make_run_id(char *id, size_t len, char *created, size_t clen);
/* True when s is a well-formed run id (safe as a folder name). */
int record_run_id_valid(const char *s);

#endif
