/* bench_startup.c - what a ddt command costs before it works: CPU time and peak RSS of `ddt --help` and `ddt estimate` beside a build without CUDA, and beside ddt with the CUDA libraries linked in.
 *
 * The peers, run in the same rounds, one after the other:
 *   no CUDA   the same binary copied alone into a temporary folder: no
 *             backend beside it, so it cannot open one (a build without CUDA)
 *   linked    build/bench/ddt-cuda-linked, ddt's objects linked against
 *             cudart, cuBLAS and NCCL as ddt was before its backend became
 *             a shared object (built by make bench only where nvcc is)
 * Figures are medians over the rounds of user + system CPU time and the
 * peak RSS from wait4(). Limits: CPU within 1.5x of the build without CUDA,
 * RSS of --help at most 30 MiB. Run from the project folder; DDT_BIN names
 * the binary (default build/ddt). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsx.h"

#define ROUNDS 15
#define PEERS 3

struct cost {
	double cpu_ms[ROUNDS];
	double rss_mib[ROUNDS];
};

/* Runs bin with argv[1..] (stdout and stderr to /dev/null) and adds its CPU
 * time and peak RSS as sample k. Returns 0, or -1 when it cannot run or
 * exits non-zero. */
static int run_once(const char *bin, char *const args[], struct cost *c, int k)
{
	struct rusage ru;
	int st = 0;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execv(bin, args);
		_exit(127);
	}
	if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	c->cpu_ms[k] = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-3;
	c->rss_mib[k] = ru.ru_maxrss / 1024.0;
	return 0;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_dbl);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Copies src to dst (mode 0755). Returns 0 or -1. */
static int copy_exe(const char *src, const char *dst)
{
	char *buf = NULL;
	size_t len = 0;
	int fd, rc = -1;
	if (fsx_read_all(src, (size_t)256 << 20, &buf, &len))
		return -1;
	if ((fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0755)) >= 0) {
		rc = write(fd, buf, len) == (ssize_t)len ? 0 : -1;
		close(fd);
	}
	free(buf);
	return rc;
}

/* One command, ROUNDS rounds over the peers that exist; prints its line
 * (with the RSS limit when rss_limit_mib > 0). */
static int bench_cmd(const char *label, char *const bins[PEERS], const char *arg,
		     double rss_limit_mib)
{
	static struct cost c[PEERS];
	for (int k = 0; k < ROUNDS; k++)
		for (int p = 0; p < PEERS; p++) {
			char *args[] = {bins[p], (char *)arg, NULL};
			if (bins[p] && run_once(bins[p], args, &c[p], k)) {
				fprintf(stderr, "bench_startup: %s %s failed\n", bins[p], arg);
				return -1;
			}
		}
	double cpu[PEERS], rss[PEERS];
	for (int p = 0; p < PEERS; p++)
		if (bins[p]) {
			cpu[p] = median(c[p].cpu_ms, ROUNDS);
			rss[p] = median(c[p].rss_mib, ROUNDS);
		}
	printf("  %-13s %6.1f ms CPU %5.1f MiB | build without CUDA %6.1f ms %5.1f MiB: %.2fx "
	       "(limit 1.5x)", label, cpu[0], rss[0], cpu[1], rss[1], cpu[0] / cpu[1]);
	if (rss_limit_mib > 0)
		printf(", RSS %s %.0f MiB", rss[0] <= rss_limit_mib ? "within" : "OVER", rss_limit_mib);
	if (bins[2])
		printf(" | CUDA linked %6.1f ms %5.1f MiB: %.1fx ddt's CPU", cpu[2], rss[2],
		       cpu[2] / cpu[0]);
	printf("\n");
	return 0;
}

int main(void)
{
	const char *ddt = getenv("DDT_BIN") ? getenv("DDT_BIN") : "build/ddt";
	char dir[] = "/tmp/ddt-startup-XXXXXX", alone[64], linked[] = "build/bench/ddt-cuda-linked";
	int rc = 1;

	if (!mkdtemp(dir)) {
		perror("bench_startup: mkdtemp");
		return 1;
	}
	snprintf(alone, sizeof alone, "%s/ddt", dir);
	if (copy_exe(ddt, alone)) {
		fprintf(stderr, "bench_startup: cannot copy %s to %s\n", ddt, alone);
		goto done;
	}
	char *bins[PEERS] = {(char *)ddt, alone, access(linked, X_OK) == 0 ? linked : NULL};
	printf("startup: median of %d rounds, CPU = user + system, the peers in the same rounds%s\n",
	       ROUNDS, bins[2] ? "" : "; no CUDA-linked peer (nvcc not found)");
	if (bench_cmd("ddt --help", bins, "--help", 30) ||
	    bench_cmd("ddt estimate", bins, "estimate", 0))
		goto done;
	rc = 0;
done:
	unlink(alone);
	rmdir(dir);
	return rc;
}
