/* gpu_check_main.c - the program tools/gpu-check builds: runs a flattened GPU template through the CUDA backend and writes one TSV line per row.
 *
 * It links only the engine and its CUDA objects (no YAML, PDF or spreadsheet
 * libraries), so it builds on a GPU machine that has a CUDA toolkit and
 * nothing else. tools/gpu-check flattens
 * templates/gpu.yaml into the plan it reads and prints the table.
 *
 * usage: gpu-check PLAN OUT.tsv     run PLAN on GPU 0
 *        gpu-check --count PLAN     check PLAN and print how many rows it asks for
 * PLAN, one item per line, fields separated by tabs:
 *   seed     N
 *   timing   key=value ...            (space separated; harness_conf fields)
 *   cases    all|sim                  (cuda_cases.h, each validated twice)
 *   validate NAME  k=v,k=v            (one size point, validated twice)
 *   once     NAME  k=v,k=v            (one run and nothing else: for ncu)
 *   op       NAME  cold|hot  k=v,k=v  (validated, timed, re-checked)
 *   allreduce HIDDEN  M1,M2,...
 *   launch   k=v,k=v
 *   ceiling  N                        (cuBLAS bf16 N x N x N: the tensor rate)
 * OUT.tsv starts with "#device" and "#ceiling" lines, then one line per row,
 * and ends with "#end" when the whole plan ran.
 * Exit status: 0 every row ok or skipped; 4 a row failed or is unsupported;
 * 1 no device or a bad plan; 3 out of memory.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_api.h"
#include "cuda_cases.h"
#include "cuda_check.h"
#include "err.h"
#include "harness.h"
#include "op.h"
#include "rec.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#define GC_MAX_KEYS 512

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
 * flops gbps pct_peak max_err sm_clock params reason. */
static void gc_write_row(FILE *fp, const struct rec_row *r)
{
	char ps[512];
	fprintf(fp, "%s\t%s\t%s\t%s\t%d\t%.4f\t%.4f\t%.4f\t%.6g\t%.6g\t%.4f\t%.3f\t%.4g\t%.1f\t%s\t%s\n",
		r->op, r->variant, r->backend, rec_status_name(r->status), r->samples, r->median_us,
		r->p10_us, r->p90_us, r->bytes, r->flops, r->gbps, r->pct_peak, r->max_err,
		r->sm_clock_mhz, rec_row_params_str(r, ps, sizeof ps), r->reason);
	fflush(fp);
}

static void gc_progress(const struct rec_row *r)
{
	char ps[512];
	fprintf(stderr, "  %-10s %-11s %-44.44s %10.2f us %8.1f GB/s  %-7s %s\n", r->op, r->variant,
		rec_row_params_str(r, ps, sizeof ps), r->median_us, r->gbps,
		rec_status_name(r->status), r->reason);
}

/* A row of op at p with every figure NaN. */
static void gc_row_init(struct rec_row *row, const struct op_desc *op, const char *variant,
			const struct op_params *p)
{
	memset(row, 0, sizeof *row);
	snprintf(row->op, sizeof row->op, "%s", op->name);
	snprintf(row->variant, sizeof row->variant, "%s", variant);
	snprintf(row->backend, sizeof row->backend, "cuda");
	for (int i = 0; i < p->n; i++)
		rec_row_param_set(row, p->keys[i], p->vals[i]);
	row->median_us = row->p10_us = row->p90_us = row->min_us = row->max_us = NAN;
	row->stdev_us = row->gbps = row->pct_peak = row->max_err = row->sm_clock_mhz = NAN;
	row->bytes = op->bytes ? op->bytes(p) : NAN;
	row->flops = op->flops ? op->flops(p) : NAN;
}

/* The status and reason of a CUDA path that failed (err_msg() set). */
static void gc_row_error(struct rec_row *row)
{
	row->status = strstr(err_msg(), "unsupported") ? REC_UNSUPPORTED : REC_FAILED;
	snprintf(row->reason, sizeof row->reason, "%s", err_msg());
}

