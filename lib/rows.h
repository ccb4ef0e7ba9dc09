/* rows.h - a table of rows written as CSV or as JSON by the same calls, so the two cannot drift apart. */
#ifndef DDT_ROWS_H
#define DDT_ROWS_H

#include <stdio.h>

enum rows_format { ROWS_CSV, ROWS_JSON };

/* A table being written: CSV (a header line, then one line a row, every
 * field through csv.h) or JSON (an array of objects keyed by the header's
 * column names; numbers as numbers, a missing one as null). */
struct rows {
	FILE *fp;
	enum rows_format format;
	const char *header; /* "a,b,c": the column names, in order */
	const char *next;   /* the name of the next field's column */
	long nrows;         /* rows begun so far */
	int col;            /* fields written in the current row */
};

/* "csv" or "json" (a --format choice) as a format; returns 0, or -1 for
 * another word. */
int rows_format_parse(const char *word, enum rows_format *out);

/* Starts the table: CSV writes the header line, JSON the array's "[". */
void rows_begin(struct rows *w, FILE *fp, enum rows_format format, const char *header);
/* The next field of the current row (a row begins at its first field):
 * text (NULL: empty, JSON null) or a number (not finite: empty, JSON null). */
void rows_str(struct rows *w, const char *s);
void rows_num(struct rows *w, double v);
/* Ends the current row. */
void rows_end_row(struct rows *w);
/* Ends the table (JSON: "]"). */
void rows_end(struct rows *w);

#endif
