/* fleet_slurm.c - the fleet with Slurm: planning the night and submitting the array, the all-reduce and the merge (the jobs' bodies are fleet_jobs.c and fleet_merge.c). */
#include "fleet.h"
#include "fleet_sys.h"

#include "err.h"
#include "fsx.h"
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Writes a /bin/sh script that execs `'<a>' '<b>' ...` (NULL-terminated),
 * each argument single-quoted. Returns 0 or an error code. */
static int write_script(const char *path, const char *what, const char *const *args)
{
	struct fsx_file f;
	int rc = fsx_open(&f, path);
	if (rc)
		return rc;
	fprintf(f.fp, "#!/bin/sh\n# %s (written by ddt nightly --slurm)\nexec", what);
	for (size_t i = 0; args[i]; i++) {
		fputs(" '", f.fp);
		for (const char *s = args[i]; *s; s++)
			fputs(*s == '\'' ? "'\\''" : (char[2]){*s, 0}, f.fp);
		fputc('\'', f.fp);
	}
	fputc('\n', f.fp);
	if (fchmod(fileno(f.fp), 0755) != 0) {
		rc = err_set(DDT_EIO, "%s: chmod: %s", path, strerror(errno));
		fsx_abort(&f);
		return rc;
	}
	return fsx_commit(&f);
}

char *fleet_dir_of(const char *runs, const char *id)
{
	return fleet_path("%s/.fleet/%s", runs, id);
}

/* An absolute path for p (realpath when it exists, else cwd/p). */
static void absolutize(char *p, size_t len)
{
	char buf[PATH_MAX], cwd[PATH_MAX], *joined = NULL;
	if (realpath(p, buf)) {
		snprintf(p, len, "%s", buf);
		return;
	}
	if (p[0] != '/' && getcwd(cwd, sizeof cwd) && (joined = fleet_path("%s/%s", cwd, p)) &&
	    strlen(joined) < len)
		snprintf(p, len, "%s", joined);
	free(joined);
}

/* ---------------------------------------------------------------- nodes */

/* Appends each line of text (a node name) to p. */
static int plan_add_lines(struct fleet_plan *p, const char *text)
{
	char name[128];
	while (*text) {
		size_t n = strcspn(text, "\n");
		snprintf(name, sizeof name, "%.*s", (int)(n < 127 ? n : 127), text);
		name[strcspn(name, " \t\r")] = '\0';
		if (name[0]) {
			int rc = fleet_plan_add_node(p, name);
			if (rc)
				return rc;
		}
		text += n + (text[n] == '\n');
	}
	return 0;
}

/* The nodes of partition (the default partition when ""), one per line,
 * into out. */
static int partition_nodes(const char *partition, char *out, size_t len)
{
	char buf[65536];
	int rc;
	if (partition[0]) {
		char *argv[] = {"sinfo", "-h", "-N", "-p", (char *)partition, "-o", "%N", NULL};
		return fleet_slurm_cmd(argv, out, len);
	}
	char *argv[] = {"sinfo", "-h", "-N", "-o", "%N %P", NULL};
	if ((rc = fleet_slurm_cmd(argv, buf, sizeof buf)) != 0)
		return rc;
	size_t off = 0;
	out[0] = '\0';
	char *save = NULL;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char node[128], part[128];
		if (sscanf(line, "%127s %127s", node, part) == 2 && part[strlen(part) - 1] == '*' &&
		    off + strlen(node) + 2 < len)
			off += (size_t)snprintf(out + off, len - off, "%s\n", node);
	}
	return 0;
}

/* True when node is listed (one per line) in text. */
static int listed(const char *text, const char *node)
{
	size_t n = strlen(node);
	for (const char *s = text; (s = strstr(s, node)) != NULL; s += n)
		if ((s == text || s[-1] == '\n') && (s[n] == '\n' || s[n] == '\0'))
			return 1;
	return 0;
}

/* The plan's nodes from --nodes (Slurm hostlist syntax, a node listed twice
 * gets two tasks) or, without it, every node of the partition; exclude
 * receives the partition's other nodes, comma-separated, so the array's tasks
 * land only on planned nodes. */
