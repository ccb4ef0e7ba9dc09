/* bench.c - the bench stage: detect devices, run the template's suite on the CPU and CUDA backends, write runs/<run-id>/run.yaml atomically. */
#include "bench.h"
#include "bench_machine.h"

#include "cpu/cpu.h"
#include "cuda_api.h"
#include "err.h"
#include "fsx.h"
#include "rng.h"
#include "sort.h"
#include "tmpl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- rows ---- */

/* A row for op at p with every figure NaN: the start of every row. */
static void bench_row_init(struct rec_row *row, const char *op, const char *variant,
			   const char *backend, int device, const struct op_params *p)
{
	memset(row, 0, sizeof *row);
	snprintf(row->op, sizeof row->op, "%s", op);
	snprintf(row->variant, sizeof row->variant, "%s", variant);
	snprintf(row->backend, sizeof row->backend, "%s", backend);
	row->device = device;
	for (int i = 0; p && i < p->n; i++)
		rec_row_param_set(row, p->keys[i], p->vals[i]);
	harness_stats(NULL, 0, row);
	row->bytes = row->flops = row->gbps = row->pct_peak = NAN;
	row->max_err = row->sm_clock_mhz = NAN;
	row->status = REC_OK;
}

static void bench_row_fail(struct rec_row *row, enum rec_status st, const char *why)
{
	row->status = st;
	snprintf(row->reason, sizeof row->reason, "%s", why);
}

static const char *variant_name(int cold)
{
	return cold ? "cold" : "hot";
}

/* ---- the CPU backend ---- */

/* The rows of an output of total rows that a check of want rows looks at
 * into rows (ascending), their count returned: every row when want is 0 or
 * total is at most want; else the first, the last (where tiles and splits
 * end) and want - 2 others drawn from seed. */
static size_t bench_check_pick(size_t total, int want, uint64_t seed, size_t *rows)
{
	struct rng r;
	size_t n = 0;
	if (want <= 0 || total <= (size_t)want) {
		for (size_t i = 0; i < total; i++)
			rows[n++] = i;
		return n;
	}
	rows[n++] = 0;
	rows[n++] = total - 1;
	rng_seed(&r, seed ^ 0x636865636b726f77ull); /* "checkrow" */
	while (n < (size_t)want) {
		size_t v = 1 + (size_t)(rng_open01(&r) * (double)(total - 2));
		int dup = 0;
		for (size_t k = 0; k < n && !dup; k++)
			dup = rows[k] == v;
		if (!dup && v < total - 1)
			rows[n++] = v;
	}
	qsort(rows, n, sizeof *rows, sort_cmp_size);
	return n;
}

/* Validates an instance: the reference (for every row, or for the rows
 * bench_check_pick names when the op can check some of them), poison, the
 * fast path over the whole output, compare. Fills *err and returns 0, or
 * returns the failing call's code (message set). */
static int bench_validate(const struct op_desc *op, void *inst, int check_rows, uint64_t seed,
			  double *err)
{
	size_t total = op->check_rows ? op->check_rows(inst) : 0, *rows = NULL, n = 0;
	int want = check_rows < 2 ? 2 : check_rows; /* the first and the last at least */
	int sampled = op->check_rows && check_rows > 0 && total > (size_t)want, rc;
	*err = NAN;
	if (sampled) {
		if (!(rows = malloc((size_t)want * sizeof *rows)))
			return err_nomem();
		n = bench_check_pick(total, want, seed, rows);
		rc = op->reference_rows(inst, rows, n);
	} else {
		rc = op->reference(inst);
	}
	if (rc) {
		rc = err_wrap(rc, "reference");
		goto done;
	}
	op->poison(inst);
	if ((rc = op->run_cpu(inst))) {
		rc = err_wrap(rc, "CPU path");
		goto done;
	}
	*err = sampled ? op->max_error_rows(inst, rows, n) : op->max_error(inst);
done:
	free(rows);
	return rc;
}

/* An instance of op at p into *inst: from run->keep (the previous point's,
 * or NULL; run's no longer) through op->setup_from when the op has one,
 * else a fresh setup after tearing the kept one down. */
