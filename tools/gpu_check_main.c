/* gpu_check_main.c - the program tools/gpu-check builds: runs a flattened GPU template through ddt's CUDA backend, one row at a time under a watchdog, and writes one TSV line per row.
 *
 * It reaches the kernels the way the nightly does: engine/cuda_load.c opens
 * the driver and then libddt-cuda.so (beside this program, or
 * $DDT_CUDA_BACKEND), so a loader or ABI fault shows here first. It links
 * the engine only (no YAML, PDF or spreadsheet libraries) and builds on a
 * GPU machine that has a CUDA toolkit and nothing else. tools/gpu-check
 * flattens templates/gpu.yaml into the plan it reads and prints the table.
 *
 * The rows run in a child process; this one watches it. A row whose result
 * has not come back within its limit (`watchdog`) is written as "timeout"
 * and the child is killed, which ends its CUDA context (the driver tears
 * down the context of a process that ends, hung kernel included); a child
 * that dies in a row gets that row written as failed. Either way a fresh
 * child takes the next row. Inside a child, a row that fails calls
 * cuda_recover: a kernel fault (a sticky error) resets the device so the
 * next rows run in a fresh context, and a reset that does not help ends the
 * child (exit 5) so that a fresh process takes the next row.
 *
 * usage: gpu-check PLAN OUT.tsv         run PLAN on GPU 0
 *        gpu-check --sim PLAN OUT.tsv   the same on the CPU simulator
 *                                       (engine/cuda/sim; validation only)
 *        gpu-check --count PLAN         check PLAN and print its rows
 * PLAN, one item per line, fields separated by tabs:
 *   seed     N
 *   timing   key=value ...            (space separated; harness_conf fields)
 *   watchdog SECONDS                  (each later row's limit; 60 at first)
 *   cases    all|sim|sim1             (cuda_cases.h, each validated twice;
 *                                     sim: those small enough for the CPU
 *                                     simulator, sim1: the first per op)
 *   validate NAME  k=v,k=v            (one size point, validated twice)
 *   once     NAME  k=v,k=v            (one run and nothing else: for ncu)
 *   op       NAME  cold|hot  k=v,k=v  (validated, timed, re-checked)
 *   allreduce HIDDEN  M1,M2,...
 *   launch   k=v,k=v
 *   ceiling  N                        (cuBLAS bf16 N x N x N: the tensor rate)
 * OUT.tsv starts with "#device" and "#ceiling" lines, then one line per row,
 * and ends with "#end" when the whole plan ran (rows that timed out
 * included).
 * --sim takes GPU_CHECK_SIM_INJECT=fault:N or hang:N: the first kernel
 * launch of the Nth row faults or never returns (sim_api.h), for the tests.
 * Exit status: 0 every row ok or skipped; 4 a row failed, timed out or is
 * unsupported; 1 no device or a bad plan; 3 out of memory; 143 stopped by
 * SIGTERM or SIGINT (the rows so far are written, "#end" is not).
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_api.h"
#include "cuda_cases.h"
#include "cuda_check.h"
#include "err.h"
#include "harness.h"
#include "op.h"
#include "rec.h"
#ifdef GC_SIM
#include "cuda/sim/sim_api.h"
#endif

#define GC_MAX_KEYS 512
#define GC_LINE 4096
#define GC_WATCHDOG_S 60.0 /* a row's limit until the plan says otherwise */
#define GC_START_S 120.0   /* a child's limit to open the device */
#define GC_LOST 5          /* a child's exit: the device still fails after a reset */

/* Where the rows run: the CUDA backend through ddt's loader, or the CPU
 * simulator (validation only). */
struct gc_dev {
	const struct op_cuda *(*path)(const char *op);
	int (*recover)(void);
	int sim;
};

/* One plan item: a setting (limit_s 0) or a row-writing line, the `cases`
 * line expanded into one `case INDEX` item per case. */
struct gc_item {
	char line[GC_LINE];
	int rows;       /* rows it writes */
	double limit_s; /* the watchdog's limit for the whole item; 0: a setting */
};

