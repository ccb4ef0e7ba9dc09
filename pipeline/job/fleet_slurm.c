/* fleet_slurm.c - the fleet with Slurm: submitting the array, the all-reduce and the merge, and the bodies of the first two jobs (the merge is fleet_merge.c). */
#include "fleet.h"
#include "fleet_sys.h"

#include "cuda_api.h"
#include "err.h"
#include "fsx.h"
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* An argument vector whose strings it owns. */
struct argvec {
	int n;
	char *v[64];
};

static int av_add(struct argvec *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int av_add(struct argvec *a, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	if (a->n >= 63)
		return err_set(DDT_EGENERIC, "too many arguments");
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return err_nomem();
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
	return 0;
}

static void av_free(struct argvec *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->v[i]);
	a->n = 0;
}

/* The sbatch arguments every fleet job has: name, log, partition. */
static int av_sbatch(struct argvec *a, const struct fleet_plan *p, const char *dir,
		     const char *job, const char *log)
{
	int rc = av_add(a, "sbatch") || av_add(a, "--parsable") || av_add(a, "--job-name=%s", job) ||
		 av_add(a, "--output=%s/logs/%s", dir, log) || av_add(a, "--chdir=%s", dir);
	if (!rc && p->partition[0])
		rc = av_add(a, "--partition=%s", p->partition);
	return rc ? DDT_ENOMEM : 0;
}

