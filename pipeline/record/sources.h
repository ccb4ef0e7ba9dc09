/* sources.h - calibration/SOURCES.md as data: every [id] a `source:` field
 * cites, with the public address of its primary source and what it is. */
#ifndef DDT_SOURCES_H
#define DDT_SOURCES_H

#include <stddef.h>

/* The file's name in a calibration folder (stored with every run beside the
 * calibration it lists the sources of). */
#define SOURCES_FILE "SOURCES.md"

struct source {
	char *id;        /* "ddtree-2604.12989", without the brackets */
	char *url;       /* the entry's first https:// address; "" when it has none
			  * (ddt's own assumptions, the seed document) */
	char *about;     /* the entry's text before "Facts:", markdown marks dropped */
	int line;        /* where the entry starts in the file (1-based) */
};

struct sources {
	size_t n;
	struct source *v;
};

/* Parses SOURCES.md text: an entry is a list item that starts with its id in
 * bold brackets ("- **[nvidia-h200]** NVIDIA H200 ..."), continued by the
 * indented lines after it. path names the file in messages. Returns 0,
 * DDT_EINPUT (an id listed twice: "path:line: [id] is listed twice, first at
 * line N") or DDT_ENOMEM; free s with sources_free even on error. */
int sources_parse(struct sources *s, const char *text, const char *path);
/* The same from a file; DDT_EIO / DDT_ENOTFOUND when it cannot be read. */
int sources_load(struct sources *s, const char *path);
void sources_free(struct sources *s);

/* The entry of id (len bytes, no brackets), or NULL. */
const struct source *sources_find(const struct sources *s, const char *id, size_t len);

/* The next cited id in text at or after byte *pos: sets *start and *len to
 * the id between its brackets ("[nvbench]" gives the 7 bytes of "nvbench"),
 * *pos past its closing bracket, and returns 1; 0 when there is none. An id
 * is lower-case letters, digits, '-' and '.'. */
int sources_next_id(const char *text, size_t *pos, size_t *start, size_t *len);

#endif
