/* csv.h - CSV fields as RFC 4180 readers expect them. */
#ifndef DDT_CSV_H
#define DDT_CSV_H

#include <stdio.h>

/* True when a spreadsheet would read s as a formula: it begins with =, +,
 * -, @, a tab or a carriage return (OWASP, "CSV Injection"). */
int csv_formula_like(const char *s);

/* Writes s as one field, quoted (with doubled quotes) when it holds a comma,
 * a quote or a line break. A field csv_formula_like is neutralised as OWASP
 * recommends: quoted, with a leading apostrophe ("'=1+1"), so a spreadsheet
 * shows it as text; a program reading the file sees the apostrophe. Every
 * CSV ddt writes goes through here. */
void csv_field(FILE *fp, const char *s);

/* The text csv_field was given for a field read back (csv_split): the
 * leading apostrophe of a neutralised field taken off. (A text that itself
 * began with an apostrophe and a formula character reads back without it.) */
char *csv_text(char *field);

/* Writes ",v" (%.9g); an empty field when v is not finite. */
void csv_num(FILE *fp, double v);
/* Writes v alone (%.9g), nothing when v is not finite. */
void csv_value(FILE *fp, double v);

/* Splits one line (no line break) into its fields in place: field[i] points
 * into line, quotes removed and doubled quotes undone. Returns the number
 * of fields, or -1 when there are more than max, or a quoted field is not
 * closed or is followed by other than a comma. */
int csv_split(char *line, char **field, int max);

#endif
