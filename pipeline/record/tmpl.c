/* tmpl.c - job templates: scenarios, the sections of the other stages, extends. */
#include "tmpl.h"

#include "err.h"
#include "fsx.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>

/* Top-level keys a template may hold. Each stage checks its own section. */
static const char *const sections[] = {"name", "description", "extends", "scenarios",
				       "bench", "projection", "report", "regress", "nightly", "fleet", "site"};

const struct yschema_name tmpl_pipeline_names[] = {
	{"sglang", PIPE_SGLANG}, {"native", PIPE_NATIVE}, {NULL, 0}};
const struct yschema_name tmpl_estimator_names[] = {
	{"seed", EST_SEED}, {"calibrated", EST_CALIBRATED}, {NULL, 0}};

/* The name of value v in nm, or dflt. */
static const char *name_of(const struct yschema_name *nm, int v, const char *dflt)
{
	for (int i = 0; nm[i].name; i++)
		if (nm[i].value == v)
			return nm[i].name;
	return dflt;
}

/* The value of name s in nm into *out: 0, or -1 when nm has no such name. */
static int value_of(const struct yschema_name *nm, const char *s, int *out)
{
	for (int i = 0; nm[i].name; i++)
		if (!strcmp(nm[i].name, s)) {
			*out = nm[i].value;
			return 0;
		}
	return -1;
}

const char *tmpl_pipeline_name(enum pipeline_kind p)
{
	return name_of(tmpl_pipeline_names, (int)p, "sglang");
}

int tmpl_pipeline_parse(const char *s, enum pipeline_kind *out)
{
	int v;
	if (value_of(tmpl_pipeline_names, s, &v))
		return -1;
	*out = (enum pipeline_kind)v;
	return 0;
}

/* Reads one mean acceptance length of node n into *v: a number of at least
 * 1 (every step keeps the token the target model adds). 0 or -1. */
static int accept_num(struct yctx *c, struct ydoc_node *n, double *v)
{
	if (yget_node_num(c, n, "accept", Y_POSITIVE, v))
		return -1;
	if (*v < 1) {
		ydiag_add(c->diag, c->file, n->line, n->col,
			  "accept: %g is below 1 (a mean acceptance length counts the token every "
			  "step keeps)",
			  *v);
		return -1;
	}
	return 0;
}

/* accept: a mean acceptance length, a list of them (a range), or `curve`. */
static void accept_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
			void *obj)
{
	struct scenario *s = obj;
	struct ydoc_node *n = ydoc_get(m, f->key);
	if (!n) {
		ydiag_add(c->diag, c->file, m->line, m->col, "missing required key '%s'", f->key);
		return;
	}
	if (n->kind == YDOC_SCALAR && n->str && !strcmp(n->str, "curve")) {
		s->accept_curve = 1; /* the projection's acceptance source at block, budget */
		return;
	}
	if (n->kind == YDOC_SCALAR) {
		if (!accept_num(c, n, &s->accept[0]))
			s->naccept = 1;
		return;
	}
	if (yget_expect(c, n, YDOC_SEQ, "accept"))
		return;
	if (n->n == 0 || n->n > TMPL_MAX_ACCEPT) {
		ydiag_add(c->diag, c->file, n->line, n->col, "accept: give 1 to %d values",
			  TMPL_MAX_ACCEPT);
		return;
	}
	for (size_t i = 0; i < n->n; i++)
		if (!accept_num(c, n->items[i], &s->accept[s->naccept]))
			s->naccept++;
}

const char *tmpl_estimator_name(enum estimator_kind e)
{
	return name_of(tmpl_estimator_names, (int)e, "calibrated");
}

int tmpl_estimator_parse(const char *s, enum estimator_kind *out)
{
	int v;
	if (value_of(tmpl_estimator_names, s, &v))
		return -1;
	*out = (enum estimator_kind)v;
	return 0;
}

/* A block, budget or concurrency past a million is a slip of the keyboard,
 * not a decode step; ddt estimate's ad hoc options take the same. */
static const struct yschema_range per_million = {1, 1e6, 0, 0, "within [1, 1000000]"};

#define SC(m, ty, fl, u, h, ...)                                                          \
	YS_FIELD(struct scenario, m, ty, fl, .unit = (u), .help = (h), __VA_ARGS__)
