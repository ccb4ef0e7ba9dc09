/* bench_report.c - how long `ddt report` takes for a run with 365 nights of
 * history: builds the runs once (like the nightly stores them), then renders
 * the newest night's documents several times and prints the figures. */
#include "../tests/test_report_fixture.h"

#include "err.h"

#include <libgen.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NIGHTS 365
#define RENDERS 5

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Seconds one `ddt report` process takes (fonts and all), or -1 when the ddt
 * binary beside this benchmark's folder cannot be run. */
static double time_command(const char *runs, const char *reports, const char *id)
{
	char exe[4096], ddt[4200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	snprintf(ddt, sizeof ddt, "%s/../ddt", dirname(exe)); /* build/bench/.. */
	if (access(ddt, X_OK) != 0)
		return -1;
	double t0 = now_s();
	pid_t pid = fork();
	if (pid == 0) {
		execl(ddt, ddt, "report", "-q", "--runs", runs, "--reports", reports, id, (char *)NULL);
		_exit(127);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	return now_s() - t0;
}

int main(void)
{
	char dir[] = "/tmp/ddt-bench-report-XXXXXX", runs[4096], reports[4096], id[96];
	double t[RENDERS], t0;
	struct report_ctx ctx = {0};
	int rc;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(runs, sizeof runs, "%s/runs", dir);
	snprintf(reports, sizeof reports, "%s/reports", dir);
	t0 = now_s();
	/* the template's own Monte Carlo sample count: the real projection */
	if ((rc = fixture_runs(runs, NIGHTS, 0, id, sizeof id)) != 0) {
		fprintf(stderr, "bench_report: building the runs failed: %s\n", err_msg());
		fsx_rm_rf(dir);
		return 1;
	}
	printf("runs: %d nights built in %.2f s (%s)\n", NIGHTS, now_s() - t0, id);
	ctx.runs_dir = runs;
	ctx.home = fixture_home();
	ctx.quiet = 1;
	for (int i = 0; i < RENDERS; i++) {
		t0 = now_s();
		if ((rc = report_render(&ctx, reports, id)) != 0) {
			fprintf(stderr, "bench_report: render failed: %s\n", err_msg());
			fsx_rm_rf(dir);
			return 1;
		}
		t[i] = now_s() - t0;
	}
	qsort(t, RENDERS, sizeof *t, cmp_d);
	double cmd[RENDERS];
	int ncmd = 0;
	for (int i = 0; i < RENDERS; i++)
		if ((cmd[ncmd] = time_command(runs, reports, id)) >= 0)
			ncmd++;
	if (ncmd) {
		qsort(cmd, (size_t)ncmd, sizeof *cmd, cmp_d);
		printf("ddt report (a whole process), %d nights of history: median %.3f s, best "
		       "%.3f s over %d runs\n",
		       NIGHTS, cmd[ncmd / 2], cmd[0], ncmd);
	}
	printf("report_render, %d nights of history, %ld online cores: median %.3f s, best %.3f s, "
	       "worst %.3f s over %d renders (budget 1.5 s on 2 cores)\n",
	       NIGHTS, sysconf(_SC_NPROCESSORS_ONLN), t[RENDERS / 2], t[0], t[RENDERS - 1], RENDERS);
	fsx_rm_rf(dir);
	return 0;
}
