/* acks.h - the acknowledgements of regression alerts, runs/acks.yaml: who
 * answered which alert, when, why, and whether it was a false alarm. The
 * alerts themselves are derived from the history at each load (regress.h);
 * these answers are the only alert state written down. */
#ifndef DDT_ACKS_H
#define DDT_ACKS_H

#include "history.h"
#include "yschema.h"

/* One answer's keys (acks[] of acks.yaml), whose reason ddt ack --reason
 * takes too. */
extern const struct yschema acks_schema;

/* Reads runs_dir/acks.yaml into h->acks (replacing any). No file: no acks.
 * A damaged file is a warning naming file:line:col, and no acks (every
 * alert stays open: the safe side). Returns 0 or DDT_ENOMEM. */
int acks_load(struct history *h, const char *runs_dir, struct ydiag *warnings);

/* Appends a[0..n) to runs_dir/acks.yaml, rewritten atomically (lib/fsx).
 * A damaged file already there is DDT_EINPUT (its first problem as
 * err_msg(), file:line:col) and is left as it is. Returns 0, DDT_EINPUT,
 * DDT_EIO or DDT_ENOMEM. */
int acks_add(const char *runs_dir, const struct hist_ack *a, size_t n);

/* The ack of h that answers alert `alert` on series `label`, or NULL. */
const struct hist_ack *acks_find(const struct history *h, const char *alert, const char *label);

#endif
