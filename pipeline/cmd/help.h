/* help.h - the documentation built into ddt: the pages of docs/ (tools/embed-docs) and the version. */
#ifndef DDT_HELP_H
#define DDT_HELP_H

/* One page of docs/: `ddt help TOPIC` prints its text. The pages are built
 * into the binary (build/gen/help_docs.c), so help works from an installed
 * or copied ddt as from the source tree, and always matches the build. */
struct help_doc {
	const char *topic; /* the file name without .md: "projection" */
	const char *title; /* its first line without the '# ' */
	const char *text;  /* the whole page */
};

/* Every page of docs/, in file-name order. */
extern const struct help_doc help_docs[];
extern const int help_ndocs;

/* `git describe --always --dirty --tags` when ddt was built, or
 * "unknown" outside a git checkout (build/gen/version.c). */
extern const char help_version[];

#endif