static int bench_cpu_inputs(struct bench_cpu_run *run, const struct op_desc *op,
			    const struct op_params *p, void **inst)
{
	void *prev = run->keep_op == op ? run->keep : NULL;
	if (run->keep && !prev)
		run->keep_op->teardown(run->keep);
	run->keep = NULL;
	run->keep_op = NULL;
	if (op->setup_from)
		return op->setup_from(inst, prev, p, run->seed);
	if (prev)
		op->teardown(prev);
	return op->setup(inst, p, run->seed);
}

int bench_cpu_copy_gbps(struct bench_cpu_run *run, double mib, double *gbps)
{
	const struct op_desc *op = op_find("memcpy");
	struct op_params p = {0};
	struct harness_conf c = *run->hc;
	void *inst = NULL;
	double *s = NULL;
	int n = 0, rc;

	*gbps = NAN;
	op_param_set(&p, "mib", mib);
	c.cold = 0; /* the buffers dwarf the caches anyway */
	if (!(s = malloc((size_t)c.max_samples * sizeof *s))) {
		rc = err_nomem();
		goto done;
	}
	double t0 = harness_now_s();
	rc = bench_cpu_inputs(run, op, &p, &inst);
	if (run->spent)
		run->spent->setup_s += harness_now_s() - t0;
	if (rc || (rc = harness_time_cpu(&c, op->run_cpu, inst, NULL, s, c.max_samples, &n, NULL)))
		goto done;
	if (n > 0) {
		struct rec_row row;
		harness_stats(s, n, &row);
		*gbps = op->bytes(&p) / (row.median_us * 1e3);
		/* a copy has no spread of its own: its samples' is the host's
		 * (p10..p90 over 2 x 1.2816, robust sigma for normal noise) */
		run->host_rsd = n >= 3 && row.median_us > 0
					? (row.p90_us - row.p10_us) / (2 * 1.2816) / row.median_us
					: 0;
	}
	if (!(*gbps > 0))
		rc = err_set(DDT_EGENERIC, "no sample of the copy");
done:
	if (inst) { /* a memcpy row of the same size starts from it */
		run->keep = inst;
		run->keep_op = op;
	}
	free(s);
	return rc;
}

/* Times inst under run's conf into each row (filled: samples, statistics,
 * bandwidth, status); why (may be "") fails every row after timing. The
 * op has just run on inst before each row (the check's run of the fast
 * path, then the row before's last sample, which leaves the caches as hot
 * as a warmup would): that run is the row's first warmup. */
static void bench_cpu_time(struct bench_cpu_run *run, const struct op_desc *op, void *inst,
			   double err, const char *why, double *s, struct rec_row *rows, int nrows)
{
	for (int i = 0; i < nrows; i++) {
		struct rec_row *row = &rows[i];
		struct harness_conf c = *run->hc;
		int n = 0, stop = 0;
		c.warmup = c.warmup > 0 ? c.warmup - 1 : 0;
		c.cold = !strcmp(row->variant, "cold");
		c.host_rsd = run->host_rsd;
		row->max_err = err;
		cpu_threads_ran_reset();
		int rc = harness_time_cpu(&c, op->run_cpu, inst, run->flush, s, c.max_samples, &n,
					  &stop);
		rec_row_param_set(row, "threads", cpu_threads_ran());
		harness_stats(s, n, row);
		snprintf(row->stop, sizeof row->stop, "%s", harness_stop_name(stop));
		row->gbps = row->bytes / (row->median_us * 1e3);
		row->pct_peak = row->gbps / run->copy_gbps * 100;
		if (rc)
			bench_row_fail(row, REC_FAILED, err_msg());
		else if (why[0])
			bench_row_fail(row, REC_FAILED, why);
	}
}

