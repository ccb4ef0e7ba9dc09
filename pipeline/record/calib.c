/* calib.c - strict loading of the calibration: its files, their sections
 * (each read by its table, calib_schema.c) and the rules across sections
 * (names in the GPU catalog, wherever in the folder the catalog is), once
 * every file is read (overrides: calib_set.c; lookups: calib_query.c). */
#include "calib.h"

#include "calib_fields.h"
#include "err.h"
#include "fsx.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---------------------------------------------------------------- sections */

/* gpus: the catalog, its keys the GPUs' ids. */
static void load_gpus(struct calib *cal, struct yctx *c, struct ydoc_node *sec)
{
	if (yget_expect(c, sec, YDOC_MAP, "gpus"))
		return;
	cal->gpus = calloc(sec->n ? sec->n : 1, sizeof *cal->gpus);
	if (!cal->gpus) {
		ydiag_add(c->diag, c->file, 0, 0, "out of memory");
		return;
	}
	for (size_t i = 0; i < sec->n; i++) {
		struct gpu *g = &cal->gpus[cal->ngpus];
		struct ydoc_node *m = sec->items[i];
		sec->used[i] = 1;
		snprintf(g->id, sizeof g->id, "%s", sec->keys[i]->str);
		yschema_read_item(c, m, &calib_gpu_schema, g, sec->keys[i]->str);
		if (m->kind == YDOC_MAP)
			cal->ngpus++;
	}
}

/* moe_reference, and where its gpu was read (for the catalog's problems). */
static void load_moe_reference(struct calib *cal, struct yctx *c, struct ydoc_node *sec)
{
	struct moe_reference *r = &cal->moe_ref;
	yschema_read_item(c, sec, &calib_moe_ref_schema, r, "moe_reference");
	if (sec->kind != YDOC_MAP)
		return;
	struct ydoc_node *g = ydoc_get(sec, "gpu");
	r->gpu_line = g ? g->line : sec->line;
	r->gpu_col = g ? g->col : sec->col;
}

/* ---------------------------------------------------------------- files */

/* A top-level section: read by its table into the member at off of struct
 * calib, or by load. */
struct section {
	const char *name;
	const struct yschema *schema;
	size_t off;
	void (*load)(struct calib *, struct yctx *, struct ydoc_node *);
	char file[4096]; /* where it was found */
	int line;
	int optional;
};

static void load_doc(struct calib *cal, struct ydoc *doc, struct section *secs, size_t nsecs,
		     struct ydiag *diag)
{
	struct yctx c = {doc->file, diag, NULL};
	struct ydoc_node *root = doc->root;

	if (!root)
		return; /* an empty file contributes nothing */
	if (yget_expect(&c, root, YDOC_MAP, "calibration file"))
		return;
	for (size_t i = 0; i < root->n; i++) {
		const char *key = root->keys[i]->str;
		size_t s;
		for (s = 0; s < nsecs && strcmp(secs[s].name, key); s++)
			;
		root->used[i] = 1;
		if (s == nsecs) {
			ydiag_add(diag, doc->file, root->keys[i]->line, root->keys[i]->col,
				  "unknown section '%s'", key);
			continue;
		}
		if (secs[s].file[0]) {
			ydiag_add(diag, doc->file, root->keys[i]->line, root->keys[i]->col,
				  "section '%s' is already given in %s:%d", key, secs[s].file,
				  secs[s].line);
			continue;
		}
		snprintf(secs[s].file, sizeof secs[s].file, "%s", doc->file);
		secs[s].line = root->keys[i]->line;
		if (secs[s].load)
			secs[s].load(cal, &c, root->items[i]);
		else
			yschema_read_item(&c, root->items[i], secs[s].schema,
					  (char *)cal + secs[s].off, key);
	}
}

static int yaml_name(const struct dirent *e)
{
	size_t n = strlen(e->d_name);
	return !fsx_is_temp_name(e->d_name) && n > 5 && !strcmp(e->d_name + n - 5, ".yaml");
}

