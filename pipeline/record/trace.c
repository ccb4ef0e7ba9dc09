/* trace.c - the drafter trace reader: batches of lines through zlib, and a strict one-pass JSON parser for the step schema. */
#include "trace.h"

#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/*
 * Why not a JSON library: a step of K = 64, block 16 is 18 kB of numbers, and
 * a 100k-step trace is about 2 GB. On one such line the DOM parsers Debian
 * ships (jansson 2.14, json-c 0.16) ran at 12-17 MB/s, one allocation per
 * number; the token-level ones (jsmn 1.1, yajl 2.1) at about 100 MB/s, and
 * jsmn takes [1,,2] and [1 2] for arrays. This parser knows the one schema,
 * checks the whole JSON grammar as it goes, writes numbers straight into the
 * step's arrays and names the column of the first thing wrong.
 */

/* ---- the cursor ---- */

struct jp {
	const char *p, *start, *end;
	struct trace_err *e;
};

static int __attribute__((format(printf, 2, 3))) jp_fail(struct jp *j, const char *fmt, ...)
{
	va_list ap;
	j->e->col = (int)(j->p - j->start) + 1;
	va_start(ap, fmt);
	vsnprintf(j->e->msg, sizeof j->e->msg, fmt, ap);
	va_end(ap);
	return DDT_EINPUT;
}

static void jp_ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\r' || *j->p == '\n'))
		j->p++;
}

/* The next non-blank byte, or 0 at the end. */
static int jp_peek(struct jp *j)
{
	jp_ws(j);
	return j->p < j->end ? (unsigned char)*j->p : 0;
}

static int jp_expect(struct jp *j, char c)
{
	if (jp_peek(j) != c)
		return j->p < j->end ? jp_fail(j, "expected '%c', found '%c'", c, *j->p)
				     : jp_fail(j, "expected '%c', found the end of the line", c);
	j->p++;
	return 0;
}

/* After an element: 1 when another follows (','), 0 at close, or an error. */
static int jp_more(struct jp *j, char close)
{
	int c = jp_peek(j);
	if (c == ',') {
		j->p++;
		return 1;
	}
	if (c == close) {
		j->p++;
		return 0;
	}
	return c ? jp_fail(j, "expected ',' or '%c', found '%c'", close, c)
		 : jp_fail(j, "expected ',' or '%c', found the end of the line", close);
}

/* ---- strings ---- */

