/* csv.c - CSV fields as RFC 4180 readers expect them. */
#include "csv.h"

#include <math.h>
#include <string.h>

void csv_field(FILE *fp, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, fp);
		return;
	}
	fputc('"', fp);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', fp);
		fputc(*s, fp);
	}
	fputc('"', fp);
}

void csv_num(FILE *fp, double v)
{
	fputc(',', fp);
	if (isfinite(v))
		fprintf(fp, "%.9g", v);
}
