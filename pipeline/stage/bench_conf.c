/* bench_conf.c - loads and checks the template's bench section (strict: unknown keys and parameters are errors). */
#include "bench_conf.h"

#include "err.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Parameters of the CUDA-only benchmarks (their code lives in engine/cuda/). */
static const char *const allreduce_keys[] = {"M", "hidden", NULL};
static const char *const launch_keys[] = {"layers", "M",   "ctx",   "hidden", "inter", "experts",
					  "topk",   "group", "heads", "V",      "L",     "B",
					  NULL};

const struct bench_conf_cuda_op bench_conf_cuda_ops[] = {
	{"allreduce", "NCCL all-reduce of the decode step's M x hidden bf16 message (CUDA only)"},
	{"launch", "launch overhead: empty-kernel latency, and a synthetic decode step eager and as a CUDA graph (CUDA only)"},
};
const int bench_conf_ncuda_ops = (int)(sizeof bench_conf_cuda_ops / sizeof *bench_conf_cuda_ops);

int bench_conf_is_cuda_only(const char *op)
{
	for (int i = 0; i < bench_conf_ncuda_ops; i++)
		if (!strcmp(op, bench_conf_cuda_ops[i].name))
			return 1;
	return 0;
}

void bench_conf_op_names(char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; op_table[i] && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", op_table[i]->name);
	for (int i = 0; i < bench_conf_ncuda_ops && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, ", %s", bench_conf_cuda_ops[i].name);
}

/* Whether op reads key. */
static int bench_op_has_key(const char *op, const char *key)
{
	const char *const *list = !strcmp(op, "allreduce") ? allreduce_keys
				  : !strcmp(op, "launch")  ? launch_keys
							   : NULL;
	if (list) {
		for (; *list; list++)
			if (!strcmp(*list, key))
				return 1;
		return 0;
	}
	const struct op_desc *d = op_find(op);
	for (const struct op_param_spec *s = d ? d->params : NULL; s && s->key; s++)
		if (!strcmp(s->key, key))
			return 1;
	return 0;
}

/* A list of names from {names} into a bit set (bit i for names[i]). */
static int bench_name_set(struct yctx *c, struct ydoc_node *map, const char *key,
			  const char *const *names, unsigned *out)
{
	struct ydoc_node *n;
	int rc = yget_node(c, map, key, YDOC_SEQ, 0, &n);
	if (rc || !n)
		return rc;
	if (!n->n) {
		ydiag_add(c->diag, c->file, n->line, n->col, "%s: empty list", key);
		return DDT_EINPUT;
	}
	*out = 0;
	for (size_t i = 0; i < n->n; i++) {
		struct ydoc_node *it = n->items[i];
		int k;
		if (yget_expect(c, it, YDOC_SCALAR, key)) {
			rc = DDT_EINPUT;
			continue;
		}
		for (k = 0; names[k] && strcmp(names[k], it->str); k++)
			;
		if (!names[k]) {
			ydiag_add(c->diag, c->file, it->line, it->col, "%s: unknown value '%s'", key,
				  it->str);
			rc = DDT_EINPUT;
			continue;
		}
		*out |= 1u << k;
	}
	return rc;
}

static const char *const backend_names[] = {"cpu", "cuda", NULL};
static const char *const variant_names[] = {"cold", "hot", NULL};

static int bench_timing(struct yctx *c, struct ydoc_node *sec, struct harness_conf *h)
{
	struct ydoc_node *m;
	int rc = yget_node(c, sec, "timing", YDOC_MAP, 0, &m), r2 = 0;
	if (rc || !m)
		return rc;
	r2 |= yget_int(c, m, "warmup", Y_NONNEG, &h->warmup);
	r2 |= yget_int(c, m, "min_samples", Y_POSITIVE, &h->min_samples);
	r2 |= yget_int(c, m, "max_samples", Y_POSITIVE, &h->max_samples);
	r2 |= yget_num(c, m, "min_time_s", Y_NONNEG, &h->min_time_s);
	r2 |= yget_num(c, m, "target_rsd", Y_POSITIVE, &h->target_rsd);
	r2 |= yget_num(c, m, "timeout_s", Y_POSITIVE, &h->timeout_s);
	r2 |= yget_num(c, m, "min_clock_frac", Y_FRACTION, &h->min_clock_frac);
	const char *src;
	r2 |= yget_str(c, m, "source", 0, &src);
	r2 |= yget_check_unknown(c, m);
	if (!r2 && h->max_samples < h->min_samples) {
		ydiag_add(c->diag, c->file, m->line, m->col,
			  "max_samples %d is below min_samples %d", h->max_samples, h->min_samples);
		r2 = DDT_EINPUT;
	}
	return r2 ? DDT_EINPUT : 0;
}

