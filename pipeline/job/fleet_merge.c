/* fleet_merge.c - the fleet's merge stage: what each node gave, folded into one record, then the night after the bench that every night runs. */
#include "fleet.h"
#include "fleet_sys.h"

#include "calib.h"
#include "calibrate.h"
#include "fit.h"
#include "err.h"
#include "fsx.h"
#include "history.h"
#include "nightly.h"
#include "regress.h"
#include "yschema.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the merge */

#define MERGE_STAGE_NOTES 8 /* notes on the stages after the merge, at most */

/* What the merge gathers and produces. */
struct merge {
	struct fleet_plan plan;
	const char *dir;
	int ntasks;
	struct fleet_task *tasks;      /* [ntasks] that wrote a file */
	char (*task_state)[32];        /* [plan.nnodes] Slurm's final state per array task */
	char (*node_state)[96];        /* [plan.nnodes] sinfo's state per planned node */
	struct fleet_node *nodes;      /* [plan.nnodes] */
	size_t nrecs;
	struct run_record *recs;       /* node records, then all-reduce records */
	char (*rec_label)[96];         /* [nrecs] the " @<label>" of each record's devices */
	struct run_record merged;
	struct regress_night night;    /* every node's verdicts, devices relabelled */
	int have_night;
	struct fleet_xtable xt;
	char stages[MERGE_STAGE_NOTES][320]; /* what happened to the stages after the merge */
	int nstages, stage_failed;
};

