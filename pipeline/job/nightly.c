/* nightly.c - the nightly job: lock, bench, run record, history, regression,
 * projection, documents and retention, with a log of the run in its folder. */
#include "nightly.h"

#include "bench.h"
#include "cuda_api.h"
#include "err.h"
#include "esc.h"
#include "calibrate.h"
#include "fit.h"
#include "fsx.h"
#include "history.h"
#include "lock.h"
#include "yschema.h"
#include "project.h"
#include "publish.h"
#include "record.h"
#include "regress.h"
#include "repair.h"
#include "report.h"
#include "report_spec.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- settings */

/* How many names after tonight's run id a nightly tries before it gives up
 * (each one an lstat in runs/ and reports/): past this, someone has filled
 * runs/ with names on purpose. */
#define NIGHTLY_MAX_ID_TRIES 100000

/* notify: nightly.notify, read by notify.c (absent: no channel). */
static void notify_read(struct yctx *y, struct ydoc_node *sec, const struct yschema_field *f,
			void *obj)
{
	(void)f;
	notify_conf_load(&((struct nightly_conf *)obj)->notify, y, sec);
}

#define NIGHT(m, u, h)                                                                    \
	YS_FIELD(struct nightly_conf, m, YS_INT, Y_REQUIRED | Y_POSITIVE, .unit = (u), .help = (h))
/* In the order read. */
static const struct yschema_field nightly_fields[] = {
	YS_FIELD(struct nightly_conf, source, YS_STR, Y_REQUIRED,
		 .help = "why these retention and lock limits"),
	NIGHT(keep_documents_runs, "runs", "the documents of this many newest runs are kept"),
	NIGHT(lock_hung_after_min, "min", "a nightly holding the lock longer looks hung"),
	{.key = "notify", .type = YS_CUSTOM, .read = notify_read,
	 .help = "the morning news: a command and/or a webhook (optional)"},
};
static const struct yschema nightly_schema = YS_TABLE("nightly", nightly_fields, 0);

int nightly_conf_load(struct nightly_conf *c, const struct tmpl *t, struct ydiag *diag)
{
	struct yctx y;
	struct ydoc_node *sec = tmpl_section_map(t, "nightly", diag, &y);
	size_t before = diag->n;

	memset(c, 0, sizeof *c);
	if (!sec)
		return DDT_EINPUT;
	yschema_read(&y, sec, &nightly_schema, c);
	return diag->n > before ? DDT_EINPUT : 0;
}

/* ---------------------------------------------------------------- retention */

/* Moves dir/name out of sight under a temporary name, then removes it (no
 * link followed: fsx.h). */
static int remove_documents(const char *dir, const char *name)
{
	char *from = fsx_join(dir, name), *to = NULL;
	int rc = 0;

	if (!from || asprintf(&to, "%s/.%s.tmp-%ld", dir, name, (long)getpid()) < 0) {
		free(from);
		return err_nomem();
	}
	fsx_rm_rf(to);
	if ((rc = fsx_rename(from, to, FSX_NOREPLACE)) == 0)
		rc = fsx_rm_rf(to);
	free(from);
	free(to);
	return rc;
}

int nightly_prune_documents(const char *reports_dir, const char *runs_dir, const char *tonight,
			    int keep, int *removed)
{
	struct report_doc *docs;
	size_t n, i, kept = 0;
	int rc = report_documents(reports_dir, runs_dir, &docs, &n), gone = 0;

	if (removed)
		*removed = 0;
	if (rc)
		return rc;
	/* tonight's documents are the newest, whatever its clock says */
	for (i = 0; tonight && i < n; i++)
		if (!strcmp(docs[i].id, tonight))
			kept = 1;
	size_t room = (size_t)keep > kept ? (size_t)keep - kept : 0;
	size_t drop = n - kept > room ? n - kept - room : 0;
	for (i = 0; !rc && drop && i < n; i++) {
		if (tonight && !strcmp(docs[i].id, tonight))
			continue;
		rc = remove_documents(reports_dir, docs[i].id); /* the oldest first */
		gone += rc == 0;
		drop--;
	}
	free(docs);
	if (removed)
		*removed = gone;
	return rc;
}

/* ---------------------------------------------------------------- the night */

enum stage {
	ST_BENCH,
	ST_RECORD,
	ST_HISTORY,
	ST_REGRESS,
	ST_PROJECT,
	ST_COMMIT,
	ST_DOCUMENTS,
	ST_REPAIR,
	ST_RETENTION,
	ST_COUNT
};

