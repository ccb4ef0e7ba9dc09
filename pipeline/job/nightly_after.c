/* nightly_after.c - what follows a night's bench, for the nightly and the
 * fleet alike: verdicts, projection, commit and documents (nightly.h). */
#include "nightly.h"

#include "err.h"
#include "fit.h"
#include "fsx.h"
#include "model.h"
#include "project.h"
#include "regress.h"
#include "report.h"
#include "report_load.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Appends one host's verdicts to the night's, its device names suffixed
 * " @label" (label NULL: as they are). */
static int night_fold(struct regress_night *all, const struct regress_night *one, const char *label)
{
	size_t ne = all->n + one->n, nr = all->nrev + one->nrev, ni = all->impacts.n + one->impacts.n;
	void *e = realloc(all->entries, (ne ? ne : 1) * sizeof *all->entries);
	if (e)
		all->entries = e;
	void *r = e ? realloc(all->revs, (nr ? nr : 1) * sizeof *all->revs) : NULL;
	if (r)
		all->revs = r;
	void *im = r ? realloc(all->impacts.v, (ni ? ni : 1) * sizeof *all->impacts.v) : NULL;
	if (!im)
		return err_nomem();
	all->impacts.v = im;
#define RELABEL(k)                                                                  \
	do {                                                                        \
		size_t l_ = strnlen((k).device, sizeof (k).device);                 \
		if (label)                                                          \
			snprintf((k).device + l_, sizeof (k).device - l_, " @%s", label); \
	} while (0)
	for (size_t i = 0; i < one->n; i++) {
		all->entries[all->n] = one->entries[i];
		RELABEL(all->entries[all->n].key);
		all->n++;
	}
	for (size_t i = 0; i < one->nrev; i++) {
		all->revs[all->nrev] = one->revs[i];
		RELABEL(all->revs[all->nrev].key);
		all->nrev++;
	}
	for (size_t i = 0; i < one->impacts.n; i++) {
		all->impacts.v[all->impacts.n] = one->impacts.v[i];
		RELABEL(all->impacts.v[all->impacts.n].key);
		all->impacts.n++;
	}
#undef RELABEL
	if (regress_alerts_fold(all, one))
		return err_nomem();
	for (int v = 0; v < REG_COUNT; v++)
		all->count[v] += one->count[v];
	if (one->nruns > all->nruns)
		all->nruns = one->nruns;
	return 0;
}

/* Judges one host against its own nights: its history analysed, the tok/s
 * impact of tonight's changes under model (NULL: none), its verdicts into
 * its own file when it has one, and folded into the night's. A file that
 * cannot be written is returned after the fold. */
static int judge_host(struct nightly_after *a, const struct nightly_host *host,
		      const struct model *model)
{
	struct regress_impacts imp = {0};
	struct regress_night one = {0};
	int rc, wrc = 0;

	regress_history(a->rconf, host->h);
	rc = regress_impact_own(&imp, a->rconf, host->h, host->run, model, a->t, a->measured);
	if (!rc && (rc = regress_night_build(&one, host->h, host->run, &imp)) == 0) {
		if (host->verdicts)
			wrc = regress_night_write(&one, host->verdicts);
		rc = night_fold(&a->verdicts, &one, host->label);
	}
	regress_night_free(&one);
	regress_impacts_free(&imp);
	return rc ? rc : wrc;
}

/* Every host's verdicts and their tok/s impact on the template's scenarios,
 * the night's into dir/verdicts.yaml (a->verdicts empty before). */
static int judge_all(struct nightly_after *a)
{
	struct model model;
	char *path = NULL;
	int rc = 0, have_model;

	have_model = a->cal && model_prepare(&model, a->cal, a->der, NULL) == 0;
	if (!have_model)
		snprintf(a->no_impact, sizeof a->no_impact, "%s",
			 a->cal ? err_msg() : "no calibration");
	snprintf(a->verdicts.run_id, sizeof a->verdicts.run_id, "%s", a->id);
	a->judged = 1;
	for (size_t i = 0; i < a->nhosts && rc != DDT_ENOMEM; i++) {
		int hrc = judge_host(a, &a->hosts[i], have_model ? &model : NULL);
		rc = rc ? rc : hrc;
	}
	a->judged_ok = rc == 0;
	if (rc != DDT_ENOMEM) {
		int wrc = (path = fsx_join(a->dir, "verdicts.yaml")) ? regress_night_write(&a->verdicts, path)
								     : err_nomem();
		rc = rc ? rc : wrc;
	}
	free(path);
	return rc;
}