static int hex4(const char *s)
{
	int v = 0;
	for (int i = 0; i < 4; i++) {
		int c = s[i], d = c >= '0' && c <= '9'   ? c - '0'
				  : c >= 'a' && c <= 'f' ? c - 'a' + 10
				  : c >= 'A' && c <= 'F' ? c - 'A' + 10
							 : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* Appends code point u as UTF-8 to out[*n] when it fits in cap - 1 bytes;
 * otherwise marks the string as too long (*n = cap). */
static void put_utf8(char *out, size_t cap, size_t *n, unsigned u)
{
	char b[4];
	size_t k = u < 0x80 ? 1 : u < 0x800 ? 2 : u < 0x10000 ? 3 : 4;
	if (k == 1)
		b[0] = (char)u;
	else if (k == 2)
		b[0] = (char)(0xc0 | u >> 6), b[1] = (char)(0x80 | (u & 0x3f));
	else if (k == 3)
		b[0] = (char)(0xe0 | u >> 12), b[1] = (char)(0x80 | (u >> 6 & 0x3f)),
		b[2] = (char)(0x80 | (u & 0x3f));
	else
		b[0] = (char)(0xf0 | u >> 18), b[1] = (char)(0x80 | (u >> 12 & 0x3f)),
		b[2] = (char)(0x80 | (u >> 6 & 0x3f)), b[3] = (char)(0x80 | (u & 0x3f));
	if (!out || *n >= cap)
		return;
	if (*n + k >= cap) {
		*n = cap;
		return;
	}
	memcpy(out + *n, b, k);
	*n += k;
}

/* One escape after the backslash at j->p; appends what it stands for. */
static int jp_escape(struct jp *j, char *out, size_t cap, size_t *n)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *hit, *at = j->p;
	j->p++;
	if (j->p >= j->end)
		return j->p = at, jp_fail(j, "unfinished escape in a string");
	if (*j->p != 'u') {
		if (!(hit = memchr(from, *j->p, sizeof from - 1)))
			return j->p = at, jp_fail(j, "unknown escape '\\%c' in a string", at[1]);
		put_utf8(out, cap, n, (unsigned char)to[hit - from]);
		j->p++;
		return 0;
	}
	int u = j->end - j->p > 4 ? hex4(j->p + 1) : -1;
	if (u < 0)
		return jp_fail(j, "\\u needs four hex digits");
	j->p += 5;
	if (u >= 0xd800 && u < 0xdc00) { /* a surrogate pair */
		int lo = j->end - j->p > 5 && j->p[0] == '\\' && j->p[1] == 'u' ? hex4(j->p + 2) : -1;
		if (lo < 0xdc00 || lo > 0xdfff)
			return jp_fail(j, "a \\u high surrogate needs a low one after it");
		u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
		j->p += 6;
	} else if (u >= 0xdc00 && u < 0xe000) {
		return jp_fail(j, "a \\u low surrogate without a high one");
	}
	put_utf8(out, cap, n, (unsigned)u);
	return 0;
}

/* A string at j->p (after blanks). Decodes it into out (NUL-terminated; a
 * string that does not fit comes back as "" with *toolong set) or, with out
 * NULL, only checks it. */
static int jp_string(struct jp *j, char *out, size_t cap, int *toolong)
{
	size_t n = 0;
	int rc;
	if ((rc = jp_expect(j, '"')))
		return rc;
	for (;;) {
		if (j->p >= j->end)
			return jp_fail(j, "unterminated string");
		unsigned char c = (unsigned char)*j->p;
		if (c == '"')
			break;
		if (c < 0x20)
			return jp_fail(j, "control character 0x%02x in a string", c);
		if (c == '\\') {
			if ((rc = jp_escape(j, out, cap, &n)))
				return rc;
			continue;
		}
		if (out && n + 1 < cap)
			out[n] = (char)c;
		n += out && n < cap;
		j->p++;
	}
	j->p++;
	if (out) {
		*toolong = n >= cap;
		out[*toolong ? 0 : n] = '\0';
	}
	return 0;
}

/* ---- numbers ---- */

/* 10^0 .. 10^22, each exact in a double. */
static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
				     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int is_digit(const struct jp *j, const char *q)
{
	return q < j->end && *q >= '0' && *q <= '9';
}

/* A JSON number at j->p (after blanks). With up to 19 significant digits
 * and a power of ten up to 22, the value is one correctly rounded double
 * operation (Clinger's fast path); anything else goes to strtod. allow_inf
 * also takes -Infinity. */
static int jp_number(struct jp *j, double *v, int allow_inf)
{
	const char *s = j->p, *q = j->p;
	uint64_t m = 0;
	int digits = 0, exp10 = 0, inexact = 0;

	if (q < j->end && *q == '-')
		q++;
	if (allow_inf && q > s && j->end - q >= 8 && !memcmp(q, "Infinity", 8)) {
		j->p = q + 8;
		*v = -INFINITY;
		return 0;
	}
	if (!is_digit(j, q))
		return q < j->end ? jp_fail(j, "expected a number, found '%c'", *q)
				  : jp_fail(j, "expected a number, found the end of the line");
	if (*q == '0' && is_digit(j, q + 1))
		return jp_fail(j, "a number cannot start with 0 followed by digits");
	for (; is_digit(j, q); q++) {
		if (digits < 19)
			m = m * 10 + (uint64_t)(*q - '0'), digits += m > 0;
		else
			exp10++, inexact |= *q != '0';
	}
	if (q < j->end && *q == '.') {
		if (!is_digit(j, ++q))
			return j->p = q, jp_fail(j, "expected a digit after '.'");
		for (; is_digit(j, q); q++)
			if (digits < 19)
				m = m * 10 + (uint64_t)(*q - '0'), digits += m > 0, exp10--;
			else
				inexact |= *q != '0';
	}
	if (q < j->end && (*q == 'e' || *q == 'E')) {
		int sign = 1, e = 0;
		q++;
		if (q < j->end && (*q == '+' || *q == '-'))
			sign = *q++ == '-' ? -1 : 1;
		if (!is_digit(j, q))
			return j->p = q, jp_fail(j, "expected a digit in the exponent");
		for (; is_digit(j, q); q++)
			e = e < 100000 ? e * 10 + (*q - '0') : e;
		exp10 += sign * e;
	}
	j->p = q;
	if (!inexact && m <= (1ull << 53) && exp10 >= -22 && exp10 <= 22) {
		double x = (double)m;
		x = exp10 < 0 ? x / pow10_exact[-exp10] : x * pow10_exact[exp10];
		*v = *s == '-' ? -x : x;
		return 0;
	}
	char buf[400];
	if ((size_t)(q - s) >= sizeof buf)
		return j->p = s, jp_fail(j, "a number of more than %zu characters", sizeof buf - 1);
	memcpy(buf, s, (size_t)(q - s));
	buf[q - s] = '\0';
	*v = strtod(buf, NULL); /* the grammar is checked: strtod takes all of it */
	return 0;
}

/* A whole number in [lo, hi] at j->p; what names it in messages. Ids are
 * most of a trace's numbers: digits are read here, not through jp_number. */
static int jp_int(struct jp *j, long long lo, long long hi, long long *out, const char *what)
{
	jp_ws(j);
	const char *s = j->p, *q = s + (s < j->end && *s == '-');
	unsigned long long v = 0;
	double x;
	int rc, big = 0;
	if (!is_digit(j, q) || (*q == '0' && is_digit(j, q + 1)))
		return jp_number(j, &x, 0); /* its message says what is wrong */
	for (; is_digit(j, q); q++)
		if (v < 100000000000000000ull)
			v = v * 10 + (unsigned long long)(*q - '0');
		else
			big = 1;
	if (q < j->end && (*q == '.' || *q == 'e' || *q == 'E')) {
		if ((rc = jp_number(j, &x, 0)))
			return rc;
		q = j->p, big = 1;
	}
	long long value = *s == '-' ? -(long long)v : (long long)v;
	if (big || value < lo || value > hi) {
		j->p = s;
		return jp_fail(j, "%s: expected a whole number from %lld to %lld, found '%.*s'", what,
			       lo, hi, (int)(q - s) < 40 ? (int)(q - s) : 40, s);
	}
	j->p = q;
	*out = value;
	return 0;
}

/* ---- skipping values of keys the schema does not name ---- */

static int jp_skip(struct jp *j, int depth)
{
	int c = jp_peek(j), rc, more;
	double v;
	if (depth > 64)
		return jp_fail(j, "values nested deeper than 64");
	switch (c) {
	case '"':
		return jp_string(j, NULL, 0, NULL);
	case '[':
	case '{':
		j->p++;
		if (jp_peek(j) == (c == '[' ? ']' : '}')) {
			j->p++;
			return 0;
		}
		do {
			if (c == '{' && ((rc = jp_string(j, NULL, 0, NULL)) || (rc = jp_expect(j, ':'))))
				return rc;
			if ((rc = jp_skip(j, depth + 1)))
				return rc;
		} while ((more = jp_more(j, c == '[' ? ']' : '}')) == 1);
		return more;
	case 't':
	case 'f':
	case 'n': {
		const char *w = c == 't' ? "true" : c == 'f' ? "false" : "null";
		size_t n = strlen(w);
		if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n))
			return jp_fail(j, "expected a JSON value");
		j->p += n;
		return 0;
	}
	default:
		return c ? jp_number(j, &v, 0) : jp_fail(j, "expected a value, found the end of the line");
	}
}

