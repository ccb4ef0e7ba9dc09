/* report_spec.c - the template's `report:` section: title, page one, chart size,
 * and the sections in order with their parameters. Strict: unknown keys fail. */
#include "report_spec.h"

#include "err.h"

#include <math.h>
#include <string.h>

static const char *const section_names[RSEC_COUNT] = {
	[RSEC_SUMMARY] = "summary",         [RSEC_PROJECTIONS] = "projections",
	[RSEC_BREAKDOWN] = "breakdown",     [RSEC_ACCEPTANCE] = "acceptance",
	[RSEC_MOE_CURVE] = "moe_curve",     [RSEC_TORNADO] = "tornado",
	[RSEC_BUDGET] = "budget",           [RSEC_PARETO] = "pareto",
	[RSEC_HISTORY] = "history",
	[RSEC_REGRESSIONS] = "regressions", [RSEC_KERNELS] = "kernels",
	[RSEC_ASSUMPTIONS] = "assumptions", [RSEC_CAVEATS] = "caveats",
};

const char *report_spec_section_name(enum report_section_kind k)
{
	return (unsigned)k < RSEC_COUNT ? section_names[k] : "?";
}

/* A scenario name that must exist in t, into dst. */
static void scenario_name(struct yctx *c, const struct tmpl *t, struct ydoc_node *n,
			  const char *what, char *dst, size_t len)
{
	if (yget_expect(c, n, YDOC_SCALAR, what))
		return;
	if (!tmpl_scenario(t, n->str))
		ydiag_add(c->diag, c->file, n->line, n->col, "%s: no scenario '%s' in the template",
			  what, n->str);
	else if (strlen(n->str) >= len)
		ydiag_add(c->diag, c->file, n->line, n->col, "%s: name too long", what);
	else
		memcpy(dst, n->str, strlen(n->str) + 1);
}

/* A list of scenario names (a sequence, or one name) into names[]. */
static int scenario_list(struct yctx *c, const struct tmpl *t, struct ydoc_node *n,
			 const char *what, char names[][48])
{
	int k = 0;
	if (n->kind == YDOC_SCALAR) {
		scenario_name(c, t, n, what, names[0], 48);
		return 1;
	}
	if (yget_expect(c, n, YDOC_SEQ, what))
		return 0;
	if (n->n == 0 || n->n > REPORT_MAX_NAMES) {
		ydiag_add(c->diag, c->file, n->line, n->col, "%s: give 1 to %d scenarios", what,
			  REPORT_MAX_NAMES);
		return 0;
	}
	for (size_t i = 0; i < n->n; i++)
		scenario_name(c, t, n->items[i], what, names[k++], 48);
	return k;
}

static int section_kind(const char *s)
{
	for (int k = 0; k < RSEC_COUNT; k++)
		if (!strcmp(s, section_names[k]))
			return k;
	return -1;
}

/* Which parameters a kind takes beyond `section` and `title`. */
static int takes_scenarios(int k)
{
	return k == RSEC_BREAKDOWN || k == RSEC_ACCEPTANCE || k == RSEC_TORNADO ||
	       k == RSEC_PROJECTIONS;
}

static void load_section(struct yctx *c, const struct tmpl *t, struct ydoc_node *n,
			 struct report_section *s)
{
	struct ydoc_node *kn, *sn;
	int k;

