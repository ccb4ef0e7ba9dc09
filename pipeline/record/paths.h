/* paths.h - the project folder and the folders in it that ddt reads and writes. */
#ifndef DDT_PATHS_H
#define DDT_PATHS_H

#include <limits.h>

/* Where ddt reads and writes. Defaults come from the project folder (the
 * folder above build/ddt, or $DDT_HOME), so ddt runs from anywhere. */
struct paths {
	char home[2048];            /* shorter, so the paths below always fit */
	char calibration[PATH_MAX]; /* folder or file */
	char template_path[PATH_MAX];
	char runs[PATH_MAX];
	char reports[PATH_MAX];
	int template_given;         /* set by paths_set_template: the user chose one */
};

/* Fills p with the project's default folders; template is templates/<tmpl>.yaml. */
void paths_init(struct paths *p, const char *tmpl);

/* Sets dst (PATH_MAX bytes) to a folder ddt writes (runs/, reports/), made
 * canonical (fsx_canonical): the operator's own links in it are resolved
 * here, once, so that below it every write and deletion can refuse links.
 * Returns 0 or an error code with the message set. */
int paths_set_folder(char *dst, const char *arg);

/* Sets the template: a bare name ("cpu") means templates/<name>.yaml, else a
 * path. Marks it given. Cannot fail. */
void paths_set_template(struct paths *p, const char *arg);

#endif
