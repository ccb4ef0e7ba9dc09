/* fleet_jobs.c - the bodies of the fleet's first two Slurm jobs: an array task (one node's bench, published into the shared runs/) and the all-reduce across the nodes (the merge is fleet_merge.c; submitting them is fleet_slurm.c). */
#include "fleet.h"
#include "fleet_sys.h"

#include "cuda_api.h"
#include "err.h"
#include "fsx.h"
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
	struct fleet_argv a = {0};
	struct sigaction sa = {0};
	int rc, ws = 0;
	pid_t pid;

	*status = -1;
	if (p->bench_command[0])
		rc = fleet_argv_add(&a, "/bin/sh") || fleet_argv_add(&a, "-c") ||
		     fleet_argv_add(&a, "%s \"$@\"", p->bench_command) || fleet_argv_add(&a, "ddt-bench");
	else
		rc = fleet_argv_add(&a, "%s", p->ddt) || fleet_argv_add(&a, "bench");
	if (rc || (p->bench_template[0] &&
		   (fleet_argv_add(&a, "--template") || fleet_argv_add(&a, "%s", p->bench_template))) ||
	    fleet_argv_add(&a, "--calibration") || fleet_argv_add(&a, "%s", p->calibration) ||
	    fleet_argv_add(&a, "--runs") || fleet_argv_add(&a, "%s", runs_dir)) {
		fleet_argv_free(&a);
		return err_nomem();
	}
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if ((pid = fork()) < 0) {
		fleet_argv_free(&a);
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
	fleet_argv_free(&a);
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
static int launcher_args(struct fleet_argv *a, int srun, int k, int per_node, const char *hosts)
{
	char hl[4096] = "";
	size_t off = 0;
	int bad;

	if (srun) {
		bad = fleet_argv_add(a, "srun") || fleet_argv_add(a, "--mpi=pmix") || fleet_argv_add(a, "--nodes=%d", k) ||
		      fleet_argv_add(a, "--ntasks-per-node=%d", per_node) || fleet_argv_add(a, "--kill-on-bad-exit=1");
		return bad ? DDT_ENOMEM : 0;
	}
	for (int i = 0; i < k && *hosts; i++) {
		size_t n = strcspn(hosts, "\n");
		off += (size_t)snprintf(hl + off, sizeof hl - off, "%s%.*s:%d", i ? "," : "", (int)n,
					hosts, per_node);
		hosts += n + (hosts[n] == '\n');
	}
	bad = fleet_argv_add(a, "mpirun") || fleet_argv_add(a, "-np") || fleet_argv_add(a, "%d", k * per_node) ||
	      fleet_argv_add(a, "--host") || fleet_argv_add(a, "%s", hl) ||
	      (getuid() == 0 && fleet_argv_add(a, "--allow-run-as-root"));
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
		struct fleet_argv a = {0};
		char out[8192], err[8192];
		int status;
		if (k * per_node < 2) { /* one rank reduces nothing */
			printf("ddt fleet allreduce: %d node(s): 1 rank, nothing to reduce: skipped\n", k);
			skipped++;
			if (k == nodes)
				break;
			continue;
		}
		if (launcher_args(&a, srun, k, per_node, hosts) || fleet_argv_add(&a, "%s", bin) || fleet_argv_add(&a, "--template") ||
		    fleet_argv_add(&a, "%s", p.template_path) || fleet_argv_add(&a, "--record") ||
		    fleet_argv_add(&a, "%s/allreduce/nodes-%d.yaml", dir, k)) {
			fleet_argv_free(&a);
			rc = err_nomem();
			goto done;
		}
		rc = fleet_proc_run(a.v, out, sizeof out, err, sizeof err, limit_s, &status);
		fleet_argv_free(&a);
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