static int plan_nodes(struct fleet_plan *p, const char *nodes, char *exclude, size_t elen)
{
	static char part[65536], list[65536];
	int rc;

	exclude[0] = '\0';
	if ((rc = partition_nodes(p->partition, part, sizeof part)) != 0)
		return rc;
	if (nodes && nodes[0]) {
		char *argv[] = {"scontrol", "show", "hostnames", (char *)nodes, NULL};
		if ((rc = fleet_slurm_cmd(argv, list, sizeof list)) != 0)
			return rc;
	} else
		snprintf(list, sizeof list, "%s", part);
	if ((rc = plan_add_lines(p, list)) != 0)
		return rc;
	if (p->nnodes == 0)
		return err_set(DDT_EINPUT, "no nodes: %s", nodes && nodes[0] ? "--nodes is empty"
						       : "the partition has none");
	size_t off = 0;
	for (char *s = part; *s;) {
		size_t n = strcspn(s, "\n");
		char node[128];
		snprintf(node, sizeof node, "%.*s", (int)(n < 127 ? n : 127), s);
		if (node[0] && !listed(list, node) && !strstr(exclude, node) && off + n + 2 < elen)
			off += (size_t)snprintf(exclude + off, elen - off, "%s%s", off ? "," : "", node);
		s += n + (s[n] == '\n');
	}
	return 0;
}

/* Distinct planned nodes. */
static int distinct_nodes(const struct fleet_plan *p)
{
	int n = 0;
	for (int i = 0; i < p->nnodes; i++) {
		int j;
		for (j = 0; j < i && strcmp(p->nodes[i], p->nodes[j]); j++)
			;
		n += j == i;
	}
	return n;
}

/* ---------------------------------------------------------------- submit */

/* The sbatch arguments every fleet job has: name, log, partition. */
static int av_sbatch(struct fleet_argv *a, const struct fleet_plan *p, const char *dir,
		     const char *job, const char *log)
{
	int rc = fleet_argv_add(a, "sbatch") || fleet_argv_add(a, "--parsable") || fleet_argv_add(a, "--job-name=%s", job) ||
		 fleet_argv_add(a, "--output=%s/logs/%s", dir, log) || fleet_argv_add(a, "--chdir=%s", dir);
	if (!rc && p->partition[0])
		rc = fleet_argv_add(a, "--partition=%s", p->partition);
	return rc ? DDT_ENOMEM : 0;
}

/* Runs sbatch with a's arguments; the job id (before --parsable's ';') into id. */
static int sbatch_run(struct fleet_argv *a, char *id, size_t len)
{
	char out[256];
	int rc = fleet_slurm_cmd(a->v, out, sizeof out);
	fleet_argv_free(a);
	if (rc)
		return rc;
	snprintf(id, len, "%.*s", (int)strcspn(out, ";\n"), out);
	if (!id[0] || strspn(id, "0123456789") != strlen(id))
		return err_set(DDT_EGENERIC, "sbatch printed no job id ('%.80s')", out);
	return 0;
}

static void scancel(const char *id)
{
	char out[256];
	char *argv[] = {"scancel", (char *)id, NULL};
	if (id[0])
		fleet_slurm_cmd(argv, out, sizeof out);
}

/* Submits the array, the all-reduce (when p->allreduce) and the merge and
 * fills p's job ids. deadline_s: from now, when Slurm drops a task that has
 * not started. On failure what was submitted is cancelled. */
