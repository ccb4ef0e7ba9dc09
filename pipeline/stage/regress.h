/* regress.h - regression verdicts per series and night, their cost in projected
 * tok/s, and the night's verdict file runs/<run-id>/verdicts.yaml.
 *
 * Per series, each measured night is compared with a baseline: the median of
 * the last `baseline_nights` good nights (at least `min_good_nights`), with a
 * robust noise sigma = mad_to_sigma x MAD of those nights (at least the
 * noise floor, and at least the sampling error of the night's own median
 * when its record has a spread: p10..p90 or stdev). A night is flagged
 * when |delta| >= max(min_delta_pct, noise_multiple x noise) and the robust
 * |z| > z_threshold. The first flagged night is "suspect"; `confirm_nights`
 * consecutive flagged nights in the same direction make the last one a
 * "regression" (slower) or an "improvement" (faster: the same rule, so a
 * one-night fast glitch cannot move the baseline and hide a later slowdown);
 * the baseline then restarts at the first of them (the new level), carrying
 * the old relative noise until the new level has min_good_nights of its own.
 * Suspect nights that the next night reverts become "outliers" and never
 * enter a baseline. Nights without a measurement (failed, skipped) are
 * reported as such and do not break or count toward consecutive nights. */
#ifndef DDT_REGRESS_H
#define DDT_REGRESS_H

#include <stdio.h>

#include "history.h"
#include "model.h"
#include "tmpl.h"
#include "yschema.h"

#define REGRESS_MAX_IMPACT 32

/* The template's `regress:` section. */
struct regress_conf {
	int baseline_nights;     /* good nights in the baseline window (14) */
	int min_good_nights;     /* fewer: "not enough history" (5) */
	double mad_to_sigma;     /* MAD -> sigma for normal noise (1.4826) */
	double min_delta_frac;   /* smallest change flagged (min_delta_pct / 100) */
	double noise_multiple;   /* and at least this many sigmas of noise (3) */
	double z_threshold;      /* and a robust |z| above this (5) */
	int confirm_nights;      /* consecutive flagged nights that confirm (2) */
	double noise_floor_frac; /* the noise estimate is at least this (noise_floor_pct) */
	double change_max_p;     /* change points: significance of a change (0.001) */
	int change_window_nights; /* change points: nights of a level searched (60) */
	double new_series_jump_frac; /* short series: a jump this large is flagged */
	double env_share;        /* share of a machine's series moving together: its
				  * environment changed (env_share_pct / 100) */
	int env_min_series;      /* and at least this many series */
	double max_load_per_cpu; /* contention: load average per CPU above this */
	double max_cpu_others_pct; /* other processes' share of the CPUs above this */
	double max_cpu_steal_pct;  /* hypervisor steal above this */
	int max_gpu_other_procs;   /* other processes on a measured GPU above this */
	char commit_url[256];    /* a link to a range: "https://.../compare/{good}...{bad}"
				  * ({good}, {bad}: the full revisions); "" none. The one
				  * commit link: alert lines, PDF, summary and the site */
	int nimpact;             /* op -> model component, for the tok/s impact */
	struct regress_op_comp {
		char op[32];
		enum model_comp comp;
	} impact[REGRESS_MAX_IMPACT];
	char source[1024];       /* the values' references, by tag ([asv] ...) */
};

/* Loads and checks the `regress:` section of t (every key required, units in
 * the names, unknown keys are errors; problems to diag as file:line:col).
 * Returns 0 or DDT_EINPUT (also when the section is missing). */
int regress_conf_load(struct regress_conf *c, const struct tmpl *t, struct ydiag *diag);

/* Writes c as a template's `regress:` section (its keys in the loader's
 * order) to fp: what regress_conf_load reads back to c. */
void regress_conf_emit(const struct regress_conf *c, FILE *fp);

/* The same from the template file at path; the first problem becomes
 * err_msg(). Returns 0 or DDT_EINPUT/DDT_ENOMEM. */
int regress_conf_load_file(struct regress_conf *c, const char *path);

