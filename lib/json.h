/* json.h - JSON text: strings, numbers, and a YAML document written as JSON. */
#ifndef DDT_JSON_H
#define DDT_JSON_H

#include <stdio.h>

struct ydoc_node;

/* Writes s as a JSON string (RFC 8259): quotes, backslashes and control
 * characters escaped; bytes that are not UTF-8 become U+FFFD, so what is
 * written always parses. NULL writes null. */
void json_str(FILE *fp, const char *s);

/* Writes v (%.9g, C locale); null when v is not finite (JSON has no NaN). */
void json_num(FILE *fp, double v);

/* Writes the YAML node tree as JSON: mappings as objects, sequences as
 * arrays, a plain scalar that reads as a number (yget_parse_num) as that
 * number, plain true/false/null as themselves, every other scalar (quoted
 * ones always) as a string. Exact for what yout writes, which quotes a
 * string that would read as anything else. NULL writes null. A newline
 * ends the document. */
void json_write_ydoc(FILE *fp, const struct ydoc_node *root);

#endif
