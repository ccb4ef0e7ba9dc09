/* regress_conf.c - the template's `regress:` section, strictly loaded, and the verdict names. */
#include "regress.h"

#include "err.h"
#include "yschema.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Each verdict and its name, in the enum's order. */
#define REGRESS_VERDICTS(X)                                                               \
	X(REG_NEW, "new")                                                                 \
	X(REG_SHORT, "not enough history")                                                \
	X(REG_OK, "ok")                                                                   \
	X(REG_IMPROVEMENT, "improvement")                                                 \
	X(REG_SUSPECT, "suspect")                                                         \
	X(REG_REGRESSION, "regression")                                                   \
	X(REG_OUTLIER, "outlier")                                                         \
	X(REG_FAILED, "failed")                                                           \
	X(REG_SKIPPED, "skipped")                                                         \
	X(REG_DRIFT, "drift")                                                             \
	X(REG_ENV, "environment changed")                                                 \
	X(REG_UNJUDGED, "not judgeable")

#define VERDICT_STR(v, s) [v] = (s),
#define VERDICT_NAME(v, s) {(s), (v)},
const char *const regress_verdict_names[REG_COUNT] = {REGRESS_VERDICTS(VERDICT_STR)};
const struct yschema_name regress_verdict_ynames[] = {REGRESS_VERDICTS(VERDICT_NAME) {NULL, 0}};

const char *regress_verdict_name(enum regress_verdict v)
{
	return (unsigned)v < REG_COUNT ? regress_verdict_names[v] : "?";
}

/* ---------------------------------------------------------------- config */

/* commit_url: "" or an http(s) address (the site puts it in an href, so
 * no other scheme) holding {good} or {bad}; problems to y. */
static void check_commit_url(struct yctx *y, struct ydoc_node *sec, const char *url)
{
	struct ydoc_node *n = ydoc_get(sec, "commit_url");
	if (!url[0] || !n)
		return;
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
		ydiag_add(y->diag, y->file, n->line, n->col,
			  "regress.commit_url: expected \"\" or an http:// or https:// address, got '%s'",
			  url);
	else if (!strstr(url, "{good}") && !strstr(url, "{bad}"))
		ydiag_add(y->diag, y->file, n->line, n->col,
			  "regress.commit_url: '%s' has neither {good} nor {bad} (where the revisions go)",
			  url);
}

/* impact: op -> the model component whose time a change of the op scales. */
static const struct yschema_field comp_value[] = {
	YS_VALUE(struct regress_op_comp, comp, YS_ENUM, 0, .names = model_comp_ynames),
};
static const struct yschema comp_schema = YS_TABLE("impact", comp_value, 0);

/* A share of a machine's series; change points' window. */
static const struct yschema_range share_pct = {0, 100, 1, 0, "within (0, 100]"};
static const struct yschema_range window_nights = {1, 1000, 0, 0, "within [1, 1000]"};

#define REQ Y_REQUIRED
#define C_INT(m, fl, u, h, ...)                                                           \
	YS_FIELD(struct regress_conf, m, YS_INT, REQ | (fl), .unit = (u), .help = (h), __VA_ARGS__)
#define C_NUM(m, fl, u, h, ...)                                                           \
	YS_FIELD(struct regress_conf, m, YS_NUM, REQ | (fl), .unit = (u), .help = (h), __VA_ARGS__)
