/* device.c - what the CPU is and what built this binary: the record's device and provenance fields. */
#include "cpu/cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The "model name" line of /proc/cpuinfo into buf ("" when absent). */
static void cpu_model_name(char *buf, size_t len)
{
	FILE *fp = fopen("/proc/cpuinfo", "r");
	char line[512];

	buf[0] = '\0';
	if (!fp)
		return;
	while (fgets(line, sizeof line, fp)) {
		char *colon = strchr(line, ':');
		if (strncmp(line, "model name", 10) || !colon)
			continue;
		colon++;
		colon += strspn(colon, " \t");
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(buf, len, "%s", colon);
		break;
	}
	fclose(fp);
}

void cpu_device_detect(struct rec_device *d)
{
	char model[96];
	struct utsname u;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

	memset(d, 0, sizeof *d);
	snprintf(d->kind, sizeof d->kind, "cpu");
	cpu_model_name(model, sizeof model);
	d->cores = cpu_threads();
	snprintf(d->name, sizeof d->name, "%s (%d cores)", model[0] ? model : "unknown CPU",
		 d->cores);
	if (uname(&u) == 0)
		snprintf(d->arch, sizeof d->arch, "%.15s", u.machine);
	d->mem_gb = pages > 0 && page > 0 ? (double)pages * (double)page / 1e9 : NAN;
	d->sm_clock_mhz = NAN;
	d->mem_clock_mhz = NAN;
	d->peak_gbps = NAN;
	d->copy_gbps = NAN;
}

/* First line of `cmd`'s output into buf; returns 0 when it ran and exited 0. */
static int run_line(const char *cmd, char *buf, size_t len)
{
	FILE *fp = popen(cmd, "r");
	buf[0] = '\0';
	if (!fp)
		return -1;
	if (!fgets(buf, (int)len, fp))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	/* drain so git never dies of SIGPIPE and reports failure */
	char sink[256];
	while (fgets(sink, sizeof sink, fp))
		;
	return pclose(fp) == 0 ? 0 : -1;
}

/* Single-quotes s for the shell into buf; 0, or -1 when it does not fit. */
static int shell_quote(const char *s, char *buf, size_t len)
{
	size_t o = 0;
	if (len < 3)
		return -1;
	buf[o++] = '\'';
	for (; *s; s++) {
		const char *piece = *s == '\'' ? "'\\''" : NULL;
		size_t pl = piece ? 4 : 1;
		if (o + pl + 2 > len)
			return -1;
		if (piece)
			memcpy(buf + o, piece, pl);
		else
			buf[o] = *s;
		o += pl;
	}
	buf[o++] = '\'';
	buf[o] = '\0';
	return 0;
}

static void git_revision(char *rev, size_t len, const char *home)
{
	char q[4200], cmd[4400], out[128], dirty[128];

	snprintf(rev, len, "unknown");
	if (shell_quote(home, q, sizeof q))
		return;
	snprintf(cmd, sizeof cmd, "git -C %s rev-parse --short HEAD 2>/dev/null", q);
	if (run_line(cmd, out, sizeof out) || !out[0])
		return;
	snprintf(cmd, sizeof cmd, "git -C %s status --porcelain 2>/dev/null", q);
	if (run_line(cmd, dirty, sizeof dirty))
		return; /* cannot tell whether it is modified: keep "unknown" */
	snprintf(rev, len, "%.40s%s", out, dirty[0] ? "+dirty" : "");
}

void cpu_provenance(struct rec_provenance *p, const char *home)
{
	memset(p, 0, sizeof *p);
	git_revision(p->git_rev, sizeof p->git_rev, home);
#if defined(__clang__)
	snprintf(p->compiler, sizeof p->compiler, "clang %s", __clang_version__);
#elif defined(__GNUC__)
	snprintf(p->compiler, sizeof p->compiler, "gcc %s", __VERSION__);
#else
	snprintf(p->compiler, sizeof p->compiler, "%s", __VERSION__);
#endif
	/* What the compiler was told, as far as the binary can see it. */
	snprintf(p->build, sizeof p->build, "%s%s%s",
#ifdef __OPTIMIZE__
		 "opt",
#else
		 "O0",
#endif
#if defined(__AVX512F__)
		 "-avx512",
#elif defined(__AVX2__)
		 "-avx2",
#else
		 "-generic",
#endif
#ifdef __FMA__
		 "-fma"
#else
		 ""
#endif
	);
	if (gethostname(p->host, sizeof p->host) != 0)
		snprintf(p->host, sizeof p->host, "unknown");
	p->host[sizeof p->host - 1] = '\0';
}