int bench_cpu_measure(struct bench_cpu_run *run, const struct op_desc *op,
		      const struct op_params *p, int variants, struct rec_row *rows, int *nrows)
{
	struct bench_spent none = {0}, *spent = run->spent ? run->spent : &none;
	void *inst = NULL;
	double err = NAN, *s = NULL, t0;
	char why[160] = "";
	int rc = 0;

	*nrows = 0;
	for (int cold = 1; cold >= 0; cold--)
		if (variants & (cold ? BENCH_COLD : BENCH_HOT)) {
			struct rec_row *row = &rows[(*nrows)++];
			bench_row_init(row, op->name, variant_name(cold), "cpu", 0, p);
			rec_row_param_set(row, "threads", cpu_threads());
			row->bytes = op->bytes(p);
			row->flops = op->flops(p);
		}
	if (!op->run_cpu) {
		for (int i = 0; i < *nrows; i++)
			bench_row_fail(&rows[i], REC_UNSUPPORTED, "no CPU path");
		return 0;
	}
	if (!(s = malloc((size_t)run->hc->max_samples * sizeof *s)))
		return err_nomem();
	t0 = harness_now_s();
	rc = bench_cpu_inputs(run, op, p, &inst);
	spent->setup_s += harness_now_s() - t0;
	t0 = harness_now_s();
	if (!rc)
		rc = bench_validate(op, inst, run->check_rows, run->seed, &err);
	spent->check_s += harness_now_s() - t0;
	if (rc) {
		snprintf(why, sizeof why, "%s", err_msg());
		for (int i = 0; i < *nrows; i++)
			bench_row_fail(&rows[i], REC_FAILED, why);
		rc = 0; /* a failed op is a row, not a failed run */
		goto done;
	}
	if (!(err <= op->tol))
		snprintf(why, sizeof why, "max error %.3g over tolerance %.3g", err, op->tol);
	bench_cpu_time(run, op, inst, err, why, s, rows, *nrows);
done:
	if (inst && op->setup_from) {
		run->keep = inst; /* the next point of the sweep starts from it */
		run->keep_op = op;
	} else if (inst) {
		t0 = harness_now_s();
		op->teardown(inst);
		spent->setup_s += harness_now_s() - t0;
	}
	free(s);
	return rc;
}

void bench_cpu_run_end(struct bench_cpu_run *run)
{
	if (run->keep) {
		double t0 = harness_now_s();
		run->keep_op->teardown(run->keep);
		if (run->spent)
			run->spent->setup_s += harness_now_s() - t0;
	}
	run->keep = NULL;
	run->keep_op = NULL;
}

/* ---- the suite ---- */

struct bench_state {
	const struct bench_conf *bc;
	const struct bench_opts *o;
	struct run_record *r;
	struct harness_flush flush;
	struct bench_cpu_run cpu;
	int ncuda;
	char no_cuda[160];  /* why there are no CUDA devices */
	int done, total;    /* measurements, for the progress line */
};

static void bench_progress(struct bench_state *st, const char *op, const struct op_params *p,
			   const char *backend)
{
	char buf[120] = "";
	if (!st->o->progress)
		return;
	for (int i = 0, off = 0; i < p->n && off < (int)sizeof buf; i++)
		off += snprintf(buf + off, sizeof buf - (size_t)off, "%s%s=%g", i ? "," : "",
				p->keys[i], p->vals[i]);
	fprintf(stderr, "\r\033[K[%d/%d] %s %s %.60s", st->done + 1, st->total, backend, op, buf);
	fflush(stderr);
}

static int bench_selected(const char *only, const char *name)
{
	size_t n = strlen(name);
	if (!only)
		return 1;
	for (const char *s = only; *s;) {
		size_t len = strcspn(s, ",");
		if (len == n && !strncmp(s, name, n))
			return 1;
		s += len + (s[len] == ',');
	}
	return 0;
}

int bench_check_only(const char *only)
{
	char name[64];
	for (const char *s = only; s && *s;) {
		size_t len = strcspn(s, ",");
		snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), s);
		if (!op_find(name) && !bench_conf_is_cuda_only(name)) {
			char names[512];
			bench_conf_op_names(names, sizeof names);
			return err_set(DDT_EINPUT, "--ops: unknown op '%s' (the ops: %s)", name, names);
		}
		s += len + (s[len] == ',');
	}
	return 0;
}