struct gc_plan {
	struct gc_item *items;
	int n, cap;
	long rows;
};

/* Parameter keys must outlive the op_params that point at them. */
static char *g_keys[GC_MAX_KEYS];
static int g_nkeys;

static const char *gc_key(const char *k)
{
	for (int i = 0; i < g_nkeys; i++)
		if (!strcmp(g_keys[i], k))
			return g_keys[i];
	if (g_nkeys == GC_MAX_KEYS)
		return NULL;
	return g_keys[g_nkeys++] = strdup(k);
}

/* "k=v,k=v" into p; returns 0 or -1. */
static int gc_params(const char *s, struct op_params *p)
{
	char buf[1024];
	memset(p, 0, sizeof *p);
	snprintf(buf, sizeof buf, "%s", s);
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		const char *key;
		if (!eq)
			return -1;
		*eq = '\0';
		if (!(key = gc_key(tok)) || op_param_set(p, key, strtod(eq + 1, NULL)))
			return -1;
	}
	return 0;
}

static int gc_timing(char *s, struct harness_conf *hc)
{
	for (char *save = NULL, *tok = strtok_r(s, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq)
			return -1;
		*eq++ = '\0';
		double v = strtod(eq, NULL);
		if (!strcmp(tok, "warmup"))
			hc->warmup = (int)v;
		else if (!strcmp(tok, "min_samples"))
			hc->min_samples = (int)v;
		else if (!strcmp(tok, "max_samples"))
			hc->max_samples = (int)v;
		else if (!strcmp(tok, "min_time_s"))
			hc->min_time_s = v;
		else if (!strcmp(tok, "target_rsd"))
			hc->target_rsd = v;
		else if (!strcmp(tok, "timeout_s"))
			hc->timeout_s = v;
		else if (!strcmp(tok, "min_clock_frac"))
			hc->min_clock_frac = v;
		else
			return -1;
	}
	return 0;
}

/* One TSV line: op variant backend status samples median p10 p90 bytes
 * flops gbps pct_peak max_err sm_clock params reason; status NULL: the
 * row's own. */
static void gc_write_row(FILE *fp, const struct rec_row *r, const char *status)
{
	char ps[512];
	fprintf(fp, "%s\t%s\t%s\t%s\t%d\t%.4f\t%.4f\t%.4f\t%.6g\t%.6g\t%.4f\t%.3f\t%.4g\t%.1f\t%s\t%s\n",
		r->op, r->variant, r->backend, status ? status : rec_status_name(r->status),
		r->samples, r->median_us, r->p10_us, r->p90_us, r->bytes, r->flops, r->gbps,
		r->pct_peak, r->max_err, r->sm_clock_mhz, rec_row_params_str(r, ps, sizeof ps),
		r->reason);
	fflush(fp);
}

static void gc_progress(const struct rec_row *r, const char *status)
{
	char ps[512];
	fprintf(stderr, "  %-10s %-11s %-44.44s %10.2f us %8.1f GB/s  %-7s %s\n", r->op, r->variant,
		rec_row_params_str(r, ps, sizeof ps), r->median_us, r->gbps,
		status ? status : rec_status_name(r->status), r->reason);
}

/* A row of op at p with every figure NaN. */
static void gc_row_init(struct rec_row *row, const char *op, const char *variant,
			const struct op_params *p)
{
	const struct op_desc *d = op_find(op);
	memset(row, 0, sizeof *row);
	snprintf(row->op, sizeof row->op, "%s", op);
	snprintf(row->variant, sizeof row->variant, "%s", variant);
	snprintf(row->backend, sizeof row->backend, "cuda");
	for (int i = 0; p && i < p->n; i++)
		rec_row_param_set(row, p->keys[i], p->vals[i]);
	row->median_us = row->p10_us = row->p90_us = row->min_us = row->max_us = NAN;
	row->stdev_us = row->gbps = row->pct_peak = row->max_err = row->sm_clock_mhz = NAN;
	row->bytes = d && d->bytes && p ? d->bytes(p) : NAN;
	row->flops = d && d->flops && p ? d->flops(p) : NAN;
}

