/* spec_log.c - serving-engine speculative-decoding logs read line by line into intervals (spec_log.h says which lines). */
#include "spec_log.h"

#include "err.h"

#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ENGINES 1024
#define MAX_LINE_BYTES (1u << 20)

int spec_log_kind_parse(enum spec_log_kind *kind, const char *name)
{
	static const char *const names[] = {"vllm-log", "vllm-metrics", "sglang-log", "ranks"};
	for (int i = 0; i < 4; i++)
		if (!strcmp(name, names[i])) {
			*kind = (enum spec_log_kind)i;
			return 0;
		}
	return err_set(DDT_EINPUT, "--from %s: expected vllm-log, vllm-metrics, sglang-log or ranks",
		       name);
}

void spec_log_free(struct spec_log *l)
{
	free(l->iv);
	free(l->rank_cnt);
	memset(l, 0, sizeof *l);
}

/* A new interval at the end of l (rates NaN). NULL: no memory. */
static struct spec_interval *interval_add(struct spec_log *l, long long line)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct spec_interval *iv = realloc(l->iv, cap * sizeof *iv);
		if (!iv)
			return NULL;
		l->iv = iv;
		l->cap = cap;
	}
	struct spec_interval *v = &l->iv[l->n++];
	memset(v, 0, sizeof *v);
	v->line = line;
	for (int d = 0; d < SPEC_LOG_MAX_K; d++)
		v->rate[d] = NAN;
	return v;
}

/* The number after key in s; -1 when the key is absent, -2 when no number follows. */
static int field(const char *s, const char *key, double *v, const char **at)
{
	const char *p = strstr(s, key);
	char *end;
	if (!p)
		return -1;
	p += strlen(key);
	*at = p;
	errno = 0;
	*v = strtod(p, &end);
	return end == p || errno || !isfinite(*v) ? -2 : 0;
}

static int bad(const char *path, long long line, const char *s, const char *at, const char *what)
{
	return err_set(DDT_EINPUT, "%s:%lld:%d: %s", path, line, (int)(at - s) + 1, what);
}

/* Positions must not change between intervals. */
static int set_k(struct spec_log *l, int k, const char *path, long long line)
{
	if (k < 1 || k > SPEC_LOG_MAX_K)
		return err_set(DDT_EINPUT, "%s:%lld:1: %d drafted positions: expected 1 to %d", path, line,
			       k, SPEC_LOG_MAX_K);
	if (l->k && l->k != k)
		return err_set(DDT_EINPUT, "%s:%lld:1: %d drafted positions, the lines before %d (one "
			       "speculative config a log)", path, line, k, l->k);
	l->k = k;
	return 0;
}

/* "Per-position acceptance rate: r1, r2, ..." into rate; returns k or an error. */
static int rate_list(const char *s, const char *p, double *rate, const char *path, long long line)
{
	int k = 0;
	for (;;) {
		char *end;
		double v = strtod(p, &end);
		if (end == p)
			break;
		if (!(v >= 0 && v <= 1) || k == SPEC_LOG_MAX_K)
			return bad(path, line, s, p, k == SPEC_LOG_MAX_K ? "more positions than ddt reads"
							      : "an acceptance rate outside 0..1");
		rate[k++] = v;
		p = end;
		while (*p == ' ')
			p++;
		if (*p != ',')
			break;
		p++;
	}
	return k ? k : bad(path, line, s, p, "Per-position acceptance rate: no number");
}

static int vllm_line(struct spec_log *l, const char *s, const char *path, long long line)
{
	double acc, drafted, rate[SPEC_LOG_MAX_K];
	const char *at = s, *pos;
	int rc, k;
	if (!(pos = strstr(s, "SpecDecoding metrics:")))
		return 0;
	if ((rc = field(pos, "Accepted:", &acc, &at)) || (rc = field(pos, "Drafted:", &drafted, &at)))
		return bad(path, line, s, rc == -1 ? pos : at,
			   "a SpecDecoding line without 'Accepted: N tokens, Drafted: N tokens'");
	if (!(at = strstr(pos, "Per-position acceptance rate:")))
		return bad(path, line, s, pos, "a SpecDecoding line without 'Per-position acceptance "
			   "rate' (vLLM 0.9 and later print it; ddt needs the positions)");
	if ((k = rate_list(s, at + 29, rate, path, line)) < 0)
		return k;
	if ((rc = set_k(l, k, path, line)))
		return rc;
	l->has_rates = 1;
	if (!(drafted > 0)) {
		l->skipped++;
		return 0;
	}
	struct spec_interval *v = interval_add(l, line);
	if (!v)
		return err_nomem();
	v->weight = drafted / k;
	v->mean = 1 + acc / v->weight;
	memcpy(v->rate, rate, (size_t)k * sizeof *rate);
	return 0;
}

