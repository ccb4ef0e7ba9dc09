/* fleet.h - one nightly across many nodes with Slurm: a job array of `ddt bench`
 * (one task per node), the multi-node all-reduce job, and the dependent merge
 * that turns every node's run record into one set of documents with a
 * cross-device table (the transfer backtest).
 *
 * Where things live (everything on the shared runs/ folder, so no locks are
 * needed across nodes: each task writes only its own files):
 *
 *   runs/<run-id>/                one folder per node and night, as `ddt bench`
 *                                 writes it (moved in whole by the task), with
 *                                 the calibration and template it used and,
 *                                 after the merge, that node's verdicts.yaml
 *   runs/.fleet/<fleet-id>/       the night's working folder, also the merged
 *                                 run folder the documents are rendered from
 *                                 (a dot-name, so history never reads it as a
 *                                 night of its own):
 *       fleet.yaml                the plan: nodes, paths, job ids
 *       task.sh, allreduce.sh, merge.sh, logs/   the jobs and their Slurm logs
 *       tasks/<i>.yaml            what array task i did (fleet_task)
 *       tasks/<i>.log             its bench's output
 *       tasks/claims/<node>.<k>   a node's slots, claimed by the task measuring it
 *       allreduce/nodes-<k>.yaml  all-reduce run records, k nodes each
 *       allreduce/status.txt      launches made, skipped (one rank) and failed
 *       run.yaml                  the merged run record
 *       verdicts.yaml, projection.yaml, calibration/, template/
 *       devices.txt, devices.csv  the per-device sections and the cross-device table
 *       merge.yaml, merge.txt     the merge's outcome, exit status and summary
 *   reports/<fleet-id>/           the documents, devices.txt and devices.csv
 */
#ifndef DDT_FLEET_H
#define DDT_FLEET_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#include "paths.h"
#include "record.h"
#include "tmpl.h"
#include "ydoc.h"
#include "yschema.h"

#define FLEET_MAX_M 16
#define FLEET_MAX_NODES 1024

/* ---- the template's `fleet:` section ---- */

struct fleet_conf {
	double task_time_min;    /* an array task past this is killed: "hung" (--time overrides) */
	double start_within_min; /* a task not started by then is cancelled: "never started" */
	double merge_time_min;   /* the merge job's limit */
	double poll_s;           /* how often the submitter asks Slurm about the merge */
	int nm;
	int allreduce_m[FLEET_MAX_M]; /* verify widths M: one all-reduce is M x hidden bf16 */
	int allreduce_hidden;
	char source[320];
};

/* Loads and checks the `fleet:` section of t (every key required, unknown keys
 * are errors; problems to diag as file:line:col). Returns 0 or DDT_EINPUT
 * (also when the section is missing). */
int fleet_conf_load(struct fleet_conf *c, const struct tmpl *t, struct ydiag *diag);

/* ---- one array task's account of itself: tasks/<i>.yaml ---- */

enum fleet_task_state {
	FT_RUNNING,    /* started; no end written (still running, or killed hard) */
	FT_DONE,       /* bench finished and its run folder is in runs/ */
	FT_FAILED,     /* bench failed or left no run record */
	FT_TERMINATED, /* SIGTERM arrived first (time limit, scancel) */
	FT_DUPLICATE,  /* another task of the night already measured this node */
	FT_COUNT
};

struct fleet_task {
	int task;                 /* array index */
	char node[64];            /* Slurm node name (SLURMD_NODENAME, else the host) */
	char job_id[32];          /* "<array job>_<task>" */
	char started[24], ended[24]; /* ISO 8601 UTC; ended "" while running */
	enum fleet_task_state state;
	int exit_code;            /* bench's exit status; -1: none (signal, not run) */
	char run_id[80];          /* the run folder it produced, "" for none */
	char reason[240];         /* one line: why not done; "" when done */
};

const char *fleet_task_state_name(enum fleet_task_state s);
/* Writes t as YAML to path atomically. Returns 0 or DDT_EIO/DDT_ENOMEM. */
int fleet_task_write(const struct fleet_task *t, const char *path);
/* Reads a task file; problems to diag. Returns 0, DDT_EINPUT or DDT_EIO. */
int fleet_task_read(struct fleet_task *t, const char *path, struct ydiag *diag);

/* ---- the plan: fleet.yaml ---- */

