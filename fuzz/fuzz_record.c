/* fuzz_record.c - libFuzzer target: run records read from bytes
 * (record_read_buf); a record that reads must write out and read back to the
 * same bytes. Build and run: make fuzz (see fuzz/run). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "record.h"

/* record_emit into a malloc'd buffer. */
static char *emit(const struct run_record *r, size_t *len)
{
	char *buf = NULL;
	FILE *fp = open_memstream(&buf, len);
	if (!fp || record_emit(r, fp) != 0)
		abort();
	fclose(fp);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run_record r, back;
	struct ydiag diag = {0};
	char *out1, *out2;
	size_t len1, len2;

	err_clear();
	if (record_read_buf(&r, "run.yaml", (const char *)data, size, &diag) != 0) {
		if (diag.n == 0 && err_msg()[0] == '\0')
			abort(); /* an error must say what it is */
		record_free(&r);
		ydiag_free(&diag);
		return 0;
	}
	out1 = emit(&r, &len1);
	if (record_read_buf(&back, "again.yaml", out1, len1, &diag) != 0) {
		ydiag_print(&diag, stderr);
		fprintf(stderr, "--- emitted:\n%s\n", out1);
		abort(); /* what ddt writes, ddt must read */
	}
	out2 = emit(&back, &len2);
	if (len1 != len2 || memcmp(out1, out2, len1) != 0) {
		fprintf(stderr, "--- first:\n%s\n--- second:\n%s\n", out1, out2);
		abort(); /* a round trip changes nothing */
	}
	free(out1);
	free(out2);
	record_free(&r);
	record_free(&back);
	ydiag_free(&diag);
	return 0;
}
