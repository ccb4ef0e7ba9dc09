/* regress_night.c - one night's verdicts: built from an analysed history, runs/<run-id>/verdicts.yaml written and read back. */
#include "regress.h"

#include "err.h"
#include "fsx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


static void entry_of(struct regress_entry *e, const struct history *h,
		     const struct hist_series *s, const struct hist_point *p)
{
	memset(e, 0, sizeof *e);
	e->key = s->key;
	e->status = p->status;
	e->median_us = p->median_us;
	e->baseline_us = p->baseline_us;
	e->noise_frac = p->noise_frac;
	e->delta_frac = p->delta_frac;
	e->z = p->z;
	e->band_lo_us = p->band_lo_us;
	e->band_hi_us = p->band_hi_us;
	e->verdict = p->verdict_night;
	regress_point_interval(s, p, &e->lo_frac, &e->hi_frac);
	e->nights = (int)(p - s->pts) + 1;
	snprintf(e->reason, sizeof e->reason, "%s", p->reason);
	if (p->good_run < h->nruns) {
		snprintf(e->good_run_id, sizeof e->good_run_id, "%s", h->runs[p->good_run].run_id);
		snprintf(e->good_rev, sizeof e->good_rev, "%s", h->runs[p->good_run].git_rev);
		snprintf(e->good_engine_rev, sizeof e->good_engine_rev, "%s",
			 h->runs[p->good_run].engine_rev);
	}
	if (p->bad_run < h->nruns) {
		snprintf(e->bad_run_id, sizeof e->bad_run_id, "%s", h->runs[p->bad_run].run_id);
		snprintf(e->bad_rev, sizeof e->bad_rev, "%s", h->runs[p->bad_run].git_rev);
		snprintf(e->bad_engine_rev, sizeof e->bad_engine_rev, "%s",
			 h->runs[p->bad_run].engine_rev);
	}
	regress_commits(h, p, e->commits, sizeof e->commits);
}

char *regress_entry_line(const struct regress_entry *e, char *buf, size_t len)
{
	char label[512];
	size_t off = (size_t)snprintf(buf, len, "%s %s: %+.1f%% (%.4g us, baseline %.4g us, noise %.2f%%)",
				      regress_verdict_name(e->verdict),
				      history_key_label(&e->key, label, sizeof label),
				      e->delta_frac * 100, e->median_us, e->baseline_us,
				      e->noise_frac * 100);
	if (off < len && e->commits[0])
		off += (size_t)snprintf(buf + off, len - off, ", commits %s (first bad %s)",
					e->commits, e->bad_run_id);
	if (off < len && e->reason[0])
		snprintf(buf + off, len - off, "; %s", e->reason);
	return buf;
}

/* The previous measured point of p in s, or NULL. */
static const struct hist_point *prev_measured(const struct hist_series *s,
					      const struct hist_point *p)
{
	while (p > s->pts)
		if ((--p)->status == REC_OK)
			return p;
	return NULL;
}

/* Whether point p, on its own night, reverted the flagged run just before it
 * (those suspect nights become outliers): p is not flagged, or flagged the
 * other way. A run that p confirms or continues is not reverted. */
static int reverts_run(const struct hist_point *p, const struct hist_point *q)
{
	if (!q || q->verdict_night != REG_SUSPECT)
		return 0;
	if (p->verdict_night == REG_REGRESSION || p->verdict_night == REG_IMPROVEMENT)
		return 0;
	return p->verdict_night != REG_SUSPECT || (p->delta_frac > 0) != (q->delta_frac > 0);
}

/* Appends the revisions point p of s makes (its night turns the suspect run
 * before it into outliers). Returns 0 or DDT_ENOMEM. */
