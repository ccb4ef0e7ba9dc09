/* regress_conf.c - the template's `regress:` section, strictly loaded, and the verdict names. */
#include "regress.h"

#include "err.h"

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

/* Reads the op -> component map of regress.impact. */
static void load_impact(struct regress_conf *c, struct yctx *y, struct ydoc_node *map)
{
	for (size_t i = 0; i < map->n; i++) {
		struct ydoc_node *k = map->keys[i], *v = map->items[i];
		int comp = -1;
		map->used[i] = 1;
		if (yget_expect(y, v, YDOC_SCALAR, k->str))
			continue;
		for (int j = 0; j < COMP_COUNT; j++)
			if (!strcmp(v->str, model_comp_name((enum model_comp)j)))
				comp = j;
		if (comp < 0) {
			char names[160] = "";
			for (int j = 0; j < COMP_COUNT; j++)
				snprintf(names + strlen(names), sizeof names - strlen(names),
					 "%s%s", j ? ", " : "",
					 model_comp_name((enum model_comp)j));
			ydiag_add(y->diag, y->file, v->line, v->col,
				  "impact.%s: expected a model component (%s), got '%s'", k->str,
				  names, v->str);
			continue;
		}
		if (c->nimpact == REGRESS_MAX_IMPACT || strlen(k->str) >= sizeof c->impact_op[0]) {
			ydiag_add(y->diag, y->file, k->line, k->col,
				  "impact: at most %d ops of at most 31 characters",
				  REGRESS_MAX_IMPACT);
			continue;
		}
		snprintf(c->impact_op[c->nimpact], sizeof c->impact_op[0], "%s", k->str);
		c->impact_comp[c->nimpact++] = (enum model_comp)comp;
	}
}

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

int regress_conf_load(struct regress_conf *c, const struct tmpl *t, struct ydiag *diag)
{
	const char *src = NULL;
	struct yctx y;
	struct ydoc_node *sec = tmpl_section_map(t, "regress", diag, &y), *imp = NULL;
	size_t before = diag->n;
	double pct = NAN;

	memset(c, 0, sizeof *c);
	if (!sec)
		return DDT_EINPUT;
	if (!yget_str(&y, sec, "source", Y_REQUIRED, &src) && src)
		snprintf(c->source, sizeof c->source, "%s", src);
	yget_int(&y, sec, "baseline_nights", Y_REQUIRED | Y_POSITIVE, &c->baseline_nights);
	yget_int(&y, sec, "min_good_nights", Y_REQUIRED | Y_POSITIVE, &c->min_good_nights);
	yget_num(&y, sec, "mad_to_sigma", Y_REQUIRED | Y_POSITIVE, &c->mad_to_sigma);
	if (!yget_num(&y, sec, "min_delta_pct", Y_REQUIRED | Y_NONNEG, &pct))
		c->min_delta_frac = pct / 100;
	yget_num(&y, sec, "noise_multiple", Y_REQUIRED | Y_NONNEG, &c->noise_multiple);
	yget_num(&y, sec, "z_threshold", Y_REQUIRED | Y_NONNEG, &c->z_threshold);
	yget_int(&y, sec, "confirm_nights", Y_REQUIRED | Y_POSITIVE, &c->confirm_nights);
	if (!yget_num(&y, sec, "noise_floor_pct", Y_REQUIRED | Y_NONNEG, &pct))
		c->noise_floor_frac = pct / 100;
	yget_num(&y, sec, "change_max_p", Y_REQUIRED | Y_POSITIVE, &c->change_max_p);
	yget_int(&y, sec, "change_window_nights", Y_REQUIRED | Y_POSITIVE,
		 &c->change_window_nights);
	if (!yget_num(&y, sec, "new_series_jump_pct", Y_REQUIRED | Y_POSITIVE, &pct))
		c->new_series_jump_frac = pct / 100;
	if (!yget_num(&y, sec, "env_share_pct", Y_REQUIRED | Y_POSITIVE, &pct))
		c->env_share = pct / 100;
	yget_int(&y, sec, "env_min_series", Y_REQUIRED | Y_POSITIVE, &c->env_min_series);
	yget_num(&y, sec, "max_load_per_cpu", Y_REQUIRED | Y_POSITIVE, &c->max_load_per_cpu);
	yget_num(&y, sec, "max_cpu_others_pct", Y_REQUIRED | Y_NONNEG, &c->max_cpu_others_pct);
	yget_num(&y, sec, "max_cpu_steal_pct", Y_REQUIRED | Y_NONNEG, &c->max_cpu_steal_pct);
	yget_int(&y, sec, "max_gpu_other_procs", Y_REQUIRED | Y_NONNEG, &c->max_gpu_other_procs);
	if (!yget_strcpy(&y, sec, "commit_url", 0, c->commit_url, sizeof c->commit_url))
		check_commit_url(&y, sec, c->commit_url);
	if (!yget_node(&y, sec, "impact", YDOC_MAP, Y_REQUIRED, &imp) && imp)
		load_impact(c, &y, imp);
	if (c->change_max_p >= 1 || c->change_window_nights > 1000) {
		struct ydoc_node *n = ydoc_get(sec, c->change_max_p >= 1 ? "change_max_p"
									  : "change_window_nights");
		ydiag_add(diag, y.file, n->line, n->col, "%s",
			  c->change_max_p >= 1 ? "change_max_p: expected a p-value below 1"
					       : "change_window_nights: at most 1000");
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
