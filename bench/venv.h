/* venv.h - a bench peer's python: bench/venv.sh's virtual environment, made once. Include once per program. */
#ifndef DDT_BENCH_VENV_H
#define DDT_BENCH_VENV_H

#include <stdio.h>
#include <string.h>

/* The python of virtual environment venv made from requirements file req
 * (bench/venv.sh, which says on stderr what it installs or why it cannot),
 * into py. Runs from the project folder. Returns 0, or -1 when there is none. */
static int bench_venv_python(const char *venv, const char *req, char *py, size_t len)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "bench/venv.sh '%s' '%s'", venv, req);
	FILE *fp = popen(cmd, "r");
	if (!fp)
		return -1;
	int got = fgets(py, (int)len, fp) != NULL;
	if (pclose(fp) != 0 || !got)
		return -1;
	py[strcspn(py, "\n")] = '\0';
	return 0;
}

#endif
