/* sources.c - reads calibration/SOURCES.md's entries: id, public address, what it is. */
#include "sources.h"

#include "err.h"
#include "fsx.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define SOURCES_MAX_BYTES (1 << 20)

static int id_char(char c)
{
	return islower((unsigned char)c) || isdigit((unsigned char)c) || c == '-' || c == '.';
}

int sources_next_id(const char *text, size_t *pos, size_t *start, size_t *len)
{
	for (const char *p = strchr(text + *pos, '['); p; p = strchr(p + 1, '[')) {
		const char *e = p + 1;
		while (id_char(*e))
			e++;
		if (*e != ']' || e == p + 1)
			continue;
		*start = (size_t)(p + 1 - text);
		*len = (size_t)(e - p - 1);
		*pos = (size_t)(e + 1 - text);
		return 1;
	}
	return 0;
}

const struct source *sources_find(const struct sources *s, const char *id, size_t len)
{
	for (size_t i = 0; i < s->n; i++)
		if (strlen(s->v[i].id) == len && !memcmp(s->v[i].id, id, len))
			return &s->v[i];
	return NULL;
}

void sources_free(struct sources *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].id);
		free(s->v[i].url);
		free(s->v[i].about);
	}
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/* Appends n bytes of a line to the text being gathered (one space between
 * lines, backticks and bold marks dropped). */
static void gather(char *dst, size_t *at, const char *src, size_t n)
{
	if (*at && n)
		dst[(*at)++] = ' ';
	for (size_t i = 0; i < n; i++) {
		if (src[i] == '`')
			continue;
		if (src[i] == '*' && i + 1 < n && src[i + 1] == '*') {
			i++;
			continue;
		}
		dst[(*at)++] = src[i];
	}
	dst[*at] = '\0';
}

/* The first https:// address of text (a trailing '.', ',', ';' or ')' is
 * punctuation, not address), as a new string; "" when none. */
static char *first_url(const char *text)
{
	const char *p = strstr(text, "https://");
	size_t n = 0;
	if (p) {
		while (p[n] && !isspace((unsigned char)p[n]))
			n++;
		while (n && strchr(".,;)", p[n - 1]))
			n--;
	}
	return strndup(p ? p : "", n);
}

/* Adds the entry of body (its text after the bold id) at line. */
static int add_entry(struct sources *s, const char *path, int line, const char *id, size_t idlen,
		     const char *body)
{
	const struct source *dup = sources_find(s, id, idlen);
	const char *facts = strstr(body, " Facts:");
	struct source *v, *e;

	if (dup)
		return err_set(DDT_EINPUT, "%s:%d: [%.*s] is listed twice, first at line %d", path,
			       line, (int)idlen, id, dup->line);
	if (!(v = realloc(s->v, (s->n + 1) * sizeof *v)))
		return err_nomem();
	s->v = v;
	e = &v[s->n];
	e->line = line;
	e->id = strndup(id, idlen);
	e->url = first_url(body);
	e->about = strndup(body, facts ? (size_t)(facts - body) : strlen(body));
	s->n++;
	return e->id && e->url && e->about ? 0 : err_nomem();
}

/* Length of line at p (to its newline or the end). */
static size_t line_len(const char *p)
{
	const char *nl = strchr(p, '\n');
	return nl ? (size_t)(nl - p) : strlen(p);
}

/* The id of an entry's first line "- **[id]** ...": its start and length,
 * and where the entry's text starts; 0 when the line starts no entry. */
static int entry_head(const char *p, size_t n, size_t *id, size_t *idlen, size_t *body)
{
	size_t pos = 0, start, len;
	if (n < 8 || strncmp(p, "- **[", 5) || !sources_next_id(p, &pos, &start, &len) ||
	    start != 5 || pos + 2 > n || strncmp(p + pos, "**", 2))
		return 0;
	*id = start;
	*idlen = len;
	*body = pos + 2;
	while (*body < n && p[*body] == ' ')
		(*body)++;
	return 1;
}

int sources_parse(struct sources *s, const char *text, const char *path)
{
	size_t cap = strlen(text) + 1, at = 0, id = 0, idlen = 0, body;
	char *buf = malloc(cap);
	const char *entry = NULL;
	int line = 0, entry_line = 0, rc = buf ? 0 : err_nomem();

	s->n = 0;
	s->v = NULL;
	for (const char *p = text; !rc && *p;) {
		size_t n = line_len(p);
		line++;
		int cont = entry && n && (p[0] == ' ' || p[0] == '\t');
		if (!cont && entry) { /* the entry ends here */
			rc = add_entry(s, path, entry_line, entry + id, idlen, buf);
			entry = NULL;
		}
		if (cont) {
			size_t k = 0;
			while (k < n && isspace((unsigned char)p[k]))
				k++;
			gather(buf, &at, p + k, n - k);
		} else if (!rc && entry_head(p, n, &id, &idlen, &body)) {
			entry = p;
			entry_line = line;
			at = 0;
			gather(buf, &at, p + body, n - body);
		}
		p += n + (p[n] == '\n');
	}
	if (!rc && entry)
		rc = add_entry(s, path, entry_line, entry + id, idlen, buf);
	free(buf);
	return rc;
}

int sources_load(struct sources *s, const char *path)
{
	char *text = NULL;
	int rc = fsx_read_all(path, SOURCES_MAX_BYTES, &text, NULL);

	s->n = 0;
	s->v = NULL;
	if (!rc)
		rc = sources_parse(s, text, path);
	free(text);
	return rc;
}
