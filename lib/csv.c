/* csv.c - CSV fields as RFC 4180 readers expect them. */
#include "csv.h"

#include <math.h>
#include <string.h>

int csv_formula_like(const char *s)
{
	return *s && strchr("=+-@\t\r", *s) != NULL;
}

char *csv_text(char *field)
{
	return field[0] == '\'' && csv_formula_like(field + 1) ? field + 1 : field;
}

void csv_field(FILE *fp, const char *s)
{
	int formula = csv_formula_like(s);
	if (!formula && !strpbrk(s, ",\"\r\n")) {
		fputs(s, fp);
		return;
	}
	fputc('"', fp);
	if (formula)
		fputc('\'', fp);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', fp);
		fputc(*s, fp);
	}
	fputc('"', fp);
}

void csv_value(FILE *fp, double v)
{
	if (isfinite(v))
		fprintf(fp, "%.9g", v);
}

void csv_num(FILE *fp, double v)
{
	fputc(',', fp);
	csv_value(fp, v);
}

int csv_split(char *line, char **field, int max)
{
	int n = 0;
	char *p = line;
	for (;;) {
		char *w = p;
		if (n == max)
			return -1;
		field[n++] = p;
		if (*p == '"') {
			/* a quoted field: "" is a quote, the closing one ends it */
			for (p++;; p++) {
				if (!*p)
					return -1;
				if (*p == '"' && p[1] == '"')
					*w++ = '"', p++;
				else if (*p == '"')
					break;
				else
					*w++ = *p;
			}
			if (*++p && *p != ',')
				return -1;
		} else {
			while (*p && *p != ',')
				p++;
			w = p;
		}
		int last = !*p;
		*w = '\0';
		if (last)
			return n;
		p++;
	}
}
