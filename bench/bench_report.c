/* bench_report.c - how long `ddt report` takes for a run with 365 nights of
 * history, beside its Python peer: builds the runs once (like the nightly
 * stores them), renders the newest night's documents several times in
 * process, then times whole `ddt report` processes (the history index warm,
 * and rebuilt) and bench/peer_report.py (numpy, matplotlib, openpyxl, from
 * build/peer-venv: bench/venv.sh) doing the same work on the same runs, in
 * alternating rounds, and prints ddt's time as a ratio of the peer's. */
#include "../tests/test_report_fixture.h"

#include "err.h"
#include "hindex.h"
#include "venv.h"

#include <libgen.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NIGHTS 365
#define RENDERS 5
#define ROUNDS 3
#define TARGET 0.125 /* ddt report's time as a share of the peer's (8x faster) */

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

/* Runs argv[0] with stderr to err (NULL: inherited); its wall and CPU
 * (user + system) seconds into *wall and *cpu. Returns 0, or -1 when it could
 * not run or did not exit 0. */
static int time_process(char *const argv[], const char *err, double *wall, double *cpu)
{
	double t0 = now_s();
	pid_t pid = fork();
	if (pid == 0) {
		if (err && !freopen(err, "w", stderr))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	struct rusage ru;
	if (pid < 0 || wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	*wall = now_s() - t0;
	*cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	return 0;
}

/* The ddt binary beside this benchmark's folder (build/bench/..), or "". */
static void ddt_path(char *ddt, size_t len)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	ddt[0] = '\0';
	if (n <= 0)
		return;
	exe[n] = '\0';
	snprintf(ddt, len, "%s/../ddt", dirname(exe));
	if (access(ddt, X_OK) != 0)
		ddt[0] = '\0';
}

/* The contenders of one round, in the order they run. */
enum { C_DDT, C_DDT_COLD, C_PEER, NCONT };
static const char *const cont_name[NCONT] = {
	"ddt report (history index warm)",
	"ddt report (history index rebuilt: every run.yaml parsed)",
	"Python peer (bench/peer_report.py)",
};

struct timings {
	double wall[NCONT][ROUNDS], cpu[NCONT][ROUNDS];
	int n[NCONT];
};

/* ROUNDS alternating rounds of the contenders that exist (argv[c][0] not
 * NULL), each rendering run id of runs into its own reports folder; the
 * peer's phase line into dir/peer.err. */
static void time_rounds(struct timings *t, char *argv[NCONT][10], const char *runs,
			const char *dir)
{
	char index[4200], err[4200];
	snprintf(index, sizeof index, "%s/" HINDEX_NAME, runs);
	snprintf(err, sizeof err, "%s/peer.err", dir);
	memset(t->n, 0, sizeof t->n);
	for (int r = 0; r < ROUNDS; r++)
		for (int c = 0; c < NCONT; c++) {
			if (!argv[c][0])
				continue;
			if (c == C_DDT_COLD)
				unlink(index);
			int k = t->n[c];
			if (time_process(argv[c], c == C_PEER ? err : NULL, &t->wall[c][k],
					 &t->cpu[c][k]) == 0)
				t->n[c]++;
		}
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_d);
	return n ? v[n / 2] : NAN;
}

/* Prints each contender's median and ddt's ratios to the peer's. */
static void print_rounds(struct timings *t, const char *dir)
{
	double wall[NCONT], cpu[NCONT];
	for (int c = 0; c < NCONT; c++) {
		wall[c] = median(t->wall[c], t->n[c]);
		cpu[c] = median(t->cpu[c], t->n[c]);
		if (t->n[c])
			printf("  %-58s wall %7.3f s  CPU %7.3f s  (median of %d)\n", cont_name[c],
			       wall[c], cpu[c], t->n[c]);
	}
	if (!t->n[C_PEER] || !t->n[C_DDT])
		return;
	for (int c = C_DDT; c <= C_DDT_COLD; c++)
		if (t->n[c])
			printf("  %s / peer: wall %.3f, CPU %.3f (target <= %.3f: %s)\n",
			       c == C_DDT ? "ddt report" : "ddt report, index rebuilt",
			       wall[c] / wall[C_PEER], cpu[c] / cpu[C_PEER], TARGET,
			       wall[c] / wall[C_PEER] <= TARGET ? "met" : "NOT MET");
	char path[4200], line[1024];
	snprintf(path, sizeof path, "%s/peer.err", dir);
	FILE *fp = fopen(path, "r");
	while (fp && fgets(line, sizeof line, fp))
		if (!strncmp(line, "peer_report CPU s:", 18))
			printf("  %s", line);
	if (fp)
		fclose(fp);
}

/* ddt report against its peer on runs (run id), rendering under dir. */
static void bench_peer(const char *dir, const char *runs, const char *id)
{
	char ddt[4200], py[1024], rep[NCONT][4200];
	char *argv[NCONT][10] = {{0}};
	struct timings t;

	ddt_path(ddt, sizeof ddt);
	for (int c = 0; c < NCONT; c++)
		snprintf(rep[c], sizeof rep[c], "%s/reports-%d", dir, c);
	for (int c = C_DDT; ddt[0] && c <= C_DDT_COLD; c++) {
		char *v[] = {ddt, "report", "-q", "--runs", (char *)runs, "--reports", rep[c],
			     (char *)id, NULL};
		memcpy(argv[c], v, sizeof v);
	}
	if (bench_venv_python("build/peer-venv", "bench/peer-requirements.txt", py, sizeof py) == 0) {
		char *v[] = {py, "bench/peer_report.py", "--phases", (char *)runs, rep[C_PEER],
			     (char *)id, NULL};
		memcpy(argv[C_PEER], v, sizeof v);
	} else
		printf("ddt report vs its Python peer: no peer (bench/venv.sh could not make "
		       "build/peer-venv; why above)\n");
	time_rounds(&t, argv, runs, dir);
	printf("ddt report vs its Python peer, %d nights of history, %d alternating rounds, "
	       "%ld online cores:\n", NIGHTS, ROUNDS, sysconf(_SC_NPROCESSORS_ONLN));
	print_rounds(&t, dir);
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
	printf("report_render, %d nights of history, %ld online cores: median %.3f s, best %.3f s, "
	       "worst %.3f s over %d renders (budget 1.5 s on 2 cores)\n",
	       NIGHTS, sysconf(_SC_NPROCESSORS_ONLN), t[RENDERS / 2], t[0], t[RENDERS - 1], RENDERS);
	bench_peer(dir, runs, id);
	fsx_rm_rf(dir);
	return 0;
}