/* The status and reason of a CUDA path that failed (err_msg() set), then
 * the device recovered (a fault resets it: the reason says so). Returns
 * what recover returned. */
static int gc_row_error(struct rec_row *row, const struct gc_dev *dev)
{
	row->status = strstr(err_msg(), "unsupported") ? REC_UNSUPPORTED : REC_FAILED;
	int rc = dev->recover();
	snprintf(row->reason, sizeof row->reason, "%s%s",
		 rc > 0 ? "device reset after: " : rc < 0 ? "device lost after: " : "", err_msg());
	return rc;
}

/* validate: op at p twice into poisoned outputs (cuda_check.h); within the
 * tolerance and the same error both times, else failed; unsupported sizes
 * are rows that do not pass either. Returns what recover returned. */
static int gc_validate(const struct gc_dev *dev, const struct op_desc *op,
		       const struct op_params *p, uint64_t seed, struct rec_row *row)
{
	const struct op_cuda *cu = dev->path(op->name);
	double e[2];
	gc_row_init(row, op->name, "validate", p);
	if (!cu) {
		row->status = REC_UNSUPPORTED;
		snprintf(row->reason, sizeof row->reason, "no CUDA path");
		return 0;
	}
	if (cuda_check(op, cu, p, seed, NULL, e))
		return gc_row_error(row, dev);
	row->max_err = e[0];
	if (!(e[0] <= op->tol)) {
		row->status = REC_FAILED;
		snprintf(row->reason, sizeof row->reason, "max error %.3g over the tolerance %.3g",
			 e[0], op->tol);
	} else if (e[1] != e[0]) {
		row->status = REC_FAILED;
		snprintf(row->reason, sizeof row->reason, "second run's error %.9g, the first's "
			 "%.9g: a race", e[1], e[0]);
	}
	return 0;
}

/* once: one run of op at p and nothing else (for a profiler). */
static int gc_once(const struct gc_dev *dev, const struct op_desc *op, const struct op_params *p,
		   uint64_t seed, struct rec_row *row)
{
	const struct op_cuda *cu = dev->path(op->name);
	void *inst = NULL, *dv = NULL;
	int rc = 0;
	gc_row_init(row, op->name, "profile", p);
	if (!cu) {
		row->status = REC_UNSUPPORTED;
		snprintf(row->reason, sizeof row->reason, "no CUDA path");
		return 0;
	}
	int bad = op->setup(&inst, p, seed) || cu->setup(&dv, inst) || cu->run(dv, NULL) ||
		  cu->fetch(dv, inst);
	if (dv)
		cu->teardown(dv);
	op->teardown(inst);
	if (bad)
		rc = gc_row_error(row, dev);
	return rc;
}

/* A row the simulator cannot produce (it validates, it does not time). */
static void gc_sim_skip(struct rec_row *row, const char *op, const char *variant,
			const struct op_params *p)
{
	gc_row_init(row, op, variant, p);
	row->status = REC_SKIPPED;
	snprintf(row->reason, sizeof row->reason, "the CPU simulator validates, it does not time");
}

/* A row-writing plan line (split into nf fields f) into rows of r; 0,
 * DDT_EINPUT for a bad line or DDT_ENOMEM. *lost is set when the device
 * still fails after a reset. */