/* ---- the step's arrays ---- */

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * elem);
	if (!q)
		return DDT_ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* Where a [L][K] table of ids or log-probs goes while it is parsed. */
struct table {
	int32_t **ids; /* one of these two */
	float **lp;
	size_t *cap;
	int rows, cols;
	int **row_col;
	size_t *cap_rows;
	const char *name;
};

/* One row's numbers into t at row r (its length is cols, or sets cols when
 * r is 0). */
static int table_row(struct jp *j, struct table *t, int r)
{
	int rc, more, n = 0;
	const char *row = j->p;
	if ((rc = jp_expect(j, '[')))
		return rc;
	if (jp_peek(j) == ']')
		return j->p = row, jp_fail(j, "%s: position %d is empty", t->name, r + 1);
	do {
		size_t at = (size_t)r * (size_t)(r ? t->cols : 0) + (size_t)n;
		if (n >= TRACE_MAX_K)
			return jp_fail(j, "%s: more than %d entries at a position", t->name, TRACE_MAX_K);
		if (grow(t->ids ? (void **)t->ids : (void **)t->lp, t->cap, at + 1, 4))
			return DDT_ENOMEM;
		if (t->ids) {
			long long id;
			if ((rc = jp_int(j, 0, INT32_MAX, &id, t->name)))
				return rc;
			(*t->ids)[at] = (int32_t)id;
		} else {
			double v;
			jp_ws(j);
			if ((rc = jp_number(j, &v, 1)))
				return rc;
			(*t->lp)[at] = (float)v;
		}
		n++;
	} while ((more = jp_more(j, ']')) == 1);
	if (more)
		return more;
	if (r == 0)
		t->cols = n;
	else if (n != t->cols)
		return j->p = row, jp_fail(j, "%s: position %d has %d entries, position 1 has %d", t->name, r + 1, n,
			       t->cols);
	return 0;
}

