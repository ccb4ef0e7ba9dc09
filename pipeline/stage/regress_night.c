/* regress_night.c - one night's verdicts: built from an analysed history, runs/<run-id>/verdicts.yaml written and read back. */
#include "regress.h"

#include "err.h"
#include "fsx.h"
#include "yschema.h"

#include <limits.h>
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

/* ---- runs/<run-id>/verdicts.yaml: the tables of its keys ---- */

#define FIG (Y_REQUIRED | Y_NULLABLE) /* a figure: a number or null, required */
#define RUN_STR(T, k, m, fl, h) YS_KEYED(T, k, m, YS_STR, fl, .help = (h))

static const struct yschema_field key_fields[] = {
	YS_FIELD(struct hist_key, op, YS_STR, Y_REQUIRED, .help = "the op measured"),
	YS_FIELD(struct hist_key, variant, YS_STR, Y_REQUIRED, .help = "cold, hot, or the benchmark's own"),
	YS_FIELD(struct hist_key, params, YS_STR, Y_REQUIRED, .help = "its sizes, \"M=9,tp=8\""),
	YS_FIELD(struct hist_key, device, YS_STR, Y_REQUIRED, .help = "the device's name"),
	YS_FIELD(struct hist_key, backend, YS_STR, Y_REQUIRED, .help = "cpu, cuda, nccl"),
	YS_FIELD(struct hist_key, build, YS_STR, Y_REQUIRED, .help = "the build's flavour"),
	/* a file of schema 1 lacks it: "" */
	YS_FIELD(struct hist_key, machine, YS_STR, 0, .help = "the machine's name and id"),
};
static const struct yschema key_schema = YS_TABLE("series key", key_fields, 0);

/* A series' key (struct hist_key at the entry's offset): its keys inline. */
static void key_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
		     void *obj)
{
	yschema_read_fields(c, m, &key_schema, (char *)obj + f->off);
}

static void key_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	yschema_write_fields(y, &key_schema, (const char *)obj + f->off);
}

#define KEY(T)                                                                            \
	YS_FIELD(T, key, YS_CUSTOM, Y_REQUIRED, .read = key_read, .write = key_write,      \
		 .help = "the series: op, variant, params, device, backend, build, machine")
#define VERDICT(T, k, m, h)                                                               \
	YS_KEYED(T, k, m, YS_ENUM, Y_REQUIRED, .names = regress_verdict_ynames, .help = (h))

static const struct yschema_name status_names[] = {
	{"ok", REC_OK}, {"failed", REC_FAILED}, {"skipped", REC_SKIPPED},
	{"unsupported", REC_UNSUPPORTED}, {NULL, 0}};

static const struct yschema_field engine_rev_fields[] = {
	RUN_STR(struct regress_entry, "last_good_engine_rev", good_engine_rev, 0,
		"the engine's own revision on the last good night"),
	RUN_STR(struct regress_entry, "first_bad_engine_rev", bad_engine_rev, 0,
		"and on the first bad night"),
};
static const struct yschema engine_rev_schema = YS_TABLE("engine revisions", engine_rev_fields, 0);

/* The engine's revisions: written only when a record named either. */
static void engine_revs_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
			     void *obj)
{
	(void)f;
	yschema_read_fields(c, m, &engine_rev_schema, obj);
}

static void engine_revs_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	const struct regress_entry *e = obj;
	(void)f;
	if (e->good_engine_rev[0] || e->bad_engine_rev[0])
		yschema_write_fields(y, &engine_rev_schema, e);
}