static int add_revisions(struct regress_night *out, size_t *cap, const struct history *h,
			 const struct hist_series *s, const struct hist_point *p)
{
	const struct hist_point *q = prev_measured(s, p);
	if (!reverts_run(p, q))
		return 0;
	int up = q->delta_frac > 0;
	for (; q && q->verdict_night == REG_SUSPECT && (q->delta_frac > 0) == up;
	     q = prev_measured(s, q)) {
		if (out->nrev == *cap) {
			size_t ncap = *cap ? *cap * 2 : 8;
			struct regress_revision *v = realloc(out->revs, ncap * sizeof *v);
			if (!v)
				return err_nomem();
			out->revs = v;
			*cap = ncap;
		}
		struct regress_revision *rv = &out->revs[out->nrev++];
		memset(rv, 0, sizeof *rv);
		rv->key = s->key;
		snprintf(rv->run_id, sizeof rv->run_id, "%s", h->runs[q->run].run_id);
		rv->from = REG_SUSPECT;
		rv->to = REG_OUTLIER;
	}
	return 0;
}

int regress_night_build(struct regress_night *out, const struct history *h, size_t run,
			const struct regress_impacts *imp)
{
	size_t rcap = 0;

	memset(out, 0, sizeof *out);
	if (run >= h->nruns)
		return err_set(DDT_EINPUT, "no run %zu in the history", run);
	snprintf(out->run_id, sizeof out->run_id, "%s", h->runs[run].run_id);
	out->nruns = run + 1;
	out->entries = calloc(h->n ? h->n : 1, sizeof *out->entries);
	if (!out->entries)
		goto nomem;
	for (size_t i = 0; i < h->n; i++) {
		const struct hist_series *s = &h->series[i];
		const struct hist_point *p = history_point_at(s, run);
		if (!p)
			continue;
		entry_of(&out->entries[out->n], h, s, p);
		out->count[out->entries[out->n].verdict]++;
		out->n++;
		if (p->status == REC_OK && add_revisions(out, &rcap, h, s, p))
			goto nomem;
	}
	if (imp && imp->n) {
		out->impacts.v = malloc(imp->n * sizeof *imp->v);
		if (!out->impacts.v)
			goto nomem;
		memcpy(out->impacts.v, imp->v, imp->n * sizeof *imp->v);
		out->impacts.n = imp->n;
	}
	if (regress_alerts_build(out, h, run))
		goto nomem;
	return 0;
nomem:
	regress_night_free(out);
	return err_nomem();
}

void regress_night_free(struct regress_night *n)
{
	free(n->entries);
	free(n->revs);
	regress_impacts_free(&n->impacts);
	free(n->alerts);
	memset(n, 0, sizeof *n);
}

static void emit_key(struct yout *y, const struct hist_key *k)
{
	yout_kv_str(y, "op", k->op);
	yout_kv_str(y, "variant", k->variant);
	yout_kv_str(y, "params", k->params);
	yout_kv_str(y, "device", k->device);
	yout_kv_str(y, "backend", k->backend);
	yout_kv_str(y, "build", k->build);
	yout_kv_str(y, "machine", k->machine);
}

static void emit_entry(struct yout *y, const struct regress_entry *e)
{
	yout_map(y);
	emit_key(y, &e->key);
	yout_kv_str(y, "status", rec_status_name(e->status));
	yout_kv_str(y, "verdict", regress_verdict_name(e->verdict));
	yout_kv_int(y, "nights", e->nights);
	yout_kv_num(y, "median_us", e->median_us);
	yout_kv_num(y, "baseline_us", e->baseline_us);
	yout_kv_num(y, "noise_pct", e->noise_frac * 100);
	yout_kv_num(y, "delta_pct", e->delta_frac * 100);
	yout_kv_num(y, "delta_lo_pct", e->lo_frac * 100);
	yout_kv_num(y, "delta_hi_pct", e->hi_frac * 100);
	yout_kv_num(y, "z", e->z);
	yout_kv_num(y, "band_lo_us", e->band_lo_us);
	yout_kv_num(y, "band_hi_us", e->band_hi_us);
	yout_kv_str(y, "reason", e->reason);
	yout_kv_str(y, "commits", e->commits);
	yout_kv_str(y, "last_good_run", e->good_run_id);
	yout_kv_str(y, "last_good_rev", e->good_rev);
	yout_kv_str(y, "first_bad_run", e->bad_run_id);
	yout_kv_str(y, "first_bad_rev", e->bad_rev);
	if (e->good_engine_rev[0] || e->bad_engine_rev[0]) {
		yout_kv_str(y, "last_good_engine_rev", e->good_engine_rev);
		yout_kv_str(y, "first_bad_engine_rev", e->bad_engine_rev);
	}
	yout_end(y);
}