/* A [[...] x L] table. */
static int jp_table(struct jp *j, struct table *t)
{
	int rc, more;
	t->rows = 0;
	if ((rc = jp_expect(j, '[')))
		return rc;
	if (jp_peek(j) == ']')
		return jp_fail(j, "%s is empty: a step drafts at least one position", t->name);
	do {
		if (t->rows >= TRACE_MAX_L)
			return jp_fail(j, "%s: more than %d positions", t->name, TRACE_MAX_L);
		if (grow((void **)t->row_col, t->cap_rows, (size_t)t->rows + 1, sizeof(int)))
			return DDT_ENOMEM;
		jp_ws(j);
		(*t->row_col)[t->rows] = (int)(j->p - j->start) + 1;
		if ((rc = table_row(j, t, t->rows)))
			return rc;
		t->rows++;
	} while ((more = jp_more(j, ']')) == 1);
	return more;
}

/* [id, ...] into s->target. */
static int jp_target(struct jp *j, struct trace_step *s)
{
	int rc, more;
	s->ntarget = 0;
	if ((rc = jp_expect(j, '[')))
		return rc;
	if (jp_peek(j) == ']')
		return jp_fail(j, "target is empty");
	do {
		long long id;
		if (s->ntarget > TRACE_MAX_L)
			return jp_fail(j, "target: more than %d tokens", TRACE_MAX_L + 1);
		if (grow((void **)&s->target, &s->cap_t, (size_t)s->ntarget + 1, 4))
			return DDT_ENOMEM;
		if ((rc = jp_int(j, 0, INT32_MAX, &id, "target")))
			return rc;
		s->target[s->ntarget++] = (int32_t)id;
	} while ((more = jp_more(j, ']')) == 1);
	return more;
}

/* ---- one line ---- */

enum { K_IDS, K_LOGP, K_TARGET, K_BLOCK, K_BUDGET, K_ACCEPTED, K_CONTEXT, K_REQUEST, K_N };
static const char *const key_names[K_N] = {"topk_ids", "topk_logprobs", "target",  "block",
					   "budget_used", "accepted", "context", "request_id"};

/* request_id: a string (its bytes as written, escapes included) or a whole
 * number, hashed (FNV-1a 64) with its kind, so "7" and 7 differ. */
static int jp_request(struct jp *j, struct trace_step *s)
{
	const char *at;
	int rc, c = jp_peek(j);
	if (c != '"' && c != '-' && !(c >= '0' && c <= '9'))
		return jp_fail(j, "request_id: expected a string or a whole number");
	at = j->p;
	if (c == '"') {
		if ((rc = jp_string(j, NULL, 0, NULL)))
			return rc;
	} else {
		long long v;
		if ((rc = jp_int(j, LLONG_MIN + 1, LLONG_MAX, &v, "request_id")))
			return rc;
	}
	uint64_t h = 1469598103934665603ull;
	for (const char *q = at; q < j->p; q++)
		h = (h ^ (unsigned char)*q) * 1099511628211ull;
	s->request = h;
	s->has_request = 1;
	return 0;
}

