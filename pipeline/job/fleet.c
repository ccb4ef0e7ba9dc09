/* fleet.c - the fleet's records: its settings, plan and task files, each node's outcome, the merged run record and the cross-device table. */
#include "fleet.h"
#include "csv.h"

#include "err.h"
#include "fsx.h"
#include "paths.h"
#include "sort.h"
#include "yschema.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- settings */

/* allreduce_m: at least one size (the table holds it to FLEET_MAX_M). */
static int conf_check(struct yctx *y, struct ydoc_node *sec, void *obj)
{
	const struct fleet_conf *c = obj;
	struct ydoc_node *ms = ydoc_get(sec, "allreduce_m");
	if (c->nm > 0)
		return 0;
	ydiag_add(y->diag, y->file, ms->line, ms->col,
		  "allreduce_m: expected 1 to %d values, got 0", FLEET_MAX_M);
	return 1;
}

#define CONF(m, ty, u, h)                                                                 \
	YS_FIELD(struct fleet_conf, m, ty, Y_REQUIRED | Y_POSITIVE, .unit = (u), .help = (h))
/* In the order read. */
static const struct yschema_field conf_fields[] = {
	YS_FIELD(struct fleet_conf, source, YS_STR, Y_REQUIRED,
		 .help = "where the limits and all-reduce sizes come from"),
	CONF(task_time_min, YS_NUM, "min", "a node's bench past this is killed: hung (--time overrides)"),
	CONF(start_within_min, YS_NUM, "min", "a task not started by then is dropped: never started"),
	CONF(merge_time_min, YS_NUM, "min", "the merge job's time limit"),
	CONF(poll_s, YS_NUM, "s", "how often the submitter asks Slurm whether the merge has ended"),
	CONF(allreduce_hidden, YS_INT, "elements", "hidden size: one all-reduce is M x hidden bf16"),
	YS_INTS_OF(struct fleet_conf, "allreduce_m", allreduce_m, nm, Y_REQUIRED | Y_POSITIVE,
		   .unit = "tokens",
		   .help = "verify widths M, 1 to 16 whole numbers > 0, one all-reduce each"),
};
static const struct yschema conf_schema = YS_TABLE_CHECKED("fleet", conf_fields, 0, conf_check);

int fleet_conf_load(struct fleet_conf *c, const struct tmpl *t, struct ydiag *diag)
{
	struct yctx y;
	struct ydoc_node *sec = tmpl_section_map(t, "fleet", diag, &y);
	size_t before = diag->n;

	memset(c, 0, sizeof *c);
	if (!sec)
		return DDT_EINPUT;
	yschema_read(&y, sec, &conf_schema, c);
	return diag->n > before ? DDT_EINPUT : 0;
}

/* ---------------------------------------------------------------- task files */

/* In the states' order: a state's name is task_state_names[state]. */
static const struct yschema_name task_state_names[] = {
	{"running", FT_RUNNING}, {"done", FT_DONE},           {"failed", FT_FAILED},
	{"terminated", FT_TERMINATED}, {"duplicate", FT_DUPLICATE}, {NULL, 0},
};
_Static_assert(sizeof task_state_names / sizeof *task_state_names == FT_COUNT + 1,
	       "a task state needs its name");

const char *fleet_task_state_name(enum fleet_task_state s)
{
	return (unsigned)s < FT_COUNT ? task_state_names[s].name : "running";
}

/* Writes obj as the document of table s at path, atomically (nothing
 * replaced on a write error); 0 or an error. */
static int write_doc(const char *path, const struct yschema *s, const void *obj)
{
	struct fsx_file f;
	int rc = fsx_open(&f, path);
	if (rc)
		return rc;
	yschema_write_doc(f.fp, s, obj);
	if (ferror(f.fp)) {
		fsx_abort(&f);
		return err_set(DDT_EIO, "%s: write failed", path);
	}
	return fsx_commit(&f);
}

#define TASK(m, ty, fl, h) YS_FIELD(struct fleet_task, m, ty, Y_REQUIRED | (fl), .help = (h))
/* tasks/<i>.yaml, in the order written and read. */
static const struct yschema_field task_fields[] = {
	TASK(task, YS_INT, Y_NONNEG, "the array index"),
	TASK(node, YS_STR, 0, "the Slurm node it ran on"),
	TASK(job_id, YS_STR, 0, "<array job>_<task>"),
	TASK(started, YS_STR, 0, "ISO 8601 UTC"),
	TASK(ended, YS_STR, 0, "ISO 8601 UTC; empty while running"),
	YS_FIELD(struct fleet_task, state, YS_ENUM, Y_REQUIRED, .names = task_state_names,
		 .help = "running, done, failed, terminated or duplicate"),
	TASK(exit_code, YS_INT, 0, "the bench's exit status; -1: none"),
	TASK(run_id, YS_STR, 0, "the run folder it produced; empty: none"),
	TASK(reason, YS_STR, 0, "one line: why not done; empty when done"),
};
static const struct yschema task_schema = YS_TABLE("task file", task_fields, 0);