/* Fills every point's analysis fields of every series of h, night by night:
 * per series the online rule above, then the whole-level change check (the
 * current level's nights searched for change points, cpoint.h: a change
 * larger than max(min_delta, noise_multiple x noise) at change_max_p that
 * lasted confirm_nights is confirmed tonight and placed on the night it
 * began, as a step or, when a level then a straight line fits better, a
 * drift), then the long-reference drift check (the level's first nights
 * against its last along a significant trend); across series, a machine
 * change (a series continuing another machine's) and most of a machine's
 * series moving together on one night read "environment changed"; a night
 * the machine was contended reads "not judgeable". Pure; cannot fail (out
 * of memory, every point reads "not enough history"). */
void regress_history(const struct regress_conf *c, struct history *h);

/* 1 when run r was contended (regress_conf's limits on its machine state),
 * with why into why[len]; 0 when not or unknown. */
int regress_contended(const struct regress_conf *c, const struct hist_run *r, char *why,
		      size_t len);

/* "a1b2c3d..e4f5a6b": the git revisions of a verdict's last good and first
 * bad nights (7 characters each, "?" unknown; "+dirty" when the tree was
 * modified) into buf, or "" when p names no change; followed by
 * " (engine 1a2b3c4..5d6e7f8)" when either night's record names the engine's
 * own revision (provenance.engine_rev). Returns buf. */
char *regress_commits(const struct history *h, const struct hist_point *p, char *buf,
		      size_t len);

/* The flag rule between two measurements: +1 when b is slower than a by at
 * least max(min_delta, noise_multiple x noise) and by more than z_threshold
 * noise sigmas, -1 when faster so, 0 otherwise. noise_frac is the relative
 * robust sigma (NaN: unknown, the minimum change alone decides). */
int regress_differs(const struct regress_conf *c, double a_us, double b_us, double noise_frac);

/* Night b against night a (`ddt compare`), by the nightly's own rule: "slower"
 * or "faster" when regress_differs says so with the series' night-to-night
 * noise as of each night (the larger of the two: a and b may be series of
 * two machines), else "same" (*rule "night rule"); when neither has a
 * noise yet (too few nights), a change of at least new_series_jump_pct
 * (*rule "new-series jump"); the status when either was not measured. */
const char *regress_compare(const struct regress_conf *c, const struct hist_point *a,
			    const struct hist_point *b, const char **rule);

/* "ok", "improvement", "suspect", "regression", "outlier", "new",
 * "not enough history", "failed", "skipped", "drift", "environment changed",
 * "not judgeable". */
const char *regress_verdict_name(enum regress_verdict v);
/* The same names as data, indexed by verdict (REG_COUNT of them). */
extern const char *const regress_verdict_names[];
/* The same as the verdict file's enum names (yschema.h), NULL-terminated. */
extern const struct yschema_name regress_verdict_ynames[];

/* ---- impact: what a kernel's change costs the projections ---- */

/* One regressed (or improved) series applied to one scenario: the model
 * component the op maps to is scaled by (1 + delta_frac). */
struct regress_impact {
	struct hist_key key;
	enum regress_verdict verdict; /* regression or improvement */
	double delta_frac;            /* the kernel's change vs its baseline */
	int comp;                     /* enum model_comp; -1: the op maps to none */
	char scenario[48];            /* "" when comp is -1 */
	char target[32];
	double accept;                /* the scenario's first acceptance */
	double tok_s, tok_s_after;
	double change_frac;           /* tok_s_after / tok_s - 1 */
};

struct regress_impacts {
	size_t n;
	struct regress_impact *v;
};

/* For every series of h whose verdict on run index `run` is a regression or
 * an improvement, the tok/s change of each scenario of scs under model m;
 * a series whose op maps to no component gives one entry with comp -1.
 * Returns 0 or DDT_ENOMEM (out zeroed first; free with regress_impacts_free). */
int regress_impact(struct regress_impacts *out, const struct regress_conf *c,
		   const struct history *h, size_t run, const struct model *m,
		   const struct scenario *scs, size_t nscs);
