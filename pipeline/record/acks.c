/* acks.c - runs/acks.yaml: the answers to regression alerts, read and appended atomically. */
#include "acks.h"

#include "err.h"
#include "fsx.h"
#include "yschema.h"

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

/* The file: its schema and its acks, read (the list's node, its items read
 * once every key of the file is checked) or written (the acks given). */
struct acks_file {
	int schema;
	struct ydoc_node *seq;
	const struct hist_ack *acks;
	size_t n;
};

static void list_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
		      void *obj)
{
	yget_node(c, m, f->key, YDOC_SEQ, f->flags, &((struct acks_file *)obj)->seq);
}

static void list_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	const struct acks_file *af = obj;
	yout_key(y, f->key);
	yout_seq(y);
	for (size_t i = 0; i < af->n; i++)
		yschema_write_item(y, &acks_schema, &af->acks[i]);
	yout_end(y);
}

static const struct yschema_field file_fields[] = {
	YS_FIELD(struct acks_file, schema, YS_INT, Y_REQUIRED | Y_POSITIVE,
		 .help = "the file's layout (1)"),
	{.key = "acks", .type = YS_CUSTOM, .flags = Y_REQUIRED, .read = list_read,
	 .write = list_write, .help = "the answers, oldest first"},
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
	if (!doc->root || yget_expect(&y, doc->root, YDOC_MAP, "acks file")) {
		if (!doc->root)
			ydiag_add(diag, path, 0, 0, "empty acks file");
		ydoc_free(doc);
		return DDT_EINPUT;
	}
	yschema_read(&y, doc->root, &file_schema, &af);
	if (af.seq && af.seq->n && !(*out = calloc(af.seq->n, sizeof **out))) {
		ydoc_free(doc);
		return err_nomem();
	}
	for (size_t i = 0; af.seq && i < af.seq->n; i++) /* one problem: none are kept */
		if (!yschema_read_item(&y, af.seq->items[i], &acks_schema, &(*out)[*n], "acks"))
			(*n)++;
	ydoc_free(doc);
	if (diag->n > before) {
		free(*out);
		*out = NULL;
		*n = 0;
		return DDT_EINPUT;
	}
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

static void emit(FILE *fp, const struct hist_ack *a, size_t n)
{
	struct yout y;
	struct acks_file af = {.schema = 1, .acks = a, .n = n};
	yout_init(&y, fp);
	yschema_write_item(&y, &file_schema, &af);
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
