/* esc.c - outside text made safe for a terminal, a log line and a mail line. */
#include "esc.h"

#include <string.h>

/* The escape of the character at s into e (at most 7 bytes and a NUL);
 * *used receives how many bytes of s it takes. 0 when s[0] is shown as it is. */
static int esc_one(const unsigned char *s, char *e, size_t *used)
{
	static const char hex[] = "0123456789abcdef";
	*used = 1;
	switch (s[0]) {
	case '\n': return strcpy(e, "\\n"), 1;
	case '\r': return strcpy(e, "\\r"), 1;
	case '\t': return strcpy(e, "\\t"), 1;
	case 0x1b: return strcpy(e, "\\e"), 1;
	case '\\':
		/* a backslash that would read as an escape is doubled */
		if (strchr("nrtexu\\", s[1]) && s[1])
			return strcpy(e, "\\\\"), 1;
		return 0;
	default: break;
	}
	if (s[0] < 0x20 || s[0] == 0x7f) {
		e[0] = '\\', e[1] = 'x', e[2] = hex[s[0] >> 4], e[3] = hex[s[0] & 15], e[4] = '\0';
		return 1;
	}
	if (s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f) { /* C1 in UTF-8 */
		strcpy(e, "\\u00");
		e[4] = hex[s[1] >> 4], e[5] = hex[s[1] & 15], e[6] = '\0';
		*used = 2;
		return 1;
	}
	return 0;
}

char *esc_text(char *out, size_t len, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0, used;
	char e[8];

	if (!len)
		return out;
	while (*p) {
		const char *add = esc_one(p, e, &used) ? e : NULL;
		size_t n = add ? strlen(add) : 1;
		if (o + n >= len)
			break;
		memcpy(out + o, add ? add : (const char *)p, n);
		o += n;
		p += used;
	}
	out[o] = '\0';
	return out;
}

int esc_line(FILE *fp, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t used;
	char e[8];

	for (; *p; p += used)
		if (esc_one(p, e, &used) ? fputs(e, fp) == EOF : putc(*p, fp) == EOF)
			return EOF;
	return putc('\n', fp) == EOF ? EOF : 0;
}
