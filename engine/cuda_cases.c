/* cuda_cases.c - the CUDA paths' edge sizes (cuda_cases.h) and their parser. */
#include "cuda_cases.h"

#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct cuda_case cuda_cases[] = {
	{"memcpy", "mib=1", 1, "one MiB", 1},
	{"memcpy", "mib=3.3", 2, "a size that is no multiple of 16 bytes", 1},
	/* moe_w4a16 */
	{"moe_w4a16", "M=1,hidden=256,moe_inter=128,experts=16,topk=4,group=32,tp=1,shared=1", 3,
	 "one token (M = 1 scheduling), shared expert", 1},
	{"moe_w4a16", "M=9,hidden=192,moe_inter=96,experts=20,topk=3,group=32,tp=1,shared=1", 4,
	 "hidden and inter no multiple of 64 (padded k tiles and rows)", 1},
	{"moe_w4a16",
	 "M=33,hidden=512,moe_inter=512,experts=64,topk=8,group=64,tp=2,ep=2,shared=0", 5,
	 "group 64, expert parallel (slots of other GPUs are -1), no shared expert", 1},
	{"moe_w4a16",
	 "M=40,hidden=1024,moe_inter=128,experts=12,topk=6,group=128,tp=1,shared=2,overlap=0.9", 6,
	 "group 128, more than 8 tokens on one expert (token chunks), two shared experts", 1},
	{"moe_w4a16", "M=3,hidden=320,moe_inter=64,experts=5,topk=5,group=32,tp=1,shared=1", 7,
	 "every expert taken by every token (topk = experts)", 1},
	{"moe_w4a16", "M=9", 8, "Kimi K2.x TP-8 slice: 384 experts x 256 rows", 0},
	/* dense_gemv (cuBLAS: GPU only) */
	{"dense_gemv", "M=1,K=64,N=100", 8, "one token, tiny", 0},
	{"dense_gemv", "M=9,K=1000,N=333", 9, "odd K and N", 0},
	{"dense_gemv", "M=16,K=7168,N=2560", 10, "a drafter slice", 0},
	/* tree_build */
	{"tree_build", "L=3,V=1000,B=8", 11, "K <= 32 (one list entry per lane)", 1},
	{"tree_build", "L=5,V=70001,B=100", 13, "32 < K <= 128 (four entries per lane), odd V", 1},
	{"tree_build", "L=2,V=3001,B=300", 14, "K > 128 (32 entries per lane), table in global", 1},
	{"tree_build", "L=1,V=20,B=40", 15, "exhausted: fewer tokens than the budget", 1},
	{"tree_build", "L=4,V=50000,B=1", 16, "K = 1", 1},
	{"tree_build", "L=3,V=20003,B=32", 17, "K = 32 (Kimi's budget): the lane-maxima floor, odd V", 1},
	{"tree_build", "L=15,V=163840,B=32", 12, "Kimi K2.x: block 16 drafter, budget 32", 0},
	/* tree_attn */
	{"tree_attn", "B=0,ctx=300", 16, "plain decode (one query token), Kimi dims", 1},
	{"tree_attn", "B=8,ctx=1000,L=4", 17, "block 8 tree, context splits and the combine", 1},
	{"tree_attn", "B=5,ctx=77,heads=3,tp=1,kv_lora=96,rope=24,qk_dim=120", 19,
	 "latent and rope padded, 3 heads", 1},
	{"tree_attn", "B=3,ctx=50,heads=2,tp=1,kv_lora=101,rope=9,qk_dim=110", 27,
	 "odd latent width (the last output column pair is half outside)", 1},
	{"tree_attn", "B=40,ctx=0,L=7,heads=2,tp=1", 20, "tree only (no context), two mask words",
	 1},
	{"tree_attn", "B=1,ctx=31,L=1", 31,
	 "two tree rows across a chunk edge: keys past the last are cut by the bound, not the mask",
	 1},
	{"tree_attn", "B=32,ctx=3000,L=15", 18, "block 16 tree, budget 32", 0},
	{"tree_attn", "B=8,ctx=20000,L=7", 21, "long context: many splits", 0},
	/* accept */
	{"accept", "B=8,L=7,layers=3", 22, "block 8", 1},
	{"accept", "B=32,L=15,layers=61", 23, "Kimi K2.x: 61 layers, budget 32", 1},
	{"accept", "B=50,L=5,layers=2,row=99,accept_p=1", 24,
	 "rows no multiple of 16 bytes, full acceptance", 1},
	{"accept", "B=50,L=9,layers=5,accept_p=0", 25, "nothing accepted", 1},
	{"accept", "B=300,L=40,layers=4,accept_p=1,tree_seed=7", 26, "deep tree", 1},
	{"accept", "B=40,L=2,layers=2,accept_p=1", 32,
	 "a walk down to depth L (a shallow bushy tree, full acceptance)", 1},
	{"accept", "B=4010,L=15,layers=2", 28, "4011 nodes: the tree fills 48 KB of shared memory", 1},
	{"accept", "B=4095,L=15,layers=2", 29, "4096 nodes: the last size walked in shared memory",
	 1},
	{"accept", "B=5000,L=15,layers=2", 30, "5001 nodes: walked in global memory", 1},
	{NULL, NULL, 0, NULL, 0},
};

int cuda_case_params(const struct cuda_case *c, struct op_params *p)
{
	const struct op_desc *op = op_find(c->op);
	char buf[256];

	memset(p, 0, sizeof *p);
	if (!op)
		return err_set(DDT_EINPUT, "CUDA case: no op '%s'", c->op);
	snprintf(buf, sizeof buf, "%s", c->params);
	for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv;
	     kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		const struct op_param_spec *s = op->params;
		if (eq)
			*eq = '\0';
		while (s && s->key && strcmp(s->key, kv))
			s++;
		if (!eq || !s || !s->key || op_param_set(p, s->key, strtod(eq + 1, NULL)))
			return err_set(DDT_EINPUT, "CUDA case %s: bad parameter '%s'", c->op, kv);
	}
	return 0;
}
