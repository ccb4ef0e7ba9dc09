/* gpu_check_main.c - the program tools/gpu-check builds: runs a flattened GPU template through the CUDA backend and writes one TSV line per row.
 *
 * It links only the engine and its CUDA objects (no YAML, PDF or spreadsheet
 * libraries), so it builds on a GPU machine that has a CUDA toolkit and
 * nothing else. tools/gpu-check flattens
 * templates/gpu.yaml into the plan it reads and prints the table.
 *
 * usage: gpu-check PLAN OUT.tsv
 * PLAN, one item per line, fields separated by tabs:
 *   seed     N
 *   timing   key=value ...            (space separated; harness_conf fields)
 *   op       NAME  cold|hot  k=v,k=v  (one size point of an op-table op)
 *   allreduce HIDDEN  M1,M2,...
 *   launch   k=v,k=v
 * Exit status: 0 every row ok, skipped or unsupported; 4 a row failed
 * (validation or run); 1 no device or a bad plan; 3 out of memory.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_api.h"
#include "err.h"
#include "harness.h"
#include "op.h"
#include "result.h"

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

int main(int argc, char **argv)
{
	struct harness_conf hc;
	struct result_rows r = {0};
	struct rec_device d;
	char line[4096], reason[160], rt[24], drv[24], nccl[24];
	uint64_t seed = 1;
	int n = 0, status = 0;
	FILE *plan, *out;

	if (argc != 3) {
		fprintf(stderr, "usage: %s PLAN OUT.tsv\n", argv[0]);
		return 1;
	}
	if (!(plan = fopen(argv[1], "r")) || !(out = fopen(argv[2], "w"))) {
		perror("gpu-check");
		return 1;
	}
	harness_conf_default(&hc);
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

	while (fgets(line, sizeof line, plan)) {
		char *f[4] = {NULL, NULL, NULL, NULL};
		int nf = 0;
		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		for (char *save = NULL, *tok = strtok_r(line, "\t", &save); tok && nf < 4;
		     tok = strtok_r(NULL, "\t", &save))
			f[nf++] = tok;
		size_t before = r.n;
		int rc = 0;
		if (!strcmp(f[0], "seed") && nf == 2) {
			seed = strtoull(f[1], NULL, 10);
			continue;
		} else if (!strcmp(f[0], "timing") && nf == 2) {
			if (gc_timing(f[1], &hc))
				goto bad;
			continue;
		} else if (!strcmp(f[0], "op") && nf >= 3) {
			const struct op_desc *op = op_find(f[1]);
			struct op_params p;
			struct rec_row row;
			struct harness_conf h = hc;
			if (!op || gc_params(nf == 4 ? f[3] : "", &p))
				goto bad;
			h.cold = strcmp(f[2], "hot") != 0;
			if (!(rc = cuda_time_op(op, &p, 0, &h, seed, &row)) && result_rows_add(&r, &row))
				rc = DDT_ENOMEM;
		} else if (!strcmp(f[0], "allreduce") && nf == 3) {
			int ms[64], nm = 0;
			struct harness_conf h = hc;
			char *save = NULL;
			for (char *tok = strtok_r(f[2], ",", &save); tok && nm < 64;
			     tok = strtok_r(NULL, ",", &save))
				ms[nm++] = atoi(tok);
			h.cold = 0;
			rc = cuda_bench_allreduce(&r, ms, nm, atoi(f[1]), &h, 0);
		} else if (!strcmp(f[0], "launch") && nf >= 1) {
			struct op_params p;
			struct harness_conf h = hc;
			if (gc_params(nf >= 2 ? f[1] : "", &p))
				goto bad;
			h.cold = 0;
			rc = cuda_bench_launch(&r, &p, &h, 0);
		} else {
			goto bad;
		}
		if (rc) {
			fprintf(stderr, "gpu-check: %s\n", err_msg());
			return 3;
		}
		for (size_t i = before; i < r.n; i++) {
			gc_progress(&r.rows[i]);
			gc_write_row(out, &r.rows[i]);
			if (r.rows[i].status == REC_FAILED)
				status = 4;
		}
		continue;
bad:
		fprintf(stderr, "gpu-check: bad plan line: %s\n", line);
		return 1;
	}
	fclose(plan);
	fclose(out);
	result_rows_free(&r);
	return status;
}