static int submit_jobs(struct fleet_plan *p, const char *dir, const char *exclude,
		       long deadline_s, const char *merge_time)
{
	struct fleet_argv a = {0};
	int rc;

	/* the array: one task per planned node, each holding its node alone */
	if ((rc = av_sbatch(&a, p, dir, "ddt-bench", "task-%a.out")) ||
	    (rc = fleet_argv_add(&a, "--array=0-%d", p->nnodes - 1)) || (rc = fleet_argv_add(&a, "--nodes=1")) ||
	    (rc = fleet_argv_add(&a, "--ntasks=1")) || (rc = fleet_argv_add(&a, "--time=%s", p->time_limit)) ||
	    (rc = fleet_argv_add(&a, "--deadline=now+%ldseconds", deadline_s)) ||
	    (p->exclusive && (rc = fleet_argv_add(&a, "--exclusive"))) ||
	    (p->gres[0] && (rc = fleet_argv_add(&a, "--gres=%s", p->gres))) ||
	    (exclude[0] && (rc = fleet_argv_add(&a, "--exclude=%s", exclude))) ||
	    (rc = fleet_argv_add(&a, "%s/task.sh", dir)) ||
	    (rc = sbatch_run(&a, p->array_job, sizeof p->array_job)))
		goto fail;
	/* the all-reduce: every planned node at once, after the benches */
	if (p->allreduce &&
	    ((rc = av_sbatch(&a, p, dir, "ddt-allreduce", "allreduce.out")) ||
	     (rc = fleet_argv_add(&a, "--dependency=afterany:%s", p->array_job)) ||
	     (rc = fleet_argv_add(&a, "--nodes=1-%d", distinct_nodes(p))) ||
	     (rc = fleet_argv_add(&a, "--time=%s", p->time_limit)) || (rc = fleet_argv_add(&a, "--exclusive")) ||
	     (rc = fleet_argv_add(&a, "--deadline=now+%ldseconds", 2 * deadline_s)) ||
	     (p->gres[0] && (rc = fleet_argv_add(&a, "--gres=%s", p->gres))) ||
	     (exclude[0] && (rc = fleet_argv_add(&a, "--exclude=%s", exclude))) ||
	     (rc = fleet_argv_add(&a, "%s/allreduce.sh", dir)) ||
	     (rc = sbatch_run(&a, p->allreduce_job, sizeof p->allreduce_job))))
		goto fail;
	/* the merge: after everything, whatever became of it (afterany) */
	if ((rc = av_sbatch(&a, p, dir, "ddt-merge", "merge.out")) ||
	    (rc = fleet_argv_add(&a, "--dependency=afterany:%s%s%s", p->array_job,
			 p->allreduce_job[0] ? ":" : "", p->allreduce_job)) ||
	    (rc = fleet_argv_add(&a, "--nodes=1")) || (rc = fleet_argv_add(&a, "--ntasks=1")) ||
	    (rc = fleet_argv_add(&a, "--time=%s", merge_time)) || (rc = fleet_argv_add(&a, "%s/merge.sh", dir)) ||
	    (rc = sbatch_run(&a, p->merge_job, sizeof p->merge_job)))
		goto fail;
	return 0;
fail:
	fleet_argv_free(&a);
	scancel(p->array_job);
	scancel(p->allreduce_job);
	return err_wrap(rc, "submitting");
}

/* Writes task.sh, allreduce.sh and merge.sh into dir. */
static int write_scripts(const struct fleet_plan *p, const char *dir)
{
	static const char *const what[3][2] = {{"task", "one node's bench (array task)"},
					       {"allreduce", "the all-reduce across nodes"},
					       {"merge", "the merge"}};
	int rc = 0;
	for (int i = 0; i < 3 && !rc; i++) {
		char *sh = fleet_path("%s/%s.sh", dir, what[i][0]);
		const char *args[] = {p->ddt, "fleet", what[i][0], dir, NULL};
		rc = sh ? write_script(sh, what[i][1], args) : err_nomem();
		free(sh);
	}
	return rc;
}

/* ---------------------------------------------------------------- waiting */

static const char *const final_states[] = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT",
					   "NODE_FAIL", "OUT_OF_MEMORY", "DEADLINE", "PREEMPTED",
					   "BOOT_FAIL", "SPECIAL_EXIT", NULL};

static int is_final_state(const char *s)
{
	for (int i = 0; final_states[i]; i++)
		if (!strncmp(s, final_states[i], strlen(final_states[i])))
			return 1;
	return 0;
}

/* Waits until job id has left the queue (or ended), asking every poll_s, for
 * at most max_s. Returns 0, or DDT_EGENERIC after squeue failed five times
 * running or when max_s passed (the job stays queued). */
static int wait_job(const char *id, double poll_s, double max_s)
{
	int failures = 0;
	time_t t0 = time(NULL);
	for (;;) {
		if (difftime(time(NULL), t0) > max_s)
			return err_set(DDT_EGENERIC,
				       "job %s has not ended after %.0f min; it stays queued, and "
				       "`ddt fleet merge` runs the merge by hand",
				       id, max_s / 60);
		char out[256];
		char *argv[] = {"squeue", "-h", "-j", (char *)id, "-o", "%T", NULL};
		int rc = fleet_slurm_cmd(argv, out, sizeof out);
		if (rc) {
			/* a job long gone is "Invalid job id": it has ended */
			if (strstr(err_msg(), "nvalid job id"))
				return 0;
			if (++failures >= 5)
				return err_wrap(rc, "asking Slurm about job %s", id);
		} else {
			failures = 0;
			fleet_first_line(out, sizeof out, out);
			if (!out[0] || is_final_state(out))
				return 0;
		}
		struct timespec ts = {(time_t)poll_s, (long)((poll_s - floor(poll_s)) * 1e9)};
		nanosleep(&ts, NULL);
	}
}

