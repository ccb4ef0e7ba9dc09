/* launch.cu - launch overhead: empty-kernel latency, and a synthetic decode step run eagerly and as a CUDA graph against the sum of its kernels.
 *
 * The synthetic step is the native engine's launch sequence on one GPU:
 * `layers` x (tree_attn, all-reduce, moe_w4a16, all-reduce), then the
 * drafter's lm_head (dense_gemv), tree_build and accept, built from the op
 * table's own instances and CUDA paths at the Kimi K2.x TP-8 sizes. The
 * all-reduces run over a one-rank NCCL communicator: on one GPU they stand
 * for the launches, not for the communication (allreduce.cu measures that);
 * a build without NCCL (-DDDT_NO_NCCL) stands in a device copy of the same
 * bytes.
 * step_eager - step_graph is the launch overhead a graph (or the native
 * engine's persistent schedule) removes; step_graph / step_kernels checks
 * the sum-of-kernels model the projection uses (target: within 5%).
 * step_kernels is measured inside the step itself: each part of an eager
 * step between two events, on a stream held until the host has enqueued
 * everything, so every part runs in the cache state the graph gives it
 * (after the other parts' traffic) and the sum leaves only the gaps out.
 * Timing the parts alone, cold or hot, would compare other cache states.
 */
#include "timing.cuh"

#include <math.h>
#include <stdlib.h>
#ifndef DDT_NO_NCCL
#include <nccl.h>
#endif

#define EMPTY_CALLS 1000

__global__ void ln_empty(void)
{
}

static int empty_enqueue(void *arg, cudaStream_t s)
{
	(void)arg;
	ln_empty<<<1, 32, 0, s>>>();
	CK_LAUNCH();
	return 0;
}

/* One component of the step: an op instance with its CUDA state. */
struct ln_part {
	const char *name; /* row variant suffix */
	const struct op_desc *op;
	const struct op_cuda *cu; /* op's CUDA path */
	void *inst, *dev;
};

struct ln_step {
	struct ln_part attn, moe, draft, tree, accept;
#ifndef DDT_NO_NCCL
	ncclComm_t comm;
#endif
	void *ar_send, *ar_recv;
	size_t ar_count;
	int layers;
};

static int part_enqueue(void *arg, cudaStream_t s)
{
	struct ln_part *p = (struct ln_part *)arg;
	return p->cu->run(p->dev, (void *)s);
}

static int ar1_enqueue(void *arg, cudaStream_t s)
{
	struct ln_step *st = (struct ln_step *)arg;
#ifndef DDT_NO_NCCL
	ncclResult_t r = ncclAllReduce(st->ar_send, st->ar_recv, st->ar_count, ncclBfloat16, ncclSum,
				       st->comm, s);
	if (r != ncclSuccess)
		return err_set(DDT_EGENERIC, "ncclAllReduce: %s", ncclGetErrorString(r));
#else
	CK(cudaMemcpyAsync(st->ar_recv, st->ar_send, st->ar_count * 2, cudaMemcpyDeviceToDevice, s));
#endif
	return 0;
}

static int step_enqueue(void *arg, cudaStream_t s)
{
	struct ln_step *st = (struct ln_step *)arg;
	int rc;
	for (int l = 0; l < st->layers; l++)
		if ((rc = part_enqueue(&st->attn, s)) || (rc = ar1_enqueue(st, s)) ||
		    (rc = part_enqueue(&st->moe, s)) || (rc = ar1_enqueue(st, s)))
			return rc;
	if ((rc = part_enqueue(&st->draft, s)) || (rc = part_enqueue(&st->tree, s)) ||
	    (rc = part_enqueue(&st->accept, s)))
		return rc;
	return 0;
}

/* The step's parts with an event pair around each (2 x (4 layers + 3)). */
struct ln_sum {
	struct ln_step *st;
	cudaEvent_t *ev;
	int nev;
};

static int ev_part(struct ln_sum *m, int *k, int (*fn)(void *, cudaStream_t), void *arg,
		   cudaStream_t s)
{
	int rc;
	CK(cudaEventRecord(m->ev[(*k)++], s));
	if ((rc = fn(arg, s)))
		return rc;
	CK(cudaEventRecord(m->ev[(*k)++], s));
	return 0;
}

/* One eager step with the events; the sum of the parts' intervals into
 * *us after it ran. */