static void stage_note(struct merge *m, int failed, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void stage_note(struct merge *m, int failed, const char *fmt, ...)
{
	va_list ap;
	if (m->nstages == MERGE_STAGE_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(m->stages[m->nstages++], sizeof m->stages[0], fmt, ap);
	va_end(ap);
	m->stage_failed |= failed;
}

/* Reads tasks/<i>.yaml of every planned task; a damaged file is noted and
 * the task counts as never started. */
static int merge_read_tasks(struct merge *m)
{
	m->tasks = calloc((size_t)m->plan.nnodes + 1, sizeof *m->tasks);
	if (!m->tasks)
		return err_nomem();
	for (int i = 0; i < m->plan.nnodes; i++) {
		struct ydiag diag = {0};
		char *path = fleet_path("%s/tasks/%d.yaml", m->dir, i);
		if (!path)
			return err_nomem();
		if (fsx_exists(path)) {
			if (fleet_task_read(&m->tasks[m->ntasks], path, &diag) == 0)
				m->ntasks++;
			else
				stage_note(m, 0, "task %d: damaged task file skipped: %s", i,
					   diag.n ? diag.msgs[0] : err_msg());
		}
		ydiag_free(&diag);
		free(path);
	}
	return 0;
}

/* Slurm's last word on each array task: sacct where accounting is kept, else
 * scontrol (which holds finished jobs for MinJobAge). Unknown stays "". */
static void merge_task_states(struct merge *m)
{
	static char out[1 << 18];
	char *sacct[] = {"sacct", "-n", "-P", "-X", "-j", m->plan.array_job, "-o", "JobID,State", NULL};
	char *scontrol[] = {"scontrol", "-o", "show", "job", m->plan.array_job, NULL};

	if (!m->plan.array_job[0])
		return;
	if ((fleet_slurm_cmd(sacct, out, sizeof out) == 0 && out[0]) || fleet_slurm_cmd(scontrol, out, sizeof out) == 0)
		fleet_task_states_parse(m->task_state, m->plan.nnodes, out);
}

/* sinfo's state and reason for each planned node. */
static void merge_node_states(struct merge *m)
{
	static char out[1 << 18];
	char *argv[] = {"sinfo", "-h", "-N", "-o", "%N|%T|%E", NULL};
	if (fleet_slurm_cmd(argv, out, sizeof out) != 0)
		return;
	char *save = NULL;
	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *b1 = strchr(line, '|'), *b2 = b1 ? strchr(b1 + 1, '|') : NULL;
		if (!b2)
			continue;
		*b1 = *b2 = '\0';
		for (int j = 0; j < m->plan.nnodes; j++)
			if (!strcmp(m->plan.nodes[j], line))
				snprintf(m->node_state[j], sizeof m->node_state[j], "%.40s%s%.50s", b1 + 1,
					 strcmp(b2 + 1, "none") ? ", " : "", strcmp(b2 + 1, "none") ? b2 + 1 : "");
	}
}

static int recs_add(struct merge *m, const struct run_record *r, const char *label)
{
	void *a = realloc(m->recs, (m->nrecs + 1) * sizeof *m->recs);
	if (!a)
		return err_nomem();
	m->recs = a;
	void *b = realloc(m->rec_label, (m->nrecs + 1) * sizeof *m->rec_label);
	if (!b)
		return err_nomem();
	m->rec_label = b;
	m->recs[m->nrecs] = *r;
	snprintf(m->rec_label[m->nrecs++], sizeof *m->rec_label, "%s", label);
	return 0;
}

/* Reads the run record of every node that has one; one that cannot be read
 * makes its node failed, named. */
static int merge_read_records(struct merge *m)
{
	for (int j = 0; j < m->plan.nnodes; j++) {
		struct fleet_node *n = &m->nodes[j];
		struct run_record r;
		struct ydiag diag = {0};
		char *path;
		if (!n->ok)
			continue;
		if (!(path = fleet_path("%s/%s/run.yaml", m->plan.runs, n->run_id)))
			return err_nomem();
		if (record_read(&r, path, &diag) == 0) {
			if (recs_add(m, &r, n->node)) {
				record_free(&r);
				free(path);
				return DDT_ENOMEM;
			}
		} else {
			n->ok = 0;
			snprintf(n->reason, sizeof n->reason, "%.60s: run record %.79s unreadable: %.150s",
				 n->node, n->run_id, diag.n ? diag.msgs[0] : err_msg());
			record_free(&r);
		}
		ydiag_free(&diag);
		free(path);
	}
	return 0;
}

static int is_yaml(const struct dirent *e)
{
	size_t n = strlen(e->d_name);
	return !fsx_is_temp_name(e->d_name) && n > 5 && !strcmp(e->d_name + n - 5, ".yaml");
}

/* Folds in the all-reduce records (allreduce/nodes-<k>.yaml). */
static int merge_read_allreduce(struct merge *m)
{
	struct dirent **list = NULL;
	char *sub = fleet_path("%s/allreduce", m->dir);
	int n = sub ? scandir(sub, &list, is_yaml, versionsort) : -1, rc = 0;

	for (int i = 0; i < n; i++) {
		struct run_record r;
		struct ydiag diag = {0};
		char *path = fleet_path("%s/%s", sub, list[i]->d_name), label[96];
		if (!rc && path && record_read(&r, path, &diag) == 0) {
			snprintf(label, sizeof label, "all-reduce %.*s", (int)strcspn(list[i]->d_name, "."),
				 list[i]->d_name);
			if ((rc = recs_add(m, &r, label)) != 0)
				record_free(&r);
		} else if (!rc) {
			stage_note(m, 1, "all-reduce record %s unreadable: %s", list[i]->d_name,
				   diag.n ? diag.msgs[0] : err_msg());
			record_free(&r);
		}
		ydiag_free(&diag);
		free(path);
		free(list[i]);
	}
	free(list);
	free(sub);
	return rc;
}

/* The history of one host: every run folder of runs/ whose id ends in the
 * same host as run_id, up to it, in time order. Damaged records are skipped. */
static int node_history(struct history *h, const char *runs, const char *run_id)
{
	struct dirent **list = NULL;
	int n = scandir(runs, &list, NULL, alphasort), rc = 0;

	memset(h, 0, sizeof *h);
	if (n < 0)
		return err_set(DDT_EIO, "%s: cannot read folder: %s", runs, strerror(errno));
	for (int i = 0; i < n; i++) {
		const char *name = list[i]->d_name;
		if (!rc && record_run_id_valid(name) && !strcmp(name + 17, run_id + 17) &&
		    strcmp(name, run_id) <= 0) {
			struct run_record r;
			struct ydiag diag = {0};
			char *path = fleet_path("%s/%s/run.yaml", runs, name);
			if (!path)
				rc = err_nomem();
			else if (fsx_exists(path) && record_read(&r, path, &diag) == 0 &&
				 !strcmp(r.run_id, name))
				rc = history_add_record(h, &r) == DDT_ENOMEM ? DDT_ENOMEM : 0;
			record_free(&r);
			ydiag_free(&diag);
			free(path);
		}
		free(list[i]);
	}
	free(list);
	return rc;
}

/* The stages after the fold report into the merge's notes. */
static void merge_night_skip(void *ctx, enum nightly_stage s, const char *why)
{
	/* no why: the regress settings' error is noted; the documents are
	 * skipped when the commit failed, noted there */
	if (s == NIGHTLY_REGRESS && why)
		stage_note(ctx, 0, "verdicts: %s", why);
}

static void merge_night_end(void *ctx, enum nightly_stage s, int rc, const struct nightly_after *a)
{
	struct merge *m = ctx;

	if (s == NIGHTLY_REGRESS && rc)
		stage_note(m, 1, "verdicts: %s", err_msg());
	else if (s == NIGHTLY_PROJECT)
		stage_note(m, rc != 0, "projection: %s%s", rc ? err_msg() : a->dir,
			   rc ? "" : "/projection.yaml");
	else if (s == NIGHTLY_COMMIT && rc)
		stage_note(m, 1, "documents: storing the inputs: %s", err_msg());
	else if (s == NIGHTLY_DOCUMENTS && rc)
		stage_note(m, 1, "documents: %s", err_msg());
	else if (s == NIGHTLY_DOCUMENTS)
		stage_note(m, 0, "documents: %s/%s", m->plan.reports, m->plan.id);
}

static void merge_night_begin(void *ctx, enum nightly_stage s)
{
	(void)ctx;
	(void)s;
}

/* Each measured node's history up to its night (the all-reduce records are
 * no node's night) into hosts[*nhosts]: hs[i] holds host i's history and
 * paths[i] its verdicts.yaml (malloc'd). */
static int merge_hosts(struct merge *m, struct history *hs, struct nightly_host *hosts,
		       char **paths, size_t *nhosts)
{
	int rc = 0;

	*nhosts = 0;
	for (size_t i = 0; i < m->nrecs && !rc; i++) {
		const struct run_record *r = &m->recs[i];
		struct history *h = &hs[*nhosts];
		if (!strncmp(m->rec_label[i], "all-reduce ", 11))
			continue;
		if ((rc = node_history(h, m->plan.runs, r->run_id)) != 0) {
			history_free(h);
			break;
		}
		long run = history_run_index(h, r->run_id);
		if (run < 0) {
			stage_note(m, 1, "verdicts: %s is not in its own history", r->run_id);
			history_free(h);
			continue;
		}
		if (!(paths[*nhosts] = fleet_path("%s/%s/verdicts.yaml", m->plan.runs, r->run_id))) {
			history_free(h);
			rc = err_nomem();
			break;
		}
		hosts[*nhosts] = (struct nightly_host){h, (size_t)run, m->rec_label[i], paths[*nhosts]};
		++*nhosts;
	}
	return rc;
}

/* The night after the fold, as the single-host nightly runs it: every
 * measured node judged against its own nights (its verdicts.yaml into its
 * run folder, all of them into the fleet's), the projection from every
 * device measured tonight, the inputs stored and the documents. Without a
 * `regress:` section in the template, no verdicts. */
static int merge_night(struct merge *m, const struct tmpl *t, const struct calib *cal,
		       const struct calibration *der)
{
	struct regress_conf rconf;
	struct ydiag diag = {0};
	struct history *hs = calloc(m->nrecs + 1, sizeof *hs);
	struct nightly_host *hosts = calloc(m->nrecs + 1, sizeof *hosts);
	char **paths = calloc(m->nrecs + 1, sizeof *paths);
	char *runs_fleet = fleet_path("%s/.fleet", m->plan.runs);
	size_t nhosts = 0;
	int rc = hs && hosts && paths && runs_fleet ? 0 : err_nomem();
	/* the projection reads what was measured: the failed nodes' devices and
	 * rows, which fleet_merge_records puts last, are left out of its view */
	struct run_record measured = m->merged;
	while (measured.ndevices && !strcmp(measured.devices[measured.ndevices - 1].kind, "node"))
		measured.ndevices--;
	while (measured.nrows && !strcmp(measured.rows[measured.nrows - 1].backend, "slurm"))
		measured.nrows--;
	struct nightly_after a = {
		.cal = cal, .der = der, .t = t, .rconf = &rconf, .measured = &measured, .dir = m->dir,
		.calibration = m->plan.calibration, .template_path = m->plan.template_path,
		.runs = runs_fleet, .home = m->plan.home, .reports = m->plan.reports, .id = m->plan.id};
	struct nightly_hooks k = {m, merge_night_begin, merge_night_end, merge_night_skip, NULL};

	if (!rc && !tmpl_section(t, "regress", NULL)) {
		a.rconf = NULL;
		a.regress_skip = "the template has no regress section";
	} else if (!rc && regress_conf_load(&rconf, t, &diag) != 0) {
		stage_note(m, 1, "verdicts: %s", diag.n ? diag.msgs[0] : err_msg());
		a.rconf = NULL;
	} else if (!rc && (rc = merge_hosts(m, hs, hosts, paths, &nhosts)) != 0)
		stage_note(m, 1, "verdicts: %s", err_msg());
	if (rc != DDT_ENOMEM) {
		a.hosts = hosts;
		a.nhosts = nhosts;
		nightly_after_bench(&a, &k);
		m->night = a.verdicts;
		m->have_night = a.judged;
	}
	for (size_t i = 0; i < nhosts; i++) {
		history_free(&hs[i]);
		free(paths[i]);
	}
	ydiag_free(&diag);
	free(hs);
	free(hosts);
	free(paths);
	free(runs_fleet);
	return rc == DDT_ENOMEM ? rc : 0;
}

/* The verdict of merged row k tonight, or NULL. */
static const char *verdict_of_row(void *ctx, size_t k)
{
	const struct merge *m = ctx;
	struct hist_key key;
	if (!m->have_night)
		return NULL;
	history_key_of(&key, &m->merged, &m->merged.rows[k]);
	for (size_t i = 0; i < m->night.n; i++) {
		const struct hist_key *e = &m->night.entries[i].key;
		if (!strcmp(e->op, key.op) && !strcmp(e->variant, key.variant) &&
		    !strcmp(e->params, key.params) && !strcmp(e->device, key.device) &&
		    !strcmp(e->backend, key.backend))
			return regress_verdict_name(m->night.entries[i].verdict);
	}
	return NULL;
}

/* Writes devices.txt and devices.csv into folder. */
static int merge_write_devices(struct merge *m, const char *folder)
{
	char *txt = fleet_path("%s/devices.txt", folder), *csv = fleet_path("%s/devices.csv", folder);
	struct fsx_file f;
	int rc = txt && csv ? 0 : err_nomem();

	if (!rc && (rc = fsx_open(&f, txt)) == 0) {
		fleet_write_devices_text(f.fp, &m->merged, &m->xt, m->nodes, (size_t)m->plan.nnodes,
					 verdict_of_row, m);
		rc = fsx_commit(&f);
	}
	if (!rc && (rc = fsx_open(&f, csv)) == 0) {
		fleet_write_devices_csv(f.fp, &m->merged, &m->xt);
		rc = fsx_commit(&f);
	}
	free(txt);
	free(csv);
	return rc;
}

/* 1: a node failed or a stage did; 4: a kernel failed; 3: a regression
 * tonight; 0: none of these. */
static int merge_exit_status(const struct merge *m, size_t *kernels_failed)
{
	int nodes_failed = 0;
	*kernels_failed = 0;
	for (int j = 0; j < m->plan.nnodes; j++)
		nodes_failed += !m->nodes[j].ok;
	for (size_t k = 0; k < m->merged.nrows; k++)
		*kernels_failed += m->merged.rows[k].status == REC_FAILED &&
				   strcmp(m->merged.rows[k].backend, "slurm");
	if (nodes_failed || m->stage_failed)
		return 1;
	if (*kernels_failed)
		return 4;
	return m->have_night && m->night.count[REG_REGRESSION] ? 3 : 0;
}

/* merge.yaml: the merge's outcome, which the submitter reads its exit status from. */
struct merge_outcome {
	char id[80];
	char ended[24];
	int exit_status, nodes_planned, nodes_failed, kernels_failed, regressions;
	const struct merge *m;                               /* the failed nodes' reasons */
	char (*stages)[sizeof(((struct merge *)0)->stages[0])]; /* m->stages */
	int nstages;
};

static void outcome_failed_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	const struct merge *m = ((const struct merge_outcome *)obj)->m;
	yout_key(y, f->key);
	yout_seq(y);
	for (int j = 0; j < m->plan.nnodes; j++)
		if (!m->nodes[j].ok)
			yout_str(y, m->nodes[j].reason);
	yout_end(y);
}

