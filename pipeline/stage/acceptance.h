/* acceptance.h - mean acceptance vs budget from a drafter trace: the engine's DDTree heap and walk replayed over every step, with bootstrap intervals. */
#ifndef DDT_ACCEPTANCE_H
#define DDT_ACCEPTANCE_H

#include <stdint.h>
#include <stdio.h>

#define ACCEPTANCE_MAX_BUDGETS 64
#define ACCEPTANCE_MAX_BUDGET 8192 /* the tree's ancestor mask grows as budget^2 */
/* A trace this small, in requests or steps, is warned of (in the table and on
 * page one): the bootstrap's interval is only as good as the units it
 * resamples (the bar of 200 requests or 2,000 steps). */
#define ACCEPTANCE_FEW_REQUESTS 200
#define ACCEPTANCE_FEW_STEPS 2000

struct acceptance_opts {
	int nbudgets;
	int budgets[ACCEPTANCE_MAX_BUDGETS]; /* ascending, distinct, 0..ACCEPTANCE_MAX_BUDGET */
	int block;       /* replay this block (<= the trace's); 0: the trace's */
	int resamples;   /* bootstrap resamples over requests */
	double level;    /* confidence level of the interval, e.g. 0.95 */
	uint64_t seed;   /* of the bootstrap */
	int progress;    /* draw a progress line on stderr */
};

/* Fills o with the defaults: budgets 1, 2, 4, ..., 1024, the trace's block,
 * 2000 resamples, 95%, seed 1. */
void acceptance_opts_default(struct acceptance_opts *o);

/* Parses "1,2,4,...,1024" (a "..." between two numbers continues their
 * ratio, or their step when they differ by less than double) into o's
 * budgets, sorted and distinct. Returns 0 or DDT_EINPUT with the message set. */
int acceptance_parse_budgets(struct acceptance_opts *o, const char *list);

/* One budget's figures. */
struct acceptance_budget {
	int budget;
	double mean;       /* mean acceptance, root included */
	double lo, hi;     /* bootstrap percentile interval at the options' level */
	double se;         /* bootstrap standard error of the mean */
	double deff;       /* design effect: the mean's variance over requests / the one
			    * of steps taken as independent (NaN: no spread) */
	double drafter;    /* 1 + mean sum of the tree's prefix probabilities: what the
			    * drafter itself expects (its calibration against mean) */
	double capped;     /* share of steps whose acceptance was the block */
	double k_limited;  /* share of steps where the trace's top-K is shorter than the
			    * tree used: there the figure is a lower bound */
	long long *hist;   /* [block + 1]: hist[a] = steps accepting a (1..block) */
};

struct acceptance_result {
	char *trace;        /* the path given */
	long long steps;    /* lines replayed (blank lines skipped) */
	long long requests; /* the bootstrap's units: request ids, and steps without one */
	long long request_steps; /* steps that record a request_id */
	int block;          /* replayed block: positions + 1 */
	int trace_block;    /* the trace's */
	int k_min, k_max;   /* top-K over the lines */
	int nb;
	struct acceptance_budget b[ACCEPTANCE_MAX_BUDGETS];
	double *cov;        /* [nb][nb] bootstrap covariance of the means */
	int resamples;
	double level;
	uint64_t seed;
	double boot_cpu_s;  /* CPU seconds the bootstrap took (all threads), for make bench */

	/* The engine's own acceptance, for lines that record accepted and budget_used. */
	long long engine_steps;    /* lines compared */
	long long engine_agree;    /* of those, replay == accepted */
	long long engine_skipped;  /* lines with accepted that could not be compared */
	double engine_mean, replay_mean; /* over the compared lines */
	long long first_disagree;  /* line number, 0 when none */

	/* context (tokens before the root), over lines that record it: its
	 * distribution (a projection's scenarios without a context take the
	 * mean: attention grows linearly in it) */
	long long context_steps;
	double context_mean, context_sd;
	long long context_min, context_max;
	double context_q[5];       /* p5, p25, p50, p75, p95 */
};

/* Replays every step of the trace at path ("-": standard input) at every
 * budget of o. Bad lines stop it: DDT_EINPUT with "path:line:column: ..."
 * set. Returns 0, DDT_EINPUT, DDT_ENOTFOUND, DDT_EIO or DDT_ENOMEM. r is
 * filled on success and must be freed with acceptance_free either way. */
int acceptance_replay(struct acceptance_result *r, const char *path, const struct acceptance_opts *o);

void acceptance_free(struct acceptance_result *r);

/* The human table (mean, interval, drafter's estimate, capped, K-limited),
 * the histogram, the engine agreement. Cannot fail (the stream's error
 * flag tells). */
void acceptance_write_text(const struct acceptance_result *r, FILE *fp);

/* One row per budget: budget, mean, ci_lo, ci_hi, se, drafter, capped,
 * k_limited, steps, then accept_1 .. accept_<block> (step counts). */
void acceptance_write_csv(const struct acceptance_result *r, FILE *fp);

/* The curve as YAML (docs/acceptance.md; the projection replays the trace
 * itself, it reads no curve file): per budget the figures and histogram, the covariance
 * of the means, the engine agreement, context. */
void acceptance_write_yaml(const struct acceptance_result *r, FILE *fp);

/* Reads a curve acceptance_write_yaml wrote back from path into r, by the
 * same table of keys, and its rules across keys: budgets increase, each
 * mean within its interval and the block, one item per budget in every
 * list, lower_bound where k_limited, each histogram row every step.
 * Returns 0 or DDT_EINPUT ("path:line:column: ..."), DDT_ENOTFOUND, DDT_EIO
 * or DDT_ENOMEM, the message set; r freed with acceptance_free either way
 * (boot_cpu_s, which the file does not hold, 0). */
int acceptance_read_yaml(struct acceptance_result *r, const char *path);

/* The curve's bootstrap keys (resamples, level, seed), whose values ddt
 * acceptance's options take too, and the check that options hold to them
 * (a curve is written only when it reads back): 0, or DDT_EINPUT with
 * "resamples: must be within [1, 1000000]" or the level's. */
struct yschema;
extern const struct yschema acceptance_boot_schema;
int acceptance_boot_check(int resamples, double level);

#endif
