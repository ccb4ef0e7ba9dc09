/* test_record.c - run records: emit, read back, reject damage, run ids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "fsx.h"
#include "harness.h"
#include "record.h"

static void fill(struct run_record *r)
{
	struct rec_device d = {.kind = "cpu", .name = "Test \"CPU\": 2 cores", .arch = "x86_64",
			       .cores = 2, .mem_gb = 24, .sm_clock_mhz = NAN,
			       .mem_clock_mhz = NAN, .peak_gbps = NAN, .copy_gbps = 12.5};
	struct rec_row w = {.op = "moe_w4a16", .variant = "cold", .backend = "cpu", .samples = 10,
			    .median_us = 123.456, .p10_us = 120, .p90_us = 130, .min_us = 119,
			    .max_us = 140, .stdev_us = 2.5, .bytes = 1.5e9, .flops = 3e6,
			    .gbps = 11.1, .pct_peak = 88.8, .max_err = 1e-6,
			    .sm_clock_mhz = NAN, .status = REC_OK, .stop = "ci"};
	memset(r, 0, sizeof *r);
	r->schema = RECORD_SCHEMA;
	record_make_run_id(r->run_id, sizeof r->run_id, r->created, sizeof r->created);
	snprintf(r->template_name, sizeof r->template_name, "cpu");
	snprintf(r->prov.git_rev, sizeof r->prov.git_rev, "abc123+dirty");
	snprintf(r->prov.compiler, sizeof r->prov.compiler, "gcc 12.2.0");
	snprintf(r->prov.host, sizeof r->prov.host, "yes");
	assert_int_equal(record_add_device(r, &d), 0);
	rec_row_param_set(&w, "M", 9);
	rec_row_param_set(&w, "hidden", 7168);
	assert_int_equal(record_add_row(r, &w), 0);
	w.status = REC_SKIPPED;
	w.median_us = NAN;
	w.stop[0] = '\0';
	snprintf(w.op, sizeof w.op, "allreduce");
	snprintf(w.reason, sizeof w.reason, "needs 2 GPUs: 'found' 0 # really");
	assert_int_equal(record_add_row(r, &w), 0);
}

static void test_record__round_trip_keeps_every_field(void **state)
{
	(void)state;
	char dir[] = "/tmp/ddt-rec-XXXXXX";
	struct run_record a, b;
	struct ydiag diag = {0};
	assert_non_null(mkdtemp(dir));
	char *path = fsx_join(dir, "run.yaml");

	fill(&a);
	assert_int_equal(record_write(&a, path), 0);
	int rc = record_read(&b, path, &diag);
	ydiag_print(&diag, stderr);
	assert_int_equal(rc, 0);
	assert_string_equal(a.run_id, b.run_id);
	assert_string_equal(b.devices[0].name, a.devices[0].name);
	assert_true(isnan(b.devices[0].sm_clock_mhz));
	assert_int_equal(b.nrows, 2);
	assert_float_equal(b.rows[0].median_us, 123.456, 1e-9);
	assert_float_equal(rec_row_param(&b.rows[0], "hidden", 0), 7168, 0);
	assert_string_equal(b.rows[1].reason, a.rows[1].reason);
	assert_int_equal(b.rows[1].status, REC_SKIPPED);
	assert_true(isnan(b.rows[1].median_us));
	assert_string_equal(b.rows[0].stop, "ci");
	assert_string_equal(b.rows[1].stop, ""); /* no samples: no stop written */
	assert_int_equal(b.schema, RECORD_SCHEMA);
	assert_string_equal(b.prov.host, "yes");
	record_free(&a);
	record_free(&b);
	ydiag_free(&diag);
	fsx_rm_rf(dir);
	free(path);
}

/* Reads text as a run.yaml in a fresh folder, removed after; returns
 * record_read's code. */
static int read_text(const char *text, struct run_record *r, struct ydiag *diag)
{
	char dir[] = "/tmp/ddt-rec-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *path = fsx_join(dir, "run.yaml");
	assert_int_equal(fsx_write_all(path, text, strlen(text)), 0);
	int rc = record_read(r, path, diag);
	fsx_rm_rf(dir);
	free(path);
	return rc;
}