void regress_impacts_free(struct regress_impacts *im);

/* The same with each scenario of t under its own estimator: seed scenarios
 * under the seed model m, calibrated ones at their calibrated point (the
 * projection of measured's night with the template's samples and seed,
 * project.h; its step, components and tok/s). Returns 0, DDT_ENOMEM or
 * DDT_EINPUT (the projection failed; err_msg() says why). */
struct run_record;
int regress_impact_own(struct regress_impacts *out, const struct regress_conf *c,
		       const struct history *h, size_t run, const struct model *m,
		       const struct tmpl *t, const struct run_record *measured);

/* "tree_attn +9.0% -> seed-b16-native -1.8% tok/s (b300)" into buf. */
char *regress_impact_line(const struct regress_impact *im, char *buf, size_t len);

/* ---- one night's verdicts, as stored in runs/<run-id>/verdicts.yaml ---- */

struct regress_entry {
	struct hist_key key;
	enum rec_status status;
	double median_us, baseline_us, noise_frac, delta_frac, z, band_lo_us, band_hi_us;
	double lo_frac, hi_frac;      /* delta_frac's 95% interval (regress_point_interval) */
	enum regress_verdict verdict; /* as decided that night */
	int nights;                   /* measured nights of the series so far */
	char reason[160];
	/* the change a verdict names: its last good and first bad nights ("" none) */
	char good_run_id[80], good_rev[48];
	char bad_run_id[80], bad_rev[48];
	char good_engine_rev[48], bad_engine_rev[48]; /* the engine's own; "" unrecorded */
	char commits[112];            /* "a1b2c3d..e4f5a6b" (regress_commits) */
};

/* The 95% interval of point p's delta_frac into *lo, *hi: +-1.96 x its
 * noise x sqrt(1 + 1/n_old), the night against the median of n_old good
 * nights of the level before its first bad night (a change point's size,
 * a mean of several nights, gets this wider one too); NaN when the noise
 * or the old level is unknown. */
void regress_point_interval(const struct hist_series *s, const struct hist_point *p,
			    double *lo, double *hi);

/* A verdict of an earlier night changed by this night (suspect -> outlier). */
struct regress_revision {
	struct hist_key key;
	char run_id[80];
	enum regress_verdict from, to;
};

/* ---- alerts: a confirmed slowdown stays open until it is answered ---- */

enum regress_alert_state {
	ALERT_OPEN,     /* confirmed, not answered: the nightly exits 3 */
	ALERT_ACKED,    /* someone ran `ddt ack`: listed, no longer exit 3 */
	ALERT_INVALID,  /* acknowledged as a false alarm (`ddt ack --invalid`) */
	ALERT_COUNT
};

/* One series' confirmed slowdown (a regression, or a drift to slower),
 * open from its confirming night until the series returns to its old
 * level (a confirmed change back within half of it) or an ack answers it.
 * Alerts whose change began on the same nights (one commit range) share
 * their id. */
struct regress_alert {
	char id[16];              /* "3f9a1c": a hash of the last good and first bad run ids */
	struct hist_key key;
	enum regress_verdict verdict; /* regression or drift */
	double baseline_us;       /* the old level: median of its good nights */
	double level_us;          /* the new level: median of its nights so far */
	double delta_frac;        /* level / baseline - 1 */
	double lo_frac, hi_frac;  /* its 95% interval: +-1.96 sigma x sqrt(1/n_new +
				   * 1/n_old), sigma the larger of the series' noise
				   * and the new level's own scatter */
	int nights;               /* measured nights on the new level, tonight included */
	int age_nights;           /* nights since the confirming one (0: tonight) */
	double age_days;          /* days since the first bad night */
	char opened_run[80];      /* the night that confirmed it */
	char good_run_id[80], bad_run_id[80];
	char commits[112];        /* "a1b2c3d..e4f5a6b" */
	char good_rev[48], bad_rev[48]; /* their full revisions ("" unknown) */
	enum regress_alert_state state;
	char answer[240];         /* "acknowledged by ann on 2026-01-20T09:10:00Z: known" */
};