static const char *const stage_names[ST_COUNT] = {"bench",   "record", "history",   "regress",
						  "project", "commit", "documents", "repair",
						  "retention"};

enum stage_state { SS_PENDING, SS_OK, SS_FAILED, SS_SKIPPED };

struct night {
	struct paths paths;        /* paths.template_given: --template was given */
	int quiet, tty;
	char template_note[256];   /* why this template */
	double t0;
	FILE *log;                 /* the run's log, in memory until stored */
	char *log_buf;
	size_t log_len;
	enum stage_state st[ST_COUNT];
	char st_note[ST_COUNT][320];
	double st_s[ST_COUNT];
	int worst;                 /* exit status of the worst failure (1 or 2), else 0 */
	char *run_dir, *tmp_dir;   /* runs/<id> and its temporary name */
	char base_id[80];          /* tonight's run id before any name was taken */
	struct calib cal;
	struct calibration der;
	struct tmpl t;
	struct bench_conf bc;
	struct regress_conf rconf;
	struct nightly_conf nconf;
	struct run_record rec;
	struct history h;
	int have_hist;
	int stored_tonight;  /* tonight's night in h was read back from its run.yaml */
	struct regress_night verdicts;
	int failed_kernels, regressions;
	int alerts;                /* lines printed in quiet mode */
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Writes one formatted line to fp after prefix, outside text in it escaped
 * (esc.h): a record's text never starts a line of its own in cron mail. */
static void vline(FILE *fp, const char *prefix, const char *fmt, va_list ap)
{
	char *text = NULL;
	fputs(prefix, fp);
	if (vasprintf(&text, fmt, ap) < 0)
		esc_line(fp, "(message lost: out of memory)");
	else
		esc_line(fp, text);
	free(text);
}

/* Appends one line to the log. */
static void vlogf(struct night *n, const char *fmt, va_list ap)
{
	char stamp[32];
	if (!n->log)
		return;
	snprintf(stamp, sizeof stamp, "[%7.1fs] ", now_s() - n->t0);
	vline(n->log, stamp, fmt, ap);
}

static void logf_(struct night *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct night *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlogf(n, fmt, ap);
	va_end(ap);
}

/* Erases the progress line, if one is drawn. */
static void progress_clear(struct night *n)
{
	if (n->tty && !n->quiet)
		fputs("\r\033[K", stderr);
}

/* Logs a line and prints it on stdout unless quiet. */
static void note(struct night *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct night *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlogf(n, fmt, ap);
	va_end(ap);
	if (n->quiet)
		return;
	progress_clear(n);
	va_start(ap, fmt);
	vline(stdout, "", fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* Logs a line and prints it, quiet or not: regressions and failed kernels on
 * stdout (to_err 0), errors and warnings on stderr (to_err 1). */
static void alert(struct night *n, int to_err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void alert(struct night *n, int to_err, const char *fmt, ...)
{
	va_list ap;
	FILE *fp = to_err ? stderr : stdout;
	n->alerts++;
	va_start(ap, fmt);
	vlogf(n, fmt, ap);
	va_end(ap);
	progress_clear(n);
	fflush(stdout);
	va_start(ap, fmt);
	vline(fp, to_err ? "ddt nightly: " : "", fmt, ap);
	va_end(ap);
	fflush(fp);
}

/* Starts stage s: the progress line on a terminal, the log. */
static void stage_begin(struct night *n, enum stage s)
{
	n->st_s[s] = now_s();
	logf_(n, "%s: start", stage_names[s]);
	if (n->tty && !n->quiet) {
		fprintf(stderr, "\r\033[K[%d/%d] %s ...", s + 1, ST_COUNT, stage_names[s]);
		fflush(stderr);
	}
}

/* Ends stage s with rc (0: ok) and a short note for the summary. */
static void stage_end(struct night *n, enum stage s, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void stage_end(struct night *n, enum stage s, int rc, const char *fmt, ...)
{
	va_list ap;
	n->st_s[s] = now_s() - n->st_s[s];
	n->st[s] = rc ? SS_FAILED : SS_OK;
	va_start(ap, fmt);
	vsnprintf(n->st_note[s], sizeof n->st_note[s], fmt, ap);
	va_end(ap);
	if (!rc) {
		logf_(n, "%s: ok (%.1f s) %s", stage_names[s], n->st_s[s], n->st_note[s]);
		return;
	}
	int status = err_exit_status(rc);
	if (status == 2 || (status == 1 && n->worst != 2))
		n->worst = status;
	alert(n, 1, "%s failed: %s", stage_names[s], err_msg()[0] ? err_msg() : n->st_note[s]);
}

static void stage_skip(struct night *n, enum stage s, const char *why)
{
	n->st[s] = SS_SKIPPED;
	snprintf(n->st_note[s], sizeof n->st_note[s], "%s", why);
	logf_(n, "%s: skipped (%s)", stage_names[s], why);
}

/* ---------------------------------------------------------------- stages */

/* Picks the template when --template was not given: gpu with CUDA devices,
 * else cpu; the default template when that file is missing. */
static void pick_template(struct night *n)
{
	char reason[160] = "", path[PATH_MAX];
	int count = 0;
	if (n->paths.template_given) {
		snprintf(n->template_note, sizeof n->template_note, "given");
		return;
	}
	cuda_devices(&count, reason, sizeof reason);
	const char *name = count > 0 ? "gpu" : "cpu";
	snprintf(path, sizeof path, "%s/templates/%s.yaml", n->paths.home, name);
	if (fsx_exists(path)) {
		snprintf(n->paths.template_path, sizeof n->paths.template_path, "%s", path);
		snprintf(n->template_note, sizeof n->template_note, "%d CUDA device%s%s%s", count,
			 count == 1 ? "" : "s", reason[0] ? ": " : "", reason);
	} else
		snprintf(n->template_note, sizeof n->template_note,
			 "%s.yaml is missing: the default template", name);
}

/* Loads the calibration and the template and checks every section the
 * stages read, so bad input stops the night before anything is written.
 * Returns 0, or the error (every problem printed on stderr). */
static int load_inputs(struct night *n)
{
	struct ydiag diag = {0};
	struct project_config pc;
	struct report_spec *spec = malloc(sizeof *spec);
	int rc = spec ? calibrate_load(&n->cal, &n->der, n->paths.calibration, NULL, &diag) : err_nomem();

	if (!rc)
		rc = tmpl_load(&n->t, n->paths.template_path, &diag);
	if (!rc) {
		/* each loader reports every problem of its section; check them all */
		bench_conf_load(&n->bc, &n->t, &diag);
		regress_conf_load(&n->rconf, &n->t, &diag);
		nightly_conf_load(&n->nconf, &n->t, &diag);
		project_config_load(&pc, &n->t, &diag);
		report_spec_load(spec, &n->t, &diag);
		site_conf_load(&(struct site_conf){0}, &n->t, &diag);
		if (diag.n)
			rc = DDT_EINPUT;
	}
	free(spec);
	if (rc) {
		for (size_t i = 0; i < diag.n; i++)
			alert(n, 1, "%s", diag.msgs[i]);
		if (!diag.n)
			alert(n, 1, "%s", err_msg());
	}
	ydiag_free(&diag);
	return rc;
}

static void stage_bench(struct night *n)
{
	struct bench_opts o = {.home = n->paths.home, .progress = n->tty && !n->quiet};
	int rc, skipped = 0;

	stage_begin(n, ST_BENCH);
	if ((rc = bench_record_init(&n->rec, n->t.name, n->paths.home)) == 0)
		rc = bench_run(&n->bc, &o, &n->rec);
	/* a bench that stops early still leaves the rows it measured */
	for (size_t i = 0; i < n->rec.nrows; i++) {
		const struct rec_row *w = &n->rec.rows[i];
		if (w->status == REC_FAILED) {
			char params[256];
			n->failed_kernels++;
			alert(n, 0, "kernel failed: %s/%s %s [%s]: %s", w->op, w->variant,
			      rec_row_params_str(w, params, sizeof params), w->backend, w->reason);
		}
		skipped += w->status == REC_SKIPPED || w->status == REC_UNSUPPORTED;
	}
	stage_end(n, ST_BENCH, rc, "%zu rows: %zu ok, %d failed, %d skipped, %zu device%s",
		  n->rec.nrows, n->rec.nrows - (size_t)n->failed_kernels - (size_t)skipped,
		  n->failed_kernels, skipped, n->rec.ndevices, n->rec.ndevices == 1 ? "" : "s");
}

/* True when id is taken in runs/ or reports/ by anything at all: a folder,
 * a file, a dangling link (fsx_kind does not follow it). */
static int run_id_taken(const struct night *n, const char *id)
{
	char *a = fsx_join(n->paths.runs, id), *b = fsx_join(n->paths.reports, id);
	int taken = !a || !b || fsx_kind(a) != FSX_NONE || fsx_kind(b) != FSX_NONE;
	free(a);
	free(b);
	return taken;
}

/* True when dir/id is nothing, or a folder the trust rule trusts (a run, or
 * its documents, of the same second). */
static int ours_or_free(const char *dir, const char *id)
{
	char *at = fsx_join(dir, id);
	enum fsx_kind k = at ? fsx_kind(at) : FSX_OTHER;
	int ok = k == FSX_NONE || (k == FSX_DIR && fsx_trusted_path(at, NULL, 0));
	free(at);
	return ok;
}

/* Tonight's run id, or, when something already has that name (a run that
 * started in the same second, anything another user put there), the next
 * free one: ID-2, ID-3, ... (still a run id: the host part grows). No
 * night is lost to a name. Returns 0 or DDT_EIO. */
static int pick_run_id(struct night *n)
{
	char *base = n->base_id;
	if (!base[0])
		snprintf(base, sizeof n->base_id, "%s", n->rec.run_id);
	snprintf(n->rec.run_id, sizeof n->rec.run_id, "%s", base);
	for (long k = 2; run_id_taken(n, n->rec.run_id); k++) {
		if (k > NIGHTLY_MAX_ID_TRIES ||
		    snprintf(n->rec.run_id, sizeof n->rec.run_id, "%s-%ld", base, k) >=
			    (int)sizeof n->rec.run_id)
			return err_set(DDT_EIO, "%s/%s: taken, and so are the next %d names", n->paths.runs,
				       base, NIGHTLY_MAX_ID_TRIES);
	}
	if (!strcmp(base, n->rec.run_id))
		return 0;
	if (ours_or_free(n->paths.runs, base) && ours_or_free(n->paths.reports, base))
		logf_(n, "%s/%s is taken (a run of the same second): tonight is %s", n->paths.runs,
		      base, n->rec.run_id);
	else /* something else holds the name: say so where cron mails it */
		alert(n, 1, "warning: %s/%s is taken by something not a run of ours: tonight is %s",
		      n->paths.runs, base, n->rec.run_id);
	return 0;
}

/* Creates the run's temporary folder and writes run.yaml into it. */
static void stage_record(struct night *n)
{
	char *path = NULL;
	int rc = 0;

	stage_begin(n, ST_RECORD);
	if ((rc = pick_run_id(n)) == 0 && !(n->run_dir = fsx_join(n->paths.runs, n->rec.run_id)))
		rc = err_nomem();
	if (!rc && (rc = fsx_dir_begin(n->run_dir, &n->tmp_dir)) == 0) {
		if (!(path = fsx_join(n->tmp_dir, "run.yaml")))
			rc = err_nomem();
		else
			rc = record_write(&n->rec, path);
	}
	free(path);
	if (rc && n->tmp_dir) {
		fsx_rm_rf(n->tmp_dir);
		free(n->tmp_dir);
		n->tmp_dir = NULL;
	}
	stage_end(n, ST_RECORD, rc, "%s", n->rec.run_id);
}

/* Says so when tonight's clock is behind the newest night before it. */
static void warn_clock(struct night *n)
{
	const struct hist_run *t = &n->h.runs[n->h.nruns - 1];
	if (t->clock_behind)
		alert(n, 1,
		      "warning: this host's clock is behind: tonight was created %s, before the "
		      "newest night in %s (%s, created %s); tonight is judged as the newest night "
		      "(check the clock: timedatectl)",
		      t->created, n->paths.runs, t[-1].run_id, t[-1].created);
}

/* Adds tonight to the history as its run.yaml stores it (numbers rounded as
 * every later reader sees them), else as measured. */
static int add_tonight(struct night *n)
{
	struct run_record stored;
	struct ydiag diag = {0};
	char *path = fsx_join(n->tmp_dir, "run.yaml");
	int rc = path ? record_read(&stored, path, &diag) : err_nomem();

	n->stored_tonight = rc == 0;
	rc = history_add_record(&n->h, n->stored_tonight ? &stored : &n->rec);
	if (path)
		record_free(&stored);
	ydiag_free(&diag);
	free(path);
	return rc;
}

/* Every night committed before tonight, in the order of their created time,
 * then tonight as the newest whatever its clock says. */
static void stage_history(struct night *n)
{
	struct ydiag warn = {0};
	char why[256] = "";
	int rc;

	stage_begin(n, ST_HISTORY);
	rc = history_load(&n->h, n->paths.runs, &warn);
	for (size_t i = 0; i < warn.n; i++)
		alert(n, 1, "warning: %s", warn.msgs[i]);
	if (!rc)
		rc = add_tonight(n);
	n->have_hist = rc == 0;
	if (n->have_hist)
		warn_clock(n);
	if (n->h.nskipped)
		snprintf(why, sizeof why, " (found %zu nights, %zu unreadable: %s; see the warnings)",
			 n->h.nfolders, n->h.nskipped, n->h.skipped_note);
	stage_end(n, ST_HISTORY, rc, "%zu night%s, %zu series%s", n->h.nruns,
		  n->h.nruns == 1 ? "" : "s", n->h.n, why);
	ydiag_free(&warn);
}

/* Prints the night's regressions and slower drifts with their commits and
 * cost in projected tok/s; environment changes once per machine, nights not
 * judgeable once. */
static void report_regressions(struct night *n, const struct regress_night *v)
{
	char label[512], line[1024];
	int unjudged = 0;
	const char *why = "";

	for (size_t i = 0; i < v->n; i++) {
		const struct regress_entry *e = &v->entries[i];
		if (e->verdict != REG_REGRESSION && !(e->verdict == REG_DRIFT && e->delta_frac > 0))
			continue;
		n->regressions++;
		regress_entry_line(e, line, sizeof line);
		alert(n, 0, "%s%s", e->verdict == REG_REGRESSION ? "REGRESSION" : "DRIFT",
		      line + strcspn(line, " "));
		for (size_t k = 0; k < v->impacts.n; k++)
			if (history_key_equal(&v->impacts.v[k].key, &e->key))
				alert(n, 0, "  %s", regress_impact_line(&v->impacts.v[k], line,
									 sizeof line));
	}
	for (size_t i = 0; i < v->n; i++) {
		const struct regress_entry *e = &v->entries[i];
		int first_of_machine = 1;
		for (size_t j = 0; j < i && e->verdict == REG_ENV; j++)
			first_of_machine &= !(v->entries[j].verdict == REG_ENV &&
					      !strcmp(v->entries[j].key.machine, e->key.machine));
		if (e->verdict == REG_ENV && first_of_machine)
			note(n, "environment changed on %s: %s (%d series)", e->key.machine, e->reason,
			     v->count[REG_ENV]);
		if (e->verdict == REG_UNJUDGED && !unjudged++)
			why = e->reason;
		if (e->verdict == REG_IMPROVEMENT || e->verdict == REG_SUSPECT ||
		    (e->verdict == REG_DRIFT && e->delta_frac <= 0))
			note(n, "%s", regress_entry_line(e, line, sizeof line));
	}
	if (unjudged)
		note(n, "not judgeable tonight (%d series): %s", unjudged, why);
	for (size_t i = 0, k; i < v->nalerts; i += k) { /* open ones whatever --quiet says */
		k = regress_alert_group(v, i);
		if (v->alerts[i].state == ALERT_OPEN)
			alert(n, 0, "%s", regress_alert_group_line(&v->alerts[i], k, n->rconf.commit_url,
								     line, sizeof line));
		else
			note(n, "%s", regress_alert_group_line(&v->alerts[i], k, n->rconf.commit_url,
							       line, sizeof line));
	}
	for (size_t i = 0; i < v->nrev; i++)
		note(n, "revised: %s on %s: %s -> %s",
		     history_key_label(&v->revs[i].key, label, sizeof label), v->revs[i].run_id,
		     regress_verdict_name(v->revs[i].from), regress_verdict_name(v->revs[i].to));
}

/* The stages after the bench report through these: the summary's notes,
 * the alerts and the progress line. */
static void night_begin(void *ctx, enum nightly_stage s)
{
	stage_begin(ctx, (enum stage)(ST_REGRESS + s));
}

static void night_skip(void *ctx, enum nightly_stage s, const char *why)
{
	stage_skip(ctx, (enum stage)(ST_REGRESS + s), why);
}

static void night_end(void *ctx, enum nightly_stage s, int rc, const struct nightly_after *a)
{
	struct night *n = ctx;
	const int *c = a->verdicts.count;

	switch (s) {
	case NIGHTLY_REGRESS:
		if (a->no_impact[0])
			alert(n, 1, "warning: no tok/s impact: %s", a->no_impact);
		report_regressions(n, &a->verdicts);
		stage_end(n, ST_REGRESS, rc,
			  "%d ok, %d regression, %d drift, %d suspect, %d improvement, %d outlier, "
			  "%d new, %d not enough history, %d environment changed, %d not judgeable, "
			  "%d failed, %d skipped",
			  c[REG_OK], c[REG_REGRESSION], c[REG_DRIFT], c[REG_SUSPECT], c[REG_IMPROVEMENT],
			  c[REG_OUTLIER], c[REG_NEW], c[REG_SHORT], c[REG_ENV], c[REG_UNJUDGED],
			  c[REG_FAILED], c[REG_SKIPPED]);
		break;
	case NIGHTLY_PROJECT:
		stage_end(n, ST_PROJECT, rc, "%zu scenario rows", a->projected_rows);
		break;
	case NIGHTLY_COMMIT:
		stage_end(n, ST_COMMIT, rc, "%s", n->run_dir);
		break;
	default:
		stage_end(n, ST_DOCUMENTS, rc, "%s/%s/", n->paths.reports, n->rec.run_id);
	}
}

/* Moves tonight to the next free run id after runs/<id> was taken between
 * the record and the commit (by anything: another user's folder, a link):
 * run.yaml written again under the new id (its trailer with it) and
 * tonight's night in the history renamed, so that the verdicts made again
 * name it. Returns 0, or the error that leaves no id to move to. */
static int move_run_id(struct night *n)
{
	char old[sizeof n->rec.run_id], *path = NULL;
	int rc;

	snprintf(old, sizeof old, "%s", n->rec.run_id);
	if ((rc = pick_run_id(n)) != 0)
		return rc;
	free(n->run_dir);
	if (!(n->run_dir = fsx_join(n->paths.runs, n->rec.run_id)) ||
	    !(path = fsx_join(n->tmp_dir, "run.yaml")))
		rc = err_nomem();
	else
		rc = record_write(&n->rec, path);
	free(path);
	if (n->have_hist && n->h.nruns && !strcmp(n->h.runs[n->h.nruns - 1].run_id, old))
		snprintf(n->h.runs[n->h.nruns - 1].run_id, sizeof n->h.runs[0].run_id, "%s",
			 n->rec.run_id);
	if (!rc && strcmp(old, n->base_id)) /* else pick_run_id said so */
		alert(n, 1, "warning: %s/%s was taken while tonight ran: tonight is %s",
		      n->paths.runs, old, n->rec.run_id);
	return rc;
}

/* Stores the log so far beside the run's files and puts the run folder in
 * place. When its name was taken since the record, tonight moves to the
 * next free id and DDT_ETAKEN asks the caller to make again what names
 * it, then to call again; the folder stays. */
static int night_commit(void *ctx)
{
	struct night *n = ctx;
	char *log = NULL;
	int rc = 0;

	fflush(n->log);
	if (!(log = fsx_join(n->tmp_dir, "nightly.log")))
		rc = err_nomem();
	if (!rc)
		rc = fsx_write_all(log, n->log_buf, n->log_len);
	if (!rc)
		rc = fsx_dir_place(n->tmp_dir, n->run_dir);
	if (rc == DDT_ETAKEN) {
		int mrc = move_run_id(n);
		rc = mrc ? mrc : DDT_ETAKEN;
	}
	free(log);
	if (rc == DDT_ETAKEN)
		return rc;
	if (rc)
		fsx_rm_rf(n->tmp_dir);
	free(n->tmp_dir);
	n->tmp_dir = NULL;
	return rc;
}

/* Tonight's history when it is the one `ddt report` would load: tonight
 * read back from its stored record and the newest in created order too.
 * The documents take it (judged by the regress stage) instead of loading
 * runs/ again. */
static const struct history *documents_history(const struct night *n)
{
	const struct hist_run *t = n->have_hist ? &n->h.runs[n->h.nruns - 1] : NULL;
	if (!t || !n->stored_tonight)
		return NULL;
	if (n->h.nruns > 1 &&
	    (t[-1].t > t->t || (t[-1].t == t->t && strcmp(t[-1].run_id, t->run_id) > 0)))
		return NULL;
	return &n->h;
}

/* Verdicts, projection, commit and documents: the night after the bench,
 * as every night runs it, for this one host. */
static void stage_after_bench(struct night *n)
{
	struct nightly_host host = {&n->h, n->h.nruns - 1, NULL, NULL};
	struct nightly_after a = {
		.cal = &n->cal, .der = &n->der, .t = &n->t, .rconf = n->have_hist ? &n->rconf : NULL,
		.regress_skip = "no history", .hosts = &host, .nhosts = n->have_hist,
		.measured = &n->rec, .dir = n->tmp_dir, .calibration = n->paths.calibration,
		.template_path = n->paths.template_path, .runs = n->paths.runs,
		.home = n->paths.home, .reports = n->paths.reports, .id = n->rec.run_id,
		.docs_hist = documents_history(n)};
	struct nightly_hooks k = {n, night_begin, night_end, night_skip, night_commit};

	nightly_after_bench(&a, &k);
	n->verdicts = a.verdicts;
}

/* Makes whole the earlier runs whose documents retention keeps but that
 * lack their projection or documents (a killed night, a full disk); the
 * summary names them. */
static void stage_repair(struct night *n)
{
	struct repair_result res;
	int rc;

	stage_begin(n, ST_REPAIR);
	rc = repair_runs(n->paths.runs, n->paths.reports, n->paths.home, n->rec.run_id,
			 n->nconf.keep_documents_runs, &res);
	if (res.runs)
		logf_(n, "repaired: %s", res.ids);
	if (rc)
		stage_end(n, ST_REPAIR, rc, "%d run%s repaired, %d could not be", res.runs,
			  res.runs == 1 ? "" : "s", res.failed);
	else if (res.runs)
		stage_end(n, ST_REPAIR, 0, "%d run%s repaired: %s", res.runs,
			  res.runs == 1 ? "" : "s", res.ids);
	else
		stage_end(n, ST_REPAIR, 0, "nothing to repair");
}

static void stage_retention(struct night *n)
{
	int removed = 0, rc;

	stage_begin(n, ST_RETENTION);
	rc = nightly_prune_documents(n->paths.reports, n->paths.runs, n->rec.run_id,
				     n->nconf.keep_documents_runs, &removed);
	stage_end(n, ST_RETENTION, rc, "documents of the newest %d runs kept, %d removed",
		  n->nconf.keep_documents_runs, removed);
}

/* Rewrites runs/<id>/nightly.log with the whole log (atomically). */
static void store_log(struct night *n)
{
	char *path = fsx_join(n->run_dir, "nightly.log");
	fflush(n->log);
	if (!path || fsx_write_all(path, n->log_buf, n->log_len) != 0)
		alert(n, 1, "cannot store the log: %s", err_msg());
	free(path);
}

/* Points reports/latest at tonight's documents once repair and retention
 * are done: tonight is the newest night whatever the clock says (the
 * renderer points it at the newest by commit time, which a clock that went
 * back puts before an earlier night). */
static void latest_is_tonight(struct night *n)
{
	char *link = fsx_join(n->paths.reports, "latest");
	if (n->st[ST_DOCUMENTS] == SS_OK && (!link || fsx_symlink(n->rec.run_id, link) != 0))
		alert(n, 1, "cannot point %s/latest at tonight: %s", n->paths.reports, err_msg());
	free(link);
}

/* The stages in order, each skipped when what it needs is missing. */
static void run_stages(struct night *n)
{
	stage_bench(n);
	stage_record(n);
	if (!n->tmp_dir) {
		for (int s = ST_HISTORY; s < ST_COUNT; s++)
			stage_skip(n, (enum stage)s, "no run folder");
		return;
	}
	stage_history(n);
	stage_after_bench(n);
	stage_repair(n);
	stage_retention(n);
	latest_is_tonight(n);
}

static void print_summary(struct night *n)
{
	for (int s = 0; s < ST_COUNT; s++) {
		static const char *const st[] = {"-", "ok", "FAILED", "skipped"};
		note(n, "  %-10s %-7s %s", stage_names[s], st[n->st[s]], n->st_note[s]);
	}
}

static int exit_status(const struct night *n)
{
	if (n->worst)
		return n->worst;
	if (n->failed_kernels)
		return 4;
	return n->regressions || n->verdicts.open_alerts ? 3 : 0;
}

static void night_free(struct night *n)
{
	if (n->tmp_dir)
		fsx_rm_rf(n->tmp_dir);
	free(n->tmp_dir);
	free(n->run_dir);
	if (n->log)
		fclose(n->log);
	free(n->log_buf);
	regress_night_free(&n->verdicts);
	history_free(&n->h);
	record_free(&n->rec);
	tmpl_free(&n->t);
	calib_free(&n->cal);
}

/* "3 h 12 min", "12 min" or "40 s" into buf. */
static void fmt_age(char *buf, size_t len, long long s)
{
	if (s >= 3600)
		snprintf(buf, len, "%lld h %lld min", s / 3600, s / 60 % 60);
	else if (s >= 60)
		snprintf(buf, len, "%lld min", s / 60);
	else
		snprintf(buf, len, "%lld s", s);
}

/* Adds to the refusal of a held lock how long it has been held, and, past
 * the template's nightly.lock_hung_after_min, that its holder looks hung:
 * cron mails this line. */
static int say_how_long(struct night *n, const struct lock_holder *h, int rc)
{
	struct ydiag diag = {0};
	struct nightly_conf c = {0};
	char msg[1024], age[64];
	long long held = (long long)time(NULL) - h->since;

	if (h->since <= 0 || held < 0)
		return rc;
	snprintf(msg, sizeof msg, "%s", err_msg());
	fmt_age(age, sizeof age, held);
	pick_template(n);
	if (tmpl_load(&n->t, n->paths.template_path, &diag) == 0)
		nightly_conf_load(&c, &n->t, &diag);
	if (c.lock_hung_after_min > 0 && held > 60LL * c.lock_hung_after_min)
		err_set(rc,
			"%s, for %s: past nightly.lock_hung_after_min (%d min) of %s, so it looks "
			"hung (ps -p %ld; kill %ld if it is stuck)",
			msg, age, c.lock_hung_after_min, n->paths.template_path, h->pid, h->pid);
	else
		err_set(rc, "%s, for %s", msg, age);
	tmpl_free(&n->t);
	memset(&n->t, 0, sizeof n->t);
	ydiag_free(&diag);
	return rc;
}

/* The error that stops the night before it starts: one line, its exit status. */
static int fail(int rc)
{
	fputs("ddt nightly: ", stderr);
	esc_line(stderr, err_msg()[0] ? err_msg() : "failed");
	return err_exit_status(rc);
}

int nightly_run(const struct nightly_opts *o)
{
	struct night n;
	struct lock_holder holder = {0};
	char *lock_path = NULL;
	int lock_fd = -1, status, rc;

	memset(&n, 0, sizeof n);
	n.paths = o->paths;
	n.quiet = o->quiet;
	n.tty = o->tty;
	n.t0 = now_s();
	/* the lock first: a second nightly must touch nothing */
	if ((rc = fsx_mkdir_p(n.paths.runs)) != 0 ||
	    !(lock_path = fsx_join(n.paths.runs, ".nightly.lock")) ||
	    (rc = lock_take(lock_path, &lock_fd, &holder)) != 0) {
		if (rc == DDT_ELOCKED)
			say_how_long(&n, &holder, rc);
		free(lock_path);
		return fail(rc ? rc : err_nomem());
	}
	free(lock_path);
	if (!(n.log = open_memstream(&n.log_buf, &n.log_len))) {
		lock_release(lock_fd);
		return fail(err_nomem());
	}
	if (holder.replaced[0])
		alert(&n, 1, "warning: %s/.nightly.lock was not trusted (%s): replaced by this "
			     "nightly's own, its contents not read", n.paths.runs, holder.replaced);
	int swept = lock_sweep_temps(n.paths.runs) + lock_sweep_temps(n.paths.reports);
	pick_template(&n);
	logf_(&n, "ddt nightly: pid %ld, template %s (%s), calibration %s", (long)getpid(),
	      n.paths.template_path, n.template_note, n.paths.calibration);
	if (swept)
		logf_(&n, "removed %d temporary entr%s left by killed runs", swept,
		      swept == 1 ? "y" : "ies");
	if ((rc = load_inputs(&n)) != 0) {
		status = err_exit_status(rc);
		goto done;
	}
	run_stages(&n);
	progress_clear(&n);
	publish_night(&(struct publish_night){&n.paths, &n.t, &n.nconf.notify,
		n.st[ST_COMMIT] == SS_OK ? n.rec.run_id : NULL, exit_status(&n), n.quiet, n.log});
	note(&n, "ddt nightly %s: template %s (%s)", n.rec.run_id, n.t.name, n.template_note);
	print_summary(&n);
	status = exit_status(&n);
	logf_(&n, "exit status %d", status);
	if (n.quiet && n.alerts) /* what cron mails: say which night it was */
		printf("ddt nightly %s: exit status %d%s%s%s\n", n.rec.run_id, status,
		       n.st[ST_COMMIT] == SS_OK ? "; log " : "",
		       n.st[ST_COMMIT] == SS_OK ? n.run_dir : "",
		       n.st[ST_COMMIT] == SS_OK ? "/nightly.log" : "");
	if (n.st[ST_COMMIT] == SS_OK)
		store_log(&n);
done:
	night_free(&n);
	lock_release(lock_fd);
	return status;
}
