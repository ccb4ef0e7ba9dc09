/* test_alloc.c - allocation failure at every allocation of the loaders: a
 * countdown allocator (malloc and friends defined here, over glibc's own)
 * fails the Nth allocation, for N = 1, 2, ... until a load runs without
 * reaching N. Each load must return an error, never crash, and leak nothing
 * (live blocks are counted; libyaml and stdio allocate through here too). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "calibrate.h"
#include "fit.h"
#include "err.h"
#include "fsx.h"
#include "history.h"
#include "record.h"
#include "tmpl.h"
#include "ydoc.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* ---------------------------------------------------------------- allocator */

static volatile long alloc_countdown; /* > 0: allocations until the one that fails */
static volatile int alloc_hit;        /* the countdown reached its allocation */
static volatile long alloc_live;      /* blocks allocated and not yet freed */
static volatile long alloc_count;     /* allocations asked for while armed */

#ifndef UNDER_ASAN
/* glibc's allocator under its exported internal names. */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t n);

/* True when this allocation is the one to fail. */
static int alloc_fails(void)
{
	if (alloc_countdown <= 0)
		return 0;
	alloc_count++;
	if (--alloc_countdown > 0)
		return 0;
	alloc_hit = 1;
	return 1;
}

void *malloc(size_t n)
{
	void *p = alloc_fails() ? NULL : __libc_malloc(n);
	if (p)
		alloc_live++;
	else
		errno = ENOMEM;
	return p;
}

void *calloc(size_t n, size_t size)
{
	void *p = alloc_fails() ? NULL : __libc_calloc(n, size);
	if (p)
		alloc_live++;
	else
		errno = ENOMEM;
	return p;
}

void *realloc(void *old, size_t n)
{
	void *p;
	if (old && n == 0) { /* glibc frees */
		alloc_live--;
		return __libc_realloc(old, 0);
	}
	if (alloc_fails()) {
		errno = ENOMEM;
		return NULL; /* old stays */
	}
	p = __libc_realloc(old, n);
	if (p && !old)
		alloc_live++;
	return p;
}

void free(void *p)
{
	if (p)
		alloc_live--;
	__libc_free(p);
}

static void *aligned(size_t align, size_t n)
{
	void *p = alloc_fails() ? NULL : __libc_memalign(align, n);
	if (p)
		alloc_live++;
	return p;
}

