/* estimate_schema.h - the keys of an estimate record (ddt estimate --format
 * yaml or json, and the made_from section of --format csv): what it was made
 * from, its overrides and each estimate, one table each, written by
 * estimate.c and read back by `ddt estimate --replay`. */
#ifndef DDT_ESTIMATE_SCHEMA_H
#define DDT_ESTIMATE_SCHEMA_H

#include <limits.h>

#include "estimate.h"
#include "yschema.h"

/* The most arguments a record's args holds: every option of ddt estimate
 * with its value, each list option at its most. */
#define ESTIMATE_MAX_ARGS 288

/* made_from: the files with their hashes ("" for a file not used) and the
 * command's arguments (pointing into the document read, or into the
 * writer's struct estimate_source). */
struct estimate_made_from {
	char calibration[PATH_MAX], calibration_hash[40];
	char template_path[PATH_MAX], template_hash[40];
	char moe_reference[PATH_MAX], moe_reference_hash[40];
	int nargs;
	const char *args[ESTIMATE_MAX_ARGS];
};

/* The record's head: made_from and the calibration's --set log. */
struct estimate_origin {
	struct estimate_made_from made_from;
	int noverrides;
	struct calib_override overrides[CALIB_MAX_SETS];
};

/* One estimate as the record states it: its row, and from the projection
 * (has_band) its bands, where its acceptance and context come from and the
 * other estimator's figure. */
struct estimate_rec {
	char scenario[48], target[32];
	enum pipeline_kind pipeline;
	int block, budget, concurrency, context;
	char context_from[16], context_law[64]; /* "": not said (no context, no band) */
	double M, accept, ms[COMP_COUNT], nonmoe_ms, step_ms, tok_s;
	enum estimator_kind estimator;
	int has_band;
	struct band step_ms_band, tok_s_band, moe_ms_band;
	char accept_from[16];
	double accept_lo, accept_hi; /* NaN: one value (no range) */
	double other_tok_s, other_pctile, xfer_cover_pct, xfer_err_pct;
	int runnable;
	char note[200];
};

/* The record's head (a mapping holding made_from and overrides), made_from
 * alone (its text entries are the CSV's made_from lines too), and one
 * estimate of the record's estimates list. */
extern const struct yschema estimate_schema_origin;
extern const struct yschema estimate_schema_made_from;
extern const struct yschema estimate_schema_rec;

/* src as the record states it. */
void estimate_origin_of(struct estimate_origin *o, const struct estimate_source *src);
/* Row i of e with its band b (NULL: none) of projection p. */
void estimate_rec_of(struct estimate_rec *r, const struct estimate_row *row,
		     const struct project_row *b, const struct projection *p);

/* Writes o's keys into the mapping open in y; then r as one item of a
 * sequence (its band keys only with r->has_band). */
void estimate_origin_write(struct yout *y, const struct estimate_origin *o);
void estimate_rec_write(struct yout *y, const struct estimate_rec *r);

/* Reads the head of the record whose root mapping is root (its other keys
 * left alone) into o, every problem recorded in c's diagnostics. Returns 0
 * or DDT_EINPUT. */
int estimate_origin_read(struct yctx *c, struct ydoc_node *root, struct estimate_origin *o);
/* Reads one item of the estimates list strictly into r (has_band: its
 * bands were there). Returns 0 or DDT_EINPUT. */
int estimate_rec_read(struct yctx *c, struct ydoc_node *item, struct estimate_rec *r);

#endif