static void after_regress(struct nightly_after *a, const struct nightly_hooks *k)
{
	if (!a->rconf) {
		k->skip(k->ctx, NIGHTLY_REGRESS, a->regress_skip);
		return;
	}
	k->begin(k->ctx, NIGHTLY_REGRESS);
	int rc = judge_all(a);
	k->end(k->ctx, NIGHTLY_REGRESS, rc, a);
}

/* The projection from the measured rows: dir/projection.yaml. */
static int project_into(struct nightly_after *a)
{
	struct projection p;
	char *path = NULL;
	int rc;

	memset(&p, 0, sizeof p);
	if (!a->cal)
		rc = err_set(DDT_EINPUT, "no calibration");
	else if ((rc = project_run(&p, a->cal, a->der, a->t, a->measured, NULL)) == 0)
		rc = (path = fsx_join(a->dir, "projection.yaml")) ? project_write(&p, path)
								   : err_nomem();
	a->projected_rows = p.nrows;
	project_free(&p);
	free(path);
	return rc;
}

static void after_project(struct nightly_after *a, const struct nightly_hooks *k)
{
	k->begin(k->ctx, NIGHTLY_PROJECT);
	int rc = project_into(a);
	k->end(k->ctx, NIGHTLY_PROJECT, rc, a);
}

/* The night moved to another run id (a->id) at its commit: its verdicts
 * (projection: its projection), which name the id, made again for it when
 * they were written. When that fails the file goes (the repair makes the
 * projection again): nothing in the folder names an id not its own. */
static int rewrite_one(struct nightly_after *a, int projection)
{
	char *path = fsx_join(a->dir, projection ? "projection.yaml" : "verdicts.yaml");
	int rc = 0;

	if (!path)
		return err_nomem();
	if (fsx_kind(path) == FSX_FILE) {
		if (!projection) {
			regress_night_free(&a->verdicts);
			memset(&a->verdicts, 0, sizeof a->verdicts);
		}
		rc = projection ? project_into(a) : judge_all(a);
		if (rc)
			unlink(path);
	}
	free(path);
	return rc;
}

static int rewrite_named(struct nightly_after *a)
{
	int rc = rewrite_one(a, 0), prc = rewrite_one(a, 1);
	return rc ? rc : prc;
}

/* The calibration and template stored into dir, then the folder put in
 * place; when its name was taken meanwhile, under the next free one. */
static void after_commit(struct nightly_after *a, const struct nightly_hooks *k)
{
	int rc, wrc = 0;

	k->begin(k->ctx, NIGHTLY_COMMIT);
	rc = report_stash_inputs(a->dir, a->calibration, a->template_path);
	if (!rc && k->commit)
		rc = k->commit(k->ctx);
	while (rc == DDT_ETAKEN) { /* the hook moved tonight to the next free id */
		int r = rewrite_named(a);
		wrc = wrc ? wrc : r;
		rc = k->commit(k->ctx);
	}
	a->committed = rc == 0;
	k->end(k->ctx, NIGHTLY_COMMIT, rc ? rc : wrc, a);
}

static void after_documents(struct nightly_after *a, const struct nightly_hooks *k)
{
	/* the history the verdicts were given on, when every host was judged */
	struct report_ctx ctx = {a->runs, a->home, 1, a->judged_ok ? a->docs_hist : NULL};
	int rc;

	if (!a->committed) {
		k->skip(k->ctx, NIGHTLY_DOCUMENTS, "no run folder");
		return;
	}
	k->begin(k->ctx, NIGHTLY_DOCUMENTS);
	rc = report_render(&ctx, a->reports, a->id);
	k->end(k->ctx, NIGHTLY_DOCUMENTS, rc, a);
}

void nightly_after_bench(struct nightly_after *a, const struct nightly_hooks *k)
{
	after_regress(a, k);
	after_project(a, k);
	after_commit(a, k);
	after_documents(a, k);
}
