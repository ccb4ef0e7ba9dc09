/* spec_log.h - what serving engines print about speculative decoding, read as intervals: vLLM's SpecDecoding log lines and Prometheus counters, SGLang's decode-batch lines. */
#ifndef DDT_SPEC_LOG_H
#define DDT_SPEC_LOG_H

#include <stddef.h>

/*
 * vllm-log      "SpecDecoding metrics: ... Accepted: A tokens, Drafted: D
 *               tokens, Per-position acceptance rate: r1, r2, ..., rk"
 *               one interval a line: k drafted positions, D / k drafts, the
 *               share of drafts whose position d was accepted (vLLM counts a
 *               position only when every one before it was), mean
 *               acceptance 1 + A / drafts
 * vllm-metrics  Prometheus text (or a query's "name{labels} | value" table):
 *               vllm:spec_decode_num_drafts_total, _num_accepted_tokens_total
 *               and _num_accepted_tokens_per_pos_total{position="i"}; each
 *               engine label one interval (counters since start)
 * sglang-log    "Decode batch. ... accept len: L, accept rate: a" one
 *               interval a line, equal weight (SGLang prints every
 *               decode_log_interval batches): mean acceptance L (the bonus
 *               token included), L / a tokens verified a step, so k = L / a - 1
 *               drafted positions; no per-position rate
 * ranks         {"target_rank": [r1, ..., rk], "request_id": ...} one step a
 *               line: where the target's token ranked in the drafter's top-K
 *               at each position (0 first, -1 outside); a cheaper trace.
 *               Counted per position into SPEC_LOG_GROUPS groups of requests
 *               (the jackknife's units; a step without request_id is a
 *               request of its own)
 * Other lines are skipped (ranks: blank lines only).
 */

#define SPEC_LOG_MAX_K 64
#define SPEC_LOG_MAX_RANK 1024
#define SPEC_LOG_GROUPS 20

enum spec_log_kind { SPEC_LOG_VLLM, SPEC_LOG_VLLM_METRICS, SPEC_LOG_SGLANG, SPEC_LOG_RANKS };

struct spec_interval {
	long long line;          /* where it was read (1-based) */
	double weight;           /* drafts (vLLM), 1 (SGLang) */
	double mean;             /* mean acceptance, root/bonus included */
	double rate[SPEC_LOG_MAX_K]; /* per position, NaN when not logged */
};

struct spec_log {
	enum spec_log_kind kind;
	int k;                   /* drafted positions */
	int has_rates;           /* per-position rates logged */
	size_t n, cap;
	struct spec_interval *iv;
	long long skipped;       /* intervals with no drafts */
	/* ranks: */
	long long steps;
	int max_rank;            /* ranks seen: 0 .. max_rank - 1 */
	double *rank_cnt;        /* [SPEC_LOG_GROUPS][SPEC_LOG_MAX_K][SPEC_LOG_MAX_RANK] */
	double group_steps[SPEC_LOG_GROUPS];
};

/* "vllm-log", "vllm-metrics", "sglang-log", "ranks" into *kind. Returns 0 or DDT_EINPUT
 * (message set). */
int spec_log_kind_parse(enum spec_log_kind *kind, const char *name);

/* Reads path as kind. Returns 0, DDT_EINPUT ("path:line:column: ..." set:
 * a line of the kind that cannot be read, positions that change, no
 * interval at all), DDT_ENOTFOUND, DDT_EIO or DDT_ENOMEM. l is filled and
 * must be freed with spec_log_free either way. */
int spec_log_read(struct spec_log *l, const char *path, enum spec_log_kind kind);

void spec_log_free(struct spec_log *l);

#endif