static int gc_line(const struct gc_dev *dev, char **f, int nf, const struct harness_conf *hc,
		   uint64_t seed, struct rec_rows *r, FILE *out, int *lost)
{
	const struct op_desc *op = nf >= 2 ? op_find(f[1]) : NULL;
	struct op_params p;
	struct rec_row row;
	struct harness_conf h = *hc;

	if (!strcmp(f[0], "ceiling")) {
		double tflops = NAN;
		if (!dev->sim && cuda_tensor_tflops(atoi(f[1]), &tflops))
			fprintf(stderr, "gpu-check: the tensor ceiling failed: %s\n", err_msg());
		fprintf(out, "#ceiling\ttensor_tflops\t%.1f\n", tflops);
		fflush(out);
		*lost = !dev->sim && dev->recover() < 0;
		return 0;
	}
	if (!strcmp(f[0], "case")) {
		const struct cuda_case *c = &cuda_cases[atoi(f[1])];
		if (cuda_case_params(c, &p))
			return DDT_EINPUT;
		*lost = gc_validate(dev, op_find(c->op), &p, c->seed, &row) < 0;
	} else if (!strcmp(f[0], "validate") || !strcmp(f[0], "once")) {
		if (gc_params(f[2], &p))
			return DDT_EINPUT;
		*lost = (f[0][0] == 'v' ? gc_validate(dev, op, &p, seed, &row)
					: gc_once(dev, op, &p, seed, &row)) < 0;
	} else if (!strcmp(f[0], "op")) {
		if (gc_params(nf == 4 ? f[3] : "", &p))
			return DDT_EINPUT;
		h.cold = strcmp(f[2], "hot") != 0;
		if (dev->sim)
			gc_sim_skip(&row, op->name, f[2], &p);
		else if (cuda_time_op(op, &p, 0, &h, seed, &row))
			return DDT_ENOMEM;
		*lost = row.status == REC_FAILED && dev->recover() < 0;
	} else if (!strcmp(f[0], "allreduce")) {
		int ms[64], nm = 0;
		char *save = NULL;
		for (char *tok = strtok_r(f[2], ",", &save); tok && nm < 64;
		     tok = strtok_r(NULL, ",", &save))
			ms[nm++] = atoi(tok);
		h.cold = 0;
		if (!dev->sim)
			return cuda_bench_allreduce(r, ms, nm, atoi(f[1]), &h, 0);
		gc_sim_skip(&row, "allreduce", "nccl", NULL);
	} else {
		if (gc_params(nf >= 2 ? f[1] : "", &p))
			return DDT_EINPUT;
		h.cold = 0;
		if (!dev->sim)
			return cuda_bench_launch(r, &p, &h, 0);
		gc_sim_skip(&row, "launch", "step", &p);
	}
	return rec_rows_add(r, &row) ? DDT_ENOMEM : 0;
}

/* The device line: what every table names first. */
static int gc_device(FILE *out, const struct gc_dev *dev)
{
	struct rec_device d;
	char reason[160], rt[24], drv[24], nccl[24];
	int n = 0;

	if (dev->sim) {
		fprintf(out, "#device\tCPU simulator\tsim\t132\t0\t0\tnan\t-\t-\t\t1\n");
		return 0;
	}
	cuda_devices(&n, reason, sizeof reason);
	if (n == 0) {
		fprintf(stderr, "gpu-check: %s\n", reason);
		return 1;
	}
	if (cuda_device_describe(0, &d)) {
		fprintf(stderr, "gpu-check: %s\n", err_msg());
		return 1;
	}
	cuda_versions(rt, drv, nccl, sizeof rt);
	fprintf(stderr, "gpu-check: %s (%s, %d SMs, %.0f GB, %.0f MHz), copy %.0f GB/s; "
		"CUDA runtime %s, driver %s, NCCL %s; %d GPU(s)\n",
		d.name, d.arch, d.cores, d.mem_gb, d.sm_clock_mhz, d.copy_gbps, rt, drv,
		nccl[0] ? nccl : "none", n);
	fprintf(out, "#device\t%s\t%s\t%d\t%.1f\t%.0f\t%.1f\t%s\t%s\t%s\t%d\n", d.name, d.arch,
		d.cores, d.mem_gb, d.sm_clock_mhz, d.copy_gbps, rt, drv, nccl, n);
	fflush(out);
	return 0;
}

/* line's tab-separated fields into f (at most 4); returns how many. */
static int gc_split(char *line, char **f)
{
	int nf = 0;
	for (char *save = NULL, *tok = strtok_r(line, "\t", &save); tok && nf < 4;
	     tok = strtok_r(NULL, "\t", &save))
		f[nf++] = tok;
	return nf;
}

/* ---- the plan ---- */

