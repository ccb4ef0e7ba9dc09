/* revrange.h - the link of a range of revisions: a URL template with
 * {good} and {bad} (a forge's compare page, a bisect helper). */
#ifndef DDT_REVRANGE_H
#define DDT_REVRANGE_H

#include <stddef.h>

/* url with every {good} and {bad} replaced by the revisions good and bad,
 * into buf (at most len - 1 bytes and a NUL); "" when url, good or bad is
 * NULL or "". Returns buf. */
char *revrange_url(const char *url, const char *good, const char *bad, char *buf, size_t len);

#endif
