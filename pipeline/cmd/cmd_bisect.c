/* cmd_bisect.c - `ddt bisect GOOD..BAD SERIES`: builds commits of the range in a git worktree, runs the series' op's bench, and narrows to the first slower commit. */
#include "cmd.h"
#include "err.h"
#include "fsx.h"
#include "history.h"
#include "record.h"
#include "regress.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define BISECT_MAX_COMMITS 4096

struct bisect_args {
	struct paths paths;
	const char *repo, *build, *bench;
};

typedef struct bisect_args A;
static const struct cli_opt bisect_opts[] = {
	CLI_OPT_STR(A, repo, 0, "repo", "DIR", "the git repository (default: this project)"),
	CLI_OPT_STR(A, build, 0, "build", "CMD",
		    "builds a checkout, run in it (default:\nmake CUDA=0 -j2 build/ddt)"),
	CLI_OPT_STR(A, bench, 0, "bench", "CMD",
		    "writes one run record under $DDT_BISECT_RUNS,\nrun in the checkout (default: "
		    "build/ddt bench\n--ops $DDT_BISECT_OP --runs $DDT_BISECT_RUNS)"),
	CLI_OPTS_HISTORY_PATHS(A, paths),
	CLI_OPT_END,
};

const struct cli_spec cmd_bisect_spec = {
	.name = "bisect",
	.usage = "bisect [OPTIONS] GOOD..BAD SERIES",
	.about = "Finds the first commit of GOOD..BAD that made SERIES slower (git bisect run,\n"
		 "asv find): each commit it tries is checked out in its own git worktree,\n"
		 "built, and measured by the series' op's bench; a commit is bad when its\n"
		 "median is slower than GOOD's by the nightly's rule (regress_differs, with\n"
		 "the series' night-to-night noise from runs/ when it has one). SERIES is an\n"
		 "op, op/variant, or \"op/variant params\" as ddt history prints them. BAD\n"
		 "must be slower than GOOD; an alert's commits (ddt ack lists them) are a\n"
		 "ready range.",
	.opts = bisect_opts,
	.takes_args = 1,
};

/* What SERIES names: op, variant and params ("" any). */
struct bisect_series {
	char op[32], variant[32], params[256];
};

static void series_parse(struct bisect_series *s, const char *arg)
{
	size_t n = strcspn(arg, "/ ");
	memset(s, 0, sizeof *s);
	snprintf(s->op, sizeof s->op, "%.*s", (int)(n < 31 ? n : 31), arg);
	if (arg[n] == '/') {
		const char *v = arg + n + 1;
		size_t m = strcspn(v, " ");
		snprintf(s->variant, sizeof s->variant, "%.*s", (int)(m < 31 ? m : 31), v);
		if (v[m] == ' ')
			snprintf(s->params, sizeof s->params, "%s", v + m + 1);
	}
}

/* Runs cmd with sh -c in dir, its output to stderr. Returns 0 or DDT_EGENERIC. */
static int bisect_sh(const char *dir, const char *cmd)
{
	char *line = NULL;
	if (asprintf(&line, "cd '%s' && { %s; } >&2", dir, cmd) < 0)
		return err_nomem();
	int st = system(line);
	free(line);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st))
		return err_set(DDT_EGENERIC, "'%s' failed in %s", cmd, dir);
	return 0;
}

/* The median of the series in the one run record under runs (NaN: none). */
static double bisect_read(const char *runs, const struct bisect_series *s)
{
	DIR *d = opendir(runs);
	struct dirent *e;
	double us = NAN;
	while (d && isnan(us) && (e = readdir(d))) {
		char *p = NULL, params[256];
		struct run_record r;
		struct ydiag diag = {0};
		if (e->d_name[0] == '.' || asprintf(&p, "%s/%s/run.yaml", runs, e->d_name) < 0)
			continue;
		if (!record_read(&r, p, &diag))
			for (size_t i = 0; i < r.nrows && isnan(us); i++) {
				const struct rec_row *w = &r.rows[i];
				rec_row_params_str(w, params, sizeof params);
				if (!strcmp(w->op, s->op) && (!s->variant[0] || !strcmp(w->variant, s->variant)) &&
				    (!s->params[0] || !strcmp(params, s->params)) && w->status == REC_OK)
					us = w->median_us;
			}
		record_free(&r);
		ydiag_free(&diag);
		free(p);
	}
	if (d)
		closedir(d);
	return us;
}

/* Builds and measures commit rev of repo; its median into *us. */
static int bisect_measure(const struct bisect_args *a, const char *rev,
			  const struct bisect_series *s, double *us)
{
	char dir[] = "/tmp/ddt-bisect-XXXXXX", cmd[8192], src[64], runs[64];
	int rc;
	*us = NAN;
	if (!mkdtemp(dir))
		return err_set(DDT_EIO, "cannot make a temporary folder");
	snprintf(src, sizeof src, "%s/src", dir);
	snprintf(runs, sizeof runs, "%s/runs", dir);
	snprintf(cmd, sizeof cmd, "git -C '%s' worktree add -q --detach '%s' '%s'", a->repo, src, rev);
	if (!(rc = bisect_sh(dir, cmd)) && !(rc = fsx_mkdir_p(runs)) &&
	    !(rc = bisect_sh(src, a->build))) {
		setenv("DDT_BISECT_RUNS", runs, 1);
		setenv("DDT_BISECT_OP", s->op, 1);
		rc = bisect_sh(src, a->bench);
	}
	if (!rc && isnan(*us = bisect_read(runs, s)))
		rc = err_set(DDT_EINPUT, "%.12s: its bench measured no %s", rev, s->op);
	snprintf(cmd, sizeof cmd, "git -C '%s' worktree remove --force '%s'", a->repo, src);
	bisect_sh(dir, cmd);
	fsx_rm_rf(dir);
	return rc;
}