static int bench_cpu(struct yctx *c, struct ydoc_node *sec, struct bench_conf *b)
{
	struct ydoc_node *m;
	int rc = yget_node(c, sec, "cpu", YDOC_MAP, 0, &m), r2 = 0;
	if (rc || !m)
		return rc;
	r2 |= yget_int(c, m, "threads", Y_NONNEG, &b->cpu_threads);
	r2 |= yget_num(c, m, "flush_mib", Y_NONNEG, &b->flush_mib);
	r2 |= yget_int(c, m, "check_rows", Y_NONNEG, &b->check_rows);
	int rc_copy = yget_num(c, m, "copy_mib", Y_POSITIVE, &b->copy_mib);
	r2 |= rc_copy;
	if (!rc_copy && !(b->copy_mib >= BENCH_COPY_MIB_MIN && b->copy_mib <= BENCH_COPY_MIB_MAX)) {
		struct ydoc_node *n = ydoc_get(m, "copy_mib");
		ydiag_add(c->diag, c->file, n->line, n->col,
			  "copy_mib: %g MiB; give between %g and %g MiB", b->copy_mib,
			  BENCH_COPY_MIB_MIN, BENCH_COPY_MIB_MAX);
		r2 = DDT_EINPUT;
	}
	const char *src;
	r2 |= yget_str(c, m, "source", 0, &src);
	r2 |= yget_check_unknown(c, m);
	return r2 ? DDT_EINPUT : 0;
}

/* One params entry: a number or a list of numbers. */
static int bench_param(struct yctx *c, struct bench_op *o, struct ydoc_node *key,
		       struct ydoc_node *val)
{
	struct bench_param *p = &o->params[o->nparams];
	int rc = 0;

	if (!bench_op_has_key(o->op, key->str)) {
		ydiag_add(c->diag, c->file, key->line, key->col, "%s has no parameter '%s'", o->op,
			  key->str);
		return DDT_EINPUT;
	}
	if (o->nparams == OP_MAX_PARAMS || strlen(key->str) >= sizeof p->key) {
		ydiag_add(c->diag, c->file, key->line, key->col, "too many parameters");
		return DDT_EINPUT;
	}
	snprintf(p->key, sizeof p->key, "%s", key->str);
	if (val->kind == YDOC_SEQ) {
		if (val->n == 0 || val->n > BENCH_MAX_VALS) {
			ydiag_add(c->diag, c->file, val->line, val->col,
				  "%s: a sweep takes 1 to %d values", key->str, BENCH_MAX_VALS);
			return DDT_EINPUT;
		}
		for (size_t i = 0; i < val->n; i++)
			rc |= yget_node_num(c, val->items[i], key->str, 0, &p->vals[i]);
		p->nvals = (int)val->n;
	} else {
		rc = yget_node_num(c, val, key->str, 0, &p->vals[0]);
		p->nvals = 1;
	}
	if (!rc)
		o->nparams++;
	return rc ? DDT_EINPUT : 0;
}

