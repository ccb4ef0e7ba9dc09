/* report_load.c - a run's documents' data made from its folder: the stored
 * inputs, what the stages derive from them, and the documents rendered. */
#include "report_load.h"

#include "acks.h"
#include "err.h"
#include "estimate.h"
#include "calibrate.h"
#include "fsx.h"
#include "model.h"
#include "project.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the stored run */

/* "2025-12-02T15:42:07Z" -> seconds since the epoch; -1 when malformed. */
static time_t parse_created(const char *s)
{
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
		   &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return timegm(&tm);
}

/* Reads an optional stored file with reader; *have is 1 when it was there. */
static int load_optional(const char *dir, const char *name, int *have,
			 int (*reader)(void *obj, const char *path, struct ydiag *diag), void *obj,
			 struct ydiag *diag)
{
	char *path = fsx_join(dir, name);
	int rc = 0;
	if (!path)
		return err_nomem();
	*have = 0;
	if (fsx_exists(path)) {
		rc = reader(obj, path, diag);
		*have = rc == 0;
		if (rc == DDT_EINPUT && diag->n)
			err_set(rc, "%s", diag->msgs[diag->n - 1]);
	}
	free(path);
	return rc;
}

static int read_projection(void *obj, const char *path, struct ydiag *diag)
{
	return project_read(obj, path, diag);
}

static int read_night(void *obj, const char *path, struct ydiag *diag)
{
	return regress_night_read(obj, path, diag);
}

/* The projection of the committed run just before run_id in runs_dir
 * (report_runs' order), for the page-one "since the previous night". A
 * missing or damaged one is no previous night: it never fails the report. */
static void load_prev(struct report_data *d, const char *runs_dir, const char *run_id)
{
	struct report_doc *runs = NULL;
	struct ydiag quiet = {0};
	size_t n = 0;
	char dir[PATH_MAX + 200];
	if (report_runs(runs_dir, &runs, &n) != 0)
		n = 0;
	for (size_t i = 1; i < n; i++) {
		if (strcmp(runs[i].id, run_id) != 0)
			continue;
		snprintf(dir, sizeof dir, "%s/%s", runs_dir, runs[i - 1].id);
		if (load_optional(dir, "projection.yaml", &d->have_prev, read_projection, &d->prev,
				  &quiet) != 0) {
			project_free(&d->prev);
			d->have_prev = 0;
		}
		if (d->have_prev)
			snprintf(d->prev_id, sizeof d->prev_id, "%s", runs[i - 1].id);
		break;
	}
	err_clear();
	ydiag_free(&quiet);
	free(runs);
}

/* 1 when a history section of the spec shows op. */
static int spec_has_history(const struct report_spec *sp, const char *op)
{
	for (int i = 0; i < sp->nsections; i++)
		if (sp->sections[i].kind == RSEC_HISTORY && !strcmp(sp->sections[i].op, op) &&
		    !sp->sections[i].variant[0])
			return 1;
	return 0;
}

/* Adds a history chart section for op after the spec's last one (before
 * its regressions when it has none), when no section shows op yet. */
static void spec_add_history(struct report_spec *sp, const char *op)
{
	int at = sp->nsections;
	if (spec_has_history(sp, op) || sp->nsections == REPORT_MAX_SECTIONS)
		return;
	for (int i = 0; i < sp->nsections; i++)
		if (sp->sections[i].kind == RSEC_HISTORY)
			at = i + 1;
	for (int i = 0; at == sp->nsections && i < sp->nsections; i++)
		if (sp->sections[i].kind == RSEC_REGRESSIONS)
			at = i;
	memmove(&sp->sections[at + 1], &sp->sections[at],
		(size_t)(sp->nsections - at) * sizeof *sp->sections);
	memset(&sp->sections[at], 0, sizeof *sp->sections);
	sp->sections[at].kind = RSEC_HISTORY;
	snprintf(sp->sections[at].op, sizeof sp->sections[at].op, "%s", op);
	sp->nsections++;
}