static int bench_add_rows(struct run_record *r, const struct rec_row *rows, int n)
{
	for (int i = 0; i < n; i++)
		if (record_add_row(r, &rows[i]))
			return err_nomem();
	return 0;
}

/* One op table entry at one size point, on each backend it asks for. */
static int bench_point(struct bench_state *st, const struct bench_op *e, const struct op_desc *op,
		       const struct op_params *given)
{
	struct op_params p;
	struct rec_row rows[2];
	int n, rc;

	if (op_params_complete(op, given, &p)) {
		struct rec_row row;
		bench_row_init(&row, op->name, "cold", "cpu", 0, given);
		bench_row_fail(&row, REC_FAILED, err_msg());
		return bench_add_rows(st->r, &row, 1);
	}
	if (e->backends & BENCH_CPU) {
		bench_progress(st, op->name, given, "cpu");
		if ((rc = bench_cpu_measure(&st->cpu, op, &p, (int)e->variants, rows, &n)) ||
		    (rc = bench_add_rows(st->r, rows, n)))
			return rc;
		st->done++;
	}
	if (!(e->backends & BENCH_CUDA))
		return 0;
	bench_progress(st, op->name, given, "cuda");
	for (int cold = 1; cold >= 0; cold--) {
		if (!(e->variants & (cold ? BENCH_COLD : BENCH_HOT)))
			continue;
		struct harness_conf hc = st->bc->timing;
		hc.cold = cold;
		if (!st->ncuda) {
			bench_row_init(&rows[0], op->name, variant_name(cold), "cuda", 0, &p);
			bench_row_fail(&rows[0], REC_SKIPPED, st->no_cuda);
			if ((rc = bench_add_rows(st->r, rows, 1)))
				return rc;
		}
		for (int d = 0; d < st->ncuda; d++) {
			if ((rc = cuda_time_op(op, &p, d, &hc, st->bc->seed, &rows[0])))
				return rc;
			rows[0].device = 1 + d; /* the CPU is device 0 of the record */
			if ((rc = bench_add_rows(st->r, rows, 1)))
				return rc;
		}
	}
	st->done++;
	return 0;
}

/* The CUDA-only benchmarks: one call each over all of the entry's points. */
static int bench_cuda_only(struct bench_state *st, const struct bench_op *e)
{
	struct op_params p;
	struct harness_conf hc = st->bc->timing;
	struct rec_rows rows = {0};
	int dev = st->ncuda ? 1 : 0, rc = 0;

	hc.cold = 0;
	bench_conf_op_point(e, 0, &p);
	bench_progress(st, e->op, &p, "cuda");
	if (!strcmp(e->op, "allreduce")) {
		int ms[BENCH_MAX_POINTS], nm = 0, hidden = 7168;
		for (int i = 0; i < bench_conf_op_points(e); i++) {
			bench_conf_op_point(e, i, &p);
			ms[nm++] = (int)op_param(&p, "M", 9);
			hidden = (int)op_param(&p, "hidden", hidden);
		}
		rc = cuda_bench_allreduce(&rows, ms, nm, hidden, &hc, dev);
	} else {
		for (int i = 0; i < bench_conf_op_points(e) && !rc; i++) {
			bench_conf_op_point(e, i, &p);
			rc = cuda_bench_launch(&rows, &p, &hc, dev);
		}
	}
	if (!rc)
		rc = bench_add_rows(st->r, rows.rows, (int)rows.n);
	rec_rows_free(&rows);
	st->done++;
	return rc;
}

/* Sets the pool's threads: want (0: the online cores), at most the online
 * cores; more is said on stderr and capped (the rows record what ran). */
static void bench_set_threads(int want)
{
	int online = cpu_online_cores();
	if (want > online) {
		fprintf(stderr, "ddt bench: cpu.threads %d is more than the %d online cores: %d "
			"threads run\n", want, online, online);
		want = online;
	}
	cpu_threads_set(want);
}

