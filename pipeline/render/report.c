/* report.c - the document stage: loads a stored run, renders
 * reports/<run-id>/ as a whole, points reports/latest at the newest. */
#include "report.h"

#include "chart.h"
#include "err.h"
#include "fsx.h"
#include "report_data.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STORED_MAX_BYTES (64u << 20)

/* ---------------------------------------------------------------- formats */

void report_fmt_tok(char *buf, size_t len, double tok_s)
{
	if (isfinite(tok_s))
		snprintf(buf, len, "%.1f", tok_s);
	else
		snprintf(buf, len, "-");
}

void report_fmt_ms(char *buf, size_t len, double ms)
{
	if (isfinite(ms))
		snprintf(buf, len, "%.3f", ms);
	else
		snprintf(buf, len, "-");
}

void report_fmt_us(char *buf, size_t len, double us)
{
	if (!isfinite(us))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f", fabs(us) >= 1000 ? 0 : fabs(us) >= 10 ? 1 : 2, us);
}

void report_fmt_params(char *buf, size_t len, const char *params)
{
	size_t o = 0;
	for (const char *p = params; *p && o + 2 < len; p++) {
		buf[o++] = *p;
		if (*p == ',')
			buf[o++] = ' ';
	}
	buf[o] = '\0';
}

void report_fmt_dist(char *buf, size_t len, const struct dist *d)
{
	switch (d->kind) {
	case DIST_FIXED:
		snprintf(buf, len, "fixed");
		break;
	case DIST_UNIFORM:
		snprintf(buf, len, "uniform %g - %g", d->min, d->max);
		break;
	case DIST_TRIANGULAR:
		snprintf(buf, len, "triangular %g / %g / %g", d->min, d->mode, d->max);
		break;
	case DIST_NORMAL:
		snprintf(buf, len, "normal %g sd %g", d->mean, d->sd);
		break;
	case DIST_LOGNORMAL:
		snprintf(buf, len, "lognormal median %g sigma %g", d->median, d->sigma);
		break;
	}
}

const struct dist *report_find_dist(const struct report_data *d, const char *label)
{
	int n = calib_nassumptions(&d->cal);
	for (int i = 0; i < n; i++) {
		char buf[160];
		calib_assumption_label(&d->cal, i, buf, sizeof buf);
		if (!strcmp(buf, label))
			return &d->cal.asm_[i];
	}
	return NULL;
}

/* ---------------------------------------------------------------- loading */

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
	else if ((rc = calib_load(&d->cal, p, diag)) != 0 && diag->n)
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
	return rc;
}

int report_data_load(struct report_data *d, const char *runs_dir, const char *run_id,
		     struct ydiag *diag)
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
	if ((rc = model_prepare(&d->model, &d->cal, NULL)) != 0 ||
	    (rc = estimate_run(&d->est, &d->model, d->tmpl.scenarios, d->tmpl.nscenarios)) != 0)
		return err_wrap(rc, "run %s", run_id);
	if ((rc = load_optional(d->run_dir, "projection.yaml", &d->have_proj, read_projection,
				&d->proj, diag)) != 0 ||
	    (rc = load_optional(d->run_dir, "verdicts.yaml", &d->have_night, read_night,
				&d->night, diag)) != 0)
		return rc;
	if (tmpl_section(&d->tmpl, "regress", NULL)) {
		if ((rc = regress_conf_load(&d->rconf, &d->tmpl, diag)) != 0)
			return diag->n ? err_set(rc, "%s", diag->msgs[0]) : rc;
		d->have_rconf = 1;
	}
	if (d->have_rconf && spec_wants_history(&d->spec))
		return load_history(d, runs_dir);
	return 0;
}

void report_data_free(struct report_data *d)
{
	record_free(&d->rec);
	calib_free(&d->cal);
	tmpl_free(&d->tmpl);
	estimate_free(&d->est);
	project_free(&d->proj);
	regress_night_free(&d->night);
	history_free(&d->hist);
	memset(d, 0, sizeof *d);
}

/* ---------------------------------------------------------------- figures */

long report_scenario_row(const struct report_data *d, const char *scenario)
{
	for (size_t i = 0; i < d->est.n; i++)
		if (!strcmp(d->est.rows[i].sc.name, scenario))
			return (long)i;
	return -1;
}