/* validate: op at p twice into poisoned outputs (cuda_check.h); within the
 * tolerance and the same error both times, else failed; unsupported sizes
 * are rows that do not pass either. */
static void gc_validate(const struct op_desc *op, const struct op_params *p, uint64_t seed,
			struct rec_row *row)
{
	const struct op_cuda *cu = cuda_op_path(op->name);
	double e[2];
	gc_row_init(row, op, "validate", p);
	if (!cu) {
		row->status = REC_UNSUPPORTED;
		snprintf(row->reason, sizeof row->reason, "no CUDA path");
		return;
	}
	if (cuda_check(op, cu, p, seed, NULL, e)) {
		gc_row_error(row);
		return;
	}
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
}

/* once: one run of op at p and nothing else (for a profiler). */
static void gc_once(const struct op_desc *op, const struct op_params *p, uint64_t seed,
		    struct rec_row *row)
{
	const struct op_cuda *cu = cuda_op_path(op->name);
	void *inst = NULL, *dev = NULL;
	gc_row_init(row, op, "profile", p);
	if (!cu) {
		row->status = REC_UNSUPPORTED;
		snprintf(row->reason, sizeof row->reason, "no CUDA path");
		return;
	}
	if (op->setup(&inst, p, seed) || cu->setup(&dev, inst) || cu->run(dev, NULL) ||
	    cu->fetch(dev, inst))
		gc_row_error(row);
	if (dev)
		cu->teardown(dev);
	op->teardown(inst);
}

/* cases: every case of cuda_cases.h (all, or those small enough for the CPU
 * simulator: "sim") as validate rows, each at its own seed. */
static int gc_cases(const char *which, struct rec_rows *r)
{
	for (const struct cuda_case *c = cuda_cases; c->op; c++) {
		struct op_params p;
		struct rec_row row;
		if (!strcmp(which, "sim") && !c->sim)
			continue;
		if (cuda_case_params(c, &p))
			return DDT_EINPUT;
		gc_validate(op_find(c->op), &p, c->seed, &row);
		if (rec_rows_add(r, &row))
			return DDT_ENOMEM;
	}
	return 0;
}

/* Fills n bf16 values with uniform numbers in [-1, 1) (never zeros: a
 * product of zeros runs faster than real data). */
static void gc_fill_bf16(uint16_t *v, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		float f = (float)((double)(x >> 11) / 9007199254740992.0 * 2.0 - 1.0);
		uint32_t u;
		memcpy(&u, &f, sizeof u);
		v[i] = (uint16_t)(u >> 16);
	}
}

/* The tensor ceiling: cuBLAS bf16 n x n x n products (fp32 accumulation,
 * random data) after 3 warm-ups, the mean of 10 timed with events; writes
 * TFLOP/s to *tflops. Returns 0, or -1 with the failure printed. */