static int sglang_line(struct spec_log *l, const char *s, const char *path, long long line)
{
	double len, rate;
	const char *at = s;
	int rc;
	if (!strstr(s, "Decode batch") || (rc = field(s, "accept len:", &len, &at)) == -1)
		return 0;
	if (rc || !(len >= 1))
		return bad(path, line, s, at, "accept len: expected a number of at least 1");
	if (field(s, "accept rate:", &rate, &at) == 0 && rate > 0) {
		double tokens = len / rate; /* printed to 2 places: round */
		if ((rc = set_k(l, (int)lround(tokens) - 1, path, line)))
			return rc;
	} else if (!l->k) {
		return bad(path, line, s, at, "a decode-batch line without 'accept rate' (ddt needs it "
			   "for the drafted tokens)");
	}
	struct spec_interval *v = interval_add(l, line);
	if (!v)
		return err_nomem();
	v->weight = 1;
	v->mean = len;
	return 0;
}

/* ---- rank records ---- */

/* The group of the step: its request_id's text hashed, or its line. */
static int rank_group(const char *s, long long line)
{
	const char *p = strstr(s, "\"request_id\"");
	uint64_t h = 1469598103934665603ull;
	if (!p)
		return (int)(((uint64_t)line * 0x9e3779b97f4a7c15ull >> 33) % SPEC_LOG_GROUPS);
	for (p += 12; *p && *p != ',' && *p != '}'; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return (int)((h >> 17) % SPEC_LOG_GROUPS);
}

static int ranks_line(struct spec_log *l, const char *s, const char *path, long long line)
{
	const char *p = s;
	int rank[SPEC_LOG_MAX_K], k = 0, rc;
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	if (!*p)
		return 0;
	if (*p != '{' || !(p = strstr(s, "\"target_rank\"")))
		return bad(path, line, s, s, "a rank record is {\"target_rank\": [r1, ..., rk]}");
	p += 13;
	while (*p == ' ' || *p == ':')
		p++;
	if (*p++ != '[')
		return bad(path, line, s, p - 1, "target_rank: expected '['");
	for (;;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v < -1 || v >= SPEC_LOG_MAX_RANK || k == SPEC_LOG_MAX_K)
			return bad(path, line, s, p, "target_rank: whole numbers from -1 (outside the "
				   "top-K) to 1023, at most 64 positions");
		rank[k++] = (int)v;
		for (p = end; *p == ' '; p++)
			;
		if (*p == ']')
			break;
		if (*p++ != ',')
			return bad(path, line, s, p - 1, "target_rank: expected ',' or ']'");
	}
	if ((rc = set_k(l, k, path, line)))
		return rc;
	if (!l->rank_cnt && !(l->rank_cnt = calloc((size_t)SPEC_LOG_GROUPS * SPEC_LOG_MAX_K *
						   SPEC_LOG_MAX_RANK, sizeof *l->rank_cnt)))
		return err_nomem();
	int g = rank_group(s, line);
	double *c = l->rank_cnt + (size_t)g * SPEC_LOG_MAX_K * SPEC_LOG_MAX_RANK;
	for (int d = 0; d < k; d++) {
		if (rank[d] >= 0)
			c[(size_t)d * SPEC_LOG_MAX_RANK + rank[d]] += 1;
		l->max_rank = rank[d] + 1 > l->max_rank ? rank[d] + 1 : l->max_rank;
	}
	l->group_steps[g] += 1;
	l->steps++;
	return 0;
}

/* ---- Prometheus counters, summed per engine ---- */

struct engines {
	int n;
	char name[MAX_ENGINES][32];
	double drafts[MAX_ENGINES], accepted[MAX_ENGINES];
	double pos[MAX_ENGINES][SPEC_LOG_MAX_K];
	int maxpos;
};

/* The value of label key="..." within labels [p, q) into out (cap bytes); 0, or -1 when absent. */
static int label(const char *p, const char *q, const char *key, char *out, size_t cap)
{
	char pat[40];
	snprintf(pat, sizeof pat, "%s=\"", key);
	const char *a = strstr(p, pat);
	if (!a || a >= q)
		return -1;
	a += strlen(pat);
	const char *b = strchr(a, '"');
	if (!b || b > q || (size_t)(b - a) >= cap)
		return -1;
	memcpy(out, a, (size_t)(b - a));
	out[b - a] = '\0';
	return 0;
}

static int engine_of(struct engines *e, const char *name)
{
	for (int i = 0; i < e->n; i++)
		if (!strcmp(e->name[i], name))
			return i;
	if (e->n == MAX_ENGINES)
		return -1;
	snprintf(e->name[e->n], sizeof e->name[0], "%s", name);
	for (int d = 0; d < SPEC_LOG_MAX_K; d++)
		e->pos[e->n][d] = NAN;
	return e->n++;
}

