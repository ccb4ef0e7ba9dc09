/* csv.h - CSV fields as RFC 4180 readers expect them. */
#ifndef DDT_CSV_H
#define DDT_CSV_H

#include <stdio.h>

/* Writes s as one field, quoted (with doubled quotes) when it holds a comma,
 * a quote or a line break. */
void csv_field(FILE *fp, const char *s);

/* Writes ",v" (%.9g); an empty field when v is not finite. */
void csv_num(FILE *fp, double v);

/* Splits one line (no line break) into its fields in place: field[i] points
 * into line, quotes removed and doubled quotes undone. Returns the number
 * of fields, or -1 when there are more than max, or a quoted field is not
 * closed or is followed by other than a comma. */
int csv_split(char *line, char **field, int max);

#endif
