/* op.c - lookup helpers over the op table and op parameters. */
#include "op.h"

#include "err.h"

#include <string.h>

extern const struct op_desc op_memcpy, op_moe_w4a16, op_dense_gemv, op_tree_build, op_tree_attn,
	op_accept;

double op_param(const struct op_params *p, const char *key, double dflt)
{
	for (int i = 0; i < p->n; i++)
		if (!strcmp(p->keys[i], key))
			return p->vals[i];
	return dflt;
}

int op_param_set(struct op_params *p, const char *key, double val)
{
	for (int i = 0; i < p->n; i++)
		if (!strcmp(p->keys[i], key)) {
			p->vals[i] = val;
			return 0;
		}
	if (p->n == OP_MAX_PARAMS)
		return -1;
	p->keys[p->n] = key;
	p->vals[p->n++] = val;
	return 0;
}

const struct op_desc *op_find(const char *name)
{
	for (int i = 0; op_table[i]; i++)
		if (!strcmp(op_table[i]->name, name))
			return op_table[i];
	return NULL;
}

int op_params_complete(const struct op_desc *op, const struct op_params *p,
		       struct op_params *out)
{
	out->n = 0;
	for (int i = 0; i < p->n; i++) {
		const struct op_param_spec *s = op->params;
		while (s && s->key && strcmp(s->key, p->keys[i]))
			s++;
		if (!s || !s->key)
			return err_set(DDT_EINPUT, "%s has no parameter '%s'", op->name, p->keys[i]);
		if (op_param_set(out, s->key, p->vals[i]))
			return err_set(DDT_EINPUT, "%s: too many parameters", op->name);
	}
	for (const struct op_param_spec *s = op->params; s && s->key; s++) {
		int have = 0;
		for (int i = 0; i < out->n && !have; i++)
			have = !strcmp(out->keys[i], s->key);
		if (!have && op_param_set(out, s->key, s->dflt))
			return err_set(DDT_EINPUT, "%s: too many parameters", op->name);
	}
	return 0;
}

/* One line per op, in report order: the ceiling first, then the step's parts. */
const struct op_desc *const op_table[] = {
	&op_memcpy,
	&op_moe_w4a16,
	&op_dense_gemv,
	&op_tree_build,
	&op_tree_attn,
	&op_accept,
	NULL,
};
