/* acks.c - runs/acks.yaml: the answers to regression alerts, read and appended atomically. */
#include "acks.h"

#include "err.h"
#include "fsx.h"
#include "yschema.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ACK(m, ty, h) YS_FIELD(struct hist_ack, m, ty, Y_REQUIRED, .help = (h))
static const struct yschema_field ack_fields[] = {
	ACK(alert, YS_STR, "the alert's id"),
	ACK(series, YS_STR, "the series' label; empty: every series of the alert"),
	ACK(invalid, YS_BOOL, "a false alarm, not a real change"),
	ACK(reason, YS_STR, "why; empty: none given"),
	ACK(at, YS_STR, "when, ISO 8601 UTC"),
	ACK(by, YS_STR, "who ($USER); empty: unknown"),
};
const struct yschema acks_schema = YS_TABLE("acks[]", ack_fields, 0);

/* The file: its schema and its acks (read: allocated here, the caller's
 * to free). */
struct acks_file {
	int schema;
	struct hist_ack *acks;
	size_t n;
};

static const struct yschema_field file_fields[] = {
	YS_FIELD(struct acks_file, schema, YS_INT, Y_REQUIRED | Y_POSITIVE,
		 .help = "the file's layout (1)"),
	YS_VEC_OF(struct acks_file, "acks", acks, n, &acks_schema, INT_MAX, Y_REQUIRED,
		  .help = "the answers, oldest first"),
};
static const struct yschema file_schema = YS_TABLE("acks file", file_fields, 0);

/* Reads path into *out / *n (allocated; NULL, 0 when there is no file).
 * Problems to diag. Returns 0, DDT_EINPUT or DDT_ENOMEM. */
static int read_file(const char *path, struct hist_ack **out, size_t *n, struct ydiag *diag)
{
	struct ydoc *doc = NULL;
	struct yctx y = {path, diag, NULL};
	struct acks_file af = {0};
	size_t before = diag->n;
	int rc;

	*out = NULL;
	*n = 0;
	char why[96];
	if (fsx_kind(path) == FSX_NONE)
		return 0;
	if (!fsx_trusted_path(path, why, sizeof why)) { /* fsx.h: another user's answers */
		ydiag_add(diag, path, 0, 0, "not trusted (%s): not read", why);
		return DDT_EINPUT;
	}
	if ((rc = ydoc_load_file(&doc, path, diag)) != 0)
		return rc == DDT_ENOMEM ? rc : DDT_EINPUT;
	yschema_read_doc(&y, doc, &file_schema, &af, "acks file");
	ydoc_free(doc);
	if (diag->n > before) { /* one problem: none are kept */
		free(af.acks);
		return DDT_EINPUT;
	}
	*out = af.acks;
	*n = af.n;
	return 0;
}

int acks_load(struct history *h, const char *runs_dir, struct ydiag *warnings)
{
	char *path = fsx_join(runs_dir, "acks.yaml");
	struct ydiag diag = {0};
	int rc;

	if (!path)
		return err_nomem();
	free(h->acks);
	h->acks = NULL;
	h->nacks = 0;
	rc = read_file(path, &h->acks, &h->nacks, &diag);
	if (rc == DDT_EINPUT && warnings)
		for (size_t i = 0; i < diag.n; i++)
			ydiag_add(warnings, NULL, 0, 0, "%s (alerts read as not acknowledged)",
				  diag.msgs[i]);
	ydiag_free(&diag);
	free(path);
	return rc == DDT_ENOMEM ? rc : 0;
}

static void emit(FILE *fp, struct hist_ack *a, size_t n)
{
	struct acks_file af = {.schema = 1, .acks = a, .n = n};
	yschema_write_doc(fp, &file_schema, &af);
}

int acks_add(const char *runs_dir, const struct hist_ack *a, size_t n)
{
	char *path = fsx_join(runs_dir, "acks.yaml");
	struct ydiag diag = {0};
	struct hist_ack *all = NULL, *grown;
	struct fsx_file f;
	size_t have = 0;
	int rc;

	if (!path)
		return err_nomem();
	if ((rc = read_file(path, &all, &have, &diag)) != 0) {
		rc = rc == DDT_ENOMEM ? err_nomem()
				      : err_set(DDT_EINPUT, "%s", diag.n ? diag.msgs[0] : path);
		goto done;
	}
	if (!(grown = realloc(all, (have + n + 1) * sizeof *all))) {
		rc = err_nomem();
		goto done;
	}
	all = grown;
	memcpy(all + have, a, n * sizeof *a);
	if ((rc = fsx_open(&f, path)) != 0)
		goto done;
	emit(f.fp, all, have + n);
	if (ferror(f.fp)) {
		fsx_abort(&f);
		rc = err_set(DDT_EIO, "%s: write failed", path);
		goto done;
	}
	rc = fsx_commit(&f);
done:
	free(all);
	free(path);
	ydiag_free(&diag);
	return rc;
}

const struct hist_ack *acks_find(const struct history *h, const char *alert, const char *label)
{
	for (size_t i = h->nacks; i-- > 0;) /* the newest answer counts */
		if (!strcmp(h->acks[i].alert, alert) &&
		    (!h->acks[i].series[0] || !strcmp(h->acks[i].series, label)))
			return &h->acks[i];
	return NULL;
}
