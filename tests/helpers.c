/* helpers.c - what the tests share (helpers.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helpers.h"

#include "fsx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

const char *helpers_bin(void)
{
	const char *b = getenv("DDT_BIN");
	return b && *b ? b : "build/ddt";
}

int helpers_run(char **out, const char *cmd)
{
	char full[8192], *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len), *p;
	int c;

	snprintf(full, sizeof full, "%s 2>&1", cmd);
	p = popen(full, "r");
	assert_non_null(p);
	while ((c = fgetc(p)) != EOF)
		fputc(c, mem);
	int st = pclose(p);
	fclose(mem);
	*out = buf;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int helpers_ddt(char **out, const char *args)
{
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "%s %s", helpers_bin(), args);
	return helpers_run(out, cmd);
}

int helpers_capture(const char *cmd, char *buf, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0;
	if (!p)
		return -1;
	while (n + 1 < len) {
		size_t got = fread(buf + n, 1, len - n - 1, p);
		if (!got)
			break;
		n += got;
	}
	buf[n] = '\0';
	return pclose(p);
}

char *helpers_slurp(const char *path)
{
	char *buf = NULL;
	size_t len;
	if (fsx_read_all(path, 1 << 24, &buf, &len) != 0)
		return strdup("");
	return buf;
}

const char helpers_tiny_yaml[] =
	"name: tiny\n"
	"extends: default.yaml\n"
	"bench:\n"
	"  seed: 1\n"
	"  backends: [cpu]\n"
	"  variants: [cold]\n"
	"  source: \"tests/helpers.c: tiny sizes so a nightly takes about a second\"\n"
	"  timing: {warmup: 1, min_samples: 3, max_samples: 20, min_time_s: 0.001,\n"
	"           target_rsd: 0.5, timeout_s: 0.2, min_clock_frac: 0.75, source: \"test\"}\n"
	"  cpu: {threads: 1, flush_mib: 1, copy_mib: 4}\n"
	"  ops:\n"
	"    - op: dense_gemv\n"
	"      params: {M: 1, K: 256, N: 256}\n"
	"    - op: tree_build\n"
	"      params: {L: 3, V: 512, B: 4}\n"
	"projection:\n"
	"  samples: 200\n";