void report_figure(const struct report_data *d, size_t i, struct report_figure *f)
{
	const struct estimate_row *r = &d->est.rows[i];
	const struct project_row *p;

	memset(f, 0, sizeof *f);
	f->est = r;
	p = f->proj = d->have_proj ? project_find_row(&d->proj, r->sc.name, r->accept) : NULL;
	f->tok_p5 = f->tok_p50 = f->tok_p95 = NAN;
	f->step_p5 = f->step_p50 = f->step_p95 = NAN;
	if (!p) {
		f->M = r->out.M;
		memcpy(f->ms, r->out.ms, sizeof f->ms);
		f->moe_ms = r->out.ms[COMP_MOE];
		f->nonmoe_ms = r->out.nonmoe_ms;
		f->step_ms = r->out.step_ms;
		f->tok_s = r->out.tok_s;
		return;
	}
	f->M = p->M;
	memcpy(f->ms, p->ms, sizeof f->ms);
	f->moe_ms = p->moe_ms;
	f->nonmoe_ms = p->nonmoe_ms;
	f->step_ms = p->step_ms.point;
	f->step_p5 = p->step_ms.p5;
	f->step_p50 = p->step_ms.p50;
	f->step_p95 = p->step_ms.p95;
	f->tok_s = p->tok_s.point;
	f->tok_p5 = p->tok_s.p5;
	f->tok_p50 = p->tok_s.p50;
	f->tok_p95 = p->tok_s.p95;
}

/* ---------------------------------------------------------------- status */

void report_regress_status(const struct report_data *d, char *buf, size_t len)
{
	const struct regress_night *n = &d->night;
	const int *k = n->count;
	size_t off = 0;

	if (!d->have_night || n->n == 0) {
		snprintf(buf, len, "no history yet");
		return;
	}
	if (k[REG_REGRESSION] == 0 && k[REG_SUSPECT] == 0 && k[REG_OK] == 0 &&
	    k[REG_IMPROVEMENT] == 0 && k[REG_OUTLIER] == 0) {
		snprintf(buf, len, "no history yet: %d series new, %d with not enough history",
			 k[REG_NEW], k[REG_SHORT]);
		return;
	}
	if (k[REG_REGRESSION])
		off += (size_t)snprintf(buf + off, len - off, "%d regression%s", k[REG_REGRESSION],
					k[REG_REGRESSION] == 1 ? "" : "s");
	else
		off += (size_t)snprintf(buf + off, len - off, "no regressions");
	static const enum regress_verdict rest[] = {REG_SUSPECT, REG_IMPROVEMENT, REG_OK,
						    REG_OUTLIER, REG_NEW, REG_SHORT,
						    REG_FAILED, REG_SKIPPED};
	const char *sep = ": ";
	for (size_t i = 0; i < sizeof rest / sizeof *rest && off < len; i++)
		if (k[rest[i]]) {
			off += (size_t)snprintf(buf + off, len - off, "%s%d %s", sep, k[rest[i]],
						regress_verdict_name(rest[i]));
			sep = ", ";
		}
}

/* ---------------------------------------------------------------- summary */

static void summary_row(const struct report_data *d, size_t i, FILE *fp)
{
	struct report_figure f;
	char tok[32], lo[32], hi[32], step[32];
	report_figure(d, i, &f);
	report_fmt_tok(tok, sizeof tok, f.tok_s);
	report_fmt_tok(lo, sizeof lo, f.tok_p5);
	report_fmt_tok(hi, sizeof hi, f.tok_p95);
	report_fmt_ms(step, sizeof step, f.step_ms);
	fprintf(fp, "  %-18s accept %-5g %8s tok/s  (p5-p95 %s-%s)  step %s ms%s\n",
		f.est->sc.name, f.est->accept, tok, lo, hi, step,
		f.est->runnable ? "" : "  [not runnable]");
}