/* The value of key k. */
static int jp_field(struct jp *j, struct trace_step *s, int k, int *lp_rows, int *lp_cols)
{
	struct table t = {0};
	long long v;
	int rc;
	switch (k) {
	case K_IDS:
		t = (struct table){&s->tok, NULL, &s->cap_tok, 0, 0, &s->id_col, &s->cap_id_col, "topk_ids"};
		rc = jp_table(j, &t);
		s->L = t.rows;
		s->K = t.cols;
		return rc;
	case K_LOGP:
		t = (struct table){NULL, &s->logp, &s->cap_logp, 0, 0, &s->lp_col, &s->cap_lp_col,
				   "topk_logprobs"};
		rc = jp_table(j, &t);
		*lp_rows = t.rows;
		*lp_cols = t.cols;
		return rc;
	case K_TARGET:
		return jp_target(j, s);
	case K_REQUEST:
		return jp_request(j, s);
	case K_CONTEXT:
		if ((rc = jp_int(j, 0, (1ll << 53), &v, "context")))
			return rc;
		s->context = v;
		return 0;
	default:
		if ((rc = jp_int(j, k == K_ACCEPTED, k == K_BLOCK ? TRACE_MAX_L + 1 : TRACE_MAX_K, &v,
				 key_names[k])))
			return rc;
		*(k == K_BLOCK ? &s->block : k == K_BUDGET ? &s->budget_used : &s->accepted) = (int)v;
		return 0;
	}
}

/* The object's keys and values; *seen gets a bit per known key. */
static int jp_object(struct jp *j, struct trace_step *s, unsigned *seen, int *lp_rows, int *lp_cols)
{
	int rc, more;
	if (jp_peek(j) != '{')
		return jp_fail(j, "a line must be one JSON object ({\"topk_ids\": ...})");
	j->p++;
	if (jp_peek(j) == '}')
		return jp_fail(j, "the object is empty: topk_ids, topk_logprobs and target are needed");
	do {
		char key[32];
		int toolong, k;
		jp_ws(j);
		const char *at = j->p;
		if ((rc = jp_string(j, key, sizeof key, &toolong)) || (rc = jp_expect(j, ':')))
			return rc;
		for (k = 0; k < K_N && (toolong || strcmp(key, key_names[k])); k++)
			;
		if (k < K_N && (*seen & 1u << k)) {
			j->p = at;
			return jp_fail(j, "key \"%s\" appears twice", key);
		}
		if (k < K_N)
			*seen |= 1u << k;
		if ((rc = k < K_N ? jp_field(j, s, k, lp_rows, lp_cols) : jp_skip(j, 1)))
			return rc;
	} while ((more = jp_more(j, '}')) == 1);
	return more;
}

/* Positions whose ids repeat (the walk needs distinct siblings). */
static int check_distinct(struct jp *j, struct trace_step *s)
{
	size_t size = 16;
	while (size < 2 * (size_t)s->K)
		size *= 2;
	if (size > s->cap_seen) {
		uint32_t *a = realloc(s->seen, size * 4);
		if (a)
			s->seen = a;
		int32_t *b = a ? realloc(s->seen_key, size * 4) : NULL;
		if (!b)
			return DDT_ENOMEM;
		s->seen_key = b;
		memset(s->seen, 0, size * 4);
		s->cap_seen = size;
		s->stamp = 0;
	}
	for (int d = 0; d < s->L; d++) {
		if (++s->stamp == 0) { /* wrapped: clear old stamps */
			memset(s->seen, 0, s->cap_seen * 4);
			s->stamp = 1;
		}
		for (int r = 0; r < s->K; r++) {
			int32_t id = s->tok[(size_t)d * s->K + r];
			size_t h = ((uint32_t)id * 2654435761u) & (size - 1);
			while (s->seen[h] == s->stamp && s->seen_key[h] != id)
				h = (h + 1) & (size - 1);
			if (s->seen[h] == s->stamp) {
				j->p = j->start + s->id_col[d] - 1;
				return jp_fail(j, "topk_ids: position %d lists token %d twice", d + 1, id);
			}
			s->seen[h] = s->stamp;
			s->seen_key[h] = id;
		}
	}
	return 0;
}

/* Log-probs non-increasing and summing to at most 1: sorted, so the sum can
 * stop once the rest cannot push it over. */
static int check_logprobs(struct jp *j, const struct trace_step *s)
{
	const double tol = 1e-3;
	for (int d = 0; d < s->L; d++) {
		const float *lp = s->logp + (size_t)d * s->K;
		double sum = 0;
		j->p = j->start + s->lp_col[d] - 1;
		for (int r = 1; r < s->K; r++)
			if (lp[r] > lp[r - 1])
				return jp_fail(j, "topk_logprobs: position %d is not in descending order "
						  "(rank %d: %g after %g)",
					       d + 1, r + 1, lp[r], lp[r - 1]);
		for (int r = 0; r < s->K; r++) {
			double p = exp((double)lp[r]);
			sum += p;
			if (sum > 1 + tol)
				return jp_fail(j, "topk_logprobs: position %d sums to more than 1 (%.4g): "
						  "write log-softmax over the whole vocabulary, not logits",
					       d + 1, sum);
			if (sum + p * (s->K - 1 - r) <= 1 + tol)
				break;
		}
	}
	return 0;
}