static const struct yschema_field scenario_fields[] = {
	SC(name, YS_STR, Y_REQUIRED, NULL, "the scenario's name, unique in its template"),
	SC(target, YS_STR, Y_REQUIRED, NULL, "GPU catalog id"),
	YS_FIELD(struct scenario, pipeline, YS_ENUM, Y_REQUIRED, .names = tmpl_pipeline_names,
		 .help = "the serving pipeline"),
	SC(block, YS_INT, Y_REQUIRED | Y_POSITIVE, "tokens", "drafter block size b",
	   .range = &per_million),
	SC(budget, YS_INT, Y_REQUIRED | Y_POSITIVE, "nodes", "node budget B (root excluded)",
	   .range = &per_million),
	SC(concurrency, YS_INT, Y_POSITIVE, "requests", "concurrent requests C (1)",
	   .range = &per_million),
	SC(context, YS_INT, Y_POSITIVE, "tokens", "tokens before the root (absent: the anchors')"),
	/* no writer: templates are written by people, never by ddt */
	{.key = "accept", .type = YS_CUSTOM, .flags = Y_REQUIRED, .read = accept_read,
	 .unit = "tokens", .help = "mean acceptance length(s), root included, or curve"},
	YS_FIELD(struct scenario, estimator, YS_ENUM, 0, .names = tmpl_estimator_names,
		 .help = "whose estimate the headline is (calibrated)"),
	SC(runnable, YS_BOOL, 0, NULL, "the pipeline can run it (true)"),
	SC(note, YS_STR, 0, NULL, "why not runnable, or another caveat"),
};
const struct yschema tmpl_scenario_schema = YS_TABLE("scenarios[]", scenario_fields, 0);

static void load_scenario(struct yctx *c, struct ydoc_node *m, struct scenario *s)
{
	memset(s, 0, sizeof *s);
	s->concurrency = 1;
	s->runnable = 1;
	yschema_read_fields(c, m, &tmpl_scenario_schema, s);
	for (int i = 0; i < s->naccept; i++)
		if (s->accept[i] > s->block) {
			ydiag_add(c->diag, c->file, m->line, m->col,
				  "%s: acceptance %g exceeds the block size %d", s->name, s->accept[i],
				  s->block);
			break;
		}
	yget_check_unknown(c, m);
}

/* Returns 0 (problems go to c->diag) or DDT_ENOMEM. */
static int load_scenarios(struct tmpl *t, struct yctx *c, struct ydoc_node *seq)
{
	if (yget_expect(c, seq, YDOC_SEQ, "scenarios"))
		return 0;
	if (seq->n > TMPL_MAX_SCENARIOS) {
		ydiag_add(c->diag, c->file, seq->line, seq->col,
			  "scenarios: more than %d", TMPL_MAX_SCENARIOS);
		return 0;
	}
	t->scenarios = calloc(seq->n ? seq->n : 1, sizeof *t->scenarios);
	if (!t->scenarios)
		return err_nomem();
	for (size_t i = 0; i < seq->n; i++) {
		if (yget_expect(c, seq->items[i], YDOC_MAP, "scenario"))
			continue;
		struct scenario *s = &t->scenarios[t->nscenarios];
		load_scenario(c, seq->items[i], s);
		for (size_t j = 0; j < t->nscenarios; j++)
			if (s->name[0] && !strcmp(t->scenarios[j].name, s->name))
				ydiag_add(c->diag, c->file, seq->items[i]->line,
					  seq->items[i]->col, "scenario '%s' is defined twice",
					  s->name);
		t->nscenarios++;
	}
	return 0;
}

static void check_top(struct yctx *c, struct ydoc_node *root)
{
	for (size_t i = 0; i < root->n; i++) {
		size_t s;
		for (s = 0; s < sizeof sections / sizeof *sections; s++)
			if (!strcmp(root->keys[i]->str, sections[s]))
				break;
		if (s == sizeof sections / sizeof *sections)
			ydiag_add(c->diag, c->file, root->keys[i]->line, root->keys[i]->col,
				  "unknown section '%s'", root->keys[i]->str);
	}
}

/* The template's own keys read here (not strictly: every other section is
 * its stage's, check_top names the unknown ones); description is free text,
 * extends names the parent (load_at). */
static const struct yschema_field head_fields[] = {
	YS_FIELD(struct tmpl, name, YS_STR, Y_REQUIRED,
		 .help = "the template's name; run records name files by it"),
};
static const struct yschema head_schema = YS_TABLE("template", head_fields, 0);

