/* record.h - run records (runs/<run-id>/run.yaml): what one bench run measured,
 * on what, built how. Every later stage reads these, never console text. */
#ifndef DDT_RECORD_H
#define DDT_RECORD_H

#include <stddef.h>

#include "result.h"
#include "ydoc.h"

#define RECORD_SCHEMA 1
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

/* A run id for now and this host: YYYYMMDDTHHMMSSZ-host (host sanitized to
 * [A-Za-z0-9-]). Also fills created (ISO 8601) when non-NULL. */
void record_make_run_id(char *id, size_t len, char *created, size_t clen);
/* True when s is a well-formed run id (safe as a folder name). */
int record_run_id_valid(const char *s);

#endif
