/* trace.h - drafter traces: JSON Lines (plain or gzip), one decode step a line, read strictly and in batches. */
#ifndef DDT_TRACE_H
#define DDT_TRACE_H

#include <stddef.h>
#include <stdint.h>

/*
 * One line (docs/acceptance.md, "Trace format"):
 *
 *   {"topk_ids": [[...] x L], "topk_logprobs": [[...] x L], "target": [L ids]}
 *
 * Position i (0-based here, 1..L in docs/acceptance.md) holds the drafter's top-K
 * token ids, best first, and their log-probabilities, normalised over the
 * whole vocabulary and non-increasing. `target` is the target model's greedy
 * continuation after the root (L ids, or L + 1 with the bonus after the last
 * position). Optional: block (= L + 1), budget_used, accepted (what the
 * engine saw at budget_used), context (tokens before the root), request_id
 * (a string or whole number: the steps of one request share it). Other keys
 * are skipped. The one extension to JSON: -Infinity, as Python's json writes
 * it, for the log-prob of a token the drafter gives no chance.
 */

#define TRACE_MAX_L 255     /* the engine's deepest tree (tree_build's L) */
#define TRACE_MAX_K 65536   /* the engine's largest budget, hence top-K */
#define TRACE_MAX_LINE (256u << 20) /* bytes of one line */
/* A gzip trace may inflate to TRACE_GZIP_ALLOW_BYTES, and past it to at
 * most TRACE_GZIP_MAX_RATIO times the compressed bytes read: JSON of
 * numbers packs 3-10x (the shipped KJV trace 3.1x); a gzip of blank lines
 * about 1000x. */
#define TRACE_GZIP_ALLOW_BYTES (64ll << 20)
#define TRACE_GZIP_MAX_RATIO 50

/* One parsed line. Buffers grow as lines need and are reused by the next
 * parse; trace_step_free releases them. */
struct trace_step {
	int L;              /* drafted positions */
	int K;              /* top-K of this line (the same at every position) */
	int ntarget;        /* L or L + 1 */
	int32_t *tok;       /* [L][K] drafter token ids, best first */
	float *logp;        /* [L][K] their log-probs */
	int32_t *target;    /* [ntarget] the target's greedy tokens after the root */
	int block;          /* -1 when absent */
	int budget_used;    /* -1 when absent */
	int accepted;       /* -1 when absent */
	long long context;  /* -1 when absent */
	int has_request;    /* request_id given */
	uint64_t request;   /* a hash of request_id (string or whole number): the
			     * steps of one request share it */

	/* private: parse state */
	int *id_col;        /* [L] column where each position's ids start */
	int *lp_col;        /* [L] and its log-probs */
	size_t cap_tok, cap_logp, cap_t, cap_id_col, cap_lp_col, cap_seen;
	uint32_t *seen;     /* distinct-id check: stamped open-addressing table */
	int32_t *seen_key;
	uint32_t stamp;
};

/* Why a line was refused: the 1-based column and a one-line message. */
struct trace_err {
	int col;
	char msg[200];
};

/* Parses and checks one line (len bytes, no newline) into s: JSON syntax,
 * the schema above, ids distinct within a position, log-probs finite or
 * -Infinity, non-increasing, summing to at most 1 (+1e-3). Returns 0, or
 * DDT_EINPUT with e filled (nothing global is set: it runs on worker
 * threads), or DDT_ENOMEM. */
int trace_step_parse(struct trace_step *s, const char *line, size_t len, struct trace_err *e);
void trace_step_free(struct trace_step *s);

/* A batch of whole lines, pointers into the reader's buffer (valid until the
 * next trace_read). Blank lines (spaces, tabs, CR) are not in it: line i is
 * line number no[i] of the file (1-based). */
struct trace_batch {
	const char **line;
	size_t *len;
	long long *no;
	size_t n;
	long long first_line; /* no[0], or the next line's number when n = 0 */
};

struct trace_reader;

/* Opens path ("-": standard input), plain or gzip (told apart by the gzip
 * magic bytes; every member read to its end, anything else after the last
 * refused, the inflated size within the budget above).
 * Returns 0, DDT_ENOTFOUND, DDT_EIO or DDT_ENOMEM with the message set. */
int trace_open(struct trace_reader **r, const char *path);

/* The next batch of about batch_bytes of whole non-blank lines (at least one
 * when any is left; b->n = 0 at the end). Returns 0, DDT_EINPUT (damaged
 * gzip data, data after it, over the inflate budget, a line over
 * TRACE_MAX_LINE), DDT_EIO or DDT_ENOMEM, message set. */
int trace_read(struct trace_reader *r, struct trace_batch *b, size_t batch_bytes);

/* Bytes of the file read so far (compressed size for gzip) and in total
 * (-1 for a pipe), for progress lines. */
long long trace_bytes_read(const struct trace_reader *r);
long long trace_bytes_total(const struct trace_reader *r);

void trace_close(struct trace_reader *r);

#endif