	memset(s, 0, sizeof *s);
	if (n->kind == YDOC_SCALAR) { /* a bare name: the section without parameters */
		kn = n;
	} else {
		if (yget_expect(c, n, YDOC_MAP, "section"))
			return;
		if (yget_node(c, n, "section", YDOC_SCALAR, Y_REQUIRED, &kn) || !kn)
			return;
	}
	k = section_kind(kn->str);
	if (k < 0) {
		ydiag_add(c->diag, c->file, kn->line, kn->col,
			  "section: unknown section '%s' (summary, projections, breakdown, "
			  "acceptance, moe_curve, tornado, budget, pareto, history, regressions, "
			  "kernels, assumptions, caveats)",
			  kn->str);
		return;
	}
	s->kind = (enum report_section_kind)k;
	if (n->kind == YDOC_SCALAR) {
		if (k == RSEC_HISTORY)
			ydiag_add(c->diag, c->file, n->line, n->col,
				  "history: give the op, e.g. {section: history, op: moe_w4a16}");
		return;
	}
	yget_strcpy(c, n, "title", 0, s->title, sizeof s->title);
	if (k == RSEC_HISTORY) {
		yget_strcpy(c, n, "op", Y_REQUIRED, s->op, sizeof s->op);
		yget_strcpy(c, n, "variant", 0, s->variant, sizeof s->variant);
	}
	if (takes_scenarios(k) && (sn = ydoc_get(n, "scenarios")) != NULL)
		s->nscenarios = scenario_list(c, t, sn, "scenarios", s->scenarios);
	yget_check_unknown(c, n);
}

static void load_chart(struct yctx *c, struct ydoc_node *m, struct report_spec *s)
{
	static const struct {
		const char *key;
		double lo, hi;
	} lim[] = {{"width_pt", 120, 1000}, {"height_pt", 80, 1000}, {"png_scale", 0.5, 8}};
	double *dst[] = {&s->chart_width_pt, &s->chart_height_pt, &s->png_scale};

	for (size_t i = 0; i < 3; i++) {
		if (yget_num(c, m, lim[i].key, Y_REQUIRED | Y_POSITIVE, dst[i]))
			continue;
		if (*dst[i] < lim[i].lo || *dst[i] > lim[i].hi)
			ydiag_add(c->diag, c->file, m->line, m->col, "chart.%s: %g is outside [%g, %g]",
				  lim[i].key, *dst[i], lim[i].lo, lim[i].hi);
	}
	yget_check_unknown(c, m);
}

int report_spec_load(struct report_spec *spec, const struct tmpl *t, struct ydiag *diag)
{
	const char *file = NULL;
	struct ydoc_node *sec = tmpl_section(t, "report", &file), *n;
	size_t before = diag->n;
	struct yctx c = {file, diag};

	memset(spec, 0, sizeof *spec);
	spec->chart_width_pt = NAN;
	if (!sec) {
		ydiag_add(diag, t->path, 0, 0, "missing section 'report'");
		return DDT_EINPUT;
	}
	if (yget_expect(&c, sec, YDOC_MAP, "report"))
		return DDT_EINPUT;
	yget_strcpy(&c, sec, "title", Y_REQUIRED, spec->title, sizeof spec->title);
	if (!yget_node(&c, sec, "baseline", YDOC_SCALAR, Y_REQUIRED, &n) && n)
		scenario_name(&c, t, n, "baseline", spec->baseline, sizeof spec->baseline);
	if ((n = ydoc_get(sec, "headline")) != NULL)
		spec->nheadline = scenario_list(&c, t, n, "headline", spec->headline);
	else
		ydiag_add(diag, file, sec->line, sec->col, "report: missing required key 'headline'");
	if (!yget_node(&c, sec, "chart", YDOC_MAP, Y_REQUIRED, &n) && n)
		load_chart(&c, n, spec);
	if (!yget_node(&c, sec, "sections", YDOC_SEQ, Y_REQUIRED, &n) && n) {
		if (n->n == 0 || n->n > REPORT_MAX_SECTIONS)
			ydiag_add(diag, file, n->line, n->col, "sections: give 1 to %d sections",
				  REPORT_MAX_SECTIONS);
		for (size_t i = 0; i < n->n && spec->nsections < REPORT_MAX_SECTIONS; i++)
			load_section(&c, t, n->items[i], &spec->sections[spec->nsections++]);
	}
	yget_check_unknown(&c, sec);
	return diag->n > before ? DDT_EINPUT : 0;
}
