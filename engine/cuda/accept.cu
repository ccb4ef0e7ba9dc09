/* accept.cu - the greedy acceptance walk and the compaction of the accepted KV rows, in one small launch.
 *
 * What it computes: engine/ops/accept.h.
 *
 * How: one launch of up to 64 blocks. Every block loads the tree (parent,
 * token, target: 12 bytes a node) into shared memory with one parallel read,
 * walks it with warp 0 (one ballot over the children per step, at most L + 1
 * steps, all in shared memory), then copies its share of the layers'
 * accepted rows with 16-byte loads and stores. Block 0 also writes len, bonus
 * and the path. Redoing the ~1 us walk in every block is cheaper than a
 * second launch or a grid-wide barrier.
 *
 * Napkin math (Kimi K2.x: B = 32, L = 15, 61 layers, rows of 576 bf16): the
 * accepted rows are at most 16 x 61 x 1152 B = 1.1 MB read + 1.1 MB written:
 * 0.5 us at 4.25 TB/s; the walk is ~16 dependent shared-memory steps. The
 * launch dominates: expected 4-6 us, under the 10 us target.
 */
#include "common.cuh"

extern "C" {
#include "ops/accept.h"
}

#define AC_THREADS 256
#define AC_MAX_BLOCKS 64
#define AC_SMEM_NODES 4096 /* trees up to this size walk in shared memory */
#define AC_MAX_L 256       /* deepest tree walked */

struct ac_args {
	int n, L, layers, row;
	const int32_t *parent, *token, *target;
	const uint16_t *kv_tree; /* [layers][n][row] */
	uint16_t *kv_out;        /* [layers][L+1][row] */
	int32_t *len_bonus;      /* [2] */
	int32_t *path;           /* [L+1] */
};

/* Dynamic shared memory: the path, len and bonus, then (trees of up to
 * AC_SMEM_NODES nodes) parent, token and target. All of it is dynamic, so the
 * host's byte count (ac_smem_bytes) is the whole of it. */
#define AC_PATH_INTS (AC_MAX_L + 1 + 2)

static size_t ac_smem_bytes(int n)
{
	return (size_t)(AC_PATH_INTS + (n <= AC_SMEM_NODES ? 3 * n : 0)) * sizeof(int32_t);
}

__global__ void __launch_bounds__(AC_THREADS) ac_kernel(const ac_args a)
{
	CU_DYN_SMEM(int32_t, ac_sm);
	int32_t *s_path = ac_sm, *s_len = ac_sm + AC_MAX_L + 1, *s_bonus = s_len + 1;
	const int tid = threadIdx.x, lane = tid & 31;
	const bool in_smem = a.n <= AC_SMEM_NODES;
	const int32_t *P = a.parent, *T = a.token, *G = a.target;

	if (in_smem) {
		int32_t *sp = ac_sm + AC_PATH_INTS, *st = sp + a.n, *sg = sp + 2 * a.n;
		for (int i = tid; i < a.n; i += AC_THREADS) {
			sp[i] = a.parent[i];
			st[i] = a.token[i];
			sg[i] = a.target[i];
		}
		P = sp;
		T = st;
		G = sg;
	}
	__syncthreads();

	if (tid < 32) {
		int node = 0, len = 1, bonus;
		for (;;) {
			const int want = G[node];
			int next = -1;
			if (len <= a.L) {
				/* children come after their parent; sibling tokens are distinct */
				for (int c0 = node + 1; c0 < a.n && next < 0; c0 += 32) {
					const int c = c0 + lane;
					const bool hit = c < a.n && P[c] == node && T[c] == want;
					const unsigned m = __ballot_sync(0xffffffffu, hit);
					if (m)
						next = c0 + __ffs(m) - 1;
				}
			}
			if (next < 0) {
				bonus = want;
				break;
			}
			if (lane == 0)
				s_path[len] = next;
			len++;
			node = next;
		}
		if (lane == 0) {
			s_path[0] = 0;
			*s_len = len;
			*s_bonus = bonus;
		}
	}
	__syncthreads();

	const int len = *s_len;
	if (blockIdx.x == 0) {
		for (int i = tid; i <= a.L; i += AC_THREADS)
			a.path[i] = i < len ? s_path[i] : -1;
		if (tid == 0) {
			a.len_bonus[0] = len;
			a.len_bonus[1] = *s_bonus;
		}
	}

	/* rows: (layer, i < len) pairs of this block, 16 B at a time when aligned */
	const bool vec = (a.row * 2) % 16 == 0;
	const int per_row = vec ? a.row * 2 / 16 : a.row;
	const long long total = (long long)a.layers * len * per_row;
	for (long long q = (long long)blockIdx.x * AC_THREADS + tid; q < total;
	     q += (long long)gridDim.x * AC_THREADS) {
		const int e = (int)(q % per_row);
		const long long li = q / per_row;
		const int i = (int)(li % len), l = (int)(li / len);
		const size_t src = ((size_t)l * a.n + s_path[i]) * a.row;
		const size_t dst = ((size_t)l * (a.L + 1) + i) * a.row;
		if (vec)
			((uint4 *)(a.kv_out + dst))[e] = __ldg((const uint4 *)(a.kv_tree + src) + e);
		else
			a.kv_out[dst + e] = a.kv_tree[src + e];
	}
}