/* The CPU as device 0 and each CUDA device after it. */
static int bench_devices(struct bench_state *st)
{
	struct rec_device d;
	int rc;

	cpu_device_detect(&d);
	/* every CPU row's %copy is a share of it: no figure, no run */
	double t0 = harness_now_s();
	rc = bench_cpu_copy_gbps(&st->cpu, st->bc->copy_mib, &d.copy_gbps);
	if (st->o->spent) {
		st->o->spent->probe_s += harness_now_s() - t0;
		st->o->spent->host_rsd = st->cpu.host_rsd;
	}
	if (rc)
		return err_wrap(rc, "cpu.copy_mib: the %g MiB copy that measures the CPU's "
			       "bandwidth failed (a smaller cpu.copy_mib, %g to %g MiB, may fit)",
			       st->bc->copy_mib, BENCH_COPY_MIB_MIN, BENCH_COPY_MIB_MAX);
	st->cpu.copy_gbps = d.copy_gbps;
	if ((rc = record_add_device(st->r, &d)))
		return rc;
	cuda_devices(&st->ncuda, st->no_cuda, sizeof st->no_cuda);
	for (int i = 0; i < st->ncuda; i++) {
		if (cuda_device_describe(i, &d)) {
			/* a device that cannot be described is not measured */
			fprintf(stderr, "ddt bench: %s\n", err_msg());
			snprintf(st->no_cuda, sizeof st->no_cuda, "%s", err_msg());
			st->ncuda = i;
			break;
		}
		if ((rc = record_add_device(st->r, &d)))
			return rc;
	}
	return 0;
}

int bench_run(const struct bench_conf *bc, const struct bench_opts *o, struct run_record *r)
{
	struct bench_state st = {.bc = bc, .o = o, .r = r};
	st.cpu = (struct bench_cpu_run){.seed = bc->seed, .hc = &bc->timing,
					.check_rows = bc->check_rows, .flush = &st.flush,
					.spent = o->spent};
	struct bench_machine_probe probe;
	int rc;

	if ((rc = bench_check_only(o->only)))
		return rc;
	bench_set_threads(bc->cpu_threads);
	bench_machine_begin(&probe);
	if ((rc = harness_flush_init(&st.flush, (size_t)(bc->flush_mib * 1048576.0))))
		return rc;
	if ((rc = bench_devices(&st)))
		goto done;
	for (int i = 0; i < bc->nops; i++)
		if (bench_selected(o->only, bc->ops[i].op))
			st.total += bench_conf_is_cuda_only(bc->ops[i].op)
					    ? 1
					    : bench_conf_op_points(&bc->ops[i]) *
						      (!!(bc->ops[i].backends & BENCH_CPU) +
						       !!(bc->ops[i].backends & BENCH_CUDA));
	for (int i = 0; i < bc->nops && !rc; i++) {
		const struct bench_op *e = &bc->ops[i];
		if (!bench_selected(o->only, e->op) || !e->backends)
			continue;
		if (bench_conf_is_cuda_only(e->op)) {
			rc = bench_cuda_only(&st, e);
			continue;
		}
		for (int k = 0; k < bench_conf_op_points(e) && !rc; k++) {
			struct op_params p;
			bench_conf_op_point(e, k, &p);
			rc = bench_point(&st, e, op_find(e->op), &p);
		}
	}
	if (o->progress)
		fprintf(stderr, "\r\033[K");
	/* whether the night was contended: judged later (regress.h) */
	bench_machine_end(&probe, st.ncuda, &r->machine);
done:
	bench_cpu_run_end(&st.cpu);
	harness_flush_free(&st.flush);
	cpu_alloc_trim();
	return rc;
}

/* ---- record ---- */

int bench_record_init(struct run_record *r, const char *template_name, const char *home)
{
	memset(r, 0, sizeof *r);
	r->schema = RECORD_SCHEMA;
	record_make_run_id(r->run_id, sizeof r->run_id, r->created, sizeof r->created);
	snprintf(r->template_name, sizeof r->template_name, "%s", template_name);
	cpu_provenance(&r->prov, home);
	cuda_versions(r->prov.cuda_runtime, r->prov.cuda_driver, r->prov.nccl,
		      sizeof r->prov.cuda_runtime);
	/* a runtime version means the CUDA backend is loaded in this run */
	if (r->prov.cuda_runtime[0] && strlen(r->prov.build) + 5 < sizeof r->prov.build)
		strcat(r->prov.build, "+cuda");
	return 0;
}

