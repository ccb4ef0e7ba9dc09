/* bench_conf.c - loads and checks the template's bench section (strict: unknown keys and parameters are errors). */
#include "bench_conf.h"

#include "err.h"
#include "yschema.h"

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

/* ---------------------------------------------------------------- entries */

#define AT(obj, f, T) ((T *)((char *)(obj) + (f)->off))
#define AT_C(obj, f, T) ((const T *)((const char *)(obj) + (f)->off))

/* source: the references of a mapping's values, checked to be text and
 * kept by the template alone. */
static void source_read(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
			void *obj)
{
	const char *src;
	(void)obj;
	yget_str(c, map, f->key, f->flags, &src);
}

static void source_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	(void)y, (void)f, (void)obj; /* not kept: nothing to write */
}

#define SOURCE                                                                            \
	{.key = "source", .type = YS_CUSTOM, .read = source_read, .write = source_write,   \
	 .help = "where the values come from (kept by the template)"}
#define OPT_NUM(T, k, m, fl, u, h, ...)                                                   \
	YS_KEYED(T, k, m, YS_NUM, fl, .unit = (u), .help = (h), __VA_ARGS__)

static const struct yschema_name backend_names[] = {
	{"cpu", BENCH_CPU}, {"cuda", BENCH_CUDA}, {NULL, 0}};
static const struct yschema_name variant_names[] = {
	{"cold", BENCH_COLD}, {"hot", BENCH_HOT}, {NULL, 0}};

#define NAME_SET(T, m, nm, h) YS_FLAGS_OF(T, #m, m, nm, 0, .help = (h))

/* ---------------------------------------------------------------- timing, cpu */

#define H_INT(m, fl, u, h) YS_FIELD(struct harness_conf, m, YS_INT, fl, .unit = (u), .help = (h))
#define H_NUM(m, fl, u, h) OPT_NUM(struct harness_conf, #m, m, fl, u, h)
static const struct yschema_field timing_fields[] = {
	H_INT(warmup, Y_NONNEG, "runs", "untimed runs first"),
	H_INT(min_samples, Y_POSITIVE, "samples", "at least this many samples"),
	H_INT(max_samples, Y_POSITIVE, "samples", "never more (at least min_samples)"),
	H_NUM(min_time_s, Y_NONNEG, "s", "and at least this long sampling"),
	H_NUM(target_rsd, Y_POSITIVE, NULL, "stop once the mean's relative error is under this"),
	H_NUM(timeout_s, Y_POSITIVE, "s", "stop regardless after this"),
	H_NUM(min_clock_frac, Y_FRACTION, NULL,
	      "GPU: samples below this share of the default SM clock are dropped"),
	SOURCE,
};
/* max_samples against min_samples, as the section over its defaults
 * left them. */
static int check_timing(struct yctx *c, struct ydoc_node *m, void *obj)
{
	const struct harness_conf *h = obj;
	if (h->max_samples >= h->min_samples)
		return 0;
	ydiag_add(c->diag, c->file, m->line, m->col, "max_samples %d is below min_samples %d",
		  h->max_samples, h->min_samples);
	return 1;
}
static const struct yschema timing_schema =
	YS_TABLE_CHECKED("timing", timing_fields, 0, check_timing);

static const struct yschema_range copy_range = {BENCH_COPY_MIB_MIN, BENCH_COPY_MIB_MAX, 0, 0,
						"within [1, 65536]"};
#define CPU_INT(k, m, h) YS_KEYED(struct bench_conf, k, m, YS_INT, Y_NONNEG, .help = (h))
static const struct yschema_field cpu_fields[] = {
	CPU_INT("threads", cpu_threads, "pool threads of the CPU fast paths (0: online cores)"),
	OPT_NUM(struct bench_conf, "flush_mib", flush_mib, Y_NONNEG, "MiB",
		"cold samples' cache flush buffer (0: twice the last-level cache)"),
	CPU_INT("check_rows", check_rows, "output rows each CPU check compares (0: all)"),
	OPT_NUM(struct bench_conf, "copy_mib", copy_mib, Y_POSITIVE, "MiB",
		"the copy that measures the CPU's bandwidth", .range = &copy_range),
	SOURCE,
};
const struct yschema bench_conf_cpu_schema = YS_TABLE("cpu", cpu_fields, 0);

/* ---------------------------------------------------------------- ops */

/* op: an op of the table or a CUDA-only benchmark. */
static void op_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
		    void *obj)
{
	const char *name = NULL;
	char names[512];
	if (yget_str(c, m, f->key, f->flags, &name) || !name)
		return;
	if (op_find(name) || bench_conf_is_cuda_only(name)) {
		snprintf(AT(obj, f, char), f->size, "%s", name);
		return;
	}
	struct ydoc_node *n = ydoc_get(m, f->key);
	bench_conf_op_names(names, sizeof names);
	ydiag_add(c->diag, c->file, n->line, n->col, "unknown op '%s' (the ops: %s)", name, names);
}

static void op_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	yout_kv_str(y, f->key, AT_C(obj, f, char));
}

/* params.KEY (c->ctx: the ops entry): a parameter of the entry's op (none
 * told when the op itself is unknown), swept over 1 to BENCH_MAX_VALS
 * values. */
