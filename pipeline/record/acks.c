/* acks.c - runs/acks.yaml: the answers to regression alerts, read and appended atomically. */
#include "acks.h"

#include "err.h"
#include "fsx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reads one ack of the file's `acks:` sequence. */
static void read_ack(struct yctx *y, struct ydoc_node *m, struct hist_ack *a)
{
	memset(a, 0, sizeof *a);
	yget_strcpy(y, m, "alert", Y_REQUIRED, a->alert, sizeof a->alert);
	yget_strcpy(y, m, "series", Y_REQUIRED, a->series, sizeof a->series);
	yget_bool(y, m, "invalid", Y_REQUIRED, &a->invalid);
	yget_strcpy(y, m, "reason", Y_REQUIRED, a->reason, sizeof a->reason);
	yget_strcpy(y, m, "at", Y_REQUIRED, a->at, sizeof a->at);
	yget_strcpy(y, m, "by", Y_REQUIRED, a->by, sizeof a->by);
	yget_check_unknown(y, m);
}

/* Reads path into *out / *n (allocated; NULL, 0 when there is no file).
 * Problems to diag. Returns 0, DDT_EINPUT or DDT_ENOMEM. */
static int read_file(const char *path, struct hist_ack **out, size_t *n, struct ydiag *diag)
{
	struct ydoc *doc = NULL;
	struct yctx y = {path, diag};
	struct ydoc_node *seq = NULL;
	size_t before = diag->n;
	int schema = 0, rc;

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
	yget_int(&y, doc->root, "schema", Y_REQUIRED | Y_POSITIVE, &schema);
	yget_node(&y, doc->root, "acks", YDOC_SEQ, Y_REQUIRED, &seq);
	yget_check_unknown(&y, doc->root);
	if (seq && seq->n && !(*out = calloc(seq->n, sizeof **out))) {
		ydoc_free(doc);
		return err_nomem();
	}
	for (size_t i = 0; seq && i < seq->n; i++)
		if (!yget_expect(&y, seq->items[i], YDOC_MAP, "acks"))
			read_ack(&y, seq->items[i], &(*out)[(*n)++]);
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
	yout_init(&y, fp);
	yout_map(&y);
	yout_kv_int(&y, "schema", 1);
	yout_key(&y, "acks");
	yout_seq(&y);
	for (size_t i = 0; i < n; i++) {
		yout_map(&y);
		yout_kv_str(&y, "alert", a[i].alert);
		yout_kv_str(&y, "series", a[i].series);
		yout_key(&y, "invalid");
		yout_bool(&y, a[i].invalid);
		yout_kv_str(&y, "reason", a[i].reason);
		yout_kv_str(&y, "at", a[i].at);
		yout_kv_str(&y, "by", a[i].by);
		yout_end(&y);
	}
	yout_end(&y);
	yout_end(&y);
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
