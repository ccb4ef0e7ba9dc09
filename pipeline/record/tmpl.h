/* tmpl.h - job templates: scenarios to project plus one section per stage
 * (bench, projection, report, regress), with `extends:` for shared parts. */
#ifndef DDT_TMPL_H
#define DDT_TMPL_H

#include "ydoc.h"
#include "yschema.h"

#define TMPL_MAX_ACCEPT 16
#define TMPL_MAX_SCENARIOS 512 /* each is projected every night */

enum pipeline_kind { PIPE_SGLANG, PIPE_NATIVE };

/* Which estimate a scenario's headline is: the seed's (every assumption at
 * the seed's point: transfer 1.0, its MoE line; one row per acceptance) or
 * ddt's calibrated projection (the median of its band; a list of
 * acceptances is a range sampled uniformly, one row). */
enum estimator_kind { EST_CALIBRATED, EST_SEED };

struct scenario {
	char name[48];
	char target[32];        /* GPU catalog id */
	enum pipeline_kind pipeline;
	int block;              /* drafter block size b */
	int budget;             /* node budget B (root excluded) */
	int concurrency;        /* C */
	int context;            /* tokens before the root; 0: the anchors' (anchor_context) */
	int naccept;
	double accept[TMPL_MAX_ACCEPT]; /* mean acceptance length(s), root included */
	int accept_curve;       /* `accept: curve`: from the projection's acceptance
				 * source (a drafter trace) at this block and budget;
				 * naccept is then 0 */
	int runnable;           /* 0: the pipeline cannot run it (shown, marked) */
	enum estimator_kind estimator;
	char note[200];         /* why not runnable, or other caveat */
};

struct tmpl {
	char name[64];
	char path[4096];
	struct ydoc *doc;        /* this template */
	struct ydoc *parent;     /* the one it extends, or NULL */
	size_t nscenarios;
	struct scenario *scenarios;
};

/* Loads a template (and the one it extends, from the same folder). Scenarios
 * are checked here; every other section is checked by its stage's loader,
 * which tmpl_check() calls. Problems go to diag; returns 0 or DDT_EINPUT etc.
 * t must be freed with tmpl_free even on error. */
int tmpl_load(struct tmpl *t, const char *path, struct ydiag *diag);
/* The same with the template's text in buf (len bytes); path names it in
 * messages and places it: `extends:` is read from path's folder. */
int tmpl_load_buf(struct tmpl *t, const char *path, const char *buf, size_t len,
		  struct ydiag *diag);
void tmpl_free(struct tmpl *t);

/* The node of a top-level section (the child's, else the parent's) and the
 * file it came from, for a stage's loader; NULL when neither has it. */
struct ydoc_node *tmpl_section(const struct tmpl *t, const char *name, const char **file);

/* A stage's required section as a mapping, with *y set to read it (the file
 * it came from, diag): the node, or NULL with the problem added to diag
 * (missing, or not a mapping). */
struct ydoc_node *tmpl_section_map(const struct tmpl *t, const char *name, struct ydiag *diag,
				   struct yctx *y);

/* The scenario of that name, or NULL. */
const struct scenario *tmpl_scenario(const struct tmpl *t, const char *name);

/* A scenario's keys (scenarios[] of a template), which ddt estimate's ad
 * hoc options take too. */
extern const struct yschema tmpl_scenario_schema;

/* The names the YAML files give them, for the schema tables (yschema.h). */
extern const struct yschema_name tmpl_pipeline_names[];
extern const struct yschema_name tmpl_estimator_names[];
const char *tmpl_pipeline_name(enum pipeline_kind p);
const char *tmpl_estimator_name(enum estimator_kind e);
int tmpl_estimator_parse(const char *s, enum estimator_kind *out);
int tmpl_pipeline_parse(const char *s, enum pipeline_kind *out);

#endif