/* The all-reduce table against the catalog: one entry per GPU, `like` resolved,
 * a link bandwidth for messages above the largest size. */
static void check_allreduce(struct calib *cal, struct ydiag *diag, const struct section *sec)
{
	struct allreduce *ar = &cal->ar;
	for (int i = 0; i < ar->n; i++) {
		struct ar_gpu *g = &ar->per_gpu[i];
		if (!calib_gpu(cal, g->gpu))
			ydiag_add(diag, sec->file, g->line, g->col,
				  "allreduce.latency_us.%s: not in the GPU catalog", g->gpu);
		if (!g->like[0])
			continue;
		const struct ar_gpu *o = calib_ar(cal, g->like);
		if (!o || o->like[0])
			ydiag_add(diag, sec->file, g->line, g->col,
				  "allreduce.latency_us.%s: like '%s' must name a GPU with its own "
				  "figures",
				  g->gpu, g->like);
		else
			memcpy(g->us, o->us, sizeof g->us);
	}
	for (size_t i = 0; i < cal->ngpus; i++) {
		if (!calib_ar(cal, cal->gpus[i].id))
			ydiag_add(diag, sec->file, sec->line, 1,
				  "allreduce.latency_us: no entry for GPU '%s'", cal->gpus[i].id);
		if (isnan(cal->gpus[i].link_gbps))
			ydiag_add(diag, sec->file, sec->line, 1,
				  "allreduce: GPU '%s' needs link_gbps for messages above %g bytes",
				  cal->gpus[i].id, ar->nsizes ? ar->bytes[ar->nsizes - 1] : 0.0);
	}
}

static void cross_check(struct calib *cal, struct ydiag *diag, struct section *secs)
{
	struct {
		const char *gpu, *what;
		int sec, line, col;
	} refs[] = {{cal->sglang_b8.gpu, "anchors.sglang_b8.gpu", 3, cal->sglang_b8.gpu_line,
		     cal->sglang_b8.gpu_col},
		    {cal->sglang_b16.gpu, "anchors.sglang_b16.gpu", 3, cal->sglang_b16.gpu_line,
		     cal->sglang_b16.gpu_col},
		    {cal->moe_ref.gpu, "moe_reference.gpu", 4, cal->moe_ref.gpu_line,
		     cal->moe_ref.gpu_col}};
	for (size_t i = 0; i < 3; i++)
		if (refs[i].gpu[0] && secs[0].file[0] && !calib_gpu(cal, refs[i].gpu))
			ydiag_add(diag, secs[refs[i].sec].file, refs[i].line, refs[i].col,
				  "%s: '%s' is not in the GPU catalog", refs[i].what, refs[i].gpu);
	if (secs[0].file[0] && secs[7].file[0])
		check_allreduce(cal, diag, &secs[7]);
	if (secs[1].file[0] && secs[4].file[0] && cal->moe_ref.tp > 0 &&
	    cal->moe_ref.tp != cal->model.tp)
		ydiag_add(diag, secs[4].file, secs[4].line, 1,
			  "moe_reference.tp (%g) must equal model.tp (%g): the curve is moved "
			  "between GPUs, not between parallel layouts",
			  cal->moe_ref.tp, cal->model.tp);
}

/* The values a calibration leaves out read as NaN: what its optional keys
 * hold when absent. */
static void calib_absent(struct calib *cal)
{
	cal->law_hold[0] = cal->law_hold[1] = NAN;
	cal->sglang_max_budget = NAN;
	cal->moe_ref.prov = PROV_MEASURED;
	cal->moe_ref.floor_us = NAN;
	for (int p = 0; p < MOE_P_COUNT; p++)
		cal->moe_ref.phys.value[p] = NAN;
	cal->moe_ref.phys.mix_rms_pct = NAN;
	cal->xback_m_min = cal->xback_m_max = NAN;
}

