/* rows.c - a table of rows written as CSV or as JSON by the same calls, so the two cannot drift apart. */
#include "rows.h"

#include "csv.h"
#include "json.h"

#include <assert.h>
#include <string.h>

int rows_format_parse(const char *word, enum rows_format *out)
{
	if (!strcmp(word, "csv"))
		*out = ROWS_CSV;
	else if (!strcmp(word, "json"))
		*out = ROWS_JSON;
	else
		return -1;
	return 0;
}

void rows_begin(struct rows *w, FILE *fp, enum rows_format format, const char *header)
{
	*w = (struct rows){fp, format, header, header, 0, 0};
	if (format == ROWS_CSV)
		fprintf(fp, "%s\n", header);
	else
		fputc('[', fp);
}

/* Before a field: the row's opening, the separator, and (JSON) the key. */
static void field(struct rows *w)
{
	assert(*w->next && "more fields than the header names");
	const char *end = strchr(w->next, ',');
	size_t len = end ? (size_t)(end - w->next) : strlen(w->next);
	if (w->format == ROWS_CSV) {
		if (w->col)
			fputc(',', w->fp);
	} else {
		char name[128];
		if (!w->col)
			fprintf(w->fp, "%s\n  {", w->nrows ? "," : "");
		snprintf(name, sizeof name, "%.*s", (int)len, w->next);
		fputs(w->col ? ", " : "", w->fp);
		json_str(w->fp, name);
		fputs(": ", w->fp);
	}
	if (!w->col)
		w->nrows++;
	w->col++;
	w->next += len + (end != NULL);
}

void rows_str(struct rows *w, const char *s)
{
	field(w);
	if (w->format == ROWS_CSV)
		csv_field(w->fp, s ? s : "");
	else
		json_str(w->fp, s);
}

void rows_num(struct rows *w, double v)
{
	field(w);
	if (w->format == ROWS_CSV)
		csv_value(w->fp, v);
	else
		json_num(w->fp, v);
}

void rows_end_row(struct rows *w)
{
	if (w->format == ROWS_CSV)
		fputc('\n', w->fp);
	else
		fputc('}', w->fp);
	w->col = 0;
	w->next = w->header;
}

void rows_end(struct rows *w)
{
	if (w->format == ROWS_JSON)
		fputs(w->nrows ? "\n]\n" : "]\n", w->fp);
}