void *memalign(size_t align, size_t n)
{
	return aligned(align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	return aligned(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p = aligned(align, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

/* glibc's own strdup calls its malloc directly, past the one above. */
char *strndup(const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	char *p = malloc(n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

char *strdup(const char *s)
{
	return strndup(s, (size_t)-1);
}

char *__strdup(const char *s)
{
	return strdup(s);
}

char *__strndup(const char *s, size_t max)
{
	return strndup(s, max);
}

void *valloc(size_t n)
{
	return aligned(4096, n);
}

void *pvalloc(size_t n)
{
	return aligned(4096, (n + 4095) & ~(size_t)4095);
}
#endif

/* ---------------------------------------------------------------- sweep */

/* One loader under test: load() runs it on ctx and returns its code;
 * digest() sums up what it loaded (called before release); release() frees
 * what it made (called whatever load returned). */
struct subject {
	const char *name;
	int (*load)(void *ctx, struct ydiag *diag);
	void (*digest)(void *ctx, char *buf, size_t len);
	void (*release)(void *ctx);
	void *ctx;
	int clean_rc; /* what load returns when no allocation fails */
};

/* Fails each allocation of s in turn. Returns how many there were. A failed
 * allocation must give an error, or (where glibc absorbs it: stdio runs
 * unbuffered without its buffer) exactly the load of no failure. */
static long sweep(const struct subject *s)
{
	char want[512], got[512];
	long n, absorbed = 0;

	/* once unarmed first: lazy one-time allocations (stdio, locale) happen
	 * outside the count, and the digest of a clean load */
	{
		struct ydiag diag = {0};
		assert_int_equal(s->load(s->ctx, &diag), s->clean_rc);
		s->digest(s->ctx, want, sizeof want);
		s->release(s->ctx);
		ydiag_free(&diag);
	}
	for (n = 1;; n++) {
		struct ydiag diag = {0};
		long live = alloc_live;
		int rc;

		err_clear();
		alloc_hit = 0;
		alloc_count = 0;
		alloc_countdown = n;
		rc = s->load(s->ctx, &diag);
		alloc_countdown = 0;
		got[0] = '\0';
		if (rc == 0)
			s->digest(s->ctx, got, sizeof got);
		s->release(s->ctx);
		ydiag_free(&diag);
		if (alloc_live != live)
			fail_msg("%s: allocation %ld failing leaks %ld block(s)", s->name, n,
				 alloc_live - live);
		if (!alloc_hit) {
			if (rc != s->clean_rc)
				fail_msg("%s: %d without a failure, wanted %d", s->name, rc, s->clean_rc);
			break;
		}
		if (rc == 0 && s->clean_rc == 0) {
			if (strcmp(got, want) != 0)
				fail_msg("%s: allocation %ld failing loaded '%s', wanted '%s'", s->name,
					 n, got, want);
			absorbed++;
			continue;
		}
		if (rc != DDT_ENOMEM && rc != DDT_EINPUT)
			fail_msg("%s: allocation %ld of %ld failing gave %d ('%s'), wanted an error",
				 s->name, n, alloc_count, rc, err_msg());
		if (!err_msg()[0])
			fail_msg("%s: allocation %ld failing left no message", s->name, n);
	}
	printf("%s: %ld allocations, each failed in turn: %ld errors, %ld absorbed by libc"
	       " with the same result, no leak, no crash\n",
	       s->name, n - 1, n - 1 - absorbed, absorbed);
	return n - 1;
}

/* ---------------------------------------------------------------- subjects */

struct path_ctx {
	const char *path;
	struct calib cal;
	struct calibration cal_d;
	struct tmpl t;
	struct run_record r;
	struct history h;
};

static int load_calib(void *ctx, struct ydiag *diag)
{
	struct path_ctx *c = ctx;
	return calibrate_load(&c->cal, &c->cal_d, c->path, NULL, diag);
}

static void digest_calib(void *ctx, char *buf, size_t len)
{
	const struct calib *c = &((struct path_ctx *)ctx)->cal;
	snprintf(buf, len, "%zu gpus, model %s hidden %g, %d points, %s, %s", c->ngpus,
		 c->model.name, c->model.hidden, c->moe_ref.npoints,
		 c->ngpus ? c->gpus[c->ngpus - 1].id : "-", c->asm_[0].source);
}

static void free_calib(void *ctx)
{
	calib_free(&((struct path_ctx *)ctx)->cal);
}

static int load_tmpl(void *ctx, struct ydiag *diag)
{
	struct path_ctx *c = ctx;
	return tmpl_load(&c->t, c->path, diag);
}

static void digest_tmpl(void *ctx, char *buf, size_t len)
{
	const struct tmpl *t = &((struct path_ctx *)ctx)->t;
	snprintf(buf, len, "%s: %zu scenarios, last %s, parent %s", t->name, t->nscenarios,
		 t->nscenarios ? t->scenarios[t->nscenarios - 1].name : "-",
		 t->parent ? t->parent->file : "-");
}

static void free_tmpl(void *ctx)
{
	tmpl_free(&((struct path_ctx *)ctx)->t);
}

static int load_record(void *ctx, struct ydiag *diag)
{
	struct path_ctx *c = ctx;
	return record_read(&c->r, c->path, diag);
}

static void digest_record(void *ctx, char *buf, size_t len)
{
	const struct run_record *r = &((struct path_ctx *)ctx)->r;
	snprintf(buf, len, "%s: %zu devices, %zu rows, last %s %g", r->run_id, r->ndevices,
		 r->nrows, r->nrows ? r->rows[r->nrows - 1].reason : "-",
		 r->nrows ? r->rows[r->nrows - 1].median_us : 0);
}

static void free_record(void *ctx)
{
	record_free(&((struct path_ctx *)ctx)->r);
}

static int load_history(void *ctx, struct ydiag *diag)
{
	struct path_ctx *c = ctx;
	return history_load(&c->h, c->path, diag);
}

static void digest_history(void *ctx, char *buf, size_t len)
{
	const struct history *h = &((struct path_ctx *)ctx)->h;
	snprintf(buf, len, "%zu runs, %zu series, last %s", h->nruns, h->n,
		 h->nruns ? h->runs[h->nruns - 1].run_id : "-");
}

static void free_history(void *ctx)
{
	history_free(&((struct path_ctx *)ctx)->h);
}

/* Skips the test when the allocator here is not ours (ASan owns malloc). */
static void need_countdown(void)
{
#ifdef UNDER_ASAN
	skip(); /* ASan's allocator owns malloc in this build: see the plain build */
#endif
}

static char *scratch;

static int setup(void **state)
{
	(void)state;
	scratch = strdup("/tmp/ddt-alloc-XXXXXX");
	return scratch && mkdtemp(scratch) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	fsx_rm_rf(scratch);
	free(scratch);
	return 0;
}

static void put(const char *name, const char *text)
{
	char *p = fsx_join(scratch, name);
	assert_int_equal(fsx_write_all(p, text, strlen(text)), 0);
	free(p);
}

static void test_alloc__calibration_folder_fails_cleanly_at_every_allocation(void **state)
{
	(void)state;
	need_countdown();
	struct path_ctx *c = calloc(1, sizeof *c);
	c->path = "calibration";
	struct subject s = {"calibrate_load(calibration/)", load_calib, digest_calib, free_calib, c, 0};
	assert_true(sweep(&s) > 100);
	free(c);
}

static void test_alloc__bad_calibration_fails_cleanly_at_every_allocation(void **state)
{
	(void)state;
	need_countdown();
	struct path_ctx *c = calloc(1, sizeof *c);
	char *path = fsx_join(scratch, "bad-calib.yaml");
	/* many problems: each one's message is an allocation that may fail, and a
	 * problem whose message could not be stored must still count */
	put("bad-calib.yaml", "gpus:\n  b300: {name: B300, arch: sm_103, bw_tbps: -1, mem_gb: x,"
			      " bf16_tflops: 1, fp8_tflops: 1, link: nvlink, source: s, extra: 1}\n"
			      "model: {name: m}\nbogus: 1\n");
	c->path = path;
	struct subject s = {"calibrate_load(bad file)", load_calib, digest_calib, free_calib, c, DDT_EINPUT};
	assert_true(sweep(&s) > 20);
	free(path);
	free(c);
}

static void test_alloc__templates_fail_cleanly_at_every_allocation(void **state)
{
	(void)state;
	need_countdown();
	struct path_ctx *c = calloc(1, sizeof *c);
	c->path = "templates/default.yaml";
	struct subject s = {"tmpl_load(default)", load_tmpl, digest_tmpl, free_tmpl, c, 0};
	assert_true(sweep(&s) > 50);

	/* extends: two documents */
	char *base = fsx_join(scratch, "base.yaml"), *child = fsx_join(scratch, "child.yaml");
	put("base.yaml", "name: base\nscenarios:\n  - {name: a, target: b300, pipeline: native,"
			 " block: 8, budget: 8, accept: [4, 5]}\n");
	put("child.yaml", "name: child\nextends: base.yaml\ndescription: x\n");
	c->path = child;
	struct subject s2 = {"tmpl_load(extends)", load_tmpl, digest_tmpl, free_tmpl, c, 0};
	assert_true(sweep(&s2) > 20);
	put("child.yaml", "name: ../child\nextends: nowhere.yaml\nscenarios: [1]\n");
	struct subject s3 = {"tmpl_load(bad)", load_tmpl, digest_tmpl, free_tmpl, c, DDT_EINPUT};
	assert_true(sweep(&s3) > 5);
	free(base);
	free(child);
	free(c);
}

static void test_alloc__run_records_fail_cleanly_at_every_allocation(void **state)
{
	(void)state;
	need_countdown();
	struct path_ctx *c = calloc(1, sizeof *c);
	struct run_record r = {0};
	struct rec_device d = {.kind = "cpu", .name = "cpu", .arch = "x86_64", .cores = 2,
			       .mem_gb = 8, .sm_clock_mhz = NAN, .mem_clock_mhz = NAN,
			       .peak_gbps = NAN, .copy_gbps = 10};
	char *path = fsx_join(scratch, "run.yaml");

	r.schema = RECORD_SCHEMA;
	snprintf(r.run_id, sizeof r.run_id, "20260101T000000Z-host");
	snprintf(r.created, sizeof r.created, "2026-01-01T00:00:00Z");
	snprintf(r.template_name, sizeof r.template_name, "cpu");
	assert_int_equal(record_add_device(&r, &d), 0);
	for (int i = 0; i < 9; i++) { /* enough rows to grow the arrays a few times */
		struct rec_row w = {.op = "memcpy", .variant = "hot", .backend = "cpu",
				    .samples = 5, .median_us = 10 + i, .p10_us = 9, .p90_us = 11,
				    .min_us = 9, .max_us = 12, .stdev_us = 1, .bytes = 1e6,
				    .flops = 0, .gbps = 100, .pct_peak = 50, .max_err = NAN,
				    .sm_clock_mhz = NAN, .status = i % 7 ? REC_OK : REC_FAILED};
		rec_row_param_set(&w, "M", i);
		if (i % 7 == 0)
			snprintf(w.reason, sizeof w.reason, "validation: max error %d", i);
		assert_int_equal(record_add_row(&r, &w), 0);
	}
	assert_int_equal(record_write(&r, path), 0);
	record_free(&r);
	c->path = path;
	struct subject s = {"record_read", load_record, digest_record, free_record, c, 0};
	assert_true(sweep(&s) > 100);
	/* one problem only: the record with a bad run id. Its message is the one
	 * allocation that tells the loader something is wrong; if that is lost,
	 * the record reads as good. */
	char *text = NULL, *at;
	size_t len = 0;
	assert_int_equal(fsx_read_all(path, 1 << 20, &text, &len), 0);
	assert_non_null(at = strstr(text, "20260101T000000Z-host"));
	memcpy(at, "2026-01-01T00:00Z-bad", 21);
	/* a changed byte fails the trailer before any parse: read it as a record
	 * of schema 3 (no trailer), so the parse meets the bad run id */
	assert_non_null(at = strstr(text, RECORD_TRAILER));
	*at = '\0';
	assert_non_null(at = strstr(text, "schema: 4\n"));
	at[8] = '3';
	put("bad-run.yaml", text);
	free(text);
	free(path);
	path = fsx_join(scratch, "bad-run.yaml");
	c->path = path;
	struct subject s2 = {"record_read(one problem)", load_record, digest_record, free_record,
			     c, DDT_EINPUT};
	assert_true(sweep(&s2) > 100);
	put("bad-run.yaml", "schema: 1\nrun_id: nope\nrows: [{op: x}]\n");
	struct subject s3 = {"record_read(bad)", load_record, digest_record, free_record, c,
			     DDT_EINPUT};
	assert_true(sweep(&s3) > 5);
	free(path);
	free(c);
}

static void test_alloc__history_fails_cleanly_at_every_allocation(void **state)
{
	(void)state;
	need_countdown();
	struct path_ctx *c = calloc(1, sizeof *c);
	char *runs = fsx_join(scratch, "runs");
	struct rec_device d = {.kind = "cpu", .name = "cpu", .arch = "x86_64", .cores = 2,
			       .mem_gb = 8, .sm_clock_mhz = NAN, .mem_clock_mhz = NAN,
			       .peak_gbps = NAN, .copy_gbps = 10};
	for (int night = 0; night < 3; night++) {
		struct run_record r = {0};
		char *dir, *path;
		r.schema = RECORD_SCHEMA;
		snprintf(r.run_id, sizeof r.run_id, "2026010%dT000000Z-host", night + 1);
		snprintf(r.created, sizeof r.created, "2026-01-0%dT00:00:00Z", night + 1);
		snprintf(r.template_name, sizeof r.template_name, "cpu");
		assert_int_equal(record_add_device(&r, &d), 0);
		for (int i = 0; i < 3; i++) {
			struct rec_row w = {.op = "memcpy", .variant = "hot", .backend = "cpu",
					    .samples = 5, .median_us = 10 + i + night,
					    .p10_us = 9, .p90_us = 11, .min_us = 9, .max_us = 12,
					    .stdev_us = 1, .bytes = 1e6, .gbps = 100, .pct_peak = 50,
					    .max_err = NAN, .sm_clock_mhz = NAN, .status = REC_OK};
			rec_row_param_set(&w, "M", i);
			assert_int_equal(record_add_row(&r, &w), 0);
		}
		dir = fsx_join(runs, r.run_id);
		path = fsx_join(dir, "run.yaml");
		assert_int_equal(fsx_mkdir_p(dir), 0);
		assert_int_equal(record_write(&r, path), 0);
		record_free(&r);
		free(path);
		free(dir);
	}
	c->path = runs;
	struct subject s = {"history_load(3 nights)", load_history, digest_history, free_history,
			    c, 0};
	assert_true(sweep(&s) > 100);
	free(runs);
	free(c);
}

/* The allocator really counts: a leak made on purpose shows. */
static void test_alloc__the_counter_sees_a_leak(void **state)
{
	(void)state;
	need_countdown();
	long live = alloc_live;
	char *p = strdup("leak"); /* through glibc's strdup, so interposition works */
	assert_int_equal(alloc_live, live + 1);
	alloc_countdown = 1;
	char *q = strdup("fails");
	alloc_countdown = 0;
	assert_null(q);
	free(p);
	assert_int_equal(alloc_live, live);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc__the_counter_sees_a_leak),
		cmocka_unit_test(test_alloc__calibration_folder_fails_cleanly_at_every_allocation),
		cmocka_unit_test(test_alloc__bad_calibration_fails_cleanly_at_every_allocation),
		cmocka_unit_test(test_alloc__templates_fail_cleanly_at_every_allocation),
		cmocka_unit_test(test_alloc__run_records_fail_cleanly_at_every_allocation),
		cmocka_unit_test(test_alloc__history_fails_cleanly_at_every_allocation),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