struct fleet_plan {
	char id[80];                   /* YYYYMMDDTHHMMSSZ-fleet-<host>: a valid run id */
	char created[24];
	char ddt[PATH_MAX];            /* the ddt binary every job runs */
	char home[PATH_MAX];
	char runs[PATH_MAX], reports[PATH_MAX];
	char calibration[PATH_MAX], template_path[PATH_MAX]; /* the merge's */
	char bench_template[PATH_MAX]; /* each task's; "" : bench picks per node (gpu or cpu) */
	char bench_command[1024];      /* "" : `<ddt> bench` */
	char partition[64];            /* "" : the cluster's default */
	char time_limit[32];           /* per task, Slurm syntax ("90", "1:30:00") */
	char gres[64];                 /* --gres of the bench and all-reduce jobs ("gpu:8"); "" none */
	int exclusive;                 /* each task holds its node alone */
	int allreduce;                 /* the multi-node all-reduce job was submitted */
	char mpi_launcher[16];         /* "srun" (--mpi=pmix), "mpirun", or "" : srun when
					* Slurm has the PMIx plugin, else mpirun */
	char array_job[32], allreduce_job[32], merge_job[32];
	int nnodes;
	char (*nodes)[64];             /* [nnodes] one task each, in task order */
};

/* fleet.yaml's keys, whose mpi_launcher --mpi-launcher takes too. */
extern const struct yschema fleet_plan_schema;

/* Writes / reads fleet.yaml (atomically; problems to diag). fleet_plan_free
 * releases nodes; read zeroes p first and must be followed by free. */
int fleet_plan_write(const struct fleet_plan *p, const char *path);
int fleet_plan_read(struct fleet_plan *p, const char *path, struct ydiag *diag);
void fleet_plan_free(struct fleet_plan *p);
/* Appends a node name; returns 0, DDT_EINPUT (bad name, too many) or DDT_ENOMEM. */
int fleet_plan_add_node(struct fleet_plan *p, const char *node);
/* A fleet id for now and this host into id (len >= 80). */
void fleet_make_id(char *id, size_t len, char *created, size_t clen);

/* Minutes of a Slurm time limit ("MM", "MM:SS", "HH:MM:SS", "D-HH",
 * "D-HH:MM", "D-HH:MM:SS"), seconds rounded up. Returns 0 or -1 (not one). */
int fleet_time_min(const char *s, double *min);

/* ---- the merge: what each node gave ---- */

/* The outcome of one planned node. */
struct fleet_node {
	char node[64];
	int task;                 /* the task that measured it; -1 when none did */
	int ok;                   /* a run record is in hand */
	char run_id[80];
	char reason[320];         /* why it failed: named, one line */
};

/* Each array task's state from the text of `sacct -n -P -X -o JobID,State`
 * or of `scontrol -o show job` into out[0..ntasks) (tasks not named are left
 * as they are). Pure; cannot fail. */
void fleet_task_states_parse(char (*out)[32], int ntasks, const char *text);

/* Decides each planned node's outcome from the task files (tasks[ntasks],
 * any order) and what Slurm says: slurm_state[i] is the final state of array
 * task i ("COMPLETED", "TIMEOUT", "DEADLINE", ...; NULL or "" when unknown)
 * and node_state the sinfo state of each planned node (NULL when unknown).
 * out has p->nnodes entries. A node measured by a task in state done is ok;
 * otherwise its reason names what happened: the bench failed (exit code and
 * reason), hung past its time limit, was killed, or no task ever started there
 * (with the states of the tasks that never started). Pure; cannot fail. */
void fleet_nodes_decide(struct fleet_node *out, const struct fleet_plan *p,
			const struct fleet_task *tasks, size_t ntasks,
			const char *const *slurm_state, const char *const *node_state);

/* Folds run records into one: every device of every record (names suffixed
 * " @<node>" so two nodes with the same GPU stay apart), every row with its
 * device index remapped, and for every failed node a device of kind "node"
 * and one failed row (op "node", variant the node name, backend "slurm") whose
 * reason names the node; these come after every record's devices and rows. recs[i] belongs to node_of[i]. out gets run id id,
 * created, template_name and provenance from the first record (host: this
 * host; build: "mixed" when the records disagree). Returns 0 or DDT_ENOMEM;
 * out zeroed first, free with record_free. */
int fleet_merge_records(struct run_record *out, const char *id, const char *created,
			const struct run_record *recs, const char *const *node_of, size_t nrecs,
			const struct fleet_node *failed, size_t nfailed);

/* ---- the cross-device table: the transfer backtest ---- */