/* What the object must hold, and how its parts must agree. */
static int check_step(struct jp *j, struct trace_step *s, unsigned seen, int lp_rows, int lp_cols)
{
	int rc;
	j->p = j->start;
	for (int k = 0; k < 3; k++)
		if (!(seen & 1u << k))
			return jp_fail(j, "no \"%s\" (a step needs topk_ids, topk_logprobs and target)",
				       key_names[k]);
	if (lp_rows != s->L || lp_cols != s->K)
		return jp_fail(j, "topk_logprobs is %d x %d but topk_ids is %d x %d", lp_rows, lp_cols,
			       s->L, s->K);
	if (s->ntarget != s->L && s->ntarget != s->L + 1)
		return jp_fail(j, "target has %d tokens; %d positions need %d (or %d with the bonus)",
			       s->ntarget, s->L, s->L, s->L + 1);
	if (s->block >= 0 && s->block != s->L + 1)
		return jp_fail(j, "block %d but %d positions (block = positions + 1)", s->block, s->L);
	if (s->accepted > s->L + 1)
		return jp_fail(j, "accepted %d is more than the block (%d)", s->accepted, s->L + 1);
	if ((rc = check_distinct(j, s)) || (rc = check_logprobs(j, s)))
		return rc;
	return 0;
}

int trace_step_parse(struct trace_step *s, const char *line, size_t len, struct trace_err *e)
{
	struct jp j = {line, line, line + len, e};
	unsigned seen = 0;
	int lp_rows = 0, lp_cols = 0, rc;

	s->L = s->K = s->ntarget = 0;
	s->block = s->budget_used = s->accepted = -1;
	s->context = -1;
	s->has_request = 0;
	s->request = 0;
	e->col = 0;
	e->msg[0] = '\0';
	if ((rc = jp_object(&j, s, &seen, &lp_rows, &lp_cols)))
		return rc;
	if (jp_peek(&j))
		return jp_fail(&j, "text after the object (one step a line)");
	return check_step(&j, s, seen, lp_rows, lp_cols);
}

void trace_step_free(struct trace_step *s)
{
	free(s->tok);
	free(s->logp);
	free(s->target);
	free(s->id_col);
	free(s->lp_col);
	free(s->seen);
	free(s->seen_key);
	memset(s, 0, sizeof *s);
}

/* ---- the reader ---- */

/*
 * gzip is inflated here rather than through gzread: zlib's gz* functions
 * skip whatever follows the last member, so a damaged or appended file read
 * as a shorter trace. Every member is read to its end and checked; what
 * follows must be another member or nothing. The decompressed size has a
 * budget (TRACE_GZIP_ALLOW_BYTES, then TRACE_GZIP_MAX_RATIO times the bytes
 * read), and blank lines never reach a batch, so a gzip of blank lines
 * stops early in constant memory instead of filling the batches.
 */

#define RAW_BYTES (1u << 18)

struct trace_reader {
	int fd;
	char *path;
	int gzip;              /* 1: inflate */
	z_stream z;
	int z_live;            /* inflateInit2 done */
	int member_end;        /* the last member ended: only another may follow */
	unsigned char *raw;    /* compressed bytes read and not yet inflated: [raw_lo, raw_hi) */
	size_t raw_lo, raw_hi;
	int raw_eof;
	long long raw_read;    /* bytes read from the file */
	long long out_bytes;   /* decompressed bytes */
	char *buf;             /* bytes read and not yet handed out: [lo, hi) */
	size_t cap, lo, hi;
	int eof;
	long long line_no;     /* lines read so far, blank ones included */
	long long total;       /* file size, -1 for a pipe */
	const char **line;     /* the batch's arrays */
	size_t *len, ncap;
	long long *no;
};

/* More compressed bytes at raw[raw_hi]. Returns 0 or DDT_EIO. */
static int raw_more(struct trace_reader *r)
{
	if (r->raw_lo == r->raw_hi)
		r->raw_lo = r->raw_hi = 0;
	if (r->raw_hi == RAW_BYTES) {
		memmove(r->raw, r->raw + r->raw_lo, r->raw_hi - r->raw_lo);
		r->raw_hi -= r->raw_lo;
		r->raw_lo = 0;
	}
	ssize_t got;
	do
		got = read(r->fd, r->raw + r->raw_hi, RAW_BYTES - r->raw_hi);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return err_set(DDT_EIO, "%s: %s", r->path, strerror(errno));
	r->raw_hi += (size_t)got;
	r->raw_read += got;
	r->raw_eof = got == 0;
	return 0;
}