static int step_sum_once(struct ln_sum *m, const struct cu_timer *t, double *us)
{
	struct ln_step *st = m->st;
	int k = 0, rc;
	float ms;

	/* the host enqueues ~8 launches and events per microsecond-scale part:
	 * hold the stream until it is ahead */
	if ((rc = cu_hold_stream(t, 5000)))
		return rc;
	for (int l = 0; l < st->layers; l++)
		if ((rc = ev_part(m, &k, part_enqueue, &st->attn, t->s)) ||
		    (rc = ev_part(m, &k, ar1_enqueue, st, t->s)) ||
		    (rc = ev_part(m, &k, part_enqueue, &st->moe, t->s)) ||
		    (rc = ev_part(m, &k, ar1_enqueue, st, t->s)))
			return rc;
	if ((rc = ev_part(m, &k, part_enqueue, &st->draft, t->s)) ||
	    (rc = ev_part(m, &k, part_enqueue, &st->tree, t->s)) ||
	    (rc = ev_part(m, &k, part_enqueue, &st->accept, t->s)))
		return rc;
	CK(cudaStreamSynchronize(t->s));
	*us = 0;
	for (int i = 0; i < k; i += 2) {
		CK(cudaEventElapsedTime(&ms, m->ev[i], m->ev[i + 1]));
		*us += (double)ms * 1e3;
	}
	return 0;
}

/* step_kernels: samples of step_sum_once under hc's stopping rule. */
static int time_step_sum(struct ln_step *st, const struct cu_timer *t,
			 const struct harness_conf *hc, struct rec_row *row)
{
	struct ln_sum m = {st, NULL, 2 * (4 * st->layers + 3)};
	int cap = hc->max_samples > 0 ? hc->max_samples : 10000, n = 0, rc = 0, made = 0;
	double *us = (double *)malloc((size_t)cap * sizeof *us), total = 0, start;

	if (!us || !(m.ev = (cudaEvent_t *)calloc((size_t)m.nev, sizeof *m.ev))) {
		free(us);
		return err_nomem();
	}
	for (; made < m.nev && !rc; made++)
		rc = CU(cudaEventCreate(&m.ev[made]));
	for (int i = 0; i < hc->warmup && !rc; i++)
		rc = step_sum_once(&m, t, &us[0]);
	start = harness_now_s();
	while (!rc && n < cap) {
		if ((rc = step_sum_once(&m, t, &us[n])))
			break;
		total += us[n++] * 1e-6;
		if (harness_enough(hc, n, total, harness_rsd(us, n), harness_now_s() - start))
			break;
	}
	if (!rc)
		harness_stats(us, n, row);
	for (int i = 0; i < made; i++)
		if (m.ev[i])
			cudaEventDestroy(m.ev[i]);
	free(m.ev);
	free(us);
	return rc;
}

struct ln_graph {
	cudaGraphExec_t exec;
};

static int graph_enqueue(void *arg, cudaStream_t s)
{
	CK(cudaGraphLaunch(((struct ln_graph *)arg)->exec, s));
	return 0;
}

/* Sets up one part from its op's table row and params q. */
static int part_setup(struct ln_part *p, const char *name, const char *op_name,
		      const struct op_params *q, uint64_t seed)
{
	int rc;
	p->name = name;
	if (!(p->op = op_find(op_name)) || !(p->cu = cuda_op_path(op_name)))
		return err_set(DDT_ENOTFOUND, "op %s has no CUDA path in this build", op_name);
	if ((rc = p->op->setup(&p->inst, q, seed)))
		return err_wrap(rc, "%s setup", op_name);
	if ((rc = p->cu->setup(&p->dev, p->inst)))
		return err_wrap(rc, "%s CUDA setup", op_name);
	return 0;
}

static void part_free(struct ln_part *p)
{
	if (p->op && p->dev)
		p->cu->teardown(p->dev);
	if (p->op && p->inst)
		p->op->teardown(p->inst);
	memset(p, 0, sizeof *p);
}

static void param(struct op_params *q, const char *key, double v)
{
	(void)op_param_set(q, key, v);
}

/* Builds every part at the sizes of p (keys of cuda_bench_launch; absent
 * ones take the Kimi K2.x TP-8 per-GPU values). */
