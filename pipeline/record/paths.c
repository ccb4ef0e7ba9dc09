/* paths.c - the project folder and the folders in it that ddt reads and writes. */
#include "paths.h"

#include "fsx.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The project folder: $DDT_HOME, else the parent of the folder holding the
 * binary (build/ddt -> .), else the current folder. */
static void find_home(char *home, size_t len)
{
	const char *env = getenv("DDT_HOME");
	char exe[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		snprintf(home, len, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *dir = dirname(exe); /* .../build */
		char *top = dirname(dir); /* ... */
		char probe[PATH_MAX];
		snprintf(probe, sizeof probe, "%s/calibration", top);
		if (fsx_exists(probe)) {
			snprintf(home, len, "%s", top);
			return;
		}
	}
	snprintf(home, len, ".");
}

void paths_init(struct paths *p, const char *tmpl)
{
	memset(p, 0, sizeof *p);
	find_home(p->home, sizeof p->home);
	snprintf(p->calibration, sizeof p->calibration, "%s/calibration", p->home);
	snprintf(p->template_path, sizeof p->template_path, "%s/templates/%s.yaml", p->home, tmpl);
	snprintf(p->runs, sizeof p->runs, "%s/runs", p->home);
	snprintf(p->reports, sizeof p->reports, "%s/reports", p->home);
	paths_set_folder(p->runs, p->runs); /* unchanged when it cannot be made canonical */
	paths_set_folder(p->reports, p->reports);
}

int paths_set_folder(char *dst, const char *arg)
{
	char real[PATH_MAX];
	int rc = fsx_canonical(arg, real, sizeof real);
	if (!rc) {
		memcpy(dst, real, strlen(real) + 1);
		fsx_confine_reads(real); /* others may write it: no link there is followed */
	}
	return rc;
}

void paths_set_template(struct paths *p, const char *arg)
{
	if (!strchr(arg, '/') && !strstr(arg, ".yaml") && strlen(arg) < 256)
		snprintf(p->template_path, sizeof p->template_path, "%s/templates/%.255s.yaml",
			 p->home, arg);
	else
		snprintf(p->template_path, sizeof p->template_path, "%s", arg);
	p->template_given = 1;
}