#define C_PCT(k, m, fl, h, ...) YS_PCT(struct regress_conf, k, m, REQ | (fl), .help = (h), __VA_ARGS__)
/* The section's keys, in the order read; every one required. */
static const struct yschema_field conf_fields[] = {
	YS_FIELD(struct regress_conf, source, YS_STR, REQ,
		 .help = "where the values come from, by reference tag"),
	C_INT(baseline_nights, Y_POSITIVE, "nights", "good nights in the baseline window"),
	C_INT(min_good_nights, Y_POSITIVE, "nights",
	      "fewer good nights than this: \"not enough history\" (at most baseline_nights)"),
	C_NUM(mad_to_sigma, Y_POSITIVE, NULL, "MAD to noise sigma (1.4826 for normal noise)",
	      .source = "[mad-sigma]"),
	C_PCT("min_delta_pct", min_delta_frac, Y_NONNEG,
	      "smallest change flagged, % of the series' baseline", .source = "[perfherder]"),
	C_NUM(noise_multiple, Y_NONNEG, "sigmas", "and a change of at least this many noise sigmas"),
	C_NUM(z_threshold, Y_NONNEG, NULL, "and a robust |z| above this", .source = "[conbench]"),
	C_INT(confirm_nights, Y_POSITIVE, "nights",
	      "consecutive flagged nights one way that confirm a change",
	      .source = "[pytorch-benchmarks]"),
	C_PCT("noise_floor_pct", noise_floor_frac, Y_NONNEG,
	      "the noise sigma is at least this, % of the baseline"),
	C_NUM(change_max_p, Y_POSITIVE, NULL,
	      "a change point's significance: its p-value at most this (below 1)",
	      .source = "[otava-significance]"),
	C_INT(change_window_nights, Y_POSITIVE, "nights",
	      "nights of the current level searched for change points", .range = &window_nights),
	C_PCT("new_series_jump_pct", new_series_jump_frac, Y_POSITIVE,
	      "a series too young for a noise: a jump this large is flagged",
	      .source = "[ddt-setting]"),
	C_PCT("env_share_pct", env_share, Y_POSITIVE,
	      "share of a machine's series moving together that reads \"environment changed\"",
	      .range = &share_pct),
	C_INT(env_min_series, Y_POSITIVE, "series", "and at least this many of them"),
	C_NUM(max_load_per_cpu, Y_POSITIVE, NULL,
	      "contended above this 1-minute load average per online CPU: \"not judgeable\"",
	      .source = "[ddt-setting]"),
	C_NUM(max_cpu_others_pct, Y_NONNEG, "%",
	      "contended above this CPU time of other processes, % of all (over 100: never)",
	      .source = "[ddt-setting]"),
	C_NUM(max_cpu_steal_pct, Y_NONNEG, "%",
	      "contended above this CPU time the hypervisor gave other guests (over 100: never)",
	      .source = "[ddt-setting]"),
	C_INT(max_gpu_other_procs, Y_NONNEG, "processes",
	      "contended above this many others' compute processes on a measured GPU",
	      .source = "[ddt-setting]"),
	YS_FIELD(struct regress_conf, commit_url, YS_STR, 0,
		 .help = "a commit range's link, {good} and {bad} its revisions "
			 "(http(s); \"\" none)"),
	YS_DICT_OF(struct regress_conf, "impact", impact, nimpact, struct regress_op_comp, op,
		   &comp_schema, REQ,
		   .help = "op: model component, whose time a change of the op scales"),
};
static const struct yschema conf_schema = YS_TABLE("regress", conf_fields, 0);

int regress_conf_load(struct regress_conf *c, const struct tmpl *t, struct ydiag *diag)
{
	struct yctx y;
	struct ydoc_node *sec = tmpl_section_map(t, "regress", diag, &y);
	size_t before = diag->n;

	memset(c, 0, sizeof *c);
	if (!sec)
		return DDT_EINPUT;
	yschema_read_fields(&y, sec, &conf_schema, c);
	check_commit_url(&y, sec, c->commit_url);
	if (c->change_max_p >= 1) {
		struct ydoc_node *n = ydoc_get(sec, "change_max_p");
		ydiag_add(diag, y.file, n->line, n->col, "change_max_p: expected a p-value below 1");
	}
	if (c->min_good_nights > c->baseline_nights) {
		struct ydoc_node *n = ydoc_get(sec, "min_good_nights");
		ydiag_add(diag, y.file, n->line, n->col,
			  "min_good_nights (%d) exceeds baseline_nights (%d)", c->min_good_nights,
			  c->baseline_nights);
	}
	yget_check_unknown(&y, sec);
	return diag->n > before ? DDT_EINPUT : 0;
}


/* A document of the section alone, under its key (struct regress_conf
 * itself, offset 0). */
static const struct yschema_field conf_doc_fields[] = {
	{.key = "regress", .type = YS_MAP, .sub = &conf_schema, .help = "the section"},
};
static const struct yschema conf_doc = YS_TABLE("template", conf_doc_fields, 0);

void regress_conf_emit(const struct regress_conf *c, FILE *fp)
{
	yschema_write_doc(fp, &conf_doc, c);
}

int regress_conf_load_file(struct regress_conf *c, const char *path)
{
	struct tmpl t;
	struct ydiag diag = {0};
	int rc = tmpl_load(&t, path, &diag);

	if (!rc)
		rc = regress_conf_load(c, &t, &diag);
	if (rc && diag.n)
		err_set(rc, "%s", diag.msgs[0]);
	tmpl_free(&t);
	ydiag_free(&diag);
	return rc;
}