static void emit_impact(struct yout *y, const struct regress_impact *im)
{
	yout_map(y);
	emit_key(y, &im->key);
	yout_kv_str(y, "verdict", regress_verdict_name(im->verdict));
	yout_kv_num(y, "delta_pct", im->delta_frac * 100);
	yout_kv_str(y, "component", im->comp >= 0 ? model_comp_name((enum model_comp)im->comp)
						   : NULL);
	yout_kv_str(y, "scenario", im->scenario);
	yout_kv_str(y, "target", im->target);
	yout_kv_num(y, "accept", im->accept);
	yout_kv_num(y, "tok_s", im->tok_s);
	yout_kv_num(y, "tok_s_after", im->tok_s_after);
	yout_kv_num(y, "change_pct", im->change_frac * 100);
	yout_end(y);
}

static void emit_alert(struct yout *y, const struct regress_alert *a)
{
	yout_map(y);
	yout_kv_str(y, "id", a->id);
	emit_key(y, &a->key);
	yout_kv_str(y, "verdict", regress_verdict_name(a->verdict));
	yout_kv_str(y, "state", regress_alert_state_name(a->state));
	yout_kv_num(y, "baseline_us", a->baseline_us);
	yout_kv_num(y, "level_us", a->level_us);
	yout_kv_num(y, "delta_pct", a->delta_frac * 100);
	yout_kv_num(y, "delta_lo_pct", a->lo_frac * 100);
	yout_kv_num(y, "delta_hi_pct", a->hi_frac * 100);
	yout_kv_int(y, "nights", a->nights);
	yout_kv_int(y, "age_nights", a->age_nights);
	yout_kv_num(y, "age_days", a->age_days);
	yout_kv_str(y, "opened_run", a->opened_run);
	yout_kv_str(y, "last_good_run", a->good_run_id);
	yout_kv_str(y, "first_bad_run", a->bad_run_id);
	yout_kv_str(y, "commits", a->commits);
	yout_kv_str(y, "last_good_rev", a->good_rev);
	yout_kv_str(y, "first_bad_rev", a->bad_rev);
	yout_kv_str(y, "answer", a->answer);
	yout_end(y);
}

void regress_night_emit(const struct regress_night *n, FILE *fp)
{
	struct yout y;
	yout_init(&y, fp);
	yout_map(&y);
	yout_kv_int(&y, "schema", 3);
	yout_kv_str(&y, "run_id", n->run_id);
	yout_kv_int(&y, "nights", (long long)n->nruns);
	yout_key(&y, "counts"); /* derived from series; for people reading the file */
	yout_map_flow(&y);
	for (int v = 0; v < REG_COUNT; v++)
		yout_kv_int(&y, regress_verdict_name((enum regress_verdict)v), n->count[v]);
	yout_end(&y);
	yout_key(&y, "series");
	yout_seq(&y);
	for (size_t i = 0; i < n->n; i++)
		emit_entry(&y, &n->entries[i]);
	yout_end(&y);
	yout_key(&y, "revised");
	yout_seq(&y);
	for (size_t i = 0; i < n->nrev; i++) {
		yout_map(&y);
		emit_key(&y, &n->revs[i].key);
		yout_kv_str(&y, "run_id", n->revs[i].run_id);
		yout_kv_str(&y, "from", regress_verdict_name(n->revs[i].from));
		yout_kv_str(&y, "to", regress_verdict_name(n->revs[i].to));
		yout_end(&y);
	}
	yout_end(&y);
	yout_key(&y, "impact");
	yout_seq(&y);
	for (size_t i = 0; i < n->impacts.n; i++)
		emit_impact(&y, &n->impacts.v[i]);
	yout_end(&y);
	yout_key(&y, "alerts");
	yout_seq(&y);
	for (size_t i = 0; i < n->nalerts; i++)
		emit_alert(&y, &n->alerts[i]);
	yout_end(&y);
	yout_end(&y);
}