int fleet_task_write(const struct fleet_task *t, const char *path)
{
	return write_doc(path, &task_schema, t);
}

int fleet_task_read(struct fleet_task *t, const char *path, struct ydiag *diag)
{
	struct ydoc *doc = NULL;
	struct yctx c = {path, diag, NULL};
	size_t before = diag->n;
	int rc;

	memset(t, 0, sizeof *t);
	t->exit_code = -1;
	if ((rc = ydoc_load_file(&doc, path, diag)) != 0)
		goto done;
	yschema_read_doc(&c, doc, &task_schema, t, "task file");
	if (t->run_id[0] && !record_run_id_valid(t->run_id))
		ydiag_add(diag, path, 0, 0, "run_id '%s' is not a run id", t->run_id);
	rc = diag->n > before ? DDT_EINPUT : 0;
done:
	ydoc_free(doc);
	return rc;
}

/* ---------------------------------------------------------------- the plan */

/* Slurm node names: letters, digits, '-', '_', '.'. */
static int node_name_valid(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= 64)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("-_.", s[i]))
			return 0;
	return 1;
}

int fleet_plan_add_node(struct fleet_plan *p, const char *node)
{
	if (!node_name_valid(node))
		return err_set(DDT_EINPUT, "'%s' is not a node name", node);
	if (p->nnodes >= FLEET_MAX_NODES)
		return err_set(DDT_EINPUT, "more than %d nodes", FLEET_MAX_NODES);
	void *q = realloc(p->nodes, (size_t)(p->nnodes + 1) * sizeof *p->nodes);
	if (!q)
		return err_nomem();
	p->nodes = q;
	snprintf(p->nodes[p->nnodes++], sizeof *p->nodes, "%s", node);
	return 0;
}

void fleet_plan_free(struct fleet_plan *p)
{
	free(p->nodes);
	p->nodes = NULL;
	p->nnodes = 0;
}

void fleet_make_id(char *id, size_t len, char *created, size_t clen)
{
	char run[80];
	record_make_run_id(run, sizeof run, created, clen);
	/* run is YYYYMMDDTHHMMSSZ-host: keep the time, name it a fleet */
	snprintf(id, len, "%.17sfleet-%.50s", run, run + 17);
}

/* Every node of the plan a node name (its task files and records are
 * named by it), at its place in nodes. */
static int plan_check(struct yctx *c, struct ydoc_node *map, void *obj)
{
	const struct fleet_plan *p = obj;
	struct ydoc_node *nodes = ydoc_get(map, "nodes");
	int bad = 0;
	for (int i = 0; i < p->nnodes; i++)
		if (!node_name_valid(p->nodes[i])) {
			ydiag_add(c->diag, c->file, nodes->items[i]->line, nodes->items[i]->col,
				  "'%s' is not a node name", p->nodes[i]);
			bad = 1;
		}
	return bad;
}

/* srun runs the ranks with --mpi=pmix. */
static const struct yschema_name launcher_names[] = {{"srun", 0}, {"mpirun", 0}, {NULL, 0}};

#define PLAN(m, ty, h) YS_FIELD(struct fleet_plan, m, ty, Y_REQUIRED, .help = (h))
/* fleet.yaml, in the order written and read. */
static const struct yschema_field plan_fields[] = {
	PLAN(id, YS_STR, "YYYYMMDDTHHMMSSZ-fleet-<host>: a valid run id"),
	PLAN(created, YS_STR, "ISO 8601 UTC"),
	PLAN(ddt, YS_STR, "the ddt binary every job runs"),
	PLAN(home, YS_STR, "the ddt home"),
	PLAN(runs, YS_STR, "the shared runs/ folder"),
	PLAN(reports, YS_STR, "the shared reports/ folder"),
	PLAN(calibration, YS_STR, "the merge's calibration"),
	YS_KEYED(struct fleet_plan, "template", template_path, YS_STR, Y_REQUIRED,
		 .help = "the merge's template"),
	PLAN(bench_template, YS_STR, "each task's template; empty: bench picks per node"),
	PLAN(bench_command, YS_STR, "empty: <ddt> bench"),
	PLAN(partition, YS_STR, "empty: the cluster's default"),
	PLAN(time_limit, YS_STR, "per task, Slurm syntax (90, 1:30:00)"),
	PLAN(gres, YS_STR, "--gres of the bench and all-reduce jobs; empty: none"),
	PLAN(exclusive, YS_BOOL, "each task holds its node alone"),
	PLAN(allreduce, YS_BOOL, "the multi-node all-reduce job was submitted"),
	YS_FIELD(struct fleet_plan, mpi_launcher, YS_STR, YS_OMIT, .names = launcher_names,
		 .help = "the all-reduce's launcher; absent: srun when Slurm has PMIx"),
	PLAN(array_job, YS_STR, "the bench array's job id"),
	PLAN(allreduce_job, YS_STR, "the all-reduce job's id"),
	PLAN(merge_job, YS_STR, "the merge job's id"),
	YS_VEC_OF(struct fleet_plan, "nodes", nodes, nnodes, NULL, FLEET_MAX_NODES, Y_REQUIRED,
		  .help = "node names, one task each, in task order"),
};
const struct yschema fleet_plan_schema = YS_TABLE_CHECKED("fleet plan", plan_fields, 0,
							  plan_check);