/* The commits of range (GOOD..BAD), oldest first, into revs; their number. */
static int bisect_commits(const char *repo, const char *range, char (*revs)[48], size_t *n)
{
	char cmd[4096], line[128];
	*n = 0;
	snprintf(cmd, sizeof cmd, "git -C '%s' rev-list --reverse --ancestry-path '%s'", repo, range);
	FILE *p = popen(cmd, "r");
	while (p && *n < BISECT_MAX_COMMITS && fgets(line, sizeof line, p))
		snprintf(revs[(*n)++], 48, "%.40s", line);
	int st = p ? pclose(p) : -1;
	if (st || !*n)
		return err_set(DDT_EINPUT, "%s: no commits in that range of %s", range, repo);
	return 0;
}

/* The series' night-to-night noise as of the newest night in runs/ (NaN: none). */
static double bisect_noise(const struct regress_conf *c, const char *runs,
			   const struct bisect_series *s)
{
	struct history h;
	double noise = NAN;
	if (!history_load(&h, runs, NULL)) {
		regress_history(c, &h);
		for (size_t i = 0; i < h.n && isnan(noise); i++) {
			const struct hist_series *q = &h.series[i];
			if (!strcmp(q->key.op, s->op) && (!s->variant[0] || !strcmp(q->key.variant, s->variant)) &&
			    (!s->params[0] || !strcmp(q->key.params, s->params)) && q->n)
				noise = q->pts[q->n - 1].noise_frac;
		}
	}
	history_free(&h);
	return noise;
}

/* Narrows revs[0..n) (revs[n-1] = BAD) from GOOD at good_us; prints each step. */
static int bisect_search(const struct bisect_args *a, const struct regress_conf *c,
			 char (*revs)[48], size_t n, const struct bisect_series *s, double good_us,
			 double noise)
{
	long lo = -1, hi = (long)n - 1;
	while (hi - lo > 1) {
		long mid = lo + (hi - lo) / 2;
		double us;
		int rc = bisect_measure(a, revs[mid], s, &us);
		if (rc)
			return rc;
		int bad = regress_differs(c, good_us, us, noise) > 0;
		printf("%.12s %10.4g us  %+6.1f%%  %s\n", revs[mid], us, (us / good_us - 1) * 100,
		       bad ? "bad" : "good");
		*(bad ? &hi : &lo) = mid;
	}
	printf("first bad commit: %s\n", revs[hi]);
	return 0;
}

static int bisect_run(const struct bisect_args *a, const char *range, const char *series)
{
	struct regress_conf c;
	struct bisect_series s;
	char good[128];
	double good_us, bad_us;
	size_t n;
	int rc;
	char (*revs)[48] = calloc(BISECT_MAX_COMMITS, sizeof *revs);

	if (!revs)
		return err_nomem();
	series_parse(&s, series);
	snprintf(good, sizeof good, "%.*s", (int)strcspn(range, "."), range);
	if (!strstr(range, "..") || !good[0])
		rc = err_set(DDT_EINPUT, "%s: expected a range GOOD..BAD", range);
	else if (!(rc = regress_conf_load_file(&c, a->paths.template_path)) &&
		 !(rc = bisect_commits(a->repo, range, revs, &n)) &&
		 !(rc = bisect_measure(a, good, &s, &good_us)) &&
		 !(rc = bisect_measure(a, revs[n - 1], &s, &bad_us))) {
		double noise = bisect_noise(&c, a->paths.runs, &s);
		printf("%.12s %10.4g us  (GOOD)\n%.12s %10.4g us  %+6.1f%%  (BAD)\n", good, good_us,
		       revs[n - 1], bad_us, (bad_us / good_us - 1) * 100);
		if (regress_differs(&c, good_us, bad_us, noise) <= 0)
			rc = err_set(DDT_EINPUT, "BAD is not slower than GOOD by the nightly's rule "
						 "(%+.1f%%; the series' noise %s%.2g%%)",
				     (bad_us / good_us - 1) * 100, isnan(noise) ? "unknown: the minimum "
										 "change alone, " : "",
				     isnan(noise) ? 100 * c.min_delta_frac : noise * 100);
		else
			rc = bisect_search(a, &c, revs, n, &s, good_us, noise);
	}
	free(revs);
	return rc;
}

int cmd_bisect(int argc, char **argv)
{
	struct bisect_args a = {.build = "make CUDA=0 -j2 build/ddt >/dev/null",
				.bench = "build/ddt bench --ops \"$DDT_BISECT_OP\" --runs "
					 "\"$DDT_BISECT_RUNS\" >/dev/null"};
	int first, rc;

	paths_init(&a.paths, "default");
	a.repo = a.paths.home;
	if ((rc = cli_parse(&cmd_bisect_spec, &a, argc, argv, &first)) >= 0)
		return rc;
	if (argc - first != 2)
		return cli_usage_error("bisect", "expected a range GOOD..BAD and a SERIES");
	if ((rc = bisect_run(&a, argv[first], argv[first + 1])) != 0)
		return cli_fail("bisect", rc);
	return fflush(stdout) == 0 ? 0 : 1;
}