/* Runs sbatch with a's arguments; the job id (before --parsable's ';') into id. */
static int sbatch_run(struct argvec *a, char *id, size_t len)
{
	char out[256];
	int rc = fleet_slurm_cmd(a->v, out, sizeof out);
	av_free(a);
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
	struct argvec a = {0};
	int rc;

	/* the array: one task per planned node, each holding its node alone */
	if ((rc = av_sbatch(&a, p, dir, "ddt-bench", "task-%a.out")) ||
	    (rc = av_add(&a, "--array=0-%d", p->nnodes - 1)) || (rc = av_add(&a, "--nodes=1")) ||
	    (rc = av_add(&a, "--ntasks=1")) || (rc = av_add(&a, "--time=%s", p->time_limit)) ||
	    (rc = av_add(&a, "--deadline=now+%ldseconds", deadline_s)) ||
	    (p->exclusive && (rc = av_add(&a, "--exclusive"))) ||
	    (p->gres[0] && (rc = av_add(&a, "--gres=%s", p->gres))) ||
	    (exclude[0] && (rc = av_add(&a, "--exclude=%s", exclude))) ||
	    (rc = av_add(&a, "%s/task.sh", dir)) ||
	    (rc = sbatch_run(&a, p->array_job, sizeof p->array_job)))
		goto fail;
	/* the all-reduce: every planned node at once, after the benches */
	if (p->allreduce &&
	    ((rc = av_sbatch(&a, p, dir, "ddt-allreduce", "allreduce.out")) ||
	     (rc = av_add(&a, "--dependency=afterany:%s", p->array_job)) ||
	     (rc = av_add(&a, "--nodes=1-%d", distinct_nodes(p))) ||
	     (rc = av_add(&a, "--time=%s", p->time_limit)) || (rc = av_add(&a, "--exclusive")) ||
	     (rc = av_add(&a, "--deadline=now+%ldseconds", 2 * deadline_s)) ||
	     (p->gres[0] && (rc = av_add(&a, "--gres=%s", p->gres))) ||
	     (exclude[0] && (rc = av_add(&a, "--exclude=%s", exclude))) ||
	     (rc = av_add(&a, "%s/allreduce.sh", dir)) ||
	     (rc = sbatch_run(&a, p->allreduce_job, sizeof p->allreduce_job))))
		goto fail;
	/* the merge: after everything, whatever became of it (afterany) */
	if ((rc = av_sbatch(&a, p, dir, "ddt-merge", "merge.out")) ||
	    (rc = av_add(&a, "--dependency=afterany:%s%s%s", p->array_job,
			 p->allreduce_job[0] ? ":" : "", p->allreduce_job)) ||
	    (rc = av_add(&a, "--nodes=1")) || (rc = av_add(&a, "--ntasks=1")) ||
	    (rc = av_add(&a, "--time=%s", merge_time)) || (rc = av_add(&a, "%s/merge.sh", dir)) ||
	    (rc = sbatch_run(&a, p->merge_job, sizeof p->merge_job)))
		goto fail;
	return 0;
fail:
	av_free(&a);
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

/* The merge's exit status from dir/merge.yaml into *status; DDT_ENOTFOUND when
 * the merge left none. */
static int merge_status(const char *dir, int *status)
{
	char *path = fleet_path("%s/merge.yaml", dir);
	struct ydoc *doc = NULL;
	struct ydiag diag = {0};
	int rc;

	if (!path)
		return err_nomem();
	if (!fsx_exists(path))
		rc = err_set(DDT_ENOTFOUND, "the merge job ended without %s (see %s/logs/merge.out)",
			     path, dir);
	else if ((rc = ydoc_load_file(&doc, path, &diag)) == 0) {
		struct yctx c = {path, &diag};
		if (!doc->root || yget_int(&c, doc->root, "exit_status", Y_REQUIRED | Y_NONNEG, status))
			rc = err_set(DDT_EINPUT, "%s: no exit_status", path);
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

/* ---------------------------------------------------------------- the array task */

/* A job's error that stops it: "ddt <what>: message", and its exit status. */
static int fail(const char *what, int rc)
{
	fprintf(stderr, "ddt %s: %s\n", what, err_msg()[0] ? err_msg() : "failed");
	return err_exit_status(rc);
}

static volatile sig_atomic_t got_term;

static void on_term(int sig)
{
	(void)sig;
	got_term = 1;
}

/* Claims one of node's slots for tonight (a node listed k times has k):
 * tasks/claims/<node>.<slot>, created exclusively, so two tasks that land on
 * one node cannot both measure it. Returns 1 claimed, 0 all taken, or an
 * error code. */
static int claim_node(const struct fleet_plan *p, const char *dir, const char *node, int task)
{
	int slots = 0;
	for (int i = 0; i < p->nnodes; i++)
		slots += !strcmp(p->nodes[i], node);
	for (int k = 0; k < slots; k++) {
		char *path = fleet_path("%s/tasks/claims/%s.%d", dir, node, k);
		if (!path)
			return err_nomem();
		int fd = fsx_open_fd(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		int e = errno;
		if (fd >= 0) {
			dprintf(fd, "%d\n", task);
			fsync(fd);
			close(fd);
			free(path);
			return 1;
		}
		if (e != EEXIST) {
			free(path);
			return err_set(DDT_EIO, "%s/tasks/claims: %s", dir, strerror(e));
		}
		/* a requeued task finds its own claim */
		char *text = NULL;
		size_t len;
		int mine = fsx_read_all(path, 64, &text, &len) == 0 && atoi(text) == task;
		free(text);
		free(path);
		if (mine)
			return 1;
	}
	return 0;
}

/* Runs the bench into runs_dir with its output to log; waits for it, passing
 * SIGTERM on. *status: its exit status, -1 when killed by a signal or
 * terminated. */
static int task_run_bench(const struct fleet_plan *p, const char *runs_dir, const char *log,
			  int *status)
{
	struct argvec a = {0};
	struct sigaction sa = {0};
	int rc, ws = 0;
	pid_t pid;

	*status = -1;
	if (p->bench_command[0])
		rc = av_add(&a, "/bin/sh") || av_add(&a, "-c") ||
		     av_add(&a, "%s \"$@\"", p->bench_command) || av_add(&a, "ddt-bench");
	else
		rc = av_add(&a, "%s", p->ddt) || av_add(&a, "bench");
	if (rc || (p->bench_template[0] &&
		   (av_add(&a, "--template") || av_add(&a, "%s", p->bench_template))) ||
	    av_add(&a, "--calibration") || av_add(&a, "%s", p->calibration) ||
	    av_add(&a, "--runs") || av_add(&a, "%s", runs_dir)) {
		av_free(&a);
		return err_nomem();
	}
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if ((pid = fork()) < 0) {
		av_free(&a);
		return err_set(DDT_EIO, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		int fd = fsx_open_fd(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		execv(a.v[0], a.v);
		fprintf(stderr, "%s: %s\n", a.v[0], strerror(errno));
		_exit(127);
	}
	av_free(&a);
	int sent = 0;
	time_t term_at = 0;
	for (;;) {
		pid_t w = waitpid(pid, &ws, got_term ? WNOHANG : 0);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return err_set(DDT_EIO, "waitpid: %s", strerror(errno));
		if (got_term && !sent) {
			kill(pid, SIGTERM);
			sent = 1;
			term_at = time(NULL);
		} else if (sent == 1 && time(NULL) - term_at > 3) {
			kill(pid, SIGKILL);
			sent = 2;
		}
		if (got_term)
			usleep(100000);
	}
	*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
	/* Slurm signals every process of the job: the bench may die of it (or
	 * its shell exit 128 + 15) before this process sees its own SIGTERM */
	if (!got_term && ((WIFSIGNALED(ws) && (WTERMSIG(ws) == SIGTERM || WTERMSIG(ws) == SIGKILL)) ||
			  *status == 128 + SIGTERM || *status == 128 + SIGKILL))
		got_term = 1;
	return 0;
}

/* The one run folder the bench left in runs_dir, into id; "" when none. */
static int task_find_run(const char *runs_dir, char *id, size_t len)
{
	DIR *d = opendir(runs_dir);
	struct dirent *e;
	int n = 0;

	id[0] = '\0';
	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char *rec;
		if (fsx_is_temp_name(e->d_name) || !record_run_id_valid(e->d_name))
			continue;
		if (!(rec = fleet_path("%s/%s/run.yaml", runs_dir, e->d_name))) {
			closedir(d);
			return err_nomem();
		}
		if (fsx_exists(rec) && n++ == 0)
			snprintf(id, len, "%.79s", e->d_name);
		free(rec);
	}
	closedir(d);
	return n > 1 ? err_set(DDT_EGENERIC, "%s: %d run folders, expected one", runs_dir, n) : 0;
}

/* id's time moved by sec seconds into out (same host part). */
static int shift_run_id(const char *id, int sec, char *out, size_t len)
{
	struct tm tm = {0};
	char stamp[20];
	if (!strptime(id, "%Y%m%dT%H%M%SZ", &tm))
		return -1;
	time_t t = timegm(&tm) + sec;
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
	snprintf(out, len, "%.16s%.63s", stamp, id + 16);
	return 0;
}

/* Moves the finished run folder runs_dir/<id> into the shared runs/ whole (one
 * rename on one file system). Two tasks of one host that started in the same
 * second made the same id: the later one takes the next free second, and its
 * record is rewritten with that id. *final_id receives the id in runs/. */
static int task_publish(const struct fleet_plan *p, const char *runs_dir, const char *id,
			char *final_id, size_t len)
{
	char *src = fleet_path("%s/%s", runs_dir, id), *dst = NULL;
	int rc = 0;

	snprintf(final_id, len, "%s", id);
	if (!src)
		return err_nomem();
	for (int shift = 0; shift < 600; shift++) {
		if (shift) {
			struct run_record r;
			struct ydiag diag = {0};
			char *rec = fleet_path("%s/run.yaml", src);
			if (!rec || shift_run_id(id, shift, final_id, len) || !record_run_id_valid(final_id))
				rc = rec ? err_set(DDT_EGENERIC, "run id %s cannot move", id) : err_nomem();
			else if ((rc = record_read(&r, rec, &diag)) == 0) {
				snprintf(r.run_id, sizeof r.run_id, "%s", final_id);
				rc = record_write(&r, rec);
			} else if (diag.n)
				err_set(rc, "%s", diag.msgs[0]);
			record_free(&r);
			ydiag_free(&diag);
			free(rec);
			if (rc)
				break;
		}
		free(dst);
		if (!(dst = fleet_path("%s/%s", p->runs, final_id))) {
			rc = err_nomem();
			break;
		}
		if (fsx_rename(src, dst, FSX_NOREPLACE) == 0)
			break;
		if (errno != EEXIST && errno != ENOTEMPTY) {
			rc = DDT_EIO; /* fsx_rename said which and why */
			break;
		}
		err_clear();
	}
	free(src);
	free(dst);
	return rc;
}

/* The template the bench used: the one given, else the record's own name
 * under the project's templates/ (bench picked it), else the merge's. */
static const char *task_template(const struct fleet_plan *p, const char *run_dir, char *buf,
				 size_t len)
{
	struct run_record r = {0};
	struct ydiag diag = {0};
	char *rec = fleet_path("%s/run.yaml", run_dir);
	const char *out = p->bench_template[0] ? p->bench_template : p->template_path;

	if (!p->bench_template[0] && rec && record_read(&r, rec, &diag) == 0 && r.template_name[0]) {
		char *cand = fleet_path("%s/templates/%s.yaml", p->home, r.template_name);
		if (cand && strlen(cand) < len && fsx_exists(cand)) {
			snprintf(buf, len, "%s", cand);
			out = buf;
		}
		free(cand);
	}
	record_free(&r);
	ydiag_free(&diag);
	free(rec);
	return out;
}

/* The last non-empty line of the log, for a failed task's reason. */
static void log_tail(const char *log, char *buf, size_t len)
{
	char *text = NULL;
	size_t n = 0;
	buf[0] = '\0';
	if (fsx_read_all(log, 64u << 20, &text, &n) != 0)
		return;
	while (n && (text[n - 1] == '\n' || text[n - 1] == ' '))
		text[--n] = '\0';
	char *start = strrchr(text, '\n');
	snprintf(buf, len, "%s", start ? start + 1 : text);
	free(text);
}

/* `ddt fleet task DIR`: array task $SLURM_ARRAY_TASK_ID of the night. */
int fleet_task_run(const char *dir)
{
	struct fleet_plan p;
	struct fleet_task t = {0};
	struct ydiag diag = {0};
	const char *env_task = getenv("SLURM_ARRAY_TASK_ID"), *env_node = getenv("SLURMD_NODENAME");
	const char *env_job = getenv("SLURM_ARRAY_JOB_ID");
	char *plan = fleet_path("%s/fleet.yaml", dir), *file = NULL, *log = NULL, *runs = NULL;
	char host[64] = "", id[80], tpl[PATH_MAX];
	int rc, bench = -1, status = 1;

	if (!plan)
		return fail("fleet task", err_nomem());
	rc = fleet_plan_read(&p, plan, &diag);
	free(plan);
	if (rc) {
		fprintf(stderr, "ddt fleet task: %s\n", diag.n ? diag.msgs[0] : err_msg());
		ydiag_free(&diag);
		fleet_plan_free(&p);
		return err_exit_status(rc);
	}
	t.task = env_task ? atoi(env_task) : 0;
	t.exit_code = -1;
	gethostname(host, sizeof host - 1);
	snprintf(t.node, sizeof t.node, "%s", env_node && env_node[0] ? env_node : host);
	snprintf(t.job_id, sizeof t.job_id, "%.15s_%d", env_job ? env_job : "0", t.task);
	fleet_now_iso(t.started, sizeof t.started);
	if (!(file = fleet_path("%s/tasks/%d.yaml", dir, t.task)) ||
	    !(log = fleet_path("%s/tasks/%d.log", dir, t.task)) ||
	    !(runs = fleet_path("%s/tasks/%d.runs", dir, t.task))) {
		rc = err_nomem();
		goto done;
	}
	if ((rc = claim_node(&p, dir, t.node, t.task)) < 0)
		goto done;
	if (rc == 0) {
		t.state = FT_DUPLICATE;
		snprintf(t.reason, sizeof t.reason, "%s was already measured by another task tonight",
			 t.node);
		fleet_now_iso(t.ended, sizeof t.ended);
		printf("ddt fleet task %d: %s\n", t.task, t.reason);
		rc = fleet_task_write(&t, file);
		status = rc ? 1 : 0;
		goto done;
	}
	t.state = FT_RUNNING;
	fsx_rm_rf(runs); /* a requeued task's leftovers */
	if ((rc = fleet_task_write(&t, file)) || (rc = fsx_mkdir_p(runs)) ||
	    (rc = task_run_bench(&p, runs, log, &bench)))
		goto done;
	t.exit_code = bench;
	fleet_now_iso(t.ended, sizeof t.ended);
	if (got_term) {
		t.state = FT_TERMINATED;
		snprintf(t.reason, sizeof t.reason,
			 "terminated by a signal at %s (Slurm time limit or scancel)", t.ended);
	} else if ((rc = task_find_run(runs, id, sizeof id)) != 0 || !id[0] ||
		   (bench != 0 && bench != 4)) {
		/* 4: a kernel failed validation; the record says which: still a night */
		t.state = FT_FAILED;
		log_tail(log, t.reason, sizeof t.reason);
		if (rc)
			snprintf(t.reason, sizeof t.reason, "%.200s", err_msg());
		else if (!t.reason[0])
			snprintf(t.reason, sizeof t.reason, "no run record and no output");
		rc = 0;
	} else {
		char *folder = fleet_path("%s/%s", runs, id), *cal = folder ? fleet_path("%s/calibration", folder) : NULL;
		/* the node's run renders on its own (`ddt report`) like a nightly's */
		if (cal && !fsx_exists(cal) &&
		    report_stash_inputs(folder, p.calibration, task_template(&p, folder, tpl, sizeof tpl)) != 0)
			fprintf(stderr, "ddt fleet task %d: %s (run kept without its inputs)\n", t.task,
				err_msg());
		free(cal);
		free(folder);
		if ((rc = task_publish(&p, runs, id, t.run_id, sizeof t.run_id)) != 0) {
			t.state = FT_FAILED;
			snprintf(t.reason, sizeof t.reason, "%.200s", err_msg());
			rc = 0;
		} else
			t.state = FT_DONE;
	}
	printf("ddt fleet task %d on %s: %s (bench exit %d)%s%s%s%s\n", t.task, t.node,
	       fleet_task_state_name(t.state), bench, t.run_id[0] ? ": " : "", t.run_id,
	       t.reason[0] ? ": " : "", t.reason);
	if ((rc = fleet_task_write(&t, file)) == 0)
		status = t.state == FT_DONE ? 0 : bench > 0 ? bench : 1;
	fsx_rm_rf(runs);
done:
	if (rc)
		status = fail("fleet task", rc);
	free(file);
	free(log);
	free(runs);
	fleet_plan_free(&p);
	ydiag_free(&diag);
	return status;
}

/* ---------------------------------------------------------------- the all-reduce job */

/* `ddt fleet allreduce DIR`: inside an allocation of K nodes, the all-reduce
 * on 1, 2, 4, ... and K nodes, one rank per GPU (one per node without GPUs),
 * each launch's run record into DIR/allreduce/nodes-<k>.yaml. */
/* Whether ranks start under srun (OpenMPI through PMIx) rather than mpirun:
 * the plan's mpi_launcher, else whether srun lists the pmix plugin. */
static int use_srun(const struct fleet_plan *p)
{
	char *mpi_argv[] = {"srun", "--mpi=list", NULL}, mpis[1024], errb[256];
	int st;

	if (p->mpi_launcher[0])
		return !strcmp(p->mpi_launcher, "srun");
	return fleet_proc_run(mpi_argv, mpis, sizeof mpis, errb, sizeof errb, 60, &st) == 0 &&
	       strstr(mpis, "pmix") != NULL;
}

/* The launcher's part of the command that starts per_node ranks on each of
 * k nodes, appended to a: srun's options, or mpirun's with the first k of
 * hosts (one name a line). Returns 0 or DDT_ENOMEM. */
static int launcher_args(struct argvec *a, int srun, int k, int per_node, const char *hosts)
{
	char hl[4096] = "";
	size_t off = 0;
	int bad;

	if (srun) {
		bad = av_add(a, "srun") || av_add(a, "--mpi=pmix") || av_add(a, "--nodes=%d", k) ||
		      av_add(a, "--ntasks-per-node=%d", per_node) || av_add(a, "--kill-on-bad-exit=1");
		return bad ? DDT_ENOMEM : 0;
	}
	for (int i = 0; i < k && *hosts; i++) {
		size_t n = strcspn(hosts, "\n");
		off += (size_t)snprintf(hl + off, sizeof hl - off, "%s%.*s:%d", i ? "," : "", (int)n,
					hosts, per_node);
		hosts += n + (hosts[n] == '\n');
	}
	bad = av_add(a, "mpirun") || av_add(a, "-np") || av_add(a, "%d", k * per_node) ||
	      av_add(a, "--host") || av_add(a, "%s", hl) ||
	      (getuid() == 0 && av_add(a, "--allow-run-as-root"));
	return bad ? DDT_ENOMEM : 0;
}

int fleet_allreduce_run(const char *dir)
{
	struct fleet_plan p;
	struct ydiag diag = {0};
	struct fleet_conf fc;
	struct tmpl t;
	const char *env_n = getenv("SLURM_JOB_NUM_NODES"), *env_list = getenv("SLURM_JOB_NODELIST");
	char *plan = fleet_path("%s/fleet.yaml", dir), *bin = NULL, reason[160];
	static char hosts[65536];
	int rc, gpus = 0, nodes = env_n ? atoi(env_n) : 1, failed = 0, launched = 0, skipped = 0;

	if (!plan)
		return fail("fleet allreduce", err_nomem());
	memset(&t, 0, sizeof t);
	rc = fleet_plan_read(&p, plan, &diag);
	free(plan);
	if (!rc && (rc = tmpl_load(&t, p.template_path, &diag)) == 0)
		rc = fleet_conf_load(&fc, &t, &diag);
	tmpl_free(&t);
	if (rc) {
		fprintf(stderr, "ddt fleet allreduce: %s\n", diag.n ? diag.msgs[0] : err_msg());
		goto done;
	}
	if (!(bin = fleet_path("%s-allreduce", p.ddt))) {
		rc = err_nomem();
		goto done;
	}
	cuda_devices(&gpus, reason, sizeof reason);
	int per_node = gpus > 0 ? gpus : 1;
	char *list_argv[] = {"scontrol", "show", "hostnames", (char *)(env_list ? env_list : ""), NULL};
	if (!env_list || fleet_slurm_cmd(list_argv, hosts, sizeof hosts) != 0)
		gethostname(hosts, 256);
	int srun = use_srun(&p);
	double limit_s = fc.nm * 40.0 + 120; /* per size: the harness's 15 s cap and set-up */
	printf("ddt fleet allreduce: %d node(s), %d rank(s) per node (%s), launcher %s\n", nodes,
	       per_node, gpus ? "one per GPU" : reason, srun ? "srun --mpi=pmix" : "mpirun");
	for (int k = 1; k <= nodes; k = k * 2 > nodes && k < nodes ? nodes : k * 2) {
		struct argvec a = {0};
		char out[8192], err[8192];
		int status;
		if (k * per_node < 2) { /* one rank reduces nothing */
			printf("ddt fleet allreduce: %d node(s): 1 rank, nothing to reduce: skipped\n", k);
			skipped++;
			if (k == nodes)
				break;
			continue;
		}
		if (launcher_args(&a, srun, k, per_node, hosts) || av_add(&a, "%s", bin) || av_add(&a, "--template") ||
		    av_add(&a, "%s", p.template_path) || av_add(&a, "--record") ||
		    av_add(&a, "%s/allreduce/nodes-%d.yaml", dir, k)) {
			av_free(&a);
			rc = err_nomem();
			goto done;
		}
		rc = fleet_proc_run(a.v, out, sizeof out, err, sizeof err, limit_s, &status);
		av_free(&a);
		fputs(out, stdout);
		fputs(err, stderr);
		if (rc)
			goto done;
		if (status != 0 && status != 4) {
			printf("ddt fleet allreduce: %d node(s): launch failed (exit %d)\n", k, status);
			failed++;
		} else
			launched++;
		if (k == nodes)
			break;
	}
	/* what the merge reads when there is no record: skipped, or failed */
	char *st_path = fleet_path("%s/allreduce/status.txt", dir), line[128];
	int len = snprintf(line, sizeof line, "launched %d skipped %d failed %d\n", launched, skipped,
			   failed);
	if (!st_path || fsx_write_all(st_path, line, (size_t)len) != 0)
		fprintf(stderr, "ddt fleet allreduce: cannot write its status: %s\n", err_msg());
	free(st_path);
done:
	if (rc)
		fprintf(stderr, "ddt fleet allreduce: %s\n", err_msg());
	free(bin);
	fleet_plan_free(&p);
	ydiag_free(&diag);
	return rc ? err_exit_status(rc) : failed ? 1 : 0;
}