#define E_NUM(m, fl, u, h) YS_FIELD(struct regress_entry, m, YS_NUM, fl, .unit = (u), .help = (h))
#define E_PCT(k, m, fl, h) YS_PCT(struct regress_entry, k, m, fl, .help = (h))
#define E_STR(k, m, fl, h) RUN_STR(struct regress_entry, k, m, fl, h)
/* In the order written and read. */
static const struct yschema_field entry_fields[] = {
	KEY(struct regress_entry),
	YS_FIELD(struct regress_entry, status, YS_ENUM, Y_REQUIRED, .names = status_names,
		 .help = "the night's measurement"),
	VERDICT(struct regress_entry, "verdict", verdict, "as decided that night"),
	YS_FIELD(struct regress_entry, nights, YS_INT, Y_REQUIRED | Y_POSITIVE, .unit = "nights",
		 .help = "measured nights of the series so far"),
	E_NUM(median_us, FIG, "us", "the night's median"),
	E_NUM(baseline_us, FIG, "us", "median of the baseline's good nights"),
	E_PCT("noise_pct", noise_frac, FIG, "robust noise sigma, of the baseline"),
	E_PCT("delta_pct", delta_frac, FIG, "the night against the baseline"),
	/* absent from files written before the interval: NaN */
	E_PCT("delta_lo_pct", lo_frac, Y_NULLABLE, "the change's 95% interval, low end"),
	E_PCT("delta_hi_pct", hi_frac, Y_NULLABLE, "the change's 95% interval, high end"),
	E_NUM(z, FIG, NULL, "robust z of the change"),
	E_NUM(band_lo_us, FIG, "us", "the band's low edge"),
	E_NUM(band_hi_us, FIG, "us", "the band's high edge"),
	E_STR("reason", reason, Y_REQUIRED, "why, in words (\"\" none)"),
	/* absent from files of schema 1: "" */
	E_STR("commits", commits, 0, "the change's revisions, \"a1b2c3d..e4f5a6b\""),
	E_STR("last_good_run", good_run_id, 0, "the change's last good night"),
	E_STR("last_good_rev", good_rev, 0, "its revision"),
	E_STR("first_bad_run", bad_run_id, 0, "the change's first bad night"),
	E_STR("first_bad_rev", bad_rev, 0, "its revision"),
	{.key = "engine_rev", .type = YS_CUSTOM, .read = engine_revs_read,
	 .write = engine_revs_write, .help = "last_good_engine_rev, first_bad_engine_rev"},
};
static const struct yschema entry_schema = YS_TABLE("series", entry_fields, 0);

static const struct yschema_field revision_fields[] = {
	KEY(struct regress_revision),
	RUN_STR(struct regress_revision, "run_id", run_id, Y_REQUIRED, "the night revised"),
	VERDICT(struct regress_revision, "from", from, "its verdict before"),
	VERDICT(struct regress_revision, "to", to, "its verdict now"),
};
static const struct yschema revision_schema = YS_TABLE("revised", revision_fields, 0);


#define I_NUM(m, u, h) YS_FIELD(struct regress_impact, m, YS_NUM, FIG, .unit = (u), .help = (h))
static const struct yschema_field impact_fields[] = {
	KEY(struct regress_impact),
	VERDICT(struct regress_impact, "verdict", verdict, "regression or improvement"),
	YS_PCT(struct regress_impact, "delta_pct", delta_frac, FIG,
	       .help = "the kernel's change against its baseline"),
	YS_KEYED(struct regress_impact, "component", comp, YS_ENUM, Y_REQUIRED | Y_NULLABLE,
		 .names = model_comp_ynames,
		 .help = "the model component the op maps to (null: none)"),
	RUN_STR(struct regress_impact, "scenario", scenario, Y_REQUIRED, "the scenario projected"),
	RUN_STR(struct regress_impact, "target", target, Y_REQUIRED, "its catalog GPU"),
	I_NUM(accept, "tokens", "the scenario's first acceptance"),
	I_NUM(tok_s, "tok/s", "projected throughput before the change"),
	I_NUM(tok_s_after, "tok/s", "and with it"),
	YS_PCT(struct regress_impact, "change_pct", change_frac, FIG,
	       .help = "tok_s_after against tok_s"),
};
static const struct yschema impact_schema = YS_TABLE("impact", impact_fields, 0);

static const struct yschema_name alert_state_names[] = {
	{"open", ALERT_OPEN}, {"acknowledged", ALERT_ACKED}, {"invalid", ALERT_INVALID},
	{NULL, 0}};

#define A_NUM(m, ty, u, h) YS_FIELD(struct regress_alert, m, ty, FIG, .unit = (u), .help = (h))
#define A_PCT(k, m, h) YS_PCT(struct regress_alert, k, m, FIG, .help = (h))
#define A_STR(k, m, h) RUN_STR(struct regress_alert, k, m, Y_REQUIRED, h)
static const struct yschema_field alert_fields[] = {
	A_STR("id", id, "a hash of its last good and first bad run ids"),
	KEY(struct regress_alert),
	VERDICT(struct regress_alert, "verdict", verdict, "regression or drift"),
	YS_FIELD(struct regress_alert, state, YS_ENUM, Y_REQUIRED, .names = alert_state_names,
		 .help = "open until answered"),
	A_NUM(baseline_us, YS_NUM, "us", "the old level"),
	A_NUM(level_us, YS_NUM, "us", "the new level"),
	A_PCT("delta_pct", delta_frac, "the new level against the old"),
	A_PCT("delta_lo_pct", lo_frac, "its 95% interval, low end"),
	A_PCT("delta_hi_pct", hi_frac, "its 95% interval, high end"),
	YS_FIELD(struct regress_alert, nights, YS_INT, Y_REQUIRED, .unit = "nights",
		 .help = "measured nights on the new level"),
	YS_FIELD(struct regress_alert, age_nights, YS_INT, Y_REQUIRED, .unit = "nights",
		 .help = "nights since the confirming one"),
	A_NUM(age_days, YS_NUM, "days", "days since the first bad night"),
	A_STR("opened_run", opened_run, "the night that confirmed it"),
	A_STR("last_good_run", good_run_id, "the change's last good night"),
	A_STR("first_bad_run", bad_run_id, "the change's first bad night"),
	A_STR("commits", commits, "\"a1b2c3d..e4f5a6b\""),
	A_STR("last_good_rev", good_rev, "the last good night's full revision"),
	A_STR("first_bad_rev", bad_rev, "the first bad night's full revision"),
	A_STR("answer", answer, "who answered it, when and why (\"\" none)"),
};
static const struct yschema alert_schema = YS_TABLE("alerts", alert_fields, 0);