static int step_setup(struct ln_step *st, const struct op_params *p)
{
	const int B = (int)op_param(p, "B", 32), L = (int)op_param(p, "L", 15);
	const int M = (int)op_param(p, "M", B + 1), hidden = (int)op_param(p, "hidden", 7168);
	const int V = (int)op_param(p, "V", 163840), ctx = (int)op_param(p, "ctx", 4096);
	struct op_params qa, qm, qd, qt, qc;
	int rc;

	memset(&qa, 0, sizeof qa);
	memset(&qm, 0, sizeof qm);
	memset(&qd, 0, sizeof qd);
	memset(&qt, 0, sizeof qt);
	memset(&qc, 0, sizeof qc);
	st->layers = (int)op_param(p, "layers", 61);
	/* attention: this GPU's heads over the shared latent cache */
	param(&qa, "B", B);
	param(&qa, "ctx", ctx);
	param(&qa, "L", L);
	param(&qa, "heads", op_param(p, "heads", 8));
	param(&qa, "tp", 1);
	/* MoE: this GPU's slice of every expert */
	param(&qm, "M", M);
	param(&qm, "hidden", hidden);
	param(&qm, "moe_inter", op_param(p, "inter", 256));
	param(&qm, "tp", 1);
	param(&qm, "experts", op_param(p, "experts", 384));
	param(&qm, "topk", op_param(p, "topk", 8));
	param(&qm, "group", op_param(p, "group", 32));
	/* the drafter's lm_head over one TP-8 slice of the vocabulary */
	param(&qd, "M", L + 1);
	param(&qd, "K", hidden);
	param(&qd, "N", V / 8);
	param(&qt, "L", L);
	param(&qt, "V", V);
	param(&qt, "B", B);
	param(&qc, "B", B);
	param(&qc, "L", L);
	param(&qc, "layers", st->layers);
	if ((rc = part_setup(&st->attn, "attn", "tree_attn", &qa, 11)) ||
	    (rc = part_setup(&st->moe, "moe", "moe_w4a16", &qm, 12)) ||
	    (rc = part_setup(&st->draft, "draft", "dense_gemv", &qd, 13)) ||
	    (rc = part_setup(&st->tree, "tree", "tree_build", &qt, 14)) ||
	    (rc = part_setup(&st->accept, "accept", "accept", &qc, 15)))
		return rc;
	st->ar_count = (size_t)M * hidden;
	if ((rc = CU(cudaMalloc(&st->ar_send, st->ar_count * 2))) ||
	    (rc = CU(cudaMalloc(&st->ar_recv, st->ar_count * 2))) ||
	    (rc = CU(cudaMemset(st->ar_send, 0x3c, st->ar_count * 2))))
		return rc;
	/* the setups' copies ran on the default stream; the timer's stream does
	 * not wait for it */
	if ((rc = CU(cudaDeviceSynchronize())))
		return rc;
#ifndef DDT_NO_NCCL
	int dev0 = 0;
	ncclResult_t r = ncclCommInitAll(&st->comm, 1, &dev0);
	if (r != ncclSuccess) {
		st->comm = NULL;
		return err_set(DDT_EGENERIC, "ncclCommInitAll (1 rank): %s", ncclGetErrorString(r));
	}
#endif
	return 0;
}

static void step_free(struct ln_step *st)
{
	part_free(&st->attn);
	part_free(&st->moe);
	part_free(&st->draft);
	part_free(&st->tree);
	part_free(&st->accept);
#ifndef DDT_NO_NCCL
	if (st->comm)
		ncclCommDestroy(st->comm);
#endif
	cu_free(st->ar_send);
	cu_free(st->ar_recv);
	memset(st, 0, sizeof *st);
}

/* Host round trip: launch + synchronize, timed on the CPU. */
static int time_empty_sync(struct cu_timer *t, const struct harness_conf *hc, struct rec_row *row)
{
	int cap = hc->max_samples > 0 ? hc->max_samples : 10000, n = 0, rc = 0;
	double *us = (double *)malloc((size_t)cap * sizeof *us), total = 0, start;
	if (!us)
		return err_nomem();
	for (int i = 0; i < hc->warmup + 1 && !rc; i++)
		if (!(rc = empty_enqueue(NULL, t->s)))
			rc = CU(cudaStreamSynchronize(t->s));
	start = harness_now_s();
	while (!rc && n < cap) {
		double t0 = harness_now_s();
		if ((rc = empty_enqueue(NULL, t->s)) || (rc = CU(cudaStreamSynchronize(t->s))))
			break;
		double dt = harness_now_s() - t0;
		us[n++] = dt * 1e6;
		total += dt;
		if (harness_enough(hc, n, total, harness_rsd(us, n), harness_now_s() - start))
			break;
	}
	if (!rc)
		harness_stats(us, n, row);
	free(us);
	return rc;
}