static void test_record__damaged_file_is_an_error_with_position(void **state)
{
	(void)state;
	struct run_record r;
	struct ydiag diag = {0};
	const char *bad = "schema: 1\nrun_id: 20260101T000000Z-x\ncreated: x\ntemplate: cpu\n"
			  "provenance: {git_rev: a, compiler: b, build: c, cuda_runtime: '',"
			  " cuda_driver: '', nccl: '', host: h}\n"
			  "devices: []\nrows:\n  - op: memcpy\n    bogus: 1\n";
	assert_int_equal(read_text(bad, &r, &diag), DDT_EINPUT);
	assert_true(diag.n >= 1);
	assert_non_null(strstr(diag.msgs[0], "run.yaml:"));
	record_free(&r);
	ydiag_free(&diag);
}

/* A record of schema `schema` with one CPU device and one memcpy row naming
 * device `device`, of status `status`, its last keys followed by `extra`
 * (", stop: soon"); the row is on line 9. */
static void row_text(char *buf, size_t len, int schema, int device, const char *status,
		     const char *extra)
{
	snprintf(buf, len,
		 "schema: %d\nrun_id: 20260101T000000Z-x\ncreated: 2026-01-01T00:00:00Z\n"
		 "template: cpu\n"
		 "provenance: {git_rev: a, compiler: b, build: c, cuda_runtime: '',"
		 " cuda_driver: '', nccl: '', host: h}\n"
		 "devices:\n  - {kind: cpu, index: 0, name: c, arch: x86_64, cores: 2,"
		 " mem_gb: 1, sm_clock_mhz: ~, mem_clock_mhz: ~, peak_gbps: ~,"
		 " copy_gbps: 10}\n"
		 "rows:\n  - {op: memcpy, variant: hot, backend: cpu, device: %d,"
		 " params: {mib: 1}, samples: 3, median_us: 1, p10_us: 1, p90_us: 1,"
		 " min_us: 1, max_us: 1, stdev_us: 0, bytes: 1, flops: 0, gbps: 1,"
		 " pct_peak: 1, max_err: 0, sm_clock_mhz: ~, status: %s, reason: ''%s}\n",
		 schema, device, status, extra);
}

/* stop is one of the rules' names, else an error at its position; a
 * record of schema 2 (no stop) reads with none. */
static void test_record__stop_is_a_known_rule(void **state)
{
	(void)state;
	struct run_record r;
	struct ydiag diag = {0};
	char body[2048];
	row_text(body, sizeof body, 3, 0, "ok", ", stop: soon");
	assert_int_equal(read_text(body, &r, &diag), DDT_EINPUT);
	assert_true(diag.n >= 1);
	assert_non_null(strstr(diag.msgs[0], "run.yaml:9:"));
	assert_non_null(strstr(diag.msgs[0], "expected rsd, ci, timeout or max_samples"));
	record_free(&r);
	ydiag_free(&diag);
	row_text(body, sizeof body, 3, 0, "ok", ", stop: timeout");
	assert_int_equal(read_text(body, &r, &diag), 0);
	assert_string_equal(r.rows[0].stop, "timeout");
	record_free(&r);
	row_text(body, sizeof body, 2, 0, "ok", "");
	assert_int_equal(read_text(body, &r, &diag), 0);
	assert_string_equal(r.rows[0].stop, "");
	record_free(&r);
	ydiag_free(&diag);
}

/* A record cut at any byte is named damaged, however much of it still
 * parses; so is one with a byte changed after it was written. */