int bench_write_run(const struct run_record *r, const char *runs_dir, char *path, size_t len)
{
	char *final = NULL, *tmp = NULL, *file = NULL;
	int rc;

	if (!record_run_id_valid(r->run_id))
		return err_set(DDT_EINPUT, "run id '%s' is not a valid folder name", r->run_id);
	if ((rc = fsx_mkdir_p(runs_dir)))
		return rc;
	if (!(final = fsx_join(runs_dir, r->run_id))) {
		rc = err_nomem();
		goto done;
	}
	if (fsx_exists(final)) {
		rc = err_set(DDT_EIO, "%s already exists", final);
		goto done;
	}
	if ((rc = fsx_dir_begin(final, &tmp)))
		goto done;
	if (!(file = fsx_join(tmp, "run.yaml")))
		rc = err_nomem();
	else if (!(rc = record_write(r, file)))
		rc = fsx_dir_commit(tmp, final);
	if (rc && fsx_exists(tmp))
		fsx_rm_rf(tmp);
	if (!rc)
		snprintf(path, len, "%s", final);
done:
	free(final);
	free(tmp);
	free(file);
	return rc;
}

/* ---- the table ---- */

/* The row's params worth showing: those the template sets or sweeps differ
 * from run to run, the op's defaults do not; threads is a CPU setting. */
static void bench_params_short(const struct rec_row *w, char *buf, size_t len)
{
	const struct op_desc *op = op_find(w->op);
	size_t off = 0;
	buf[0] = '\0';
	for (int i = 0; i < w->nparams && off < len; i++) {
		const struct op_param_spec *s = op ? op->params : NULL;
		while (s && s->key && strcmp(s->key, w->params[i].key))
			s++;
		int dflt = s && s->key && s->dflt == w->params[i].val;
		int key_m = !strcmp(w->params[i].key, "M") || !strcmp(w->params[i].key, "B");
		if ((dflt && !key_m) || !strcmp(w->params[i].key, "threads"))
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%s=%g", off ? "," : "",
					w->params[i].key, w->params[i].val);
	}
}

static void bench_num(FILE *fp, double v, int width, int prec)
{
	if (isfinite(v))
		fprintf(fp, " %*.*f", width, prec, v);
	else
		fprintf(fp, " %*s", width, "-");
}

void bench_print_table(const struct run_record *r, FILE *fp)
{
	fprintf(fp, "%-11s %-12s %-26s %10s %10s %10s %8s %7s %9s  %s\n", "op", "device", "params",
		"median_us", "p10_us", "p90_us", "GB/s", "%copy", "max_err", "status");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct rec_row *w = &r->rows[i];
		char params[160], dev[64];
		const char *kind = (size_t)w->device < r->ndevices ? r->devices[w->device].kind : "?";
		bench_params_short(w, params, sizeof params);
		if (strlen(params) > 26)
			memcpy(params + 23, "...", 4);
		snprintf(dev, sizeof dev, "%s%d/%s", kind, w->device, w->variant);
		fprintf(fp, "%-11s %-12.12s %-26s", w->op, dev, params);
		bench_num(fp, w->median_us, 10, 1);
		bench_num(fp, w->p10_us, 10, 1);
		bench_num(fp, w->p90_us, 10, 1);
		bench_num(fp, w->gbps, 8, 2);
		bench_num(fp, w->pct_peak, 7, 1);
		if (isnan(w->max_err))
			fprintf(fp, " %9s", "-");
		else
			fprintf(fp, " %9.2e", w->max_err);
		fprintf(fp, "  %s%s%s\n", rec_status_name(w->status), w->reason[0] ? ": " : "",
			w->reason);
	}
}