int trace_open(struct trace_reader **out, const char *path)
{
	struct trace_reader *r;
	struct stat st;
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(STDIN_FILENO), rc;

	*out = NULL;
	if (fd < 0)
		return err_set(errno == ENOENT ? DDT_ENOTFOUND : DDT_EIO, "cannot open %s: %s", path,
			       strerror(errno));
	if (fstat(fd, &st) || S_ISDIR(st.st_mode)) {
		close(fd);
		return err_set(DDT_EINPUT, "%s is a folder, not a trace file", path);
	}
	if (!(r = calloc(1, sizeof *r)) || !(r->path = strdup(path)) || !(r->raw = malloc(RAW_BYTES))) {
		if (r)
			free(r->path);
		free(r);
		close(fd);
		return err_nomem();
	}
	r->fd = fd;
	r->total = S_ISREG(st.st_mode) ? (long long)st.st_size : -1;
	while (r->raw_hi < 2 && !r->raw_eof)
		if ((rc = raw_more(r))) {
			trace_close(r);
			return rc;
		}
	r->gzip = r->raw_hi >= 2 && r->raw[0] == 0x1f && r->raw[1] == 0x8b;
	if (r->gzip && inflateInit2(&r->z, 16 + MAX_WBITS) != Z_OK) {
		trace_close(r);
		return err_nomem();
	}
	r->z_live = r->gzip;
	*out = r;
	return 0;
}

/* Plain: the raw bytes as they are, into buf[hi]. */
static int plain_more(struct trace_reader *r)
{
	int rc;
	if (r->raw_lo == r->raw_hi && (rc = raw_more(r)))
		return rc;
	size_t n = r->raw_hi - r->raw_lo, room = r->cap - r->hi;
	n = n < room ? n : room;
	memcpy(r->buf + r->hi, r->raw + r->raw_lo, n);
	r->raw_lo += n;
	r->hi += n;
	r->eof = r->raw_eof && r->raw_lo == r->raw_hi;
	return 0;
}

/* After a member's end: another member, or nothing. */
static int member_next(struct trace_reader *r)
{
	int rc;
	while (r->raw_hi - r->raw_lo < 2 && !r->raw_eof)
		if ((rc = raw_more(r)))
			return rc;
	if (r->raw_lo == r->raw_hi) {
		r->eof = 1;
		return 0;
	}
	long long at = r->raw_read - (long long)(r->raw_hi - r->raw_lo);
	if (r->raw_hi - r->raw_lo < 2 || r->raw[r->raw_lo] != 0x1f || r->raw[r->raw_lo + 1] != 0x8b)
		return err_set(DDT_EINPUT, "%s: damaged gzip data: %lld bytes of something else after "
			       "the gzip data ends at byte %lld", r->path,
			       r->total >= 0 ? r->total - at : (long long)(r->raw_hi - r->raw_lo), at);
	r->member_end = 0;
	return inflateReset(&r->z) == Z_OK ? 0 : err_nomem();
}

/* Gzip: inflates into buf[hi] what room there is. */
static int gzip_more(struct trace_reader *r)
{
	int rc;
	if (r->member_end)
		return member_next(r);
	if (r->raw_lo == r->raw_hi && (rc = raw_more(r)))
		return rc;
	if (r->raw_lo == r->raw_hi && r->raw_eof)
		return err_set(DDT_EINPUT, "%s: damaged gzip data: the file ends inside a gzip member "
			       "(cut short?)", r->path);
	r->z.next_in = r->raw + r->raw_lo;
	r->z.avail_in = (uInt)(r->raw_hi - r->raw_lo);
	r->z.next_out = (Bytef *)r->buf + r->hi;
	size_t room = r->cap - r->hi;
	r->z.avail_out = (uInt)(room < (1u << 30) ? room : (1u << 30));
	uInt before = r->z.avail_out;
	int zr = inflate(&r->z, Z_NO_FLUSH);
	r->raw_lo = r->raw_hi - r->z.avail_in;
	r->hi += before - r->z.avail_out;
	r->out_bytes += before - r->z.avail_out;
	if (zr == Z_STREAM_END)
		r->member_end = 1;
	else if (zr == Z_MEM_ERROR)
		return err_nomem();
	else if (zr != Z_OK && zr != Z_BUF_ERROR)
		return err_set(DDT_EINPUT, "%s: damaged gzip data: %s", r->path,
			       r->z.msg ? r->z.msg : "inflate failed");
	if (r->out_bytes > TRACE_GZIP_ALLOW_BYTES &&
	    r->out_bytes > TRACE_GZIP_MAX_RATIO * r->raw_read)
		return err_set(DDT_EINPUT, "%s: the gzip data inflates to more than %d times its size "
			       "(%lld bytes from %lld): not a trace (a trace of numbers packs 3-10x)",
			       r->path, TRACE_GZIP_MAX_RATIO, r->out_bytes, r->raw_read);
	return 0;
}

