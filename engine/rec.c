/* rec.c - the engine's result rows: their parameters, statuses and lists. */
#include "rec.h"

#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[] = {"ok", "failed", "skipped", "unsupported"};

const char *rec_status_name(enum rec_status s)
{
	return (unsigned)s < 4 ? status_names[s] : "failed";
}

int rec_status_parse(const char *s, enum rec_status *out)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, status_names[i])) {
			*out = (enum rec_status)i;
			return 0;
		}
	return -1;
}

int rec_row_param_set(struct rec_row *row, const char *key, double val)
{
	int i;
	for (i = 0; i < row->nparams; i++) {
		int c = strcmp(row->params[i].key, key);
		if (c == 0) {
			row->params[i].val = val;
			return 0;
		}
		if (c > 0)
			break;
	}
	if (row->nparams == REC_MAX_PARAMS || strlen(key) >= sizeof row->params[0].key)
		return -1;
	memmove(&row->params[i + 1], &row->params[i], (size_t)(row->nparams - i) * sizeof row->params[0]);
	snprintf(row->params[i].key, sizeof row->params[i].key, "%s", key);
	row->params[i].val = val;
	row->nparams++;
	return 0;
}

double rec_row_param(const struct rec_row *row, const char *key, double dflt)
{
	for (int i = 0; i < row->nparams; i++)
		if (!strcmp(row->params[i].key, key))
			return row->params[i].val;
	return dflt;
}

char *rec_row_params_str(const struct rec_row *row, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	for (int i = 0; i < row->nparams && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s=%.6g", i ? "," : "",
					row->params[i].key, row->params[i].val);
	return buf;
}

int rec_rows_add(struct rec_rows *l, const struct rec_row *row)
{
	if (!(l->n & (l->n - 1))) { /* capacity is the next power of two */
		void *p = realloc(l->rows, (l->n ? l->n * 2 : 16) * sizeof *l->rows);
		if (!p)
			return err_nomem();
		l->rows = p;
	}
	l->rows[l->n++] = *row;
	return 0;
}

void rec_rows_free(struct rec_rows *l)
{
	free(l->rows);
	memset(l, 0, sizeof *l);
}