/* Every op with an alert, or with a change point tonight (a regression,
 * drift or improvement), gets its history chart, whatever the template
 * lists. */
static void add_flagged_histories(struct report_data *d)
{
	if (!d->have_night)
		return;
	for (size_t i = 0; i < d->night.nalerts; i++)
		spec_add_history(&d->spec, d->night.alerts[i].key.op);
	for (size_t i = 0; i < d->night.n; i++) {
		enum regress_verdict v = d->night.entries[i].verdict;
		if (v == REG_REGRESSION || v == REG_DRIFT || v == REG_IMPROVEMENT)
			spec_add_history(&d->spec, d->night.entries[i].key.op);
	}
}

static int spec_wants_history(const struct report_spec *s)
{
	for (int i = 0; i < s->nsections; i++)
		if (s->sections[i].kind == RSEC_HISTORY)
			return 1;
	return 0;
}

/* The history of runs_dir up to this run, analysed with the stored template's
 * regression settings. Damaged records of other nights are skipped (history.h);
 * their warnings are dropped here because this night's documents do not
 * depend on them. */
static int load_history(struct report_data *d, const char *runs_dir)
{
	struct ydiag warn = {0};
	int rc = history_load_until(&d->hist, runs_dir, d->rec.run_id, &warn);
	ydiag_free(&warn);
	if (rc)
		return rc;
	regress_history(&d->rconf, &d->hist);
	d->hist_run = history_run_index(&d->hist, d->rec.run_id);
	return 0;
}

/* The night's alerts with the answers runs/acks.yaml holds now: an alert
 * acknowledged since its night was judged reads so. */
static int answers_now(struct report_data *d, const char *runs_dir)
{
	struct history acks = {0};
	int rc = acks_load(&acks, runs_dir, NULL);
	if (!rc)
		regress_alerts_answer(&d->night, &acks);
	history_free(&acks);
	return rc;
}

/* Loads the stored inputs (record, calibration, template) of d->run_dir. */
static int load_inputs(struct report_data *d, struct ydiag *diag)
{
	char *p = NULL;
	int rc;

	if (!(p = fsx_join(d->run_dir, "run.yaml")))
		return err_nomem();
	if (!fsx_exists(p))
		rc = err_set(DDT_ENOTFOUND, "%s: no run record", p);
	else if ((rc = record_read(&d->rec, p, diag)) == DDT_EINPUT && diag->n)
		err_set(rc, "%s", diag->msgs[0]);
	free(p);
	if (rc)
		return rc;
	if (!(p = fsx_join(d->run_dir, "calibration")))
		return err_nomem();
	if (!fsx_exists(p))
		rc = err_set(DDT_EINPUT, "%s: missing (the nightly stores the calibration it used "
					 "there with report_stash_inputs)", p);
	else if ((rc = calibrate_load(&d->cal, &d->der, p, NULL, diag)) != 0 && diag->n)
		err_set(rc, "%s", diag->msgs[0]);
	free(p);
	if (rc)
		return rc;
	if (!(p = fsx_join(d->run_dir, "template/template.yaml")))
		return err_nomem();
	if (!fsx_exists(p))
		rc = err_set(DDT_EINPUT, "%s: missing (the nightly stores the template it used "
					 "there with report_stash_inputs)", p);
	else if ((rc = tmpl_load(&d->tmpl, p, diag)) != 0 && diag->n)
		err_set(rc, "%s", diag->msgs[0]);
	free(p);
	if (!rc && (rc = report_spec_load(&d->spec, &d->tmpl, diag)) != 0 && diag->n)
		err_set(rc, "%s", diag->msgs[0]);
	if (!rc && !(p = fsx_join(d->run_dir, "calibration/" SOURCES_FILE)))
		return err_nomem();
	if (!rc && fsx_exists(p)) /* runs stored before it was kept have none */
		rc = sources_load(&d->sources, p);
	free(p);
	return rc;
}