int fleet_plan_write(const struct fleet_plan *p, const char *path)
{
	return write_doc(path, &fleet_plan_schema, p);
}

int fleet_plan_read(struct fleet_plan *p, const char *path, struct ydiag *diag)
{
	struct ydoc *doc = NULL;
	struct yctx c = {path, diag, NULL};
	size_t before = diag->n;
	int rc;

	memset(p, 0, sizeof *p);
	if ((rc = ydoc_load_file(&doc, path, diag)) != 0)
		goto done;
	yschema_read_doc(&c, doc, &fleet_plan_schema, p, "fleet plan");
	if (p->id[0] && !record_run_id_valid(p->id))
		ydiag_add(diag, path, 0, 0, "id '%s' is not YYYYMMDDTHHMMSSZ-fleet-host", p->id);
	rc = diag->n > before ? DDT_EINPUT : 0;
	/* this node may reach the shared folders through links of its own */
	if (!rc && p->runs[0])
		paths_set_folder(p->runs, p->runs);
	if (!rc && p->reports[0])
		paths_set_folder(p->reports, p->reports);
done:
	ydoc_free(doc);
	return rc;
}

/* Reads up to max unsigned numbers separated by sep from *s; returns how
 * many, or -1 on anything else. */
static int read_fields(const char **s, char sep, long *v, int max)
{
	int n = 0;
	for (;;) {
		char *end;
		if (!isdigit((unsigned char)**s) || n == max)
			return -1;
		v[n++] = strtol(*s, &end, 10);
		*s = end;
		if (**s != sep)
			return n;
		(*s)++;
	}
}

int fleet_time_min(const char *s, double *min)
{
	long days = 0, f[3] = {0};
	int n;
	const char *dash = strchr(s, '-');

	if (dash) {
		char *end;
		if (!isdigit((unsigned char)*s))
			return -1;
		days = strtol(s, &end, 10);
		if (end != dash)
			return -1;
		s = dash + 1;
		/* D-HH, D-HH:MM, D-HH:MM:SS */
		if ((n = read_fields(&s, ':', f, 3)) < 1 || *s)
			return -1;
		*min = days * 1440.0 + f[0] * 60.0 + (n > 1 ? f[1] : 0) + (n > 2 ? ceil(f[2] / 60.0) : 0);
		return 0;
	}
	/* MM, MM:SS, HH:MM:SS */
	if ((n = read_fields(&s, ':', f, 3)) < 1 || *s)
		return -1;
	if (n == 1)
		*min = (double)f[0];
	else if (n == 2)
		*min = f[0] + ceil(f[1] / 60.0);
	else
		*min = f[0] * 60.0 + f[1] + ceil(f[2] / 60.0);
	return 0;
}

/* Sets the state of every task named by spec ("3", "[2-5]", "1,4", "0-3%2")
 * to state. */
static void set_task_states(char (*out)[32], int ntasks, const char *spec, const char *state)
{
	char buf[256], *save = NULL;
	if (*spec == '[')
		spec++;
	snprintf(buf, sizeof buf, "%.*s", (int)strcspn(spec, "%] \t|"), spec);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int a, b, n = sscanf(tok, "%d-%d", &a, &b);
		if (n < 1)
			continue;
		if (n == 1)
			b = a;
		for (int i = a < 0 ? 0 : a; i <= b && i < ntasks; i++)
			snprintf(out[i], sizeof out[i], "%.31s", state);
	}
}