static int gc_plan_add(struct gc_plan *pl, const char *line, int rows, double limit_s)
{
	if (pl->n == pl->cap) {
		int cap = pl->cap ? 2 * pl->cap : 64;
		struct gc_item *it = realloc(pl->items, (size_t)cap * sizeof *it);
		if (!it)
			return -1;
		pl->items = it;
		pl->cap = cap;
	}
	struct gc_item *it = &pl->items[pl->n++];
	snprintf(it->line, sizeof it->line, "%s", line);
	it->rows = rows;
	it->limit_s = limit_s;
	pl->rows += rows;
	return 0;
}

/* Whether case i is in the set named which: all, sim (small enough for the
 * simulator) or sim1 (the first of those per op); -1 for another name. */
static int gc_case_in(const char *which, int i)
{
	const struct cuda_case *c = &cuda_cases[i];
	if (!strcmp(which, "all"))
		return 1;
	if (strcmp(which, "sim") && strcmp(which, "sim1"))
		return -1;
	for (int k = 0; c->sim && which[3] && k < i; k++)
		if (cuda_cases[k].sim && !strcmp(cuda_cases[k].op, c->op))
			return 0;
	return c->sim;
}

/* A `cases` line: one `case INDEX` item per case of the set. */
static int gc_plan_cases(struct gc_plan *pl, const char *which, double watchdog_s)
{
	for (int i = 0; cuda_cases[i].op; i++) {
		char item[32];
		int in = gc_case_in(which, i);
		snprintf(item, sizeof item, "case\t%d", i);
		if (in < 0 || (in && gc_plan_add(pl, item, 1, watchdog_s)))
			return -1;
	}
	return 0;
}

/* Checks one plan line (op names, parameter keys; no device) and adds its
 * items; -1 for a bad line or no memory. */
static int gc_plan_line(struct gc_plan *pl, const char *line, double *watchdog_s)
{
	char copy[GC_LINE], *f[4] = {NULL, NULL, NULL, NULL};
	snprintf(copy, sizeof copy, "%s", line);
	int nf = gc_split(copy, f), n = 0;
	const struct op_desc *op = nf >= 2 ? op_find(f[1]) : NULL;
	struct op_params p;

	if (!strcmp(f[0], "seed") || !strcmp(f[0], "timing"))
		return nf == 2 ? gc_plan_add(pl, line, 0, 0) : -1;
	if (!strcmp(f[0], "watchdog") && nf == 2)
		return (*watchdog_s = strtod(f[1], NULL)) > 0 ? 0 : -1;
	if (!strcmp(f[0], "ceiling") && nf == 2)
		return atoi(f[1]) >= 256 ? gc_plan_add(pl, line, 0, *watchdog_s) : -1;
	if (!strcmp(f[0], "cases") && nf == 2)
		return gc_plan_cases(pl, f[1], *watchdog_s);
	if ((!strcmp(f[0], "validate") || !strcmp(f[0], "once")) && nf == 3 && op)
		n = gc_params(f[2], &p) ? -1 : 1;
	else if (!strcmp(f[0], "op") && nf >= 3 && op)
		n = gc_params(nf == 4 ? f[3] : "", &p) ? -1 : 1;
	else if (!strcmp(f[0], "allreduce") && nf == 3)
		for (const char *c = (n = 1, f[2]); *c; c++) /* one M more than commas */
			n += *c == ',';
	else if (!strcmp(f[0], "launch"))
		n = gc_params(nf >= 2 ? f[1] : "", &p) ? -1 : 5;
	else
		n = -1;
	return n < 0 ? -1 : gc_plan_add(pl, line, n, *watchdog_s * n);
}

/* Reads and checks the whole plan; 0, or 1 with the bad line printed. */
static int gc_plan_read(FILE *fp, struct gc_plan *pl)
{
	char line[GC_LINE];
	double watchdog_s = GC_WATCHDOG_S;
	while (fgets(line, sizeof line, fp)) {
		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		if (gc_plan_line(pl, line, &watchdog_s)) {
			fprintf(stderr, "gpu-check: bad plan line: %s\n", line);
			return 1;
		}
	}
	return 0;
}