#define OUT(m, ty, fl, h) YS_FIELD(struct merge_outcome, m, ty, Y_REQUIRED | (fl), .help = (h))
/* In the order written (the submitter reads exit_status alone). */
static const struct yschema_field outcome_fields[] = {
	OUT(id, YS_STR, 0, "the fleet id"),
	OUT(ended, YS_STR, 0, "ISO 8601 UTC"),
	OUT(exit_status, YS_INT, Y_NONNEG, "the merge's exit status (0, 1, 2, 3 or 4)"),
	OUT(nodes_planned, YS_INT, Y_NONNEG, "nodes in the plan"),
	OUT(nodes_failed, YS_INT, Y_NONNEG, "nodes without a run record"),
	OUT(kernels_failed, YS_INT, Y_NONNEG, "failed kernel rows of the measured nodes"),
	OUT(regressions, YS_INT, Y_NONNEG, "regressions found tonight"),
	{.key = "failed_nodes", .type = YS_CUSTOM, .flags = Y_REQUIRED,
	 .write = outcome_failed_write, .help = "why each failed node failed, one line each"},
	YS_VEC_OF(struct merge_outcome, "stages", stages, nstages, NULL, MERGE_STAGE_NOTES,
		  Y_REQUIRED, .help = "what happened to the stages after the merge"),
};
static const struct yschema outcome_schema = YS_TABLE("merge", outcome_fields, 0);