void fleet_task_states_parse(char (*out)[32], int ntasks, const char *text)
{
	while (*text) {
		size_t n = strcspn(text, "\n");
		char line[2048], state[32], *task, *st, *bar, *us;
		snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), text);
		text += n + (text[n] == '\n');
		if ((task = strstr(line, "ArrayTaskId=")) && (st = strstr(line, "JobState="))) {
			/* scontrol -o show job */
			snprintf(state, sizeof state, "%.*s", (int)strcspn(st + 9, " "), st + 9);
			set_task_states(out, ntasks, task + 12, state);
		} else if ((bar = strchr(line, '|')) && (us = strchr(line, '_')) && us < bar) {
			/* sacct -P -o JobID,State: "123_4|TIMEOUT", "123_[5-7]|PENDING",
			 * "123_2|CANCELLED by 0" */
			snprintf(state, sizeof state, "%.*s", (int)strcspn(bar + 1, " |"), bar + 1);
			set_task_states(out, ntasks, us + 1, state);
		}
	}
}

/* ---------------------------------------------------------------- outcomes */

static const char *state_or(const char *const *v, size_t i, size_t n)
{
	return v && i < n && v[i] && v[i][0] ? v[i] : NULL;
}

/* The outcome of a node measured (or not) by task t, Slurm's final state of
 * the task being st (NULL: unknown), into out. What Slurm saw comes first: a
 * bench killed at the time limit may have written "failed" before it died. */
static void describe_task(struct fleet_node *out, const struct fleet_plan *p,
			  const struct fleet_task *t, const char *st)
{
	const char *lim = p->time_limit[0] ? p->time_limit : "the partition's";
	char *r = out->reason;
	size_t n = sizeof out->reason;

	if (t->state == FT_DONE && t->run_id[0]) {
		out->ok = 1;
		snprintf(out->run_id, sizeof out->run_id, "%s", t->run_id);
	} else if (st && !strncmp(st, "TIMEOUT", 7))
		snprintf(r, n, "%s: hung past its time limit (%s min) and was killed by Slurm "
			       "(task %d, started %s)", out->node, lim, t->task, t->started);
	else if (st && !strncmp(st, "NODE_FAIL", 9))
		snprintf(r, n, "%s: the node failed while task %d ran (Slurm NODE_FAIL, started %s)",
			 out->node, t->task, t->started);
	else if (st && !strncmp(st, "OUT_OF_MEMORY", 13))
		snprintf(r, n, "%s: task %d ran out of memory (Slurm OUT_OF_MEMORY)", out->node, t->task);
	else if (st && !strncmp(st, "CANCELLED", 9))
		snprintf(r, n, "%s: task %d was cancelled while running (Slurm %s)", out->node, t->task,
			 st);
	else if (t->state == FT_DONE)
		snprintf(r, n, "%s: task %d finished without a run record", out->node, t->task);
	else if (t->state == FT_FAILED)
		snprintf(r, n, "%s: bench failed (task %d, exit %d): %s", out->node, t->task,
			 t->exit_code, t->reason[0] ? t->reason : "no reason given");
	else if (t->state == FT_TERMINATED)
		snprintf(r, n, "%s: task %d %s (Slurm: %s)", out->node, t->task,
			 t->reason[0] ? t->reason : "terminated", st ? st : "state unknown");
	else if (st && !strncmp(st, "RUNNING", 7))
		snprintf(r, n, "%s: task %d still running when the merge ran (started %s)", out->node,
			 t->task, t->started);
	else
		snprintf(r, n, "%s: task %d started %s and never finished (Slurm: %s)", out->node,
			 t->task, t->started, st ? st : "state unknown");
}

/* "task 3 DEADLINE, task 4 PENDING" for the tasks that wrote no file. */
static void never_started_tasks(char *buf, size_t len, const struct fleet_plan *p,
				const struct fleet_task *tasks, size_t ntasks,
				const char *const *slurm_state)
{
	size_t off = 0;
	buf[0] = '\0';
	for (int i = 0; i < p->nnodes && off < len; i++) {
		size_t k;
		for (k = 0; k < ntasks && tasks[k].task != i; k++)
			;
		if (k < ntasks)
			continue;
		const char *st = state_or(slurm_state, (size_t)i, (size_t)p->nnodes);
		off += (size_t)snprintf(buf + off, len - off, "%stask %d %s", off ? ", " : "", i,
					st ? st : "state unknown");
	}
}