int regress_night_write(const struct regress_night *n, const char *path)
{
	struct fsx_file f;
	int rc = fsx_open(&f, path);
	if (rc)
		return rc;
	regress_night_emit(n, f.fp);
	if (ferror(f.fp)) {
		fsx_abort(&f);
		return err_set(DDT_EIO, "%s: write failed", path);
	}
	return fsx_commit(&f);
}

/* ---- reading it back ---- */

static void read_str(struct yctx *c, struct ydoc_node *m, const char *key, char *dst,
		     size_t len)
{
	(void)yget_strcpy(c, m, key, Y_REQUIRED, dst, len);
}

static void read_key(struct yctx *c, struct ydoc_node *m, struct hist_key *k)
{
	read_str(c, m, "op", k->op, sizeof k->op);
	read_str(c, m, "variant", k->variant, sizeof k->variant);
	read_str(c, m, "params", k->params, sizeof k->params);
	read_str(c, m, "device", k->device, sizeof k->device);
	read_str(c, m, "backend", k->backend, sizeof k->backend);
	read_str(c, m, "build", k->build, sizeof k->build);
	if (ydoc_get(m, "machine")) /* schema 2 */
		read_str(c, m, "machine", k->machine, sizeof k->machine);
}

/* An optional string key (schema 2): "" when absent. */
static void read_opt_str(struct yctx *c, struct ydoc_node *m, const char *key, char *dst,
			 size_t len)
{
	dst[0] = '\0';
	if (ydoc_get(m, key))
		read_str(c, m, key, dst, len);
}

static void read_verdict(struct yctx *c, struct ydoc_node *m, const char *key,
			 enum regress_verdict *out)
{
	const char *s = NULL;
	if (yget_str(c, m, key, Y_REQUIRED, &s) || !s)
		return;
	if (regress_verdict_parse(s, out)) {
		struct ydoc_node *n = ydoc_get(m, key);
		ydiag_add(c->diag, c->file, n->line, n->col, "%s: unknown verdict '%s'", key, s);
	}
}

static double read_pct(struct yctx *c, struct ydoc_node *m, const char *key)
{
	double v = NAN;
	yget_num(c, m, key, Y_REQUIRED | Y_NULLABLE, &v);
	return v / 100;
}

static void read_entry(struct yctx *c, struct ydoc_node *m, struct regress_entry *e)
{
	const char *st = NULL;
	memset(e, 0, sizeof *e);
	read_key(c, m, &e->key);
	if (!yget_str(c, m, "status", Y_REQUIRED, &st) && st && rec_status_parse(st, &e->status)) {
		struct ydoc_node *n = ydoc_get(m, "status");
		ydiag_add(c->diag, c->file, n->line, n->col, "status: unknown '%s'", st);
	}
	read_verdict(c, m, "verdict", &e->verdict);
	yget_int(c, m, "nights", Y_REQUIRED | Y_POSITIVE, &e->nights);
	e->median_us = e->baseline_us = e->z = e->band_lo_us = e->band_hi_us = NAN;
	yget_num(c, m, "median_us", Y_REQUIRED | Y_NULLABLE, &e->median_us);
	yget_num(c, m, "baseline_us", Y_REQUIRED | Y_NULLABLE, &e->baseline_us);
	e->noise_frac = read_pct(c, m, "noise_pct");
	e->delta_frac = read_pct(c, m, "delta_pct");
	e->lo_frac = e->hi_frac = NAN; /* absent from files written before it */
	yget_num(c, m, "delta_lo_pct", Y_NULLABLE, &e->lo_frac);
	yget_num(c, m, "delta_hi_pct", Y_NULLABLE, &e->hi_frac);
	e->lo_frac /= 100;
	e->hi_frac /= 100;
	yget_num(c, m, "z", Y_REQUIRED | Y_NULLABLE, &e->z);
	yget_num(c, m, "band_lo_us", Y_REQUIRED | Y_NULLABLE, &e->band_lo_us);
	yget_num(c, m, "band_hi_us", Y_REQUIRED | Y_NULLABLE, &e->band_hi_us);
	read_str(c, m, "reason", e->reason, sizeof e->reason);
	read_opt_str(c, m, "commits", e->commits, sizeof e->commits);
	read_opt_str(c, m, "last_good_run", e->good_run_id, sizeof e->good_run_id);
	read_opt_str(c, m, "last_good_rev", e->good_rev, sizeof e->good_rev);
	read_opt_str(c, m, "first_bad_run", e->bad_run_id, sizeof e->bad_run_id);
	read_opt_str(c, m, "first_bad_rev", e->bad_rev, sizeof e->bad_rev);
	read_opt_str(c, m, "last_good_engine_rev", e->good_engine_rev, sizeof e->good_engine_rev);
	read_opt_str(c, m, "first_bad_engine_rev", e->bad_engine_rev, sizeof e->bad_engine_rev);
	yget_check_unknown(c, m);
}