/* merge.txt (what the submitter prints) and merge.yaml (its exit status). */
static int merge_write_outcome(struct merge *m, int status, size_t kernels_failed)
{
	char *txt = fleet_path("%s/merge.txt", m->dir), *yml = fleet_path("%s/merge.yaml", m->dir);
	char ended[24];
	struct fsx_file f;
	int rc = txt && yml ? 0 : err_nomem(), failed = 0;

	fleet_now_iso(ended, sizeof ended);
	for (int j = 0; j < m->plan.nnodes; j++)
		failed += !m->nodes[j].ok;
	if (!rc && (rc = fsx_open(&f, txt)) == 0) {
		fprintf(f.fp, "ddt merge %s: %d node(s), %d measured, %d failed; %zu kernel row(s) failed;"
			      " %d regression(s)\n", m->plan.id, m->plan.nnodes, m->plan.nnodes - failed,
			failed, kernels_failed, m->have_night ? m->night.count[REG_REGRESSION] : 0);
		for (int j = 0; j < m->plan.nnodes; j++)
			fprintf(f.fp, "  node %-20s %s%s\n", m->nodes[j].node,
				m->nodes[j].ok ? "run " : "FAILED: ",
				m->nodes[j].ok ? m->nodes[j].run_id : m->nodes[j].reason);
		for (int i = 0; i < m->nstages; i++)
			fprintf(f.fp, "  %s\n", m->stages[i]);
		fprintf(f.fp, "  cross-device table: %s/devices.txt (%zu row(s))\n", m->dir, m->xt.n);
		rc = fsx_commit(&f);
	}
	if (!rc && (rc = fsx_open(&f, yml)) == 0) {
		struct merge_outcome o = {
			.exit_status = status, .nodes_planned = m->plan.nnodes, .nodes_failed = failed,
			.kernels_failed = (int)kernels_failed,
			.regressions = m->have_night ? m->night.count[REG_REGRESSION] : 0, .m = m,
			.stages = m->stages, .nstages = m->nstages};
		snprintf(o.id, sizeof o.id, "%s", m->plan.id);
		snprintf(o.ended, sizeof o.ended, "%s", ended);
		yschema_write_doc(f.fp, &outcome_schema, &o);
		rc = fsx_commit(&f);
	}
	free(txt);
	free(yml);
	return rc;
}