static void test_record__cut_at_any_byte_or_changed_is_damaged(void **state)
{
	(void)state;
	char dir[] = "/tmp/ddt-rec-XXXXXX";
	struct run_record a, b;
	struct ydiag diag = {0};
	char *whole = NULL;
	size_t len = 0, parsed_cuts = 0;
	assert_non_null(mkdtemp(dir));
	char *path = fsx_join(dir, "run.yaml");

	fill(&a);
	assert_int_equal(record_write(&a, path), 0);
	assert_int_equal(fsx_read_all(path, 1 << 20, &whole, &len), 0);
	assert_non_null(strstr(whole, RECORD_TRAILER "rows=2 fnv1a64="));
	for (size_t cut = 0; cut < len; cut++) {
		struct ydoc *doc = NULL;
		struct ydiag yd = {0};
		/* how many cuts still parse as YAML: the ones only the trailer catches */
		parsed_cuts += ydoc_load_buf(&doc, "x", whole, cut, &yd) == 0;
		ydoc_free(doc);
		ydiag_free(&yd);
		assert_int_equal(fsx_write_all(path, whole, cut), 0);
		if (record_read(&b, path, &diag) == 0)
			fail_msg("a record cut at byte %zu of %zu was read as whole", cut, len);
		record_free(&b);
		ydiag_free(&diag);
	}
	printf("%zu cuts of %zu bytes, %zu of them still YAML: all damaged\n", len, len,
	       parsed_cuts);
	assert_true(parsed_cuts > len / 4);
	char *p = strstr(whole, "123.456"); /* a median changed after it was written */
	assert_non_null(p);
	p[0] = '9';
	assert_int_equal(fsx_write_all(path, whole, len), 0);
	assert_int_equal(record_read(&b, path, &diag), DDT_EINPUT);
	assert_non_null(strstr(diag.msgs[0], "not those it was written with"));
	record_free(&b);
	ydiag_free(&diag);
	record_free(&a);
	free(whole);
	fsx_rm_rf(dir);
	free(path);
}

/* created is a moment of the calendar: Feb 30 25:61 is damage. */
static void test_record__created_is_a_calendar_date(void **state)
{
	(void)state;
	static const struct {
		const char *created;
		int ok;
	} cases[] = {{"2026-02-30T25:61:00Z", 0}, {"2026-02-29T00:00:00Z", 0},
		     {"2024-02-29T23:59:59Z", 1}, {"2026-13-01T00:00:00Z", 0},
		     {"2026-04-31T00:00:00Z", 0}, {"2026-12-31T23:59:59Z", 1},
		     {"2026-1-01T00:00:00Z", 0},  {"2026-01-01T00:00:00Zx", 0},
		     {"2026-01-01 00:00:00Z", 0}, {"+026-01-01T00:00:00Z", 0}};
	const char *fmt = "schema: 3\nrun_id: 20260101T000000Z-x\ncreated: '%s'\ntemplate: cpu\n"
			  "provenance: {git_rev: a, compiler: b, build: c, cuda_runtime: '',"
			  " cuda_driver: '', nccl: '', host: h}\ndevices: []\nrows: []\n";
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct run_record r;
		struct ydiag diag = {0};
		char text[1024];
		snprintf(text, sizeof text, fmt, cases[i].created);
		int rc = read_text(text, &r, &diag);
		if (cases[i].ok != (rc == 0))
			fail_msg("created '%s': read gave %d", cases[i].created, rc);
		if (!cases[i].ok)
			assert_non_null(strstr(diag.msgs[0], "not a date and time of the calendar"));
		record_free(&r);
		ydiag_free(&diag);
	}
}

/* A record of schema 4 without its trailer is cut short; an older one
 * without it reads as the older schema it is. */
static void test_record__older_schema_reads_without_trailer(void **state)
{
	(void)state;
	const char *fmt = "schema: %d\nrun_id: 20260101T000000Z-x\ncreated: 2026-01-01T00:00:00Z\n"
			  "template: cpu\nprovenance: {git_rev: a, compiler: b, build: c,"
			  " cuda_runtime: '', cuda_driver: '', nccl: '', host: h}\n"
			  "devices: []\nrows: []\n";
	struct run_record r;
	struct ydiag diag = {0};
	char text[1024];

	snprintf(text, sizeof text, fmt, 3);
	assert_int_equal(read_text(text, &r, &diag), 0);
	assert_int_equal(r.schema, 3);
	record_free(&r);
	snprintf(text, sizeof text, fmt, 4);
	assert_int_equal(read_text(text, &r, &diag), DDT_EINPUT);
	assert_non_null(strstr(diag.msgs[0], "no end-of-record line"));
	record_free(&r);
	ydiag_free(&diag);
}