void fleet_nodes_decide(struct fleet_node *out, const struct fleet_plan *p,
			const struct fleet_task *tasks, size_t ntasks,
			const char *const *slurm_state, const char *const *node_state)
{
	unsigned char *used = calloc(ntasks ? ntasks : 1, 1);
	char pending[200];

	never_started_tasks(pending, sizeof pending, p, tasks, ntasks, slurm_state);
	for (int j = 0; j < p->nnodes; j++) {
		struct fleet_node *o = &out[j];
		const struct fleet_task *best = NULL;
		size_t bi = 0;

		memset(o, 0, sizeof *o);
		o->task = -1;
		snprintf(o->node, sizeof o->node, "%s", p->nodes[j]);
		/* the lowest-numbered unused task that measured this node; a node
		 * listed twice takes two */
		for (size_t k = 0; k < ntasks; k++) {
			if ((used && used[k]) || tasks[k].state == FT_DUPLICATE ||
			    strcmp(tasks[k].node, o->node))
				continue;
			if (!best || tasks[k].task < best->task) {
				best = &tasks[k];
				bi = k;
			}
		}
		if (best) {
			if (used)
				used[bi] = 1;
			o->task = best->task;
			describe_task(o, p, best,
				      state_or(slurm_state, (size_t)best->task, (size_t)p->nnodes));
			continue;
		}
		const char *ns = state_or(node_state, (size_t)j, (size_t)p->nnodes);
		snprintf(o->reason, sizeof o->reason,
			 "%s: never started: no task ran there (Slurm node state: %s%s%s)", o->node,
			 ns ? ns : "unknown", pending[0] ? "; tasks that never started: " : "", pending);
	}
	free(used);
}

/* ---------------------------------------------------------------- merged record */

/* A failed node's device and row, appended to out. */
static int add_failed_node(struct run_record *out, const struct fleet_node *f)
{
	struct rec_device d = {0};
	struct rec_row w = {0};

	snprintf(d.kind, sizeof d.kind, "node");
	snprintf(d.name, sizeof d.name, "%s", f->node);
	snprintf(d.arch, sizeof d.arch, "unknown");
	d.mem_gb = d.sm_clock_mhz = d.mem_clock_mhz = d.peak_gbps = d.copy_gbps = NAN;
	if (record_add_device(out, &d))
		return DDT_ENOMEM;
	snprintf(w.op, sizeof w.op, "node");
	snprintf(w.variant, sizeof w.variant, "%.31s", f->node);
	snprintf(w.backend, sizeof w.backend, "slurm");
	w.device = (int)out->ndevices - 1;
	w.median_us = w.p10_us = w.p90_us = w.min_us = w.max_us = w.stdev_us = NAN;
	w.bytes = w.flops = w.gbps = w.pct_peak = w.max_err = w.sm_clock_mhz = NAN;
	w.status = REC_FAILED;
	snprintf(w.reason, sizeof w.reason, "%s", f->reason);
	return record_add_row(out, &w);
}

int fleet_merge_records(struct run_record *out, const char *id, const char *created,
			const struct run_record *recs, const char *const *node_of, size_t nrecs,
			const struct fleet_node *failed, size_t nfailed)
{
	char host[64] = "";

	memset(out, 0, sizeof *out);
	out->schema = RECORD_SCHEMA;
	snprintf(out->run_id, sizeof out->run_id, "%s", id);
	snprintf(out->created, sizeof out->created, "%s", created);
	if (nrecs) {
		snprintf(out->template_name, sizeof out->template_name, "%s", recs[0].template_name);
		out->prov = recs[0].prov;
	}
	for (size_t i = 1; i < nrecs; i++)
		if (strcmp(recs[i].prov.build, out->prov.build))
			snprintf(out->prov.build, sizeof out->prov.build, "mixed");
	if (gethostname(host, sizeof host - 1) == 0)
		snprintf(out->prov.host, sizeof out->prov.host, "%s", host);
	for (size_t i = 0; i < nrecs; i++) {
		const struct run_record *r = &recs[i];
		int base = (int)out->ndevices;
		for (size_t d = 0; d < r->ndevices; d++) {
			struct rec_device dev = r->devices[d];
			size_t l = strnlen(dev.name, sizeof dev.name);
			snprintf(dev.name + l, sizeof dev.name - l, " @%s", node_of[i]);
			if (record_add_device(out, &dev))
				return DDT_ENOMEM;
		}
		for (size_t k = 0; k < r->nrows; k++) {
			struct rec_row w = r->rows[k];
			w.device += base;
			if (record_add_row(out, &w))
				return DDT_ENOMEM;
		}
	}
	for (size_t i = 0; i < nfailed; i++)
		if (add_failed_node(out, &failed[i]))
			return DDT_ENOMEM;
	return 0;
}

/* ---------------------------------------------------------------- cross-device table */

static int is_comm_backend(const char *b)
{
	return !strcmp(b, "nccl") || !strcmp(b, "mpi") || !strcmp(b, "slurm");
}

static int dev_has_bw(const struct run_record *r, int d)
{
	return d >= 0 && (size_t)d < r->ndevices && isfinite(r->devices[d].copy_gbps) &&
	       r->devices[d].copy_gbps > 0;
}