/* Loads the template at path, or from buf (len bytes) named path. */
static int load_doc(struct ydoc **doc, const char *path, const char *buf, size_t len,
		    struct ydiag *diag)
{
	struct yctx c = {path, diag, NULL};
	int rc = buf ? ydoc_load_buf(doc, path, buf, len, diag) : ydoc_load_file(doc, path, diag);
	if (rc)
		return rc;
	if (!(*doc)->root) {
		ydiag_add(diag, path, 0, 0, "empty template");
		return DDT_EINPUT;
	}
	if (yget_expect(&c, (*doc)->root, YDOC_MAP, "template"))
		return DDT_EINPUT;
	check_top(&c, (*doc)->root);
	return 0;
}

static int load_at(struct tmpl *t, const char *path, const char *buf, size_t len,
		   struct ydiag *diag)
{
	size_t before = diag->n;
	struct yctx c = {path, diag, NULL};
	const char *ext = NULL;
	struct ydoc_node *n;
	int rc;

	memset(t, 0, sizeof *t);
	snprintf(t->path, sizeof t->path, "%s", path);
	if ((rc = load_doc(&t->doc, path, buf, len, diag)) != 0)
		return rc;
	if (!yschema_read_fields(&c, t->doc->root, &head_schema, t) &&
	    !fsx_name_ok(t->name)) { /* run records name files by it */
		n = ydoc_get(t->doc->root, "name");
		ydiag_add(diag, path, n->line, n->col, "name: '%s' is not a file name", t->name);
	}
	ydoc_get(t->doc->root, "description");
	if (!yget_str(&c, t->doc->root, "extends", 0, &ext) && ext) {
		if (!fsx_name_ok(ext)) {
			n = ydoc_get(t->doc->root, "extends");
			ydiag_add(diag, path, n->line, n->col,
				  "extends: name a template in the same folder, got '%s'", ext);
		} else {
			char *copy = strdup(path);
			char *ppath = copy ? fsx_join(dirname(copy), ext) : NULL;
			if (!ppath)
				rc = err_nomem();
			else if (!strcmp(ppath, path))
				ydiag_add(diag, path, 0, 0, "a template cannot extend itself");
			else if ((rc = load_doc(&t->parent, ppath, NULL, 0, diag)) == 0 &&
				 ydoc_get(t->parent->root, "extends"))
				ydiag_add(diag, ppath, 0, 0,
					  "a template that is extended cannot extend another");
			if (rc != DDT_ENOMEM) /* the others are in diag */
				rc = 0;
			free(ppath);
			free(copy);
		}
	}
	const char *sfile = NULL;
	n = tmpl_section(t, "scenarios", &sfile);
	if (!n)
		ydiag_add(diag, path, 0, 0, "missing required key 'scenarios'");
	else if (!rc) {
		struct yctx sc = {sfile, diag, NULL};
		rc = load_scenarios(t, &sc, n);
	}
	if (rc)
		return rc;
	return diag->n > before ? DDT_EINPUT : 0;
}

int tmpl_load(struct tmpl *t, const char *path, struct ydiag *diag)
{
	return load_at(t, path, NULL, 0, diag);
}

int tmpl_load_buf(struct tmpl *t, const char *path, const char *buf, size_t len,
		  struct ydiag *diag)
{
	return load_at(t, path, buf, len, diag);
}

void tmpl_free(struct tmpl *t)
{
	ydoc_free(t->doc);
	ydoc_free(t->parent);
	free(t->scenarios);
	memset(t, 0, sizeof *t);
}

struct ydoc_node *tmpl_section(const struct tmpl *t, const char *name, const char **file)
{
	struct ydoc_node *n = t->doc ? ydoc_get(t->doc->root, name) : NULL;
	if (n) {
		if (file)
			*file = t->doc->file;
		return n;
	}
	n = t->parent ? ydoc_get(t->parent->root, name) : NULL;
	if (n && file)
		*file = t->parent->file;
	return n;
}

struct ydoc_node *tmpl_section_map(const struct tmpl *t, const char *name, struct ydiag *diag,
				   struct yctx *y)
{
	const char *file = t->path;
	struct ydoc_node *sec = tmpl_section(t, name, &file);
	*y = (struct yctx){file, diag, NULL};
	if (!sec) {
		ydiag_add(diag, t->path, 0, 0, "missing required section '%s'", name);
		return NULL;
	}
	return yget_expect(y, sec, YDOC_MAP, name) ? NULL : sec;
}

const struct scenario *tmpl_scenario(const struct tmpl *t, const char *name)
{
	for (size_t i = 0; i < t->nscenarios; i++)
		if (!strcmp(t->scenarios[i].name, name))
			return &t->scenarios[i];
	return NULL;
}