static void merge_free(struct merge *m)
{
	for (size_t i = 0; i < m->nrecs; i++)
		record_free(&m->recs[i]);
	free(m->recs);
	free(m->rec_label);
	free(m->tasks);
	free(m->task_state);
	free(m->node_state);
	free(m->nodes);
	record_free(&m->merged);
	regress_night_free(&m->night);
	fleet_xtable_free(&m->xt);
	fleet_plan_free(&m->plan);
}

/* Reads the plan, the task files and Slurm's states, and decides each
 * planned node's outcome into m->nodes. */
static int merge_gather(struct merge *m, struct ydiag *diag)
{
	char *plan = fleet_path("%s/fleet.yaml", m->dir);
	int rc = plan ? fleet_plan_read(&m->plan, plan, diag) : err_nomem();
	size_t nn;
	const char **ts = NULL, **ns = NULL;

	free(plan);
	if (rc) {
		if (rc == DDT_EINPUT && diag->n)
			err_set(rc, "%s", diag->msgs[0]);
		return rc;
	}
	nn = (size_t)m->plan.nnodes;
	m->task_state = calloc(nn + 1, sizeof *m->task_state);
	m->node_state = calloc(nn + 1, sizeof *m->node_state);
	m->nodes = calloc(nn + 1, sizeof *m->nodes);
	ts = calloc(nn + 1, sizeof *ts);
	ns = calloc(nn + 1, sizeof *ns);
	if (!m->task_state || !m->node_state || !m->nodes || !ts || !ns)
		rc = err_nomem();
	else if ((rc = merge_read_tasks(m)) == 0) {
		merge_task_states(m);
		merge_node_states(m);
		for (size_t i = 0; i < nn; i++) {
			ts[i] = m->task_state[i];
			ns[i] = m->node_state[i];
		}
		fleet_nodes_decide(m->nodes, &m->plan, m->tasks, (size_t)m->ntasks, ts, ns);
	}
	free(ts);
	free(ns);
	return rc;
}