/* Reads until the buffer holds want bytes or the file ends. */
static int reader_fill(struct trace_reader *r, size_t want)
{
	int rc;
	while (!r->eof && r->hi < want) {
		if (r->cap - r->hi < (1 << 16)) {
			size_t n = r->cap ? r->cap * 2 : want + (1 << 16);
			char *b = realloc(r->buf, n);
			if (!b)
				return err_nomem();
			r->buf = b;
			r->cap = n;
		}
		if ((rc = r->gzip ? gzip_more(r) : plain_more(r)))
			return rc;
	}
	return 0;
}

static int line_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return 0;
	return 1;
}

/* Appends line [s, s + n), number no, to the batch. */
static int batch_add(struct trace_reader *r, struct trace_batch *b, const char *s, size_t n,
		     long long no)
{
	if (b->n == r->ncap) {
		size_t c = r->ncap ? 2 * r->ncap : 1024;
		const char **l = realloc(r->line, c * sizeof *l);
		if (l)
			r->line = l;
		size_t *len = l ? realloc(r->len, c * sizeof *len) : NULL;
		if (len)
			r->len = len;
		long long *nos = len ? realloc(r->no, c * sizeof *nos) : NULL;
		if (!nos)
			return err_nomem();
		r->no = nos;
		r->ncap = c;
	}
	r->line[b->n] = s;
	r->len[b->n] = n;
	r->no[b->n++] = no;
	return 0;
}

int trace_read(struct trace_reader *r, struct trace_batch *b, size_t batch_bytes)
{
	int rc;
	memset(b, 0, sizeof *b);
	for (;;) {
		if (r->lo) { /* the unfinished line to the front */
			memmove(r->buf, r->buf + r->lo, r->hi - r->lo);
			r->hi -= r->lo;
			r->lo = 0;
		}
		if ((rc = reader_fill(r, batch_bytes)))
			return rc;
		for (;;) {
			char *s = r->buf + r->lo, *nl = memchr(s, '\n', r->hi - r->lo);
			if (!nl && !r->eof && b->n == 0 && r->lo == 0) { /* a line longer than the batch */
				if (r->hi >= TRACE_MAX_LINE)
					return err_set(DDT_EINPUT, "%s:%lld: a line of more than %u MiB",
						       r->path, r->line_no + 1, TRACE_MAX_LINE >> 20);
				if ((rc = reader_fill(r, r->hi * 2)))
					return rc;
				continue;
			}
			if (!nl && !(r->eof && r->hi > r->lo))
				break;
			size_t n = nl ? (size_t)(nl - s) : r->hi - r->lo;
			r->line_no++;
			if (!line_blank(s, n) && (rc = batch_add(r, b, s, n, r->line_no)))
				return rc;
			r->lo += n + (nl != NULL);
		}
		/* only blank lines so far: read on, in the same buffer */
		if (b->n || r->eof)
			break;
	}
	b->line = r->line;
	b->len = r->len;
	b->no = r->no;
	b->first_line = b->n ? r->no[0] : r->line_no + 1;
	return 0;
}

long long trace_bytes_read(const struct trace_reader *r)
{
	return r->raw_read;
}

long long trace_bytes_total(const struct trace_reader *r)
{
	return r->total;
}

void trace_close(struct trace_reader *r)
{
	if (!r)
		return;
	if (r->z_live)
		inflateEnd(&r->z);
	close(r->fd);
	free(r->raw);
	free(r->no);
	free(r->path);
	free(r->buf);
	free(r->line);
	free(r->len);
	free(r);
}
