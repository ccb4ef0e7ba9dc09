/* accept_logs.h - acceptance from what serving engines log (spec_log.h): mean and per-position rates over log intervals, and a tree-acceptance estimate per budget whose band names what the logs do not hold. */
#ifndef DDT_ACCEPT_LOGS_H
#define DDT_ACCEPT_LOGS_H

#include <stdio.h>

#include "acceptance.h"
#include "spec_log.h"

/*
 * A log holds the chain the engine drafted: per position d, the share of
 * drafts that got that far (rate[d]). The first position's rate is budget
 * 1's acceptance exactly (the tree of one node is the drafter's first choice
 * at position 1). A bigger tree also tries other ranks, and how often the
 * target took the drafter's second, third, ... choice when it missed the
 * first is not logged: the estimate takes the target's rank at position d
 * as first with probability c[d] = rate[d] / rate[d - 1] and, when not,
 * second with a share s of the rest, third with s of what is left, and so
 * on; positions independent (DDTree's own factorisation), the same law each
 * step. The tree of budget B is the B most probable rank prefixes; its
 * acceptance 1 + their summed probabilities. s is unknown: its range
 * (calibration/acceptance/logs.yaml) is drawn in the band with the rates'
 * own interval over the log's intervals. SGLang logs no positions: there the
 * rate is taken as the same c at every position (c^d), solved from the mean.
 */

struct accept_logs_prior {
	double s_lo, s_hi;        /* share of a miss that lands on the drafter's 2nd choice */
	double rank_gap;          /* ranks: how far above the rank law's tree DDTree's may be */
	char source[512];
};

struct accept_logs_result {
	char *path;
	enum spec_log_kind kind;
	int k;                     /* drafted positions: block k + 1 */
	size_t n;                  /* intervals */
	long long skipped;         /* intervals without drafts */
	double weight;             /* summed drafts (vLLM) or intervals (SGLang) */
	int rates_logged;          /* 0: per-position rates from the mean (c^d) */
	double level;
	double mean, mean_lo, mean_hi;        /* mean acceptance of the engine's chain */
	double rate[SPEC_LOG_MAX_K], rate_lo[SPEC_LOG_MAX_K], rate_hi[SPEC_LOG_MAX_K];
	struct accept_logs_prior prior;
	int nb;
	int budget[ACCEPTANCE_MAX_BUDGETS];
	double est[ACCEPTANCE_MAX_BUDGETS];           /* the tree at the prior's middle */
	double samp_lo[ACCEPTANCE_MAX_BUDGETS], samp_hi[ACCEPTANCE_MAX_BUDGETS]; /* rates' interval alone */
	double lo[ACCEPTANCE_MAX_BUDGETS], hi[ACCEPTANCE_MAX_BUDGETS]; /* with s over its range */
};

/* Reads the prior (second_choice_share: min, max, source) from path.
 * Returns 0 or DDT_EINPUT/DDT_ENOTFOUND/DDT_EIO/DDT_ENOMEM, message set. */
int accept_logs_prior_load(struct accept_logs_prior *p, const char *path);

/* Estimates from l at o's budgets and level. Returns 0 or DDT_ENOMEM; r
 * freed with accept_logs_free either way. */
int accept_logs_estimate(struct accept_logs_result *r, const char *path, const struct spec_log *l,
			 const struct acceptance_opts *o, const struct accept_logs_prior *p);

/* The tree's expected acceptance at budget B for chain rates rate[k] and
 * second-choice share s (exposed for the tests). */
double accept_logs_tree(const double *rate, int k, double s, int B);

/* The same from a rank law: p[d][r] the probability that the target is the
 * drafter's rank r at position d (r < n), positions independent. */
double accept_logs_tree_law(const double *p, int k, int n, int B);

void accept_logs_write_text(const struct accept_logs_result *r, FILE *fp);
void accept_logs_write_yaml(const struct accept_logs_result *r, FILE *fp);
void accept_logs_free(struct accept_logs_result *r);

#endif