/* Notes what became of the all-reduce, given that it left nrecs records. */
static void merge_allreduce_note(struct merge *m, size_t nrecs)
{
	int launched = -1, skipped = 0, nfail = -1;
	char *sp;
	FILE *fp;

	if (!m->plan.allreduce)
		return;
	if (nrecs) {
		stage_note(m, 0, "all-reduce: %zu launch(es) recorded", nrecs);
		return;
	}
	/* a one-node fleet without GPUs has one rank: nothing to reduce */
	sp = fleet_path("%s/allreduce/status.txt", m->dir);
	fp = sp ? fopen(sp, "r") : NULL;
	if (fp && fscanf(fp, "launched %d skipped %d failed %d", &launched, &skipped, &nfail) != 3)
		launched = -1;
	if (fp)
		fclose(fp);
	free(sp);
	if (launched == 0 && nfail == 0)
		stage_note(m, 0, "all-reduce: nothing to reduce (%d launch(es) of one rank)", skipped);
	else
		stage_note(m, 1, "all-reduce: no records (job %s; see %s/logs/allreduce.out)",
			   m->plan.allreduce_job, m->dir);
}

/* Folds the records into m->merged, failed nodes as named rows, and builds
 * the cross-device table. */
static int merge_fold(struct merge *m)
{
	size_t nn = (size_t)m->plan.nnodes, nf = 0;
	struct fleet_node *failed = calloc(nn + 1, sizeof *failed);
	const char **labels = calloc(m->nrecs + 1, sizeof *labels);
	int rc;

	if (!failed || !labels) {
		free(failed);
		free(labels);
		return err_nomem();
	}
	for (size_t j = 0; j < nn; j++)
		if (!m->nodes[j].ok)
			failed[nf++] = m->nodes[j];
	for (size_t i = 0; i < m->nrecs; i++)
		labels[i] = m->rec_label[i];
	rc = fleet_merge_records(&m->merged, m->plan.id, m->plan.created, m->recs, labels,
				 m->nrecs, failed, nf);
	free(failed);
	free(labels);
	if (rc || (rc = fleet_xtable_build(&m->xt, &m->merged)) != 0)
		return rc;
	if (!m->merged.template_name[0]) { /* no node measured: name the merge's template */
		const char *slash = strrchr(m->plan.template_path, '/');
		const char *base = slash ? slash + 1 : m->plan.template_path;
		snprintf(m->merged.template_name, sizeof m->merged.template_name, "%.*s",
			 (int)strcspn(base, "."), base);
	}
	return 0;
}