static int metrics_line(struct engines *e, const char *s, const char *path, long long line)
{
	static const char *const names[] = {"vllm:spec_decode_num_drafts_total",
					    "vllm:spec_decode_num_accepted_tokens_total",
					    "vllm:spec_decode_num_accepted_tokens_per_pos_total"};
	int m = 0;
	while (m < 3 && (strncmp(s, names[m], strlen(names[m])) ||
			 (s[strlen(names[m])] != '{' && s[strlen(names[m])] != ' ')))
		m++;
	if (m == 3)
		return 0;
	const char *p = s + strlen(names[m]), *q = p;
	char eng[32] = "", posn[16];
	if (*p == '{' && !(q = strchr(p, '}')))
		return bad(path, line, s, p, "labels without a closing '}'");
	label(p, q, "engine", eng, sizeof eng);
	const char *v = q + (*q == '}');
	while (*v == ' ' || *v == '|')
		v++;
	char *end;
	double x = strtod(v, &end);
	if (end == v || !(x >= 0) || !isfinite(x))
		return bad(path, line, s, v, "expected the counter's value");
	int i = engine_of(e, eng);
	if (i < 0)
		return bad(path, line, s, p, "more engines than ddt reads");
	if (m < 2) {
		*(m ? &e->accepted[i] : &e->drafts[i]) += x;
		return 0;
	}
	long d = label(p, q, "position", posn, sizeof posn) ? -1 : strtol(posn, NULL, 10);
	if (d < 0 || d >= SPEC_LOG_MAX_K)
		return bad(path, line, s, p, "num_accepted_tokens_per_pos without a position label of 0 "
			   "to 63");
	e->pos[i][d] = isnan(e->pos[i][d]) ? x : e->pos[i][d] + x;
	e->maxpos = d + 1 > e->maxpos ? (int)d + 1 : e->maxpos;
	return 0;
}

/* Each engine one interval; every engine must give every position. */
static int metrics_finish(struct spec_log *l, const struct engines *e, const char *path)
{
	int rc;
	if (!e->maxpos)
		return e->n ? err_set(DDT_EINPUT, "%s: no vllm:spec_decode_num_accepted_tokens_per_pos_total "
				      "counter (ddt needs the positions)", path) : 0;
	if ((rc = set_k(l, e->maxpos, path, 0)))
		return rc;
	l->has_rates = 1;
	for (int i = 0; i < e->n; i++) {
		for (int d = 0; d < l->k; d++)
			if (isnan(e->pos[i][d]))
				return err_set(DDT_EINPUT, "%s: engine '%s' has no num_accepted_tokens_per_pos "
					       "for position %d (of 0..%d): the counters are cut short",
					       path, e->name[i], d, l->k - 1);
		if (!(e->drafts[i] > 0)) {
			l->skipped++;
			continue;
		}
		struct spec_interval *v = interval_add(l, 0);
		if (!v)
			return err_nomem();
		v->weight = e->drafts[i];
		v->mean = 1 + e->accepted[i] / e->drafts[i];
		for (int d = 0; d < l->k; d++)
			v->rate[d] = e->pos[i][d] / e->drafts[i];
	}
	return 0;
}

/* Every line of fp as l->kind. */
static int read_lines(struct spec_log *l, FILE *fp, const char *path, struct engines *e)
{
	char *s = NULL;
	size_t cap = 0;
	ssize_t len;
	long long line = 0;
	int rc = 0;
	while (!rc && (len = getline(&s, &cap, fp)) >= 0) {
		line++;
		if ((size_t)len > MAX_LINE_BYTES) {
			rc = err_set(DDT_EINPUT, "%s:%lld: a line of more than %u bytes", path, line,
				     MAX_LINE_BYTES);
			break;
		}
		if (memchr(s, '\0', (size_t)len)) {
			rc = err_set(DDT_EINPUT, "%s:%lld: a NUL byte: not a text log", path, line);
			break;
		}
		rc = l->kind == SPEC_LOG_VLLM	 ? vllm_line(l, s, path, line)
		     : l->kind == SPEC_LOG_SGLANG ? sglang_line(l, s, path, line)
		     : l->kind == SPEC_LOG_RANKS  ? ranks_line(l, s, path, line)
						  : metrics_line(e, s, path, line);
	}
	if (!rc && ferror(fp))
		rc = err_set(DDT_EIO, "%s: %s", path, strerror(errno));
	free(s);
	return rc;
}

int spec_log_read(struct spec_log *l, const char *path, enum spec_log_kind kind)
{
	static const char *const what[] = {"'SpecDecoding metrics:' line",
					   "vllm:spec_decode_* counter",
					   "'Decode batch' line with 'accept len'",
					   "target_rank record"};
	struct engines *e = NULL;
	int rc;
	memset(l, 0, sizeof *l);
	l->kind = kind;
	FILE *fp = strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (!fp)
		return err_set(errno == ENOENT ? DDT_ENOTFOUND : DDT_EIO, "cannot open %s: %s", path,
			       strerror(errno));
	if (kind == SPEC_LOG_VLLM_METRICS && !(e = calloc(1, sizeof *e))) {
		rc = err_nomem();
		goto done;
	}
	if ((rc = read_lines(l, fp, path, e)) || (e && (rc = metrics_finish(l, e, path))))
		goto done;
	if (kind == SPEC_LOG_RANKS ? !l->steps : !l->n)
		rc = err_set(DDT_EINPUT, "%s: no %s with drafts in it", path, what[kind]);
done:
	if (fp != stdin)
		fclose(fp);
	free(e);
	return rc;
}