static int check_param(struct yctx *c, struct ydoc_node *params, void *obj)
{
	const struct bench_op *o = c->ctx;
	const struct bench_param *p = obj;
	struct ydoc_node *val = ydoc_get(params, p->key), *key;
	if (!o->op[0])
		return 0; /* the op's own problem is told */
	if (!p->nvals) {
		ydiag_add(c->diag, c->file, val->line, val->col, "%s: a sweep takes 1 to %d values",
			  p->key, BENCH_MAX_VALS);
		return 1;
	}
	if (bench_op_has_key(o->op, p->key))
		return 0;
	key = ydoc_key(params, p->key);
	ydiag_add(c->diag, c->file, key->line, key->col, "%s has no parameter '%s'", o->op, p->key);
	return 1;
}

/* params: each KEY a number or a list of them swept; its rule needs the
 * op, read first. */
static const struct yschema_field param_value[] = {
	YS_NUMS_OF(struct bench_param, NULL, vals, nvals, YS_LONE),
};
static const struct yschema param_schema = YS_TABLE_CHECKED("params", param_value, 1,
							    check_param);

static const struct yschema_field op_fields[] = {
	YS_FIELD(struct bench_op, op, YS_CUSTOM, Y_REQUIRED, .read = op_read, .write = op_write,
		 .help = "an op of the table or a CUDA-only benchmark"),
	NAME_SET(struct bench_op, backends, backend_names, "where to run it (bench.backends)"),
	NAME_SET(struct bench_op, variants, variant_names, "cold, hot or both (bench.variants)"),
	SOURCE,
	YS_DICT_OF(struct bench_op, "params", params, nparams, struct bench_param, key,
		   &param_schema, 0, .help = "the op's parameters, each a number or a list swept"),
};
static const struct yschema op_schema = YS_TABLE("ops entry", op_fields, 0);

static int bench_one_op(struct yctx *c, struct ydoc_node *m, struct bench_op *o,
			const struct bench_conf *b)
{
	size_t before = c->diag->n;

	memset(o, 0, sizeof *o);
	o->line = m->line;
	o->backends = b->backends;
	o->variants = b->variants;
	if (yschema_read(c, m, &op_schema, o))
		return DDT_EINPUT;
	if (bench_conf_is_cuda_only(o->op))
		o->backends &= BENCH_CUDA;
	if (bench_conf_op_points(o) > BENCH_MAX_POINTS)
		ydiag_add(c->diag, c->file, m->line, m->col, "%s: %d size points (at most %d)",
			  o->op, bench_conf_op_points(o), BENCH_MAX_POINTS);
	return c->diag->n > before ? DDT_EINPUT : 0;
}

static void ops_read(struct yctx *c, struct ydoc_node *sec, const struct yschema_field *f,
		     void *obj)
{
	struct bench_conf *out = obj;
	struct ydoc_node *ops;
	if (yget_node(c, sec, f->key, YDOC_SEQ, f->flags, &ops) || !ops)
		return;
	for (size_t i = 0; i < ops->n; i++) {
		struct ydoc_node *it = ops->items[i];
		if (yget_expect(c, it, YDOC_MAP, "ops entry"))
			continue;
		if (out->nops == BENCH_MAX_OPS) {
			ydiag_add(c->diag, c->file, it->line, it->col, "more than %d ops",
				  BENCH_MAX_OPS);
			return;
		}
		if (!bench_one_op(c, it, &out->ops[out->nops], out))
			out->nops++;
	}
}

static void ops_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	const struct bench_conf *b = obj;
	yout_key(y, f->key);
	yout_seq(y);
	for (int i = 0; i < b->nops; i++)
		yschema_write_item(y, &op_schema, &b->ops[i]);
	yout_end(y);
}

/* ---------------------------------------------------------------- the section */

static const struct yschema_field bench_fields[] = {
	YS_FIELD(struct bench_conf, seed, YS_U64, 0, .help = "every op's inputs come from this seed"),
	SOURCE,
	NAME_SET(struct bench_conf, backends, backend_names, "the ops' backends: cpu, cuda"),
	NAME_SET(struct bench_conf, variants, variant_names, "the ops' variants: cold, hot"),
	YS_FIELD(struct bench_conf, timing, YS_MAP, 0, .sub = &timing_schema,
		 .help = "when a measurement has enough samples"),
	{.key = "cpu", .type = YS_MAP, .off = 0, .sub = &bench_conf_cpu_schema,
	 .help = "the CPU backend's settings"},
	{.key = "ops", .type = YS_CUSTOM, .read = ops_read, .write = ops_write,
	 .help = "the ops to measure and at which sizes"},
};
static const struct yschema bench_schema = YS_TABLE("bench", bench_fields, 0);

int bench_conf_load(struct bench_conf *out, const struct tmpl *t, struct ydiag *diag)
{
	const char *file = NULL;
	struct ydoc_node *sec = tmpl_section(t, "bench", &file);
	struct yctx c = {file ? file : t->path, diag, NULL};

	memset(out, 0, sizeof *out);
	harness_conf_default(&out->timing);
	out->seed = 1;
	out->copy_mib = 512;
	out->backends = BENCH_CPU | BENCH_CUDA;
	out->variants = BENCH_COLD;
	if (!sec)
		return 0;
	if (yget_expect(&c, sec, YDOC_MAP, "bench"))
		return DDT_EINPUT;
	return yschema_read_given(&c, sec, &bench_schema, out); /* over the defaults */
}

/* A document of the section alone, under its key (struct bench_conf
 * itself, offset 0). */
static const struct yschema_field bench_doc_fields[] = {
	{.key = "bench", .type = YS_MAP, .sub = &bench_schema, .help = "the section"},
};
static const struct yschema bench_doc = YS_TABLE("template", bench_doc_fields, 0);

void bench_conf_emit(const struct bench_conf *b, FILE *fp)
{
	yschema_write_doc(fp, &bench_doc, b);
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