/* The file's top: the night, its layout and its nights as written. */
struct night_io {
	struct regress_night n;
	int schema, nights;
};

/* schema: 1 to 3. */
static void schema_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
			void *obj)
{
	struct night_io *io = obj;
	yget_int(c, m, f->key, f->flags, &io->schema);
	if (io->schema > 3)
		ydiag_add(c->diag, c->file, m->line, m->col, "schema %d is newer than 3",
			  io->schema);
}

static void schema_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	yout_kv_int(y, f->key, ((const struct night_io *)obj)->schema);
}

/* counts: derived from series, for people reading the file; recomputed
 * when read. */
static void counts_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
			void *obj)
{
	(void)c, (void)obj;
	ydoc_get(m, f->key);
}

static void counts_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	const struct regress_night *n = &((const struct night_io *)obj)->n;
	yout_key(y, f->key);
	yout_map_flow(y);
	for (int v = 0; v < REG_COUNT; v++)
		yout_kv_int(y, regress_verdict_names[v], n->count[v]);
	yout_end(y);
}

/* One of the night's lists, as many items as the night has (no bound of
 * the file's own). */
#define LIST(k, m, cnt, sub, fl, h)                                                       \
	YS_VEC_OF(struct night_io, k, n.m, n.cnt, sub, INT_MAX, fl, .help = (h))
static const struct yschema_field night_fields[] = {
	YS_FIELD(struct night_io, schema, YS_CUSTOM, Y_REQUIRED | Y_POSITIVE, .read = schema_read,
		 .write = schema_write, .help = "the file's layout: 1 to 3"),
	RUN_STR(struct night_io, "run_id", n.run_id, Y_REQUIRED, "the night judged"),
	YS_FIELD(struct night_io, nights, YS_INT, Y_REQUIRED | Y_POSITIVE, .unit = "nights",
		 .help = "nights in the history up to this one"),
	{.key = "counts", .type = YS_CUSTOM, .read = counts_read, .write = counts_write,
	 .help = "series per verdict (derived from series)"},
	LIST("series", entries, n, &entry_schema, Y_REQUIRED,
	     "every series measured or due that night"),
	LIST("revised", revs, nrev, &revision_schema, Y_REQUIRED,
	     "earlier nights' verdicts this night changed"),
	LIST("impact", impacts.v, impacts.n, &impact_schema, Y_REQUIRED,
	     "what each change costs the projections"),
	/* absent from files before schema 3 */
	LIST("alerts", alerts, nalerts, &alert_schema, 0, "confirmed slowdowns, open or answered"),
};
static const struct yschema night_schema = YS_TABLE("verdict file", night_fields, 0);

void regress_night_emit(const struct regress_night *n, FILE *fp)
{
	struct night_io io = {.n = *n, .schema = 3, .nights = (int)n->nruns};
	yschema_write_doc(fp, &night_schema, &io);
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

/* The night of doc; its lists are the caller's to free (also after a
 * problem). */
static void read_root(struct regress_night *n, struct yctx *c, const struct ydoc *doc)
{
	struct night_io io;

	memset(&io, 0, sizeof io);
	yschema_read_doc(c, doc, &night_schema, &io, "verdict file");
	*n = io.n;
	n->nruns = (size_t)io.nights;
	for (size_t i = 0; i < n->n; i++)
		n->count[n->entries[i].verdict]++;
	for (size_t i = 0; i < n->nalerts; i++)
		n->open_alerts += n->alerts[i].state == ALERT_OPEN;
}

int regress_night_read(struct regress_night *n, const char *path, struct ydiag *diag)
{
	struct ydoc *doc = NULL;
	struct yctx c = {path, diag, NULL};
	size_t before = diag->n;
	int rc;

	memset(n, 0, sizeof *n);
	if ((rc = ydoc_load_file(&doc, path, diag)) != 0)
		return rc;
	read_root(n, &c, doc);
	ydoc_free(doc);
	return diag->n > before ? DDT_EINPUT : 0;
}
