/* fuzz_trace.c - libFuzzer target: drafter trace lines from bytes (one a
 * line, through trace_step_parse), and on a line that parses, the checks
 * the replay leans on: shapes in range, ids distinct, log-probs sorted. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "trace.h"

static struct trace_step step; /* buffers reused across inputs, as the replay does */

/* What a parsed line promises; aborts (a finding) when it does not hold. */
static void check(const struct trace_step *s)
{
	if (s->L < 1 || s->L > TRACE_MAX_L || s->K < 1 || s->K > TRACE_MAX_K ||
	    (s->ntarget != s->L && s->ntarget != s->L + 1))
		abort();
	for (int d = 0; d < s->L; d++)
		for (int k = 1; k < s->K; k++)
			if (!(s->logp[d * s->K + k] <= s->logp[d * s->K + k - 1]) ||
			    s->tok[d * s->K + k] == s->tok[d * s->K])
				abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct trace_err e;
		int rc = trace_step_parse(&step, p, n, &e);
		if (rc == 0)
			check(&step);
		else if (rc == DDT_EINPUT && (e.col < 1 || (size_t)e.col > n + 1 || !e.msg[0]))
			abort(); /* an error names a column on the line and says what */
		p += n + 1;
	}
	return 0;
}