static int bench_one_op(struct yctx *c, struct ydoc_node *m, struct bench_op *o,
			unsigned backends, unsigned variants)
{
	const char *name = NULL, *src;
	struct ydoc_node *params;
	int rc = 0;

	memset(o, 0, sizeof *o);
	o->line = m->line;
	o->backends = backends;
	o->variants = variants;
	if (yget_str(c, m, "op", Y_REQUIRED, &name))
		rc = DDT_EINPUT;
	else if (!op_find(name) && !bench_conf_is_cuda_only(name)) {
		struct ydoc_node *n = ydoc_get(m, "op");
		char names[512];
		bench_conf_op_names(names, sizeof names);
		ydiag_add(c->diag, c->file, n->line, n->col, "unknown op '%s' (the ops: %s)", name,
			  names);
		rc = DDT_EINPUT;
	} else
		snprintf(o->op, sizeof o->op, "%s", name);
	rc |= bench_name_set(c, m, "backends", backend_names, &o->backends);
	rc |= bench_name_set(c, m, "variants", variant_names, &o->variants);
	rc |= yget_str(c, m, "source", 0, &src);
	rc |= yget_node(c, m, "params", YDOC_MAP, 0, &params);
	if (!rc && params)
		for (size_t i = 0; i < params->n; i++) {
			params->used[i] = 1;
			rc |= bench_param(c, o, params->keys[i], params->items[i]);
		}
	rc |= yget_check_unknown(c, m);
	if (!rc && bench_conf_is_cuda_only(o->op))
		o->backends &= BENCH_CUDA;
	if (!rc && bench_conf_op_points(o) > BENCH_MAX_POINTS) {
		ydiag_add(c->diag, c->file, m->line, m->col, "%s: %d size points (at most %d)",
			  o->op, bench_conf_op_points(o), BENCH_MAX_POINTS);
		rc = DDT_EINPUT;
	}
	return rc ? DDT_EINPUT : 0;
}

int bench_conf_load(struct bench_conf *out, const struct tmpl *t, struct ydiag *diag)
{
	const char *file = NULL, *src;
	struct ydoc_node *sec = tmpl_section(t, "bench", &file), *ops;
	struct yctx c = {file ? file : t->path, diag};
	unsigned backends = BENCH_CPU | BENCH_CUDA, variants = BENCH_COLD;
	int rc = 0, seed = 1;

	memset(out, 0, sizeof *out);
	harness_conf_default(&out->timing);
	out->seed = 1;
	out->copy_mib = 512;
	if (!sec)
		return 0;
	if (yget_expect(&c, sec, YDOC_MAP, "bench"))
		return DDT_EINPUT;
	rc |= yget_int(&c, sec, "seed", Y_NONNEG, &seed);
	rc |= yget_str(&c, sec, "source", 0, &src);
	rc |= bench_name_set(&c, sec, "backends", backend_names, &backends);
	rc |= bench_name_set(&c, sec, "variants", variant_names, &variants);
	rc |= bench_timing(&c, sec, &out->timing);
	rc |= bench_cpu(&c, sec, out);
	rc |= yget_node(&c, sec, "ops", YDOC_SEQ, 0, &ops);
	out->seed = (uint64_t)seed;
	for (size_t i = 0; ops && i < ops->n; i++) {
		if (yget_expect(&c, ops->items[i], YDOC_MAP, "ops entry")) {
			rc = DDT_EINPUT;
			continue;
		}
		if (out->nops == BENCH_MAX_OPS) {
			ydiag_add(diag, c.file, ops->items[i]->line, ops->items[i]->col,
				  "more than %d ops", BENCH_MAX_OPS);
			rc = DDT_EINPUT;
			break;
		}
		if (bench_one_op(&c, ops->items[i], &out->ops[out->nops], backends, variants))
			rc = DDT_EINPUT;
		else
			out->nops++;
	}
	rc |= yget_check_unknown(&c, sec);
	return rc ? DDT_EINPUT : 0;
}

int bench_conf_op_points(const struct bench_op *o)
{
	int n = 1;
	for (int i = 0; i < o->nparams; i++)
		n *= o->params[i].nvals;
	return n;
}

void bench_conf_op_point(const struct bench_op *o, int i, struct op_params *p)
{
	p->n = 0;
	for (int k = o->nparams - 1; k >= 0; k--) {
		const struct bench_param *bp = &o->params[k];
		p->keys[k] = bp->key;
		p->vals[k] = bp->vals[i % bp->nvals];
		i /= bp->nvals;
	}
	p->n = o->nparams;
}