/* ---- the child: runs items from start on ---- */

/* The row (1-based, counting row-writing items) whose first launch the
 * simulator faults or hangs: GPU_CHECK_SIM_INJECT=fault:N|hang:N. */
static void gc_inject(const struct gc_dev *dev, int row)
{
#ifdef GC_SIM
	const char *s = getenv("GPU_CHECK_SIM_INJECT");
	const char *colon = s ? strchr(s, ':') : NULL;
	if (dev->sim && colon && atoi(colon + 1) == row)
		sim_inject(!strncmp(s, "hang", 4) ? SIM_INJECT_HANG : SIM_INJECT_FAULT, 1);
#else
	(void)dev;
	(void)row;
#endif
}

/* Runs one row-writing item; its rows go to out and to stderr. Returns 0,
 * or 1 (a bad line), 3 (no memory) or GC_LOST; *failed set when a row did
 * not pass. */
static int gc_item_run(const struct gc_dev *dev, const struct gc_item *it,
		       const struct harness_conf *hc, uint64_t seed, FILE *out, int *failed)
{
	char copy[GC_LINE], *f[4] = {NULL, NULL, NULL, NULL};
	struct rec_rows r = {0};
	int lost = 0, rc;

	snprintf(copy, sizeof copy, "%s", it->line);
	int nf = gc_split(copy, f);
	if ((rc = gc_line(dev, f, nf, hc, seed, &r, out, &lost))) {
		fprintf(stderr, "gpu-check: %s: %s\n", rc == DDT_EINPUT ? "bad plan line" : err_msg(),
			it->line);
		rec_rows_free(&r);
		return rc == DDT_EINPUT ? 1 : 3;
	}
	for (size_t i = 0; i < r.n; i++) {
		gc_progress(&r.rows[i], NULL);
		gc_write_row(out, &r.rows[i], NULL);
		if (r.rows[i].status == REC_FAILED || r.rows[i].status == REC_UNSUPPORTED)
			*failed = 1;
	}
	rec_rows_free(&r);
	return lost ? GC_LOST : 0;
}

/* The child's life: the device, then items [start, n) (the settings before
 * start applied), "B i" and "E i" on the progress pipe around item i.
 * Returns the exit status: 0, 4 (a row did not pass), 1, 3 or GC_LOST. */
static int gc_child(const struct gc_plan *pl, int start, const char *outpath, int prog,
		    const struct gc_dev *dev)
{
	FILE *out = fopen(outpath, "a");
	struct harness_conf hc;
	uint64_t seed = 1;
	int failed = 0, rc = 0, row = 0;

	harness_conf_default(&hc);
	if (!out || (start == 0 && gc_device(out, dev)))
		return 1;
	for (int i = 0; i < pl->n && !rc; i++) {
		const struct gc_item *it = &pl->items[i];
		if (it->limit_s <= 0) { /* a setting: seed or timing */
			char copy[GC_LINE], *f[4] = {NULL, NULL, NULL, NULL};
			snprintf(copy, sizeof copy, "%s", it->line);
			gc_split(copy, f);
			if (!strcmp(f[0], "seed"))
				seed = strtoull(f[1], NULL, 10);
			else if (gc_timing(f[1], &hc))
				rc = 1;
			continue;
		}
		row += it->rows > 0;
		if (i < start)
			continue;
		dprintf(prog, "B %d\n", i);
		if (it->rows > 0)
			gc_inject(dev, row);
		rc = gc_item_run(dev, it, &hc, seed, out, &failed);
		dprintf(prog, "E %d\n", i);
	}
	fclose(out);
	return rc ? rc : failed ? 4 : 0;
}

/* ---- the watchdog ---- */

static volatile sig_atomic_t g_stop;

static void gc_on_stop(int sig)
{
	g_stop = sig;
}

/* The rows of item it written as not passing (status "timeout" or
 * "failed"), with the reason, by this process: the child is gone. */