void report_write_summary(const struct report_data *d, FILE *fp)
{
	const struct anchor *a = &d->cal.sglang_b8;
	char status[512];
	long b = report_scenario_row(d, d->spec.baseline);

	long h0 = d->spec.nheadline ? report_scenario_row(d, d->spec.headline[0]) : -1;

	fprintf(fp, "ddt report %s (%s)\n%s\n\n", d->rec.run_id, d->date_text, d->spec.title);
	if (h0 >= 0)
		fprintf(fp, "%s at C=%d", d->est.rows[h0].target->name,
			d->est.rows[h0].sc.concurrency);
	fprintf(fp, "%sheadline (point estimate, Monte Carlo p5-p95):\n", h0 >= 0 ? ", " : "");
	for (int h = 0; h < d->spec.nheadline; h++)
		for (size_t i = 0; i < d->est.n; i++)
			if (!strcmp(d->est.rows[i].sc.name, d->spec.headline[h]))
				summary_row(d, i, fp);
	if (!d->have_proj)
		fprintf(fp, "  (no projection stored with this run: no bands)\n");
	fprintf(fp, "\nmeasured baseline: %s, %s pipeline, block %g, budget %g, C=%g: ", a->gpu,
		pipeline_name(a->pipeline), a->block, a->budget, a->concurrency);
	if (isfinite(a->tok_s))
		fprintf(fp, "%.1f tok/s at acceptance %g, step %.3f ms\n", a->tok_s, a->accept,
			a->step_ms);
	else
		fprintf(fp, "step %.3f ms\n", a->step_ms);
	if (b >= 0)
		summary_row(d, (size_t)b, fp);
	report_regress_status(d, status, sizeof status);
	fprintf(fp, "\nregressions: %s\n", status);
	for (size_t i = 0; d->have_night && i < d->night.n; i++) {
		const struct regress_entry *e = &d->night.entries[i];
		if (e->verdict == REG_REGRESSION || e->verdict == REG_SUSPECT)
			fprintf(fp, "  %s %s/%s %s: %.2f us vs baseline %.2f us (%+.1f%%)\n",
				regress_verdict_name(e->verdict), e->key.op, e->key.variant,
				e->key.params, e->median_us, e->baseline_us, 100 * e->delta_frac);
	}
}

/* ---------------------------------------------------------------- output */