static int gc_ceiling(int n, double *tflops)
{
	size_t elems = (size_t)n * n;
	uint16_t *host = malloc(elems * sizeof *host);
	void *m[3] = {NULL, NULL, NULL};
	cublasHandle_t h = NULL;
	cudaEvent_t ev[2] = {NULL, NULL};
	const float one = 1.0f, zero = 0.0f;
	float ms = 0;
	int rc = -1;

	if (!host || cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
		goto done;
	for (int i = 0; i < 3; i++) {
		if (cudaMalloc(&m[i], elems * 2) != cudaSuccess)
			goto done;
		gc_fill_bf16(host, elems, (uint64_t)i + 1);
		if (cudaMemcpy(m[i], host, elems * 2, cudaMemcpyHostToDevice) != cudaSuccess)
			goto done;
	}
	if (cudaEventCreate(&ev[0]) != cudaSuccess || cudaEventCreate(&ev[1]) != cudaSuccess)
		goto done;
	for (int i = 0; i < 13; i++) {
		if (i == 3 && cudaEventRecord(ev[0], 0) != cudaSuccess)
			goto done;
		if (cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, m[0], CUDA_R_16BF, n,
				 m[1], CUDA_R_16BF, n, &zero, m[2], CUDA_R_16BF, n,
				 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
			goto done;
	}
	if (cudaEventRecord(ev[1], 0) != cudaSuccess || cudaEventSynchronize(ev[1]) != cudaSuccess ||
	    cudaEventElapsedTime(&ms, ev[0], ev[1]) != cudaSuccess || !(ms > 0))
		goto done;
	*tflops = 2.0 * n * (double)n * n * 10 / (ms * 1e-3) / 1e12;
	rc = 0;
done:
	if (rc)
		fprintf(stderr, "gpu-check: the tensor ceiling (cuBLAS bf16 %d^3) failed: %s\n", n,
			cudaGetErrorString(cudaGetLastError()));
	for (int i = 0; i < 2; i++)
		if (ev[i])
			cudaEventDestroy(ev[i]);
	for (int i = 0; i < 3; i++)
		cudaFree(m[i]);
	if (h)
		cublasDestroy(h);
	free(host);
	return rc;
}

/* One plan line of nf tab-separated fields f into r; 0, DDT_EINPUT for a bad
 * line, or DDT_ENOMEM. */
static int gc_line(char **f, int nf, struct harness_conf *hc, uint64_t *seed,
		   struct rec_rows *r, FILE *out)
{
	const struct op_desc *op = nf >= 2 ? op_find(f[1]) : NULL;
	struct op_params p;
	struct rec_row row;
	struct harness_conf h = *hc;

	if (!strcmp(f[0], "seed") && nf == 2) {
		*seed = strtoull(f[1], NULL, 10);
		return 0;
	}
	if (!strcmp(f[0], "timing") && nf == 2)
		return gc_timing(f[1], hc) ? DDT_EINPUT : 0;
	if (!strcmp(f[0], "ceiling") && nf == 2) {
		double tflops = NAN;
		if (atoi(f[1]) < 256)
			return DDT_EINPUT;
		gc_ceiling(atoi(f[1]), &tflops);
		fprintf(out, "#ceiling\ttensor_tflops\t%.1f\n", tflops);
		fflush(out);
		return 0;
	}
	if (!strcmp(f[0], "cases") && nf == 2)
		return gc_cases(f[1], r);
	if ((!strcmp(f[0], "validate") || !strcmp(f[0], "once")) && nf == 3 && op) {
		if (gc_params(f[2], &p))
			return DDT_EINPUT;
		if (f[0][0] == 'v')
			gc_validate(op, &p, *seed, &row);
		else
			gc_once(op, &p, *seed, &row);
		return rec_rows_add(r, &row) ? DDT_ENOMEM : 0;
	}
	if (!strcmp(f[0], "op") && nf >= 3 && op) {
		if (gc_params(nf == 4 ? f[3] : "", &p))
			return DDT_EINPUT;
		h.cold = strcmp(f[2], "hot") != 0;
		if (cuda_time_op(op, &p, 0, &h, *seed, &row))
			return DDT_ENOMEM;
		return rec_rows_add(r, &row) ? DDT_ENOMEM : 0;
	}
	if (!strcmp(f[0], "allreduce") && nf == 3) {
		int ms[64], nm = 0;
		char *save = NULL;
		for (char *tok = strtok_r(f[2], ",", &save); tok && nm < 64;
		     tok = strtok_r(NULL, ",", &save))
			ms[nm++] = atoi(tok);
		h.cold = 0;
		return cuda_bench_allreduce(r, ms, nm, atoi(f[1]), &h, 0);
	}
	if (!strcmp(f[0], "launch")) {
		if (gc_params(nf >= 2 ? f[1] : "", &p))
			return DDT_EINPUT;
		h.cold = 0;
		return cuda_bench_launch(r, &p, &h, 0);
	}
	return DDT_EINPUT;
}

/* The device line: what every table names first. */
static int gc_device(FILE *out)
{
	struct rec_device d;
	char reason[160], rt[24], drv[24], nccl[24];
	int n = 0;

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

/* How many rows one plan line asks for, checked without a device (op names,
 * parameter keys); -1 for a bad line. */
static int gc_count_line(char **f, int nf)
{
	const struct op_desc *op = nf >= 2 ? op_find(f[1]) : NULL;
	struct op_params p;
	int n = 0;

	if (!strcmp(f[0], "seed") || !strcmp(f[0], "timing") || !strcmp(f[0], "ceiling"))
		return nf == 2 ? 0 : -1;
	if (!strcmp(f[0], "cases") && nf == 2) {
		for (const struct cuda_case *c = cuda_cases; c->op; c++)
			n += !strcmp(f[1], "all") || c->sim;
		return n;
	}
	if ((!strcmp(f[0], "validate") || !strcmp(f[0], "once")) && nf == 3 && op)
		return gc_params(f[2], &p) ? -1 : 1;
	if (!strcmp(f[0], "op") && nf >= 3 && op)
		return gc_params(nf == 4 ? f[3] : "", &p) ? -1 : 1;
	if (!strcmp(f[0], "allreduce") && nf == 3) {
		for (const char *c = f[2]; *c; c++)
			n += *c == ',';
		return n + 1;
	}
	if (!strcmp(f[0], "launch"))
		return gc_params(nf >= 2 ? f[1] : "", &p) ? -1 : 1;
	return -1;
}

/* Runs (or with out NULL, counts) every line of plan; returns 0 (every row
 * ok or skipped), 4 (a row failed or is unsupported), 1 (a bad line) or 3. */
static int gc_plan(FILE *plan, FILE *out, long *count)
{
	struct harness_conf hc;
	struct rec_rows r = {0};
	char line[4096];
	uint64_t seed = 1;
	int status = 0, failed = 0;

	harness_conf_default(&hc);
	while (fgets(line, sizeof line, plan)) {
		char *f[4] = {NULL, NULL, NULL, NULL}, copy[4096];
		size_t before = r.n;
		int nf, rc;
		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		snprintf(copy, sizeof copy, "%s", line);
		nf = gc_split(line, f);
		if (!out) {
			if ((rc = gc_count_line(f, nf)) < 0)
				status = 1;
			*count += rc < 0 ? 0 : rc;
		} else if ((rc = gc_line(f, nf, &hc, &seed, &r, out))) {
			status = rc == DDT_EINPUT ? 1 : 3;
		}
		if (status) {
			fprintf(stderr, "gpu-check: %s: %s\n", status == 1 ? "bad plan line" : err_msg(),
				copy);
			break;
		}
		for (size_t i = before; i < r.n; i++) {
			gc_progress(&r.rows[i]);
			gc_write_row(out, &r.rows[i]);
			if (r.rows[i].status == REC_FAILED || r.rows[i].status == REC_UNSUPPORTED)
				failed = 4;
		}
	}
	if (out && !status)
		fprintf(out, "#end\n");
	rec_rows_free(&r);
	return status ? status : failed;
}

int main(int argc, char **argv)
{
	FILE *plan, *out = NULL;
	long count = 0;
	int count_only = argc == 3 && !strcmp(argv[1], "--count"), rc;

	if (argc != 3) {
		fprintf(stderr, "usage: %s PLAN OUT.tsv    run a plan on GPU 0\n"
			"       %s --count PLAN       check a plan and print its rows (no GPU)\n",
			argv[0], argv[0]);
		return 1;
	}
	if (!(plan = fopen(argv[count_only ? 2 : 1], "r")) ||
	    (!count_only && !(out = fopen(argv[2], "w")))) {
		perror("gpu-check");
		return 1;
	}
	if (!count_only && gc_device(out))
		return 1;
	rc = gc_plan(plan, out, &count);
	if (count_only && rc == 0)
		printf("%ld\n", count);
	fclose(plan);
	if (out)
		fclose(out);
	return rc;
}