/* What the submitter reads of merge.yaml (fleet_merge.c writes it): the
 * merge's exit status alone. */
struct merge_status {
	int exit_status;
};

static const struct yschema_field merge_status_fields[] = {
	YS_FIELD(struct merge_status, exit_status, YS_INT, Y_REQUIRED | Y_NONNEG,
		 .help = "the merge's exit status (0, 1, 2, 3 or 4)"),
};
static const struct yschema merge_status_schema = YS_TABLE("merge", merge_status_fields, 0);

/* The merge's exit status from dir/merge.yaml into *status; DDT_ENOTFOUND when
 * the merge left none. */
static int merge_status(const char *dir, int *status)
{
	char *path = fleet_path("%s/merge.yaml", dir);
	struct ydoc *doc = NULL;
	struct ydiag diag = {0};
	struct merge_status ms = {*status};
	int rc;

	if (!path)
		return err_nomem();
	if (!fsx_exists(path))
		rc = err_set(DDT_ENOTFOUND, "the merge job ended without %s (see %s/logs/merge.out)",
			     path, dir);
	else if ((rc = ydoc_load_file(&doc, path, &diag)) == 0) {
		struct yctx c = {path, &diag, NULL};
		if (!doc->root || yschema_read_fields(&c, doc->root, &merge_status_schema, &ms))
			rc = err_set(DDT_EINPUT, "%s: no exit_status", path);
		*status = ms.exit_status;
	}
	ydoc_free(doc);
	ydiag_free(&diag);
	free(path);
	return rc;
}

/* ---------------------------------------------------------------- submit */

/* Sets p's paths, nodes and settings from o; exclude receives the partition's
 * other nodes. */
static int plan_make(struct fleet_plan *p, const struct fleet_opts *o, const struct fleet_conf *fc,
		     char *exclude, size_t elen)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return err_set(DDT_EIO, "cannot find the ddt binary: %s", strerror(errno));
	exe[n] = '\0';
	memset(p, 0, sizeof *p);
	fleet_make_id(p->id, sizeof p->id, p->created, sizeof p->created);
	snprintf(p->ddt, sizeof p->ddt, "%s", exe);
	snprintf(p->home, sizeof p->home, "%s", o->paths.home);
	snprintf(p->runs, sizeof p->runs, "%s", o->paths.runs);
	snprintf(p->reports, sizeof p->reports, "%s", o->paths.reports);
	snprintf(p->calibration, sizeof p->calibration, "%s", o->paths.calibration);
	/* without --template each node's bench picks its own (gpu or cpu) and the
	 * merge reads the default template, which both extend */
	snprintf(p->template_path, sizeof p->template_path, "%s", o->paths.template_path);
	if (o->paths.template_given)
		snprintf(p->bench_template, sizeof p->bench_template, "%s", o->paths.template_path);
	/* every job runs elsewhere: only absolute paths mean the same there */
	absolutize(p->home, sizeof p->home);
	absolutize(p->runs, sizeof p->runs);
	absolutize(p->reports, sizeof p->reports);
	absolutize(p->calibration, sizeof p->calibration);
	absolutize(p->template_path, sizeof p->template_path);
	if (p->bench_template[0])
		absolutize(p->bench_template, sizeof p->bench_template);
	snprintf(p->bench_command, sizeof p->bench_command, "%s", o->bench_command);
	snprintf(p->partition, sizeof p->partition, "%s", o->partition);
	if (o->time_limit[0])
		snprintf(p->time_limit, sizeof p->time_limit, "%s", o->time_limit);
	else
		snprintf(p->time_limit, sizeof p->time_limit, "%.0f", ceil(fc->task_time_min));
	p->exclusive = !o->shared;
	snprintf(p->mpi_launcher, sizeof p->mpi_launcher, "%s", o->mpi_launcher);
	snprintf(p->gres, sizeof p->gres, "%s", o->gres);
	char *ar = fleet_path("%s-allreduce", p->ddt);
	if (!ar)
		return err_nomem();
	p->allreduce = !o->no_allreduce && access(ar, X_OK) == 0;
	free(ar);
	return plan_nodes(p, o->nodes, exclude, elen);
}