static void copy_params(struct rec_row *row, const struct op_params *p)
{
	for (int i = 0; i < p->n; i++)
		rec_row_param_set(row, p->keys[i], p->vals[i]);
}

/* Appends the rows of variants[from..] as skipped/failed with reason. */
static int rows_status(struct rec_rows *r, const char *const *variants, int from, int to,
		       const struct op_params *p, int rec_device, enum rec_status st,
		       const char *reason)
{
	for (int i = from; i < to; i++) {
		struct rec_row row;
		cu_row_init(&row, "launch", variants[i], "cuda", rec_device);
		if (i >= 2)
			copy_params(&row, p);
		cu_row_status(&row, st, "%s", reason);
		if (rec_rows_add(r, &row))
			return err_nomem();
	}
	return 0;
}

extern "C" int cuda_bench_launch(struct rec_rows *r, const struct op_params *p,
				 const struct harness_conf *hc, int rec_device)
{
	static const char *const variants[] = {"empty_async", "empty_sync", "step_kernels",
					       "step_eager", "step_graph"};
	char reason[160];
	struct cu_timer t;
	struct ln_step st;
	struct harness_conf hot = *hc;
	struct rec_row row;
	cudaGraph_t graph = NULL;
	struct ln_graph g;
	int n = cu_device_count(reason, sizeof reason), rc = 0;
	double sum_us = 0;

	memset(&t, 0, sizeof t);
	memset(&st, 0, sizeof st);
	g.exec = NULL;
	if (n == 0)
		return rows_status(r, variants, 0, 5, p, rec_device, REC_SKIPPED, reason);
	hot.cold = 0;
	if ((rc = cu_timer_init(&t, 0, hc->cold))) {
		rc = rows_status(r, variants, 0, 5, p, rec_device, REC_FAILED, err_msg());
		goto out;
	}

	/* empty kernels: back to back (device-side rate) and round trip */
	cu_row_init(&row, "launch", variants[0], "cuda", rec_device);
	if (cu_time(&t, &hot, empty_enqueue, NULL, EMPTY_CALLS, &row))
		cu_row_status(&row, REC_FAILED, "%s", err_msg());
	if (rec_rows_add(r, &row))
		goto nomem;
	cu_row_init(&row, "launch", variants[1], "cuda", rec_device);
	if (time_empty_sync(&t, &hot, &row))
		cu_row_status(&row, REC_FAILED, "%s", err_msg());
	if (rec_rows_add(r, &row))
		goto nomem;

	/* the synthetic step */
	if ((rc = step_setup(&st, p))) {
		rc = rows_status(r, variants, 2, 5, p, rec_device, REC_FAILED, err_msg());
		goto out;
	}
	cu_row_init(&row, "launch", variants[2], "cuda", rec_device);
	copy_params(&row, p);
	if (time_step_sum(&st, &t, &hot, &row))
		cu_row_status(&row, REC_FAILED, "%s", err_msg());
	else
		sum_us = row.median_us;
	if (rec_rows_add(r, &row))
		goto nomem;
	cu_row_init(&row, "launch", variants[3], "cuda", rec_device);
	copy_params(&row, p);
	if (cu_time(&t, &hot, step_enqueue, &st, 1, &row))
		cu_row_status(&row, REC_FAILED, "%s", err_msg());
	if (rec_rows_add(r, &row))
		goto nomem;

	cu_row_init(&row, "launch", variants[4], "cuda", rec_device);
	copy_params(&row, p);
	{
		int e = CU(cudaStreamBeginCapture(t.s, cudaStreamCaptureModeThreadLocal));
		if (!e) {
			int e2 = step_enqueue(&st, t.s);
			int e3 = CU(cudaStreamEndCapture(t.s, &graph));
			e = e2 ? e2 : e3;
		}
		if (!e)
			e = CU(cudaGraphInstantiate(&g.exec, graph, 0));
		if (e || cu_time(&t, &hot, graph_enqueue, &g, 1, &row))
			cu_row_status(&row, REC_FAILED, "graph: %s", err_msg());
		else if (sum_us > 0)
			rec_row_param_set(&row, "pct_of_kernels", 100.0 * row.median_us / sum_us);
	}
	if (rec_rows_add(r, &row))
		goto nomem;
	goto out;
nomem:
	rc = err_nomem();
out:
	if (g.exec)
		cudaGraphExecDestroy(g.exec);
	if (graph)
		cudaGraphDestroy(graph);
	step_free(&st);
	cu_timer_free(&t);
	cu_recover();
	return rc;
}