static void test_record__run_id_shape(void **state)
{
	(void)state;
	char id[80], created[24];
	record_make_run_id(id, sizeof id, created, sizeof created);
	assert_true(record_run_id_valid(id));
	assert_false(record_run_id_valid("../../etc"));
	assert_false(record_run_id_valid("20260101T000000Z-a/b"));
	assert_int_equal(strlen(created), 20);
}

/* The schema tables' names are the engine's: each status and stop rule
 * written by its name, and no other name read. */
static void test_record__name_tables_are_the_engines(void **state)
{
	(void)state;
	int n = 0;
	for (; record_status_names[n].name; n++)
		assert_string_equal(record_status_names[n].name,
				    rec_status_name((enum rec_status)record_status_names[n].value));
	assert_int_equal(n, REC_UNSUPPORTED + 1);
	for (n = 0; record_stop_names[n].name; n++)
		assert_string_equal(record_stop_names[n].name,
				    harness_stop_name(record_stop_names[n].value));
	assert_int_equal(n, HARNESS_STOP_MAX_SAMPLES);
}

/* Every problem of a row, in the order of its keys: the device it names,
 * its status, a key no schema has. */
static void test_record__row_problems_in_order_and_words(void **state)
{
	(void)state;
	struct run_record r;
	struct ydiag diag = {0};
	char text[2048];
	row_text(text, sizeof text, 3, 3, "maybe", ", colour: red");
	assert_int_equal(read_text(text, &r, &diag), DDT_EINPUT);
	assert_int_equal(diag.n, 3);
	assert_non_null(strstr(diag.msgs[0], "run.yaml:9:5: device 3: no such device"));
	assert_non_null(strstr(diag.msgs[1], "run.yaml:9:"));
	assert_non_null(strstr(diag.msgs[1], ": status: expected ok, failed, skipped or unsupported,"
					     " got 'maybe'"));
	assert_non_null(strstr(diag.msgs[2], "unknown key 'colour'"));
	record_free(&r);
	ydiag_free(&diag);
}

/* A record of schema 2 whose machine section holds n GPU states. */
static void gpus_text(char *text, size_t len, int n)
{
	int off = snprintf(text, len,
			   "schema: 2\nrun_id: 20260101T000000Z-x\ncreated: 2026-01-01T00:00:00Z\n"
			   "template: cpu\n"
			   "provenance: {git_rev: a, compiler: b, build: c, cuda_runtime: '',"
			   " cuda_driver: '', nccl: '', host: h}\n"
			   "machine:\n  cpus: 2\n  gpus:\n");
	for (int i = 0; i < n; i++)
		off += snprintf(text + off, len - (size_t)off, "    - {index: %d}\n", i);
	snprintf(text + off, len - (size_t)off, "devices: []\nrows: []\n");
}

/* A record holds at most RECORD_MAX_GPU_STATES GPU states; the one past
 * them is named at its place. */
static void test_record__machine_gpus_are_capped(void **state)
{
	(void)state;
	struct run_record r;
	struct ydiag diag = {0};
	char text[4096];
	gpus_text(text, sizeof text, RECORD_MAX_GPU_STATES + 1);
	assert_int_equal(read_text(text, &r, &diag), DDT_EINPUT);
	assert_int_equal(diag.n, 1);
	assert_non_null(strstr(diag.msgs[0], "run.yaml:25:7: gpus: at most 16 items, got 17"));
	record_free(&r);
	ydiag_free(&diag);
	/* the ones it holds: each number absent is unknown */
	gpus_text(text, sizeof text, RECORD_MAX_GPU_STATES);
	assert_int_equal(read_text(text, &r, &diag), 0);
	assert_int_equal(r.machine.known, 1);
	assert_int_equal(r.machine.ngpus, RECORD_MAX_GPU_STATES);
	assert_true(isnan(r.machine.gpus[3].temp_c));
	assert_true(isnan(r.machine.load_avg_1m));
	assert_int_equal(r.machine.gpus[3].other_procs, -1);
	assert_int_equal(r.machine.gpus[15].index, 15);
	record_free(&r);
}

/* A record read has the room a built one has: rows and devices added to
 * it afterwards (a fleet's merge) land after those read. */