struct ac_dev {
	struct ac_args a;
	int blocks;
	size_t smem;
	void *bufs[8];
	int nbufs;
};

static void ac_teardown(void *dev)
{
	struct ac_dev *d = (struct ac_dev *)dev;
	if (!d)
		return;
	for (int i = 0; i < d->nbufs; i++)
		cu_free(d->bufs[i]);
	free(d);
}

static int ac_buf(struct ac_dev *d, void **p, size_t bytes, const void *host)
{
	int rc = cu_upload(p, host, bytes);
	if (!rc)
		d->bufs[d->nbufs++] = *p;
	return rc;
}

static int ac_setup(void **dev, const void *inst)
{
	const struct accept_inst *in = (const struct accept_inst *)inst;
	struct ac_dev *d;
	int rc;

	*dev = NULL;
	if (in->L > AC_MAX_L)
		return err_set(DDT_EINPUT, "unsupported: accept CUDA walks at most %d levels "
			       "(L = %d)", AC_MAX_L, in->L);
	if (!(d = (struct ac_dev *)calloc(1, sizeof *d)))
		return err_nomem();
	struct ac_args *a = &d->a;
	a->n = in->n;
	a->L = in->L;
	a->layers = in->layers;
	a->row = in->row;
	size_t kv_in = (size_t)in->layers * in->n * in->row * 2;
	size_t kv_out = (size_t)in->layers * (in->L + 1) * in->row * 2;
	void *p;
	if ((rc = ac_buf(d, &p, (size_t)in->n * 4, in->parent)))
		goto fail;
	a->parent = (const int32_t *)p;
	if ((rc = ac_buf(d, &p, (size_t)in->n * 4, in->token)))
		goto fail;
	a->token = (const int32_t *)p;
	if ((rc = ac_buf(d, &p, (size_t)in->n * 4, in->target)))
		goto fail;
	a->target = (const int32_t *)p;
	if ((rc = ac_buf(d, &p, kv_in, in->kv_tree)))
		goto fail;
	a->kv_tree = (const uint16_t *)p;
	if ((rc = ac_buf(d, (void **)&a->kv_out, kv_out, NULL)) ||
	    (rc = ac_buf(d, (void **)&a->len_bonus, 8, NULL)) ||
	    (rc = ac_buf(d, (void **)&a->path, (size_t)(in->L + 1) * 4, NULL)))
		goto fail;
	/* outputs start as NaN / -1: anything the kernel misses cannot look right */
	if ((rc = CU(cudaMemset(a->kv_out, 0xff, kv_out))) ||
	    (rc = CU(cudaMemset(a->len_bonus, 0xff, 8))) ||
	    (rc = CU(cudaMemset(a->path, 0xff, (size_t)(in->L + 1) * 4))))
		goto fail;
	d->blocks = in->layers < AC_MAX_BLOCKS ? in->layers : AC_MAX_BLOCKS;
	d->smem = ac_smem_bytes(in->n);
	if ((rc = cu_smem_allow(ac_kernel, d->smem, "accept")))
		goto fail;
	*dev = d;
	return 0;
fail:
	ac_teardown(d);
	return rc;
}

static int ac_run(void *dev, void *stream)
{
	struct ac_dev *d = (struct ac_dev *)dev;
	CK(cu_launch(ac_kernel, d->blocks, AC_THREADS, d->smem, (cudaStream_t)stream, d->a));
	return 0;
}

static int ac_fetch(void *dev, void *inst)
{
	struct ac_dev *d = (struct ac_dev *)dev;
	struct accept_inst *in = (struct accept_inst *)inst;
	int32_t lb[2];

	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(lb, d->a.len_bonus, sizeof lb, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(in->out.path, d->a.path, (size_t)(in->L + 1) * 4, cudaMemcpyDeviceToHost));
	in->out.len = lb[0];
	in->out.bonus = lb[1];
	if (lb[0] < 1 || lb[0] > in->L + 1)
		return err_set(DDT_EGENERIC, "accept: the kernel returned length %d", lb[0]);
	/* only the accepted rows of each layer: the others stay untouched */
	size_t pitch = (size_t)(in->L + 1) * in->row * 2;
	CK(cudaMemcpy2D(in->out.kv, pitch, d->a.kv_out, pitch, (size_t)lb[0] * in->row * 2,
			(size_t)in->layers, cudaMemcpyDeviceToHost));
	return 0;
}

extern "C" const struct op_cuda CU_OP_TABLE(accept) = {ac_setup, ac_run, ac_fetch, ac_teardown};
