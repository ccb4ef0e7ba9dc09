/* ydiag.c - a loader's problems, each "file:line:column: message". */
#include "ydoc.h"
#include "esc.h"

#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Stands in for a problem whose text could not be stored, so that a loader's
 * count of problems stays right when memory runs out. */
static char ydiag_oom[] = "out of memory while recording a problem";
static char *ydiag_oom_list[1] = {ydiag_oom};

/* Grows d->msgs (which may be ydiag_oom_list). Returns 0 or -1. */
static int ydiag_grow(struct ydiag *d)
{
	size_t ncap = d->cap ? d->cap * 2 : 8;
	char **nm = malloc(ncap * sizeof *nm);

	if (!nm)
		return -1;
	if (d->n)
		memcpy(nm, d->msgs, d->n * sizeof *nm);
	if (d->msgs != ydiag_oom_list)
		free(d->msgs);
	d->msgs = nm;
	d->cap = ncap;
	return 0;
}

static void ydiag_msg_free(char *m)
{
	if (m != ydiag_oom)
		free(m);
}

void ydiag_add(struct ydiag *d, const char *file, int line, int col, const char *fmt, ...)
{
	char msg[768], *full = NULL;
	va_list ap;
	int len;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (!file)
		len = asprintf(&full, "%s", msg);
	else if (line > 0)
		len = asprintf(&full, "%s:%d:%d: %s", file, line, col, msg);
	else
		len = asprintf(&full, "%s: %s", file, msg);
	if (len < 0)
		full = ydiag_oom;
	if (d->n == 0)
		err_set(DDT_EINPUT, "%s", full);
	if (d->n == d->cap && ydiag_grow(d) != 0) {
		/* No room: the problem still counts. With no list at all, a static
		 * one-entry list stands in; otherwise the last message gives way. */
		if (d->n == 0) {
			d->msgs = ydiag_oom_list;
			d->n = d->cap = 1;
		} else {
			ydiag_msg_free(d->msgs[d->n - 1]);
			d->msgs[d->n - 1] = ydiag_oom;
		}
		ydiag_msg_free(full);
		return;
	}
	d->msgs[d->n++] = full;
	if (d->n == d->cap)
		ydiag_grow(d); /* keep a free slot for when memory is short */
}

void ydiag_free(struct ydiag *d)
{
	for (size_t i = 0; i < d->n; i++)
		ydiag_msg_free(d->msgs[i]);
	if (d->msgs != ydiag_oom_list)
		free(d->msgs);
	memset(d, 0, sizeof *d);
}

void ydiag_print(const struct ydiag *d, FILE *fp)
{
	for (size_t i = 0; i < d->n; i++)
		esc_line(fp, d->msgs[i]); /* they quote the input: its controls escaped */
}