/* ---------------------------------------------------------------- the night's lines */

static char *line_dup(const char *s)
{
	return strdup(s);
}

/* Allocates t's arrays for n (zeroed). Returns 0 or DDT_ENOMEM. */
static int night_text_alloc(struct report_night_text *t, const struct regress_night *n)
{
	size_t na = n->nalerts ? n->nalerts : 1;
	t->entry = calloc(n->n ? n->n : 1, sizeof *t->entry);
	t->group = calloc(na, sizeof *t->group);
	t->group_line = calloc(na, sizeof *t->group_line);
	t->series_line = calloc(na, sizeof *t->series_line);
	t->impact = calloc(n->impacts.n ? n->impacts.n : 1, sizeof *t->impact);
	return t->entry && t->group && t->group_line && t->series_line && t->impact
		       ? 0 : err_nomem();
}

int report_night_text_make(struct report_night_text *t, const struct regress_night *n,
			   const char *url)
{
	char line[1400];
	int rc;

	memset(t, 0, sizeof *t);
	if ((rc = night_text_alloc(t, n)) != 0)
		return rc;
	for (size_t i = 0; i < n->n; i++)
		if (!(t->entry[i] = line_dup(regress_entry_line(&n->entries[i], line, sizeof line))))
			return err_nomem();
	for (size_t i = 0, k; i < n->nalerts; i += k) {
		k = t->group[i] = regress_alert_group(n, i);
		if (!(t->group_line[i] = line_dup(regress_alert_group_line(&n->alerts[i], k, url,
									   line, 1024))))
			return err_nomem();
	}
	for (size_t i = 0; i < n->nalerts; i++)
		if (!(t->series_line[i] = line_dup(regress_alert_series_line(&n->alerts[i], line,
									     1024))))
			return err_nomem();
	for (size_t i = 0; i < n->impacts.n; i++)
		if (!(t->impact[i] = line_dup(regress_impact_line(&n->impacts.v[i], line, 400))))
			return err_nomem();
	return 0;
}