/* True when row w can take part: measured, moves bytes, computes on a device. */
static int row_usable(const struct run_record *r, const struct rec_row *w)
{
	return w->status == REC_OK && isfinite(w->median_us) && w->median_us > 0 &&
	       isfinite(w->bytes) && w->bytes > 0 && !is_comm_backend(w->backend) &&
	       dev_has_bw(r, w->device);
}

static int same_kernel(const struct rec_row *a, const struct rec_row *b)
{
	if (strcmp(a->op, b->op) || strcmp(a->variant, b->variant) ||
	    strcmp(a->backend, b->backend) || a->nparams != b->nparams)
		return 0;
	for (int i = 0; i < a->nparams; i++)
		if (strcmp(a->params[i].key, b->params[i].key) || a->params[i].val != b->params[i].val)
			return 0;
	return 1;
}

/* Median of v[0..n), n > 0; sorts v. */
static double median_of(double *v, size_t n)
{
	qsort(v, n, sizeof *v, sort_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int xrow_add(struct fleet_xtable *t, size_t *cap, const struct fleet_xrow *x)
{
	if (t->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		void *p = realloc(t->rows, nc * sizeof *t->rows);
		if (!p)
			return err_nomem();
		t->rows = p;
		*cap = nc;
	}
	t->rows[t->n++] = *x;
	return 0;
}

/* One (target, source) row of the table for rows a (target) and b (source). */
static void xrow_fill(struct fleet_xrow *x, const struct run_record *r, const struct rec_row *a,
		      const struct rec_row *b)
{
	memset(x, 0, sizeof *x);
	snprintf(x->op, sizeof x->op, "%s", a->op);
	snprintf(x->variant, sizeof x->variant, "%s", a->variant);
	snprintf(x->backend, sizeof x->backend, "%s", a->backend);
	rec_row_params_str(a, x->params, sizeof x->params);
	x->target = a->device;
	x->source = b->device;
	x->measured_us = a->median_us;
	x->source_us = b->median_us;
	/* bandwidth-bound time scales with the inverse of the bandwidth */
	x->projected_us = b->median_us * r->devices[b->device].copy_gbps /
			  r->devices[a->device].copy_gbps;
	x->err_pct = (x->projected_us - x->measured_us) / x->measured_us * 100;
	x->factor = x->measured_us / x->projected_us;
}

/* The rows of one kernel: indexes into r->rows of usable rows, one per device. */
static size_t kernel_rows(const struct run_record *r, size_t first, const unsigned char *done,
			  size_t *idx)
{
	size_t n = 0;
	for (size_t k = first; k < r->nrows; k++) {
		const struct rec_row *w = &r->rows[k];
		if (done[k] || !row_usable(r, w) || !same_kernel(&r->rows[first], w))
			continue;
		size_t j;
		for (j = 0; j < n && r->rows[idx[j]].device != w->device; j++)
			;
		if (j == n) /* a device measured twice keeps its first row */
			idx[n++] = k;
	}
	return n;
}

static int build_pairs(struct fleet_xtable *t)
{
	double *errs = malloc((t->n ? t->n : 1) * sizeof *errs);
	double *facs = malloc((t->n ? t->n : 1) * sizeof *facs);
	int rc = 0;

	if (!errs || !facs) {
		rc = err_nomem();
		goto done;
	}
	for (size_t i = 0; i < t->n; i++) {
		size_t p;
		for (p = 0; p < t->npairs; p++)
			if (t->pairs[p].target == t->rows[i].target &&
			    t->pairs[p].source == t->rows[i].source)
				break;
		if (p < t->npairs)
			continue;
		void *q = realloc(t->pairs, (t->npairs + 1) * sizeof *t->pairs);
		if (!q) {
			rc = err_nomem();
			goto done;
		}
		t->pairs = q;
		struct fleet_xpair *xp = &t->pairs[t->npairs++];
		memset(xp, 0, sizeof *xp);
		xp->target = t->rows[i].target;
		xp->source = t->rows[i].source;
		for (size_t k = i; k < t->n; k++)
			if (t->rows[k].target == xp->target && t->rows[k].source == xp->source) {
				errs[xp->n] = fabs(t->rows[k].err_pct);
				facs[xp->n++] = t->rows[k].factor;
			}
		xp->median_abs_err_pct = median_of(errs, (size_t)xp->n);
		xp->median_factor = median_of(facs, (size_t)xp->n);
	}
done:
	free(errs);
	free(facs);
	return rc;
}

int fleet_xtable_build(struct fleet_xtable *out, const struct run_record *r)
{
	unsigned char *done = calloc(r->nrows ? r->nrows : 1, 1);
	size_t *idx = malloc((r->nrows ? r->nrows : 1) * sizeof *idx), cap = 0;
	int rc = 0;

	memset(out, 0, sizeof *out);
	if (!done || !idx) {
		rc = err_nomem();
		goto done;
	}
	for (size_t d = 0; d < r->ndevices; d++) {
		int computes = 0;
		for (size_t k = 0; k < r->nrows && !computes; k++)
			computes = (size_t)r->rows[k].device == d && r->rows[k].status == REC_OK &&
				   !is_comm_backend(r->rows[k].backend);
		out->nskipped_devices += computes && !dev_has_bw(r, (int)d);
	}
	for (size_t k = 0; k < r->nrows; k++) {
		if (done[k] || !row_usable(r, &r->rows[k]))
			continue;
		size_t n = kernel_rows(r, k, done, idx);
		for (size_t a = 0; a < n; a++)
			done[idx[a]] = 1;
		for (size_t a = 0; a < n && n >= 2; a++)
			for (size_t b = 0; b < n; b++) {
				struct fleet_xrow x;
				if (a == b)
					continue;
				xrow_fill(&x, r, &r->rows[idx[a]], &r->rows[idx[b]]);
				if ((rc = xrow_add(out, &cap, &x)) != 0)
					goto done;
			}
	}
	rc = build_pairs(out);
done:
	free(done);
	free(idx);
	return rc;
}

void fleet_xtable_free(struct fleet_xtable *t)
{
	free(t->rows);
	free(t->pairs);
	memset(t, 0, sizeof *t);
}

double fleet_busbw(double algbw_gbps, int ranks)
{
	return ranks > 0 ? algbw_gbps * 2.0 * (ranks - 1) / ranks : NAN;
}

/* ---------------------------------------------------------------- documents */

static void fmt_num(char *buf, size_t len, double v, const char *fmt)
{
	if (isfinite(v))
		snprintf(buf, len, fmt, v);
	else
		snprintf(buf, len, "-");
}

static void write_device_section(FILE *fp, const struct run_record *r, size_t d,
				 const char *(*verdict_of)(void *, size_t), void *ctx)
{
	const struct rec_device *dev = &r->devices[d];
	char bw[32], med[32], gbps[32], params[256];
	int any = 0;

	fmt_num(bw, sizeof bw, dev->copy_gbps, "%.1f");
	fprintf(fp, "\n== device %zu: %s\n   kind %s, arch %s, %d cores/SMs, copy bandwidth %s GB/s "
		    "(measured tonight)\n",
		d, dev->name, dev->kind, dev->arch, dev->cores, bw);
	fprintf(fp, "   %-12s %-8s %-7s %13s %9s %-8s %-18s %s\n", "op", "variant", "backend",
		"median_us", "GB/s", "status", "verdict", "params / reason");
	for (size_t k = 0; k < r->nrows; k++) {
		const struct rec_row *w = &r->rows[k];
		if ((size_t)w->device != d || !strcmp(w->backend, "slurm") ||
		    is_comm_backend(w->backend))
			continue;
		const char *v = verdict_of ? verdict_of(ctx, k) : NULL;
		fmt_num(med, sizeof med, w->median_us, "%.3f");
		fmt_num(gbps, sizeof gbps, w->gbps, "%.2f");
		fprintf(fp, "   %-12s %-8s %-7s %13s %9s %-8s %-18s %s%s%s\n", w->op, w->variant,
			w->backend, med, gbps, rec_status_name(w->status), v ? v : "-",
			rec_row_params_str(w, params, sizeof params), w->reason[0] ? "  " : "",
			w->reason);
		any = 1;
	}
	if (!any)
		fprintf(fp, "   (no kernel rows)\n");
}

static void write_xtable(FILE *fp, const struct run_record *r, const struct fleet_xtable *x)
{
	char params[256];
	fprintf(fp, "\n== cross-device table: the transfer backtest\n"
		    "   Each kernel measured tonight on two or more devices: its time on the\n"
		    "   target projected from the source's time by the ratio of the devices'\n"
		    "   copy bandwidth measured tonight (projected = source_us x source GB/s /\n"
		    "   target GB/s), beside what the target measured. error = projected /\n"
		    "   measured - 1; factor = measured / projected ([aic-095f58a-moe]: above 1,\n"
		    "   the faster device gains less than its bandwidth promises).\n");
	if (!x->n) {
		fprintf(fp, "   (no kernel was measured on two devices with a copy bandwidth)\n");
		return;
	}
	fprintf(fp, "   %-12s %-8s %6s %13s %6s %13s %13s %8s %7s  %s\n", "op", "variant",
		"device", "measured_us", "from", "source_us", "projected_us", "error%", "factor",
		"params");
	for (size_t i = 0; i < x->n; i++) {
		const struct fleet_xrow *w = &x->rows[i];
		snprintf(params, sizeof params, "%s", w->params);
		fprintf(fp, "   %-12s %-8s %6d %13.3f %6d %13.3f %13.3f %+8.1f %7.3f  %s\n", w->op,
			w->variant, w->target, w->measured_us, w->source, w->source_us, w->projected_us,
			w->err_pct, w->factor, params);
	}
	fprintf(fp, "\n   per device pair (device numbers as in the sections above):\n");
	fprintf(fp, "   %-40s %-40s %7s %12s %13s\n", "target", "source", "kernels", "median|err|%",
		"median factor");
	for (size_t i = 0; i < x->npairs; i++) {
		const struct fleet_xpair *p = &x->pairs[i];
		fprintf(fp, "   %-40.40s %-40.40s %7d %12.1f %13.3f\n", r->devices[p->target].name,
			r->devices[p->source].name, p->n, p->median_abs_err_pct, p->median_factor);
	}
	if (x->nskipped_devices)
		fprintf(fp, "   %zu device(s) without a measured copy bandwidth are left out\n",
			x->nskipped_devices);
}

static void write_allreduce(FILE *fp, const struct run_record *r)
{
	int any = 0;
	for (size_t k = 0; k < r->nrows; k++) {
		const struct rec_row *w = &r->rows[k];
		char med[32], alg[32], bus[32];
		if (strcmp(w->op, "allreduce"))
			continue;
		if (!any)
			fprintf(fp, "\n== all-reduce (sum, bf16) against the number of nodes\n"
				    "   busbw = algbw x 2 (ranks - 1) / ranks (nccl-tests' ring "
				    "definition); algbw = bytes / median\n"
				    "   %-8s %-10s %8s %6s %6s %10s %10s %10s %-9s %s\n",
				"backend", "variant", "M", "ranks", "nodes", "median_us", "algbw", "busbw",
				"status", "reason");
		any = 1;
		int ranks = (int)rec_row_param(w, "ranks", rec_row_param(w, "gpus", NAN));
		fmt_num(med, sizeof med, w->median_us, "%.2f");
		fmt_num(alg, sizeof alg, w->gbps, "%.3f");
		fmt_num(bus, sizeof bus, fleet_busbw(w->gbps, ranks), "%.3f");
		fprintf(fp, "   %-8s %-10s %8.0f %6d %6.0f %10s %10s %10s %-9s %s\n", w->backend,
			w->variant, rec_row_param(w, "M", NAN), ranks, rec_row_param(w, "nodes", 1), med,
			alg, bus, rec_status_name(w->status), w->reason);
	}
}

void fleet_write_devices_text(FILE *fp, const struct run_record *r, const struct fleet_xtable *x,
			      const struct fleet_node *nodes, size_t nnodes,
			      const char *(*verdict_of)(void *ctx, size_t row), void *ctx)
{
	size_t failed = 0;
	for (size_t i = 0; i < nnodes; i++)
		failed += !nodes[i].ok;
	fprintf(fp, "ddt fleet %s: %zu node(s) planned, %zu measured, %zu failed\n", r->run_id,
		nnodes, nnodes - failed, failed);
	fprintf(fp, "\n== nodes\n   %-24s %5s  %s\n", "node", "task", "run record / why it failed");
	for (size_t i = 0; i < nnodes; i++)
		fprintf(fp, "   %-24s %5d  %s%s\n", nodes[i].node, nodes[i].task,
			nodes[i].ok ? "" : "FAILED: ", nodes[i].ok ? nodes[i].run_id : nodes[i].reason);
	for (size_t d = 0; d < r->ndevices; d++)
		if (strcmp(r->devices[d].kind, "node"))
			write_device_section(fp, r, d, verdict_of, ctx);
	write_xtable(fp, r, x);
	write_allreduce(fp, r);
}

void fleet_write_devices_csv(FILE *fp, const struct run_record *r, const struct fleet_xtable *x)
{
	fputs("op,variant,backend,params,target,target_copy_gbps,measured_us,source,"
	      "source_copy_gbps,source_us,projected_us,error_pct,factor\n",
	      fp);
	for (size_t i = 0; i < x->n; i++) {
		const struct fleet_xrow *w = &x->rows[i];
		csv_field(fp, w->op);
		fputc(',', fp);
		csv_field(fp, w->variant);
		fputc(',', fp);
		csv_field(fp, w->backend);
		fputc(',', fp);
		csv_field(fp, w->params);
		fputc(',', fp);
		csv_field(fp, r->devices[w->target].name);
		fprintf(fp, ",%.9g,%.9g,", r->devices[w->target].copy_gbps, w->measured_us);
		csv_field(fp, r->devices[w->source].name);
		fprintf(fp, ",%.9g,%.9g,%.9g,%.6g,%.6g\n", r->devices[w->source].copy_gbps,
			w->source_us, w->projected_us, w->err_pct, w->factor);
	}
}