static void gc_item_lost(const struct gc_item *it, const char *outpath, const char *status,
			 const char *reason)
{
	char copy[GC_LINE], *f[4] = {NULL, NULL, NULL, NULL};
	struct op_params p, *pp = NULL;
	struct rec_row row;
	const char *op = "ceiling", *variant = "tensor";
	FILE *out = fopen(outpath, "a");

	snprintf(copy, sizeof copy, "%s", it->line);
	int nf = gc_split(copy, f);
	if (!strcmp(f[0], "case") && !cuda_case_params(&cuda_cases[atoi(f[1])], &p))
		op = cuda_cases[atoi(f[1])].op, variant = "validate", pp = &p;
	else if ((!strcmp(f[0], "validate") || !strcmp(f[0], "once")) && !gc_params(f[2], &p))
		op = f[1], variant = f[0][0] == 'v' ? "validate" : "profile", pp = &p;
	else if (!strcmp(f[0], "op") && !gc_params(nf == 4 ? f[3] : "", &p))
		op = f[1], variant = f[2], pp = &p;
	else if (!strcmp(f[0], "allreduce") || !strcmp(f[0], "launch"))
		op = f[0], variant = "all";
	gc_row_init(&row, op, variant, pp);
	row.status = REC_FAILED;
	snprintf(row.reason, sizeof row.reason, "%s", reason);
	gc_progress(&row, status);
	if (out && it->rows > 0)
		gc_write_row(out, &row, status);
	if (out)
		fclose(out);
}

/* Reads the child's progress lines from buf (len bytes so far) into *cur
 * (the item running, -1 between items) and *next (the first item not yet
 * done); returns the bytes left unread. */
static size_t gc_progress_read(char *buf, size_t len, int *cur, int *next)
{
	char *nl, *p = buf;
	while ((nl = memchr(p, '\n', len - (size_t)(p - buf)))) {
		int i;
		if (sscanf(p, "B %d", &i) == 1)
			*cur = i;
		else if (sscanf(p, "E %d", &i) == 1)
			*cur = -1, *next = i + 1;
		p = nl + 1;
	}
	memmove(buf, p, len - (size_t)(p - buf));
	return len - (size_t)(p - buf);
}

static double gc_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* How one child ended. */
struct gc_end {
	int cur, next;   /* the item it was in (-1: none) and the first not done */
	int status;      /* its wait status */
	int timed_out;   /* killed by the watchdog */
};

/* Watches the child pid through its progress pipe fd: each item under its
 * limit (opening the device under GC_START_S); a late item or a stop
 * request kills it. Fills *e once it has ended. */
static void gc_watch(const struct gc_plan *pl, pid_t pid, int fd, int start, struct gc_end *e)
{
	char buf[512];
	size_t len = 0;
	double deadline = gc_now() + GC_START_S;
	int cur = -1;

	e->cur = -1, e->next = start, e->timed_out = 0;
	for (;;) {
		double left = deadline - gc_now();
		struct pollfd pf = {fd, POLLIN, 0};
		int r = g_stop ? 0 : poll(&pf, 1, left > 0 ? (int)(left * 1000) + 1 : 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) { /* past the deadline, or asked to stop */
			e->timed_out = !g_stop;
			kill(pid, SIGKILL);
			break;
		}
		ssize_t k = read(fd, buf + len, sizeof buf - len - 1);
		if (k <= 0)
			break;
		len = gc_progress_read(buf, len + (size_t)k, &e->cur, &e->next);
		if (e->cur != cur) /* a new item, or between two */
			deadline = gc_now() + (e->cur >= 0 ? pl->items[e->cur].limit_s : GC_START_S);
		cur = e->cur;
	}
	while (waitpid(pid, &e->status, 0) < 0 && errno == EINTR)
		;
}

/* Forks a child that runs items [start, n) and watches it; returns how it
 * ended in *e, or -1 when no child could be started. */