/* One kernel (op, variant, backend, params) measured on target and on source
 * tonight: target's time projected from source's by the ratio of the devices'
 * measured copy bandwidth, and how far that lands from what target measured. */
struct fleet_xrow {
	char op[32], variant[32], backend[8];
	char params[256];
	int target, source;       /* device indexes of the record */
	double measured_us;       /* on target */
	double source_us;         /* on source */
	double projected_us;      /* source_us x source copy_gbps / target copy_gbps */
	double err_pct;           /* (projected - measured) / measured x 100 */
	double factor;            /* measured / projected: the transfer factor of [aic-095f58a-moe] */
};

/* One (target, source) pair over every kernel both measured. */
struct fleet_xpair {
	int target, source;
	int n;
	double median_abs_err_pct, median_factor;
};

struct fleet_xtable {
	size_t n;
	struct fleet_xrow *rows;  /* by kernel (first appearance), then target, then source */
	size_t npairs;
	struct fleet_xpair *pairs;
	size_t nskipped_devices;  /* devices without a measured copy bandwidth */
};

/* Builds the table from a (merged) record: rows with status ok, a positive
 * median, bytes > 0 and a compute backend (communication rows, backend nccl
 * or mpi, are bound by links, not device memory) whose kernel was measured on
 * at least two devices that each have a measured copy bandwidth. Returns 0 or
 * DDT_ENOMEM; out zeroed first, free with fleet_xtable_free. */
int fleet_xtable_build(struct fleet_xtable *out, const struct run_record *r);
void fleet_xtable_free(struct fleet_xtable *t);

/* The documents the merge owns: devices.txt (a section per device, the
 * cross-device table, the all-reduce across nodes, the failed nodes) and
 * devices.csv (the cross-device table, one row per (kernel, target, source)).
 * verdict_of(row index) may be NULL; else it names the row's verdict tonight. */
void fleet_write_devices_text(FILE *fp, const struct run_record *r, const struct fleet_xtable *x,
			      const struct fleet_node *nodes, size_t nnodes,
			      const char *(*verdict_of)(void *ctx, size_t row), void *ctx);
void fleet_write_devices_csv(FILE *fp, const struct run_record *r, const struct fleet_xtable *x);

/* busbw of an all-reduce over ranks ranks: algbw x 2 (ranks - 1) / ranks
 * (nccl-tests' definition: the bandwidth each link sees in a ring). */
double fleet_busbw(double algbw_gbps, int ranks);

/* ---- the jobs (submitted by fleet_slurm.c, run by fleet_jobs.c; the merge is fleet_merge.c) ---- */

/* What a night across the cluster is asked for ("" and 0: the defaults). */
struct fleet_opts {
	struct paths paths;      /* paths.template_given: every node's bench uses it */
	char partition[64];      /* Slurm partition */
	char nodes[4096];        /* nodes to measure, Slurm hostlist syntax */
	char time_limit[32];     /* each node's bench limit, Slurm syntax */
	char bench_command[1024];/* each task runs this instead of `ddt bench` */
	char mpi_launcher[16];   /* "srun", "mpirun" */
	char gres[64];           /* generic resources each task asks for ("gpu:8") */
	int shared;              /* tasks do not hold their node alone */
	int quiet;               /* print only when the night is not clean */
	int no_wait;             /* print the job ids and return at once */
	int no_allreduce;        /* no all-reduce job */
};

/* Submits the night: the array of benches (one task per node), the
 * all-reduce and the merge (afterany), writing the plan into
 * runs/.fleet/<fleet-id>/; then waits for the merge unless o->no_wait and
 * prints its summary. *status receives the night's exit status. Returns 0
 * or the error that stopped it (message set). */
int fleet_submit(const struct fleet_opts *o, int *status);

/* The bodies of the array task and of the all-reduce job run by Slurm in
 * the fleet folder dir (`ddt fleet task|allreduce DIR`). Return the exit
 * status, an error printed as "ddt fleet task: message". */
int fleet_task_run(const char *dir);
int fleet_allreduce_run(const char *dir);

/* The merge (`ddt fleet merge DIR`): everything after the night's jobs,
 * whatever became of them; *status receives the night's exit status (1 a
 * node or stage failed, 4 a kernel failed, 3 a regression, 0). Writes
 * DIR/merge.yaml even when it fails. Returns 0 or the error that stopped it. */
int fleet_merge(const char *dir, int *status);

/* The working folder of fleet id under runs. malloc'd; NULL on allocation failure. */
char *fleet_dir_of(const char *runs, const char *id);

#endif
