/* revrange.c - the link of a range of revisions (revrange.h). */
#include "revrange.h"

#include <stdio.h>
#include <string.h>

char *revrange_url(const char *url, const char *good, const char *bad, char *buf, size_t len)
{
	size_t off = 0;
	if (!len)
		return buf;
	buf[0] = '\0';
	if (!url || !url[0] || !good || !good[0] || !bad || !bad[0])
		return buf;
	for (const char *u = url; *u && off + 1 < len;) {
		const char *rev = !strncmp(u, "{good}", 6) ? good : !strncmp(u, "{bad}", 5) ? bad : NULL;
		if (rev) {
			off += (size_t)snprintf(buf + off, len - off, "%s", rev);
			u += rev == good ? 6 : 5;
		} else
			buf[off++] = *u++;
	}
	buf[off < len ? off : len - 1] = '\0';
	return buf;
}