int calib_load(struct calib *cal, const char *path, struct ydiag *diag)
{
	struct section secs[] = {
		/* a table's struct: a member of struct calib at off, or all of it */
		{"gpus", NULL, 0, load_gpus, "", 0, 0},
		{"model", &calib_geometry_schema, offsetof(struct calib, model), NULL, "", 0, 0},
		{"drafter", &calib_drafter_schema, offsetof(struct calib, drafter), NULL, "", 0, 0},
		{"anchors", &calib_anchors_schema, 0, NULL, "", 0, 0},
		{"moe_reference", NULL, 0, load_moe_reference, "", 0, 0},
		{"assumptions", &calib_asm_schema, 0, NULL, "", 0, 0},
		{"moe_transfer", &calib_xfer_schema, 0, NULL, "", 0, 0},
		{"allreduce", &calib_ar_schema, offsetof(struct calib, ar), NULL, "", 0, 0},
		{"measured", &calib_measured_schema, offsetof(struct calib, meas), NULL, "", 0, 1},
	};
	size_t nsecs = sizeof secs / sizeof *secs, before = diag->n;
	uint64_t h = FSX_HASH_SEED;
	struct stat st;
	int rc = 0;

	memset(cal, 0, sizeof *cal);
	snprintf(cal->path, sizeof cal->path, "%s", path);
	calib_absent(cal);
	if (stat(path, &st) != 0) {
		ydiag_add(diag, path, 0, 0, "no such calibration file or folder");
		return DDT_EINPUT;
	}
	if (S_ISDIR(st.st_mode)) {
		struct dirent **list;
		int n = scandir(path, &list, yaml_name, alphasort);
		if (n < 0) {
			int e = errno;
			ydiag_add(diag, path, 0, 0, "cannot read folder: %s", strerror(e));
			return e == ENOMEM ? err_nomem() : DDT_EIO;
		}
		for (int i = 0; i < n; i++) {
			char *file = fsx_join(path, list[i]->d_name);
			struct ydoc *doc = NULL;
			h = fsx_hash(h, list[i]->d_name, strlen(list[i]->d_name) + 1);
			if (file)
				fsx_hash_file(&h, file, YDOC_MAX_BYTES); /* unreadable: the load says so */
			if (file && ydoc_load_file(&doc, file, diag) == 0)
				load_doc(cal, doc, secs, nsecs, diag);
			ydoc_free(doc);
			free(file);
			free(list[i]);
		}
		free(list);
	} else {
		struct ydoc *doc = NULL;
		fsx_hash_file(&h, path, YDOC_MAX_BYTES);
		if (ydoc_load_file(&doc, path, diag) == 0)
			load_doc(cal, doc, secs, nsecs, diag);
		ydoc_free(doc);
	}
	snprintf(cal->hash, sizeof cal->hash, "fnv1a64:%016llx", (unsigned long long)h);
	for (size_t s = 0; s < nsecs; s++)
		if (!secs[s].file[0] && !secs[s].optional)
			ydiag_add(diag, path, 0, 0, "missing section '%s'", secs[s].name);
	cross_check(cal, diag, secs);
	snprintf(cal->moe_ref_at.file, sizeof cal->moe_ref_at.file, "%s", secs[4].file);
	cal->moe_ref_at.line = secs[4].line;
	snprintf(cal->xfer_at.file, sizeof cal->xfer_at.file, "%s", secs[6].file);
	cal->xfer_at.line = secs[6].line;
	snprintf(cal->anchors_at.file, sizeof cal->anchors_at.file, "%s", secs[3].file);
	cal->anchors_at.line = secs[3].line;
	if (diag->n > before)
		rc = DDT_EINPUT;
	return rc;
}

int calib_copy(struct calib *dst, const struct calib *src)
{
	*dst = *src;
	dst->gpus = malloc((src->ngpus ? src->ngpus : 1) * sizeof *dst->gpus);
	if (!dst->gpus) {
		calib_free(dst);
		return err_nomem();
	}
	if (src->ngpus)
		memcpy(dst->gpus, src->gpus, src->ngpus * sizeof *dst->gpus);
	return 0;
}

void calib_free(struct calib *c)
{
	free(c->gpus);
	c->gpus = NULL;
	c->ngpus = 0;
}