static void read_impact(struct yctx *c, struct ydoc_node *m, struct regress_impact *im)
{
	struct ydoc_node *comp = ydoc_get(m, "component");
	memset(im, 0, sizeof *im);
	read_key(c, m, &im->key);
	read_verdict(c, m, "verdict", &im->verdict);
	im->delta_frac = read_pct(c, m, "delta_pct");
	im->comp = -1;
	if (!comp)
		ydiag_add(c->diag, c->file, m->line, m->col, "missing required key 'component'");
	else if (comp->kind == YDOC_SCALAR && !(comp->plain && !strcmp(comp->str, "null"))) {
		for (int k = 0; k < COMP_COUNT; k++)
			if (!strcmp(comp->str, model_comp_name((enum model_comp)k)))
				im->comp = k;
		if (im->comp < 0)
			ydiag_add(c->diag, c->file, comp->line, comp->col,
				  "component: unknown '%s'", comp->str);
	}
	read_str(c, m, "scenario", im->scenario, sizeof im->scenario);
	read_str(c, m, "target", im->target, sizeof im->target);
	im->accept = im->tok_s = im->tok_s_after = NAN;
	yget_num(c, m, "accept", Y_REQUIRED | Y_NULLABLE, &im->accept);
	yget_num(c, m, "tok_s", Y_REQUIRED | Y_NULLABLE, &im->tok_s);
	yget_num(c, m, "tok_s_after", Y_REQUIRED | Y_NULLABLE, &im->tok_s_after);
	im->change_frac = read_pct(c, m, "change_pct");
	yget_check_unknown(c, m);
}

static void read_alert(struct yctx *c, struct ydoc_node *m, struct regress_alert *a)
{
	const char *st = NULL;
	memset(a, 0, sizeof *a);
	read_str(c, m, "id", a->id, sizeof a->id);
	read_key(c, m, &a->key);
	read_verdict(c, m, "verdict", &a->verdict);
	if (!yget_str(c, m, "state", Y_REQUIRED, &st) && st) {
		int k = 0;
		while (k < ALERT_COUNT && strcmp(st, regress_alert_state_name((enum regress_alert_state)k)))
			k++;
		if (k == ALERT_COUNT) {
			struct ydoc_node *n = ydoc_get(m, "state");
			ydiag_add(c->diag, c->file, n->line, n->col, "state: unknown '%s'", st);
		}
		a->state = (enum regress_alert_state)(k % ALERT_COUNT);
	}
	a->baseline_us = a->level_us = a->age_days = NAN;
	yget_num(c, m, "baseline_us", Y_REQUIRED | Y_NULLABLE, &a->baseline_us);
	yget_num(c, m, "level_us", Y_REQUIRED | Y_NULLABLE, &a->level_us);
	a->delta_frac = read_pct(c, m, "delta_pct");
	a->lo_frac = read_pct(c, m, "delta_lo_pct");
	a->hi_frac = read_pct(c, m, "delta_hi_pct");
	yget_int(c, m, "nights", Y_REQUIRED, &a->nights);
	yget_int(c, m, "age_nights", Y_REQUIRED, &a->age_nights);
	yget_num(c, m, "age_days", Y_REQUIRED | Y_NULLABLE, &a->age_days);
	read_str(c, m, "opened_run", a->opened_run, sizeof a->opened_run);
	read_str(c, m, "last_good_run", a->good_run_id, sizeof a->good_run_id);
	read_str(c, m, "first_bad_run", a->bad_run_id, sizeof a->bad_run_id);
	read_str(c, m, "commits", a->commits, sizeof a->commits);
	read_str(c, m, "last_good_rev", a->good_rev, sizeof a->good_rev);
	read_str(c, m, "first_bad_rev", a->bad_rev, sizeof a->bad_rev);
	read_str(c, m, "answer", a->answer, sizeof a->answer);
	yget_check_unknown(c, m);
}

