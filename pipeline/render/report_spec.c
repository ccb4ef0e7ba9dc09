/* report_spec.c - the template's `report:` section: title, page one, chart size,
 * and the sections in order with their parameters. Strict: unknown keys fail. */
#include "report_spec.h"

#include "err.h"
#include "yschema.h"

#include <math.h>
#include <stddef.h>
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

/* A section's keys beyond `section` (its kind) and `scenarios` (checked
 * against the template), in the order read: every kind's, then history's. */
static const struct yschema_field section_fields[] = {
	YS_FIELD(struct report_section, title, YS_STR, 0, .help = "the heading; empty: the kind's own"),
};
static const struct yschema section_schema = YS_TABLE("section", section_fields, 0);
static const struct yschema_field history_fields[] = {
	YS_FIELD(struct report_section, op, YS_STR, Y_REQUIRED, .help = "the op followed (moe_w4a16)"),
	YS_FIELD(struct report_section, variant, YS_STR, 0,
		 .help = "only this variant; empty: every variant"),
};
static const struct yschema history_schema = YS_TABLE("history", history_fields, 0);

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
	yschema_read_fields(c, n, &section_schema, s);
	if (k == RSEC_HISTORY)
		yschema_read_fields(c, n, &history_schema, s);
	if (takes_scenarios(k) && (sn = ydoc_get(n, "scenarios")) != NULL)
		s->nscenarios = scenario_list(c, t, sn, "scenarios", s->scenarios);
	yget_check_unknown(c, n);
}

/* chart: the size of a chart on its page, each value within its range. */
#define CHART(k, m, lo, hi, u, h)                                                         \
	YS_KEYED(struct report_spec, k, m, YS_NUM, Y_REQUIRED | Y_POSITIVE,                    \
		 .range = &(struct yschema_range){lo, hi, 0, 0, "within [" #lo ", " #hi "]"},    \
		 .unit = (u), .help = (h))
static const struct yschema_field chart_fields[] = {
	CHART("width_pt", chart_width_pt, 120, 1000, "pt", "a chart's width on its page"),
	CHART("height_pt", chart_height_pt, 80, 1000, "pt", "its height"),
	CHART("png_scale", png_scale, 0.5, 8, "px/pt", "PNG pixels per point"),
};
static const struct yschema chart_schema = YS_TABLE("chart", chart_fields, 0);

/* What report_spec_load reads: the spec, and the template its scenario
 * names must exist in. */
struct spec_read {
	struct report_spec spec;
	const struct tmpl *t;
};

static void baseline_read(struct yctx *c, struct ydoc_node *sec, const struct yschema_field *f,
			  void *obj)
{
	struct spec_read *r = obj;
	struct ydoc_node *n = NULL;
	if (!yget_node(c, sec, f->key, YDOC_SCALAR, f->flags, &n) && n)
		scenario_name(c, r->t, n, f->key, r->spec.baseline, sizeof r->spec.baseline);
}

static void headline_read(struct yctx *c, struct ydoc_node *sec, const struct yschema_field *f,
			  void *obj)
{
	struct spec_read *r = obj;
	struct ydoc_node *n = ydoc_get(sec, f->key);
	if (n)
		r->spec.nheadline = scenario_list(c, r->t, n, f->key, r->spec.headline);
	else
		ydiag_add(c->diag, c->file, sec->line, sec->col, "report: missing required key '%s'",
			  f->key);
}

static void sections_read(struct yctx *c, struct ydoc_node *sec, const struct yschema_field *f,
			  void *obj)
{
	struct spec_read *r = obj;
	struct report_spec *s = &r->spec;
	struct ydoc_node *n = NULL;
	if (yget_node(c, sec, f->key, YDOC_SEQ, f->flags, &n) || !n)
		return;
	if (n->n == 0 || n->n > REPORT_MAX_SECTIONS)
		ydiag_add(c->diag, c->file, n->line, n->col, "%s: give 1 to %d sections", f->key,
			  REPORT_MAX_SECTIONS);
	for (size_t i = 0; i < n->n && s->nsections < REPORT_MAX_SECTIONS; i++)
		load_section(c, r->t, n->items[i], &s->sections[s->nsections++]);
}

#define CUSTOM(k, fn, h)                                                                  \
	{.key = (k), .type = YS_CUSTOM, .flags = Y_REQUIRED, .read = (fn), .help = (h)}
/* report:, in the order read (a template is read, never written). */
static const struct yschema_field report_fields[] = {
	YS_KEYED(struct spec_read, "title", spec.title, YS_STR, Y_REQUIRED,
		 .help = "the documents' title"),
	CUSTOM("baseline", baseline_read, "the scenario that is the measured baseline"),
	CUSTOM("headline", headline_read, "the scenarios page one answers with, 1 to 8"),
	{.key = "chart", .type = YS_MAP, .off = offsetof(struct spec_read, spec),
	 .flags = Y_REQUIRED, .sub = &chart_schema,
	 .help = "a chart's size on its page: width_pt, height_pt, png_scale"},
	CUSTOM("sections", sections_read,
	       "the sections in order, 1 to 48, each a kind or {section: kind, ...}"),
};
static const struct yschema report_schema = YS_TABLE("report", report_fields, 0);

int report_spec_load(struct report_spec *spec, const struct tmpl *t, struct ydiag *diag)
{
	const char *file = NULL;
	struct ydoc_node *sec = tmpl_section(t, "report", &file);
	size_t before = diag->n;
	struct yctx c = {file, diag, NULL};
	struct spec_read r = {.t = t};

	memset(spec, 0, sizeof *spec);
	spec->chart_width_pt = NAN;
	if (!sec) {
		ydiag_add(diag, t->path, 0, 0, "missing section 'report'");
		return DDT_EINPUT;
	}
	r.spec = *spec;
	yschema_read_item(&c, sec, &report_schema, &r, "report");
	*spec = r.spec;
	return diag->n > before ? DDT_EINPUT : 0;
}