static void free_lines(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

void report_night_text_free(struct report_night_text *t, const struct regress_night *n)
{
	free_lines(t->entry, n->n);
	free_lines(t->group_line, n->nalerts);
	free_lines(t->series_line, n->nalerts);
	free_lines(t->impact, n->impacts.n);
	free(t->group);
	memset(t, 0, sizeof *t);
}

/* ---------------------------------------------------------------- derived */

/* The fit's parameters in calib order; 0 when one is missing. */
static int fit_params(const struct project_fit *fit, double p[MOE_P_COUNT])
{
	int found = 0;
	for (int k = 0; k < MOE_P_COUNT; k++)
		for (int i = 0; i < fit->nparams; i++)
			if (!strcmp(fit->params[i].name, calib_moe_param_name((enum moe_param)k))) {
				p[k] = fit->params[i].value;
				found++;
			}
	return found == MOE_P_COUNT;
}

/* The MoE chart's curves: the reference, the fitted physical curve and the
 * headline's target, and the target's MoE time at each estimate row's M. */
static int derive_moe(struct report_data *d)
{
	struct report_moe_curve *m = &d->moe;
	const struct project_fit *fit = d->have_proj ? &d->proj.fit : NULL;
	long h = d->spec.nheadline ? report_scenario_row(d, d->spec.headline[0]) : -1;
	double p[MOE_P_COUNT];

	m->target = h >= 0 ? d->est.rows[h].target : calib_gpu(&d->cal, "b300");
	if (fit && fit->curve == MOE_CURVE_PHYSICAL && fit_params(fit, p) &&
	    (m->fitg = calib_gpu(&d->cal, fit->gpu)) != NULL)
		m->have_fit = 1;
	for (int i = 0; i < REPORT_CURVE_STEPS; i++) {
		double x = m->xs[i] = pow(10, log10(REPORT_CURVE_MMAX) * i / (REPORT_CURVE_STEPS - 1));
		m->ref[i] = model_moe_ref_ms(&d->model, x);
		m->fit[i] = m->have_fit ? model_phys_ms(&d->cal, m->fitg, p, x) : NAN;
		m->tgt[i] = m->target ? model_moe_ms(&d->model, m->target, x) : NAN;
	}
	if (!(m->row_ms = calloc(d->est.n ? d->est.n : 1, sizeof *m->row_ms)))
		return err_nomem();
	for (size_t i = 0; i < d->est.n; i++) {
		const struct estimate_row *r = &d->est.rows[i];
		m->row_ms[i] = m->target && r->target == m->target
				       ? model_moe_ms(&d->model, m->target, r->out.M) : NAN;
	}
	return 0;
}

/* What the documents read beside the stored results: each estimate row's
 * projection row, each input's basis, each device's catalog GPU, the
 * night's lines, the MoE curves and the What-if sheet's values. */
static int derive(struct report_data *d)
{
	size_t nin = d->have_proj ? d->proj.ninputs : 0;
	d->row_proj = calloc(d->est.n ? d->est.n : 1, sizeof *d->row_proj);
	d->input_basis = calloc(nin ? nin : 1, sizeof *d->input_basis);
	d->device_gpu = calloc(d->rec.ndevices ? d->rec.ndevices : 1, sizeof *d->device_gpu);
	if (!d->row_proj || !d->input_basis || !d->device_gpu)
		return err_nomem();
	for (size_t i = 0; d->have_proj && i < d->est.n; i++)
		d->row_proj[i] = project_find_row(&d->proj, d->est.rows[i].sc.name,
						  d->est.rows[i].accept);
	for (size_t i = 0; i < nin; i++)
		project_input_basis(&d->proj.inputs[i], d->input_basis[i], sizeof d->input_basis[i]);
	report_data_devices(d);
	int rc;
	if (d->have_night) {
		rc = report_night_text_make(&d->ntext, &d->night,
						d->have_rconf ? d->rconf.commit_url : NULL);
		if (rc)
			return rc;
	}
	if ((rc = derive_moe(d)) != 0)
		return rc;
	d->wi_rc = whatif_make(&d->wi, &d->cal, &d->model, &d->est, d->have_proj ? &d->proj : NULL);
	return 0;
}

void report_data_devices(struct report_data *d)
{
	for (size_t i = 0; i < d->rec.ndevices; i++) {
		const struct rec_device *v = &d->rec.devices[i];
		d->device_gpu[i] = strcmp(v->kind, "cuda") ? NULL : project_device_gpu(&d->cal, v->name);
	}
}

static void free_derived(struct report_data *d)
{
	free(d->row_proj);
	free(d->input_basis);
	free(d->device_gpu);
	free(d->moe.row_ms);
	whatif_free(&d->wi);
	report_night_text_free(&d->ntext, &d->night);
}

/* ---------------------------------------------------------------- loading */

/* The run's stored results, after its inputs: the model's estimates, the
 * projection and verdicts, the previous night, the regression settings and
 * the history. */
static int load_results(struct report_data *d, const char *runs_dir, const char *run_id,
			const struct history *hist, struct ydiag *diag)
{
	int rc;
	if ((rc = model_prepare(&d->model, &d->cal, &d->der, NULL)) != 0 ||
	    (rc = estimate_run(&d->est, &d->model, d->tmpl.scenarios, d->tmpl.nscenarios)) != 0)
		return err_wrap(rc, "run %s", run_id);
	if ((rc = load_optional(d->run_dir, "projection.yaml", &d->have_proj, read_projection,
				&d->proj, diag)) != 0 ||
	    (rc = load_optional(d->run_dir, "verdicts.yaml", &d->have_night, read_night,
				&d->night, diag)) != 0)
		return rc;
	if (d->have_night && (rc = answers_now(d, runs_dir)) != 0)
		return rc;
	if (d->have_proj)
		load_prev(d, runs_dir, run_id);
	add_flagged_histories(d);
	/* with a projection, the rows are its rows, as `ddt estimate` prints
	 * them: a calibrated scenario is one row at its acceptance range's
	 * middle, carrying the band, not the seed model at each end */
	if (d->have_proj) {
		estimate_free(&d->est);
		if ((rc = estimate_from_projection(&d->est, &d->proj, &d->cal)) != 0)
			return err_wrap(rc, "run %s", run_id);
	}
	if (tmpl_section(&d->tmpl, "regress", NULL)) {
		if ((rc = regress_conf_load(&d->rconf, &d->tmpl, diag)) != 0)
			return diag->n ? err_set(rc, "%s", diag->msgs[0]) : rc;
		d->have_rconf = 1;
	}
	if (d->have_rconf && spec_wants_history(&d->spec) && hist) {
		d->hist = *hist; /* read only, never freed here */
		d->hist_borrowed = 1;
		d->hist_run = history_run_index(&d->hist, d->rec.run_id);
	} else if (d->have_rconf && spec_wants_history(&d->spec))
		return load_history(d, runs_dir);
	return 0;
}

int report_data_load(struct report_data *d, const char *runs_dir, const char *run_id,
		     const struct history *hist, struct ydiag *diag)
{
	struct tm tm;
	int rc;

	memset(d, 0, sizeof *d);
	d->hist_run = -1;
	if (!record_run_id_valid(run_id))
		return err_set(DDT_EINPUT, "'%s' is not a run id (YYYYMMDDTHHMMSSZ-host)", run_id);
	snprintf(d->run_dir, sizeof d->run_dir, "%s/%s", runs_dir, run_id);
	if (!fsx_exists(d->run_dir))
		return err_set(DDT_ENOTFOUND, "no run %s in %s", run_id, runs_dir);
	if ((rc = load_inputs(d, diag)) != 0)
		return err_wrap(rc, "run %s", run_id);
	if (strcmp(d->rec.run_id, run_id) != 0)
		return err_set(DDT_EINPUT, "%s/run.yaml: holds run %s", d->run_dir, d->rec.run_id);
	d->created = parse_created(d->rec.created);
	if (d->created < 0)
		return err_set(DDT_EINPUT, "%s/run.yaml: created '%s' is not YYYY-MM-DDTHH:MM:SSZ",
			       d->run_dir, d->rec.created);
	gmtime_r(&d->created, &tm);
	strftime(d->created_iso, sizeof d->created_iso, "%Y-%m-%dT%H:%M:%SZ", &tm);
	strftime(d->date_text, sizeof d->date_text, "%Y-%m-%d %H:%M UTC", &tm);
	if ((rc = load_results(d, runs_dir, run_id, hist, diag)) != 0)
		return rc;
	return derive(d);
}

void report_data_free(struct report_data *d)
{
	free_derived(d);
	record_free(&d->rec);
	calib_free(&d->cal);
	tmpl_free(&d->tmpl);
	sources_free(&d->sources);
	estimate_free(&d->est);
	project_free(&d->proj);
	project_free(&d->prev);
	regress_night_free(&d->night);
	if (!d->hist_borrowed)
		history_free(&d->hist);
	memset(d, 0, sizeof *d);
}

/* ---------------------------------------------------------------- documents */

int report_render(const struct report_ctx *ctx, const char *reports_dir, const char *run_id)
{
	struct report_data d;
	struct ydiag diag = {0};
	int rc;

	if ((rc = report_begin(ctx, run_id)) != 0)
		return rc;
	if ((rc = report_data_load(&d, ctx->runs_dir, run_id, ctx->hist, &diag)) == 0)
		rc = report_write(ctx, reports_dir, &d);
	report_data_free(&d);
	ydiag_free(&diag);
	return rc;
}