/* The stages after the fold: the merged record, then the night as every
 * night runs it (verdicts, projection, inputs, documents), then the devices
 * table. Each stage's failure is noted and the rest go on; returns an error
 * only when the merged record cannot be written. */
static int merge_stages(struct merge *m, struct ydiag *diag)
{
	struct tmpl t;
	struct calib cal;
	struct calibration der;
	int rc = 0, have_cal = 0, have_tmpl;
	char *rec = fleet_path("%s/run.yaml", m->dir);
	char *rep = fleet_path("%s/%s", m->plan.reports, m->plan.id);

	memset(&cal, 0, sizeof cal);
	memset(&t, 0, sizeof t);
	if (!rec || !rep) {
		rc = err_nomem();
		goto done;
	}
	have_tmpl = tmpl_load(&t, m->plan.template_path, diag) == 0;
	if (!have_tmpl)
		stage_note(m, 1, "template: %s", diag->n ? diag->msgs[0] : err_msg());
	else if (!(have_cal = calibrate_load(&cal, &der, m->plan.calibration, NULL, diag) == 0))
		stage_note(m, 1, "calibration: %s", diag->n ? diag->msgs[diag->n - 1] : err_msg());
	if ((rc = record_write(&m->merged, rec)) != 0)
		goto done;
	if (have_tmpl && (rc = merge_night(m, &t, have_cal ? &cal : NULL, have_cal ? &der : NULL)) != 0)
		goto done;
	if ((rc = merge_write_devices(m, m->dir)) != 0)
		goto done;
	if (fsx_mkdir_p(rep) != 0 || merge_write_devices(m, rep) != 0)
		stage_note(m, 1, "devices table: %s", err_msg());
done:
	calib_free(&cal);
	tmpl_free(&t);
	free(rec);
	free(rep);
	return rc;
}

/* `ddt fleet merge DIR` (fleet_sys.h). */
int fleet_merge(const char *dir, int *status)
{
	struct merge m = {0};
	struct ydiag diag = {0};
	size_t kernels_failed = 0, before;
	int rc;

	m.dir = dir;
	*status = 1;
	if ((rc = merge_gather(&m, &diag)) != 0 || (rc = merge_read_records(&m)) != 0)
		goto done;
	before = m.nrecs;
	if ((rc = merge_read_allreduce(&m)) != 0)
		goto done;
	merge_allreduce_note(&m, m.nrecs - before);
	if ((rc = merge_fold(&m)) != 0 || (rc = merge_stages(&m, &diag)) != 0)
		goto done;
	*status = merge_exit_status(&m, &kernels_failed);
	if ((rc = merge_write_outcome(&m, *status, kernels_failed)) != 0)
		goto done;
	char *txt = fleet_path("%s/merge.txt", dir), *text = NULL;
	size_t len;
	if (txt && fsx_read_all(txt, 1 << 20, &text, &len) == 0)
		fputs(text, stdout);
	free(text);
	free(txt);
done:
	if (rc) {
		*status = err_exit_status(rc);
		fprintf(stderr, "ddt fleet merge: %s\n", err_msg());
		/* the submitter waits for merge.yaml: it learns of the failure too */
		if (m.plan.id[0] && m.nodes) {
			stage_note(&m, 1, "merge: %s", err_msg());
			merge_write_outcome(&m, *status, kernels_failed);
		}
	}
	merge_free(&m);
	ydiag_free(&diag);
	return rc;
}