/* Creates the fleet folder with its plan, scripts and subfolders. */
static int fleet_dir_create(const struct fleet_plan *p, const char *dir)
{
	static const char *const subs[] = {"tasks", "tasks/claims", "allreduce", "logs"};
	char *plan = fleet_path("%s/fleet.yaml", dir);
	int rc = plan ? fsx_mkdir_p(dir) : err_nomem();
	for (size_t i = 0; !rc && i < sizeof subs / sizeof *subs; i++) {
		char *s = fleet_path("%s/%s", dir, subs[i]);
		rc = s ? fsx_mkdir_p(s) : err_nomem();
		free(s);
	}
	if (!rc)
		rc = write_scripts(p, dir);
	if (!rc)
		rc = fleet_plan_write(p, plan);
	free(plan);
	return rc;
}

/* The fleet id, the nodes and the job ids. */
static void print_jobs(FILE *fp, const struct fleet_plan *p, const char *dir)
{
	fprintf(fp, "ddt nightly: fleet %s: %d task(s) on", p->id, p->nnodes);
	for (int i = 0; i < p->nnodes; i++)
		fprintf(fp, "%s%s", i ? ", " : " ", p->nodes[i]);
	fprintf(fp, "\nddt nightly: jobs: bench array %s (tasks 0-%d), %s%s%smerge %s\n",
		p->array_job, p->nnodes - 1, p->allreduce ? "all-reduce " : "", p->allreduce_job,
		p->allreduce ? ", " : "", p->merge_job);
	fprintf(fp, "ddt nightly: working folder %s\n", dir);
	fflush(fp);
}

int fleet_submit(const struct fleet_opts *o, int *status)
{
	struct fleet_plan p = {0};
	struct fleet_conf fc;
	struct tmpl t;
	struct ydiag diag = {0};
	static char exclude[65536];
	char *dir = NULL, *plan = NULL;
	double task_min;
	int rc;

	*status = 1;
	if ((rc = tmpl_load(&t, o->paths.template_path, &diag)) == 0)
		rc = fleet_conf_load(&fc, &t, &diag);
	tmpl_free(&t);
	if (rc) {
		if (diag.n)
			err_set(rc, "%s", diag.msgs[0]);
		goto done;
	}
	if (o->time_limit[0] && fleet_time_min(o->time_limit, &task_min)) {
		rc = err_set(DDT_EINPUT, "--time '%s': not a Slurm time (MM, HH:MM:SS, D-HH:MM)",
			     o->time_limit);
		goto done;
	}
	if (!o->time_limit[0])
		task_min = ceil(fc.task_time_min);
	if ((rc = plan_make(&p, o, &fc, exclude, sizeof exclude)) != 0)
		goto done;
	if (!(dir = fleet_dir_of(p.runs, p.id)) || !(plan = fleet_path("%s/fleet.yaml", dir))) {
		rc = err_nomem();
		goto done;
	}
	if ((rc = fleet_dir_create(&p, dir)) != 0)
		goto done;
	char merge_time[32];
	snprintf(merge_time, sizeof merge_time, "%.0f", ceil(fc.merge_time_min));
	if ((rc = submit_jobs(&p, dir, exclude, (long)ceil((fc.start_within_min + task_min) * 60),
			      merge_time)) != 0)
		goto done;
	if ((rc = fleet_plan_write(&p, plan)) != 0)
		goto done;
	if (!o->quiet)
		print_jobs(stdout, &p, dir);
	if (o->no_wait) {
		*status = 0;
		goto done;
	}
	/* every job has a limit and the benches a deadline: past the sum of them,
	 * and as long again for queueing, something is wrong */
	double max_s = 60 * (2 * (2 * (fc.start_within_min + task_min)) + fc.merge_time_min);
	if ((rc = wait_job(p.merge_job, fc.poll_s, max_s)) != 0 || (rc = merge_status(dir, status)) != 0)
		goto done;
	if (o->quiet && *status == 0)
		goto done;
	if (o->quiet)
		print_jobs(stdout, &p, dir);
	char *summary = fleet_path("%s/merge.txt", dir);
	char *text = NULL;
	size_t len;
	if (summary && fsx_read_all(summary, 1 << 20, &text, &len) == 0)
		fputs(text, stdout);
	free(text);
	free(summary);
	printf("ddt nightly: fleet %s: exit status %d (jobs %s, %s%s%s)\n", p.id, *status,
	       p.array_job, p.allreduce_job, p.allreduce_job[0] ? ", " : "", p.merge_job);
done:
	if (rc)
		*status = err_exit_status(rc);
	free(dir);
	free(plan);
	fleet_plan_free(&p);
	ydiag_free(&diag);
	return rc;
}
