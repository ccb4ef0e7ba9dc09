/* optable.c - lookup helpers over the op table and op parameters. */
#include "op.h"

#include <string.h>

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

/* One line per op, in report order. */
const struct op_desc *const op_table[] = {
	NULL,
};