/* fsyncs a file or folder. */
static int fsync_path(const char *path)
{
	int fd = open(path, O_RDONLY), rc = 0;
	if (fd < 0 || fsync(fd) != 0)
		rc = err_set(DDT_EIO, "%s: fsync failed: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The spreadsheet under a temporary name, synced, then renamed into place
 * (libxlsxwriter writes by file name, not through a FILE). */
static int write_xlsx(const struct report_data *d, const char *dir)
{
	char *tmp = fsx_join(dir, ".report.xlsx.tmp"), *fin = fsx_join(dir, "report.xlsx");
	int rc = 0;
	if (!tmp || !fin)
		rc = err_nomem();
	else if ((rc = xlsx_write_report(d, tmp)) != 0 || (rc = fsync_path(tmp)) != 0)
		unlink(tmp);
	else if (rename(tmp, fin) != 0)
		rc = err_set(DDT_EIO, "%s: cannot rename into place: %s", fin, strerror(errno));
	free(tmp);
	free(fin);
	return rc;
}

static int write_summary(const struct report_data *d, const char *dir)
{
	char *path = fsx_join(dir, "summary.txt");
	struct fsx_file f;
	int rc;
	if (!path)
		return err_nomem();
	if ((rc = fsx_open(&f, path)) == 0) {
		report_write_summary(d, f.fp);
		rc = fsx_commit(&f);
	}
	free(path);
	return rc;
}

/* Writes every chart section's PNG into dir/charts (which exists). */
static int write_charts(const struct report_data *d, const char *charts)
{
	int rc = 0;
	for (int i = 0; !rc && i < d->spec.nsections; i++) {
		const struct report_section *s = &d->spec.sections[i];
		struct report_chart arg = {d, s};
		char name[96], *path;
		if (!report_section_is_chart(s->kind))
			continue;
		report_chart_name(&d->spec, i, name, sizeof name);
		if (!(path = fsx_join(charts, name)))
			rc = err_nomem();
		else
			rc = chart_write_png(path, d->spec.chart_width_pt, d->spec.chart_height_pt,
					     d->spec.png_scale, chart_report_draw, &arg);
		free(path);
	}
	return rc ? rc : fsync_path(charts);
}

/* The PNGs are drawn on a second thread while this one writes the PDF and
 * the spreadsheet: the documents do not depend on each other, and pango
 * gives each thread its own font map. */
struct chart_job {
	const struct report_data *d;
	const char *charts;
	int rc;
	char msg[1024]; /* the worker's error message (err_msg is per thread) */
};

static void *chart_worker(void *arg)
{
	struct chart_job *j = arg;
	j->rc = write_charts(j->d, j->charts);
	if (j->rc)
		snprintf(j->msg, sizeof j->msg, "%s", err_msg());
	return NULL;
}

/* Puts tmp_dir in place of final_dir, which exists: the two are exchanged in
 * one step, so a reader sees the old documents or the new, never a mix; the
 * old ones (now at tmp_dir) are then removed. */
static int replace_dir(const char *tmp_dir, const char *final_dir)
{
	char *copy = strdup(final_dir);
	int rc = fsync_path(tmp_dir);

	if (!copy)
		return err_nomem();
	if (!rc && renameat2(AT_FDCWD, tmp_dir, AT_FDCWD, final_dir, RENAME_EXCHANGE) != 0)
		rc = err_set(DDT_EIO, "%s: cannot replace: %s", final_dir, strerror(errno));
	if (!rc)
		rc = fsync_path(dirname(copy));
	free(copy);
	if (!rc)
		fsx_rm_rf(tmp_dir);
	return rc;
}

/* True for a folder name that is a rendered run. */
static int is_run_dir(const struct dirent *e)
{
	return !fsx_is_temp_name(e->d_name) && record_run_id_valid(e->d_name);
}

/* The newest run id among dir's folders into id ("" when none). */
static int newest_run(const char *dir, char *id, size_t len)
{
	struct dirent **list;
	int n = scandir(dir, &list, is_run_dir, alphasort);
	id[0] = '\0';
	if (n < 0)
		return err_set(DDT_EIO, "%s: cannot read folder: %s", dir, strerror(errno));
	if (n > 0 && strlen(list[n - 1]->d_name) < len)
		memcpy(id, list[n - 1]->d_name, strlen(list[n - 1]->d_name) + 1);
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return 0;
}

/* Points reports_dir/latest at the newest rendered run: a new link under a
 * temporary name renamed over the old one. */
static int point_latest(const char *reports_dir)
{
	char id[96], *link = fsx_join(reports_dir, "latest"), *tmp = NULL;
	int rc = newest_run(reports_dir, id, sizeof id);

	if (!link || asprintf(&tmp, "%s/.latest.tmp-%ld", reports_dir, (long)getpid()) < 0) {
		free(link);
		return err_nomem();
	}
	if (!rc && id[0]) {
		unlink(tmp);
		if (symlink(id, tmp) != 0 || rename(tmp, link) != 0) {
			rc = err_set(DDT_EIO, "%s: cannot point at %s: %s", link, id, strerror(errno));
			unlink(tmp);
		} else
			rc = fsync_path(reports_dir);
	}
	free(tmp);
	free(link);
	return rc;
}

static int render_into(const struct report_data *d, const char *dir)
{
	char *pdf = fsx_join(dir, "report.pdf"), *charts = fsx_join(dir, "charts");
	struct chart_job job = {d, charts, 0, ""};
	pthread_t th;
	int rc = 0, threaded = 0;

	if (!pdf || !charts)
		rc = err_nomem();
	else if (mkdir(charts, 0777) != 0)
		rc = err_set(DDT_EIO, "%s: cannot create folder: %s", charts, strerror(errno));
	if (!rc)
		threaded = pthread_create(&th, NULL, chart_worker, &job) == 0;
	if (!rc && (rc = pdf_write_report(d, pdf)) == 0 && (rc = write_xlsx(d, dir)) == 0)
		rc = write_summary(d, dir);
	if (threaded)
		pthread_join(th, NULL);
	else if (!rc)
		chart_worker(&job);
	if (!rc && job.rc)
		rc = err_set(job.rc, "%s", job.msg);
	free(pdf);
	free(charts);
	return rc;
}

int report_render(const struct report_ctx *ctx, const char *reports_dir, const char *run_id)
{
	struct report_data d;
	struct ydiag diag = {0};
	char *conf = NULL, *final = NULL, *tmp = NULL;
	int rc;

	/* fontconfig resolves a relative FONTCONFIG_FILE against its own folder */
	if (asprintf(&conf, "%s/fonts/fonts.conf", ctx->home ? ctx->home : ".") < 0)
		return err_nomem();
	char *abs = realpath(conf, NULL);
	rc = abs ? chart_fonts_init(abs)
		 : err_set(DDT_EINPUT, "%s: the project's fontconfig file is missing: %s", conf,
			   strerror(errno));
	free(abs);
	free(conf);
	if (rc)
		return rc;
	if ((rc = report_data_load(&d, ctx->runs_dir, run_id, &diag)) != 0)
		goto done;
	if ((rc = fsx_mkdir_p(reports_dir)) != 0)
		goto done;
	if (!(final = fsx_join(reports_dir, run_id))) {
		rc = err_nomem();
		goto done;
	}
	if ((rc = fsx_dir_begin(final, &tmp)) != 0)
		goto done;
	if ((rc = render_into(&d, tmp)) != 0) {
		fsx_rm_rf(tmp);
		goto done;
	}
	rc = fsx_exists(final) ? replace_dir(tmp, final) : fsx_dir_commit(tmp, final);
	if (rc)
		fsx_rm_rf(tmp);
	else
		rc = point_latest(reports_dir);
	if (!rc && !ctx->quiet)
		printf("ddt report: %s/{report.pdf, report.xlsx, summary.txt, charts/}\n", final);
done:
	free(final);
	free(tmp);
	report_data_free(&d);
	ydiag_free(&diag);
	return rc;
}

/* ---------------------------------------------------------------- stash */

static int copy_file(const char *src, const char *dst)
{
	char *data;
	size_t len;
	int rc = fsx_read_all(src, STORED_MAX_BYTES, &data, &len);
	if (rc)
		return rc;
	rc = fsx_write_all(dst, data, len);
	free(data);
	return rc;
}

/* Copies src into folder dir under its own name. */
static int copy_into(const char *src, const char *dir, const char *name)
{
	char *copy = strdup(src), *dst = copy ? fsx_join(dir, name ? name : basename(copy)) : NULL;
	int rc = dst ? copy_file(src, dst) : err_nomem();
	free(dst);
	free(copy);
	return rc;
}

static int yaml_file(const struct dirent *e)
{
	size_t n = strlen(e->d_name);
	return !fsx_is_temp_name(e->d_name) && n > 5 && !strcmp(e->d_name + n - 5, ".yaml");
}

static int stash_calibration(const char *dir, const char *calibration)
{
	struct stat st;
	struct dirent **list;
	int n, rc = 0;

	if ((rc = fsx_mkdir_p(dir)) != 0)
		return rc;
	if (stat(calibration, &st) != 0)
		return err_set(DDT_EINPUT, "%s: no such calibration file or folder", calibration);
	if (!S_ISDIR(st.st_mode))
		return copy_into(calibration, dir, NULL);
	if ((n = scandir(calibration, &list, yaml_file, alphasort)) < 0)
		return err_set(DDT_EIO, "%s: cannot read folder: %s", calibration, strerror(errno));
	for (int i = 0; i < n; i++) {
		char *src = fsx_join(calibration, list[i]->d_name);
		if (!rc)
			rc = src ? copy_into(src, dir, NULL) : err_nomem();
		free(src);
		free(list[i]);
	}
	free(list);
	return rc;
}

static int stash_template(const char *dir, const char *template_path)
{
	struct tmpl t;
	struct ydiag diag = {0};
	int rc = tmpl_load(&t, template_path, &diag);

	if (rc && diag.n)
		err_set(rc, "%s", diag.msgs[0]);
	if (!rc && (rc = fsx_mkdir_p(dir)) == 0 &&
	    (rc = copy_into(template_path, dir, "template.yaml")) == 0 && t.parent) {
		char *copy = strdup(t.parent->file);
		if (!copy)
			rc = err_nomem();
		else if (!strcmp(basename(copy), "template.yaml"))
			rc = err_set(DDT_EINPUT, "%s: a parent template cannot be named template.yaml",
				     t.parent->file);
		else
			rc = copy_into(t.parent->file, dir, NULL);
		free(copy);
	}
	tmpl_free(&t);
	ydiag_free(&diag);
	return rc;
}

int report_stash_inputs(const char *run_dir, const char *calibration, const char *template_path)
{
	char *cdir = fsx_join(run_dir, "calibration"), *tdir = fsx_join(run_dir, "template");
	int rc = !cdir || !tdir ? err_nomem() : 0;
	if (!rc)
		rc = stash_calibration(cdir, calibration);
	if (!rc)
		rc = stash_template(tdir, template_path);
	free(cdir);
	free(tdir);
	return rc;
}

/* ---------------------------------------------------------------- stored runs */

int report_newest_run(const char *runs_dir, char *id, size_t len)
{
	struct dirent **list;
	int n = scandir(runs_dir, &list, is_run_dir, alphasort);
	id[0] = '\0';
	if (n < 0)
		return err_set(DDT_ENOTFOUND, "%s: cannot read folder: %s", runs_dir,
			       strerror(errno));
	for (int i = n - 1; i >= 0 && !id[0]; i--) {
		char *p = NULL;
		size_t nl = strlen(list[i]->d_name);
		if (nl < len && asprintf(&p, "%s/%s/run.yaml", runs_dir, list[i]->d_name) >= 0 &&
		    fsx_exists(p))
			memcpy(id, list[i]->d_name, nl + 1);
		free(p);
	}
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return id[0] ? 0 : err_set(DDT_ENOTFOUND, "no runs in %s", runs_dir);
}