struct regress_night {
	char run_id[80];
	size_t nruns;                 /* nights in the history up to this one */
	size_t n;
	struct regress_entry *entries;
	size_t nrev;
	struct regress_revision *revs;
	struct regress_impacts impacts;
	int count[REG_COUNT];         /* entries per verdict */
	size_t nalerts;
	struct regress_alert *alerts; /* open or answered as of this night, by id */
	int open_alerts;              /* of them, ALERT_OPEN: exit status 3 */
};

/* The alerts of run index `run` of an analysed history, the answers in
 * h->acks applied, into n->alerts (grouped by id). Returns 0 or DDT_ENOMEM. */
int regress_alerts_build(struct regress_night *n, const struct history *h, size_t run);

/* Applies the answers of h->acks to n's alerts as they stand now (an alert
 * answered after its night was judged reads answered). */
void regress_alerts_answer(struct regress_night *n, const struct history *h);

/* Appends one's alerts to all (a night of several hosts). Returns 0 or
 * DDT_ENOMEM. */
int regress_alerts_fold(struct regress_night *all, const struct regress_night *one);

/* "alert 3f9a1c open 3 nights (4.0 days): regression op/variant params
 * +10.1% [+9.2%, +11.0%] over 4 nights, commits a..b (first bad runs/RUN/,
 * report reports/OPENED/report.pdf)" into buf. Returns buf. */
char *regress_alert_line(const struct regress_alert *a, char *buf, size_t len);

/* How many alerts from n->alerts[i] on share its id and state (a group:
 * one commit range). */
size_t regress_alert_group(const struct regress_night *n, size_t i);

/* "alert 3f9a1c open 3 nights (4.0 days): 14 series slower, +9.1% to
 * +10.3%, commits a..b (first bad runs/RUN/, report reports/R/report.pdf)"
 * for the k alerts of one group from a, into buf, followed by the range's
 * link when url (regress_conf.commit_url; NULL or "": none) and both
 * revisions are known. Returns buf. */
char *regress_alert_group_line(const struct regress_alert *a, size_t k, const char *url,
			       char *buf, size_t len);

/* url (regress_conf.commit_url) with {good} and {bad} replaced by the
 * revisions good and bad into buf; "" when url, good or bad is NULL or "".
 * The one link of a commit range: alert lines, the site (revrange_url).
 * Returns buf. */
char *regress_range_url(const char *url, const char *good, const char *bad, char *buf, size_t len);

/* "op/variant params [...] +10.1% [+9.2%, +11.0%] over 4 nights" into buf. */
char *regress_alert_series_line(const struct regress_alert *a, char *buf, size_t len);

/* "open", "acknowledged", "invalid". */
const char *regress_alert_state_name(enum regress_alert_state s);
/* The same names as data, indexed by state (ALERT_COUNT of them). */
extern const char *const regress_alert_state_names[];

/* The verdicts of run index `run` of an analysed history (regress_history),
 * copying imp (may be NULL). Returns 0 or DDT_ENOMEM; out zeroed first. */
int regress_night_build(struct regress_night *out, const struct history *h, size_t run,
			const struct regress_impacts *imp);
/* "regression tree_attn/cold M=9 [...]: +4.1% (101.2 us, baseline 97.2 us,
 * noise 0.50%), commits a1b2c3d..e4f5a6b (20260120T020000Z-h)" into buf:
 * the one-line form the alert lines and summary.txt print. Returns buf. */
char *regress_entry_line(const struct regress_entry *e, char *buf, size_t len);

/* Writes n as YAML to path atomically. Returns 0 or an error code. */
int regress_night_write(const struct regress_night *n, const char *path);
void regress_night_emit(const struct regress_night *n, FILE *fp);
/* Reads a verdict file; problems to diag. Returns 0, DDT_EINPUT,
 * DDT_ENOTFOUND, DDT_EIO or DDT_ENOMEM. Free with regress_night_free always. */
int regress_night_read(struct regress_night *n, const char *path, struct ydiag *diag);
void regress_night_free(struct regress_night *n);

#endif