/* A required sequence of maps under key: its node, or NULL (problem noted). */
static struct ydoc_node *seq_of(struct yctx *c, struct ydoc_node *root, const char *key)
{
	struct ydoc_node *n = NULL;
	if (yget_node(c, root, key, YDOC_SEQ, Y_REQUIRED, &n) || !n)
		return NULL;
	for (size_t i = 0; i < n->n; i++)
		if (yget_expect(c, n->items[i], YDOC_MAP, key))
			return NULL;
	return n;
}

static int read_root(struct regress_night *n, struct yctx *c, struct ydoc_node *root)
{
	struct ydoc_node *s, *r, *im, *al;
	int schema = 0, nights = 0;

	yget_int(c, root, "schema", Y_REQUIRED | Y_POSITIVE, &schema);
	if (schema > 3)
		ydiag_add(c->diag, c->file, root->line, root->col, "schema %d is newer than 3",
			  schema);
	read_str(c, root, "run_id", n->run_id, sizeof n->run_id);
	yget_int(c, root, "nights", Y_REQUIRED | Y_POSITIVE, &nights);
	n->nruns = (size_t)nights;
	ydoc_get(root, "counts"); /* derived: recomputed below */
	s = seq_of(c, root, "series");
	r = seq_of(c, root, "revised");
	im = seq_of(c, root, "impact");
	al = ydoc_get(root, "alerts") ? seq_of(c, root, "alerts") : NULL; /* schema 3 */
	yget_check_unknown(c, root);
	n->entries = calloc(s && s->n ? s->n : 1, sizeof *n->entries);
	n->revs = calloc(r && r->n ? r->n : 1, sizeof *n->revs);
	n->impacts.v = calloc(im && im->n ? im->n : 1, sizeof *n->impacts.v);
	n->alerts = calloc(al && al->n ? al->n : 1, sizeof *n->alerts);
	if (!n->entries || !n->revs || !n->impacts.v || !n->alerts)
		return err_nomem();
	for (size_t i = 0; s && i < s->n; i++) {
		read_entry(c, s->items[i], &n->entries[n->n]);
		n->count[n->entries[n->n++].verdict]++;
	}
	for (size_t i = 0; r && i < r->n; i++) {
		struct regress_revision *rv = &n->revs[n->nrev++];
		read_key(c, r->items[i], &rv->key);
		read_str(c, r->items[i], "run_id", rv->run_id, sizeof rv->run_id);
		read_verdict(c, r->items[i], "from", &rv->from);
		read_verdict(c, r->items[i], "to", &rv->to);
		yget_check_unknown(c, r->items[i]);
	}
	for (size_t i = 0; im && i < im->n; i++)
		read_impact(c, im->items[i], &n->impacts.v[n->impacts.n++]);
	for (size_t i = 0; al && i < al->n; i++) {
		read_alert(c, al->items[i], &n->alerts[n->nalerts]);
		n->open_alerts += n->alerts[n->nalerts++].state == ALERT_OPEN;
	}
	return 0;
}

int regress_night_read(struct regress_night *n, const char *path, struct ydiag *diag)
{
	struct ydoc *doc = NULL;
	struct yctx c = {path, diag};
	size_t before = diag->n;
	int rc;

	memset(n, 0, sizeof *n);
	if ((rc = ydoc_load_file(&doc, path, diag)) != 0)
		return rc;
	if (!doc->root || yget_expect(&c, doc->root, YDOC_MAP, "verdict file")) {
		if (!doc->root)
			ydiag_add(diag, path, 0, 0, "empty verdict file");
		ydoc_free(doc);
		return DDT_EINPUT;
	}
	rc = read_root(n, &c, doc->root);
	ydoc_free(doc);
	if (!rc && diag->n > before)
		rc = DDT_EINPUT;
	return rc;
}