static void test_record__read_record_takes_more_rows(void **state)
{
	(void)state;
	char dir[] = "/tmp/ddt-rec-XXXXXX";
	struct run_record a, b;
	struct ydiag diag = {0};
	assert_non_null(mkdtemp(dir));
	char *path = fsx_join(dir, "run.yaml");
	fill(&a);
	struct rec_device d = a.devices[0]; /* copies: adding may move the arrays */
	struct rec_row w = a.rows[0];
	for (int i = 0; i < 3; i++) /* 4 devices and 3 rows: room for 4 */
		assert_int_equal(record_add_device(&a, &d), 0);
	assert_int_equal(record_add_row(&a, &w), 0);
	assert_int_equal(record_write(&a, path), 0);
	assert_int_equal(record_read(&b, path, &diag), 0);
	assert_int_equal(b.ndevices, 4);
	assert_int_equal(b.nrows, 3);
	for (int i = 0; i < 40; i++) {
		w.samples = 100 + i;
		assert_int_equal(record_add_row(&b, &w), 0);
		assert_int_equal(record_add_device(&b, &d), 0);
	}
	assert_int_equal(b.nrows, 43);
	assert_int_equal(b.rows[42].samples, 139);
	assert_int_equal(b.rows[2].samples, 10);
	assert_string_equal(b.rows[1].op, "allreduce");
	assert_int_equal(b.ndevices, 44);
	record_free(&a);
	record_free(&b);
	fsx_rm_rf(dir);
	free(path);
}

/* body's row with params instead of {mib: 1}. */
static void row_params(char *body, size_t len, const char *params)
{
	char text[2048];
	row_text(text, sizeof text, 3, 0, "ok", "");
	char *at = strstr(text, "{mib: 1}");
	assert_non_null(at);
	snprintf(body, len, "%.*s%s%s", (int)(at - text), text, params, at + strlen("{mib: 1}"));
}

/* A row's params read in any order are kept sorted by key (the lookups
 * and the writer go by that order); more than the row holds is told at
 * the first one too many. */
static void test_record__params_read_sorted_and_capped(void **state)
{
	(void)state;
	struct run_record r;
	struct ydiag diag = {0};
	char body[2048];
	row_params(body, sizeof body, "{mib: 1, k: 64, M: 9}");
	assert_int_equal(read_text(body, &r, &diag), 0);
	assert_int_equal(r.rows[0].nparams, 3);
	assert_string_equal(r.rows[0].params[0].key, "M");
	assert_string_equal(r.rows[0].params[1].key, "k");
	assert_true(r.rows[0].params[1].val == 64 && r.rows[0].params[2].val == 1);
	record_free(&r);
	row_params(body, sizeof body, "{a: 1, b: 1, c: 1, d: 1, e: 1, f: 1, g: 1, h: 1, i: 1, j: 1,"
				      " k: 1, l: 1, m: 1}");
	assert_int_equal(read_text(body, &r, &diag), DDT_EINPUT);
	assert_non_null(strstr(diag.msgs[0], "run.yaml:9:"));
	assert_non_null(strstr(diag.msgs[0], ": params: at most 12 items, got 13"));
	record_free(&r);
	ydiag_free(&diag);
	row_params(body, sizeof body, "{mib: x}");
	assert_int_equal(read_text(body, &r, &diag), DDT_EINPUT);
	assert_non_null(strstr(diag.msgs[0], ": mib: expected a number, got 'x'"));
	record_free(&r);
	ydiag_free(&diag);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record__round_trip_keeps_every_field),
		cmocka_unit_test(test_record__damaged_file_is_an_error_with_position),
		cmocka_unit_test(test_record__stop_is_a_known_rule),
		cmocka_unit_test(test_record__cut_at_any_byte_or_changed_is_damaged),
		cmocka_unit_test(test_record__created_is_a_calendar_date),
		cmocka_unit_test(test_record__older_schema_reads_without_trailer),
		cmocka_unit_test(test_record__run_id_shape),
		cmocka_unit_test(test_record__name_tables_are_the_engines),
		cmocka_unit_test(test_record__row_problems_in_order_and_words),
		cmocka_unit_test(test_record__machine_gpus_are_capped),
		cmocka_unit_test(test_record__read_record_takes_more_rows),
		cmocka_unit_test(test_record__params_read_sorted_and_capped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