static int gc_spawn(const struct gc_plan *pl, int start, const char *outpath,
		    const struct gc_dev *dev, struct gc_end *e)
{
	int fd[2];
	pid_t pid;
	fflush(NULL);
	if (pipe(fd) || (pid = fork()) < 0) {
		perror("gpu-check");
		return -1;
	}
	if (pid == 0) {
		close(fd[0]);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		_exit(gc_child(pl, start, outpath, fd[1], dev));
	}
	close(fd[1]);
	gc_watch(pl, pid, fd[0], start, e);
	close(fd[0]);
	return 0;
}

/* Runs the whole plan, a fresh child after each one lost; returns the exit
 * status (the header's). */
static int gc_supervise(const struct gc_plan *pl, const char *outpath, const struct gc_dev *dev)
{
	int start = 0, failed = 0;
	char why[200];
	while (start < pl->n) {
		struct gc_end e;
		if (gc_spawn(pl, start, outpath, dev, &e))
			return 1;
		if (g_stop) {
			fprintf(stderr, "gpu-check: stopped by signal %d\n", (int)g_stop);
			return 143;
		}
		int code = WIFEXITED(e.status) ? WEXITSTATUS(e.status) : -1;
		if (e.cur < 0 && !e.timed_out && (code == 0 || code == 4) && e.next >= pl->n)
			return failed || code == 4 ? 4 : 0;
		if (e.cur < 0 && code == GC_LOST) { /* its last row lost the device */
			failed = 1, start = e.next;
			continue;
		}
		if (e.cur < 0) { /* it never reached a row, or a bad plan */
			fprintf(stderr, "gpu-check: the check process %s\n",
				e.timed_out ? "did not open the device in time" : "ended early");
			return code > 0 ? code : 1;
		}
		if (e.timed_out)
			snprintf(why, sizeof why, "timed out: no result within %.0f s (the watchdog "
				 "killed the check process, ending its CUDA context)",
				 pl->items[e.cur].limit_s);
		else
			snprintf(why, sizeof why, "the check process died in this row (%s %d)",
				 WIFSIGNALED(e.status) ? "signal" : "exit",
				 WIFSIGNALED(e.status) ? WTERMSIG(e.status) : code);
		gc_item_lost(&pl->items[e.cur], outpath, e.timed_out ? "timeout" : "failed", why);
		failed = 1, start = e.cur + 1;
	}
	return failed ? 4 : 0;
}

int main(int argc, char **argv)
{
	static const struct gc_dev cuda = {cuda_op_path, cuda_recover, 0};
	const struct gc_dev *dev = &cuda;
	struct gc_plan pl = {0};
	int count_only, rc;
	FILE *plan, *out;
#ifdef GC_SIM
	static const struct gc_dev sim = {sim_op_path, sim_recover, 1};
	if (argc >= 2 && !strcmp(argv[1], "--sim"))
		dev = &sim, argv++, argc--;
#endif
	count_only = argc == 3 && !strcmp(argv[1], "--count");
	if (argc != 3 || (!count_only && argv[1][0] == '-')) {
		fprintf(stderr, "usage: %s [--sim] PLAN OUT.tsv  run a plan on GPU 0 (the simulator)\n"
			"       %s --count PLAN          check a plan and print its rows (no GPU)\n",
			argv[0], argv[0]);
		return 1;
	}
	if (!(plan = fopen(argv[count_only ? 2 : 1], "r"))) {
		perror(argv[count_only ? 2 : 1]);
		return 1;
	}
	rc = gc_plan_read(plan, &pl);
	fclose(plan);
	if (!rc && count_only)
		printf("%ld\n", pl.rows);
	if (rc || count_only) {
		free(pl.items);
		return rc;
	}
	if (!(out = fopen(argv[2], "w"))) {
		perror(argv[2]);
		return 1;
	}
	fclose(out);
	signal(SIGTERM, gc_on_stop);
	signal(SIGINT, gc_on_stop);
	signal(SIGPIPE, SIG_IGN);
	rc = gc_supervise(&pl, argv[2], dev);
	if (rc == 0 || rc == 4) {
		if ((out = fopen(argv[2], "a")))
			fprintf(out, "#end\n"), fclose(out);
	}
	free(pl.items);
	return rc;
}
