/* test_limits.c - every input limit of the loaders, each at its edge: size,
 * depth, values, anchors/aliases/tags, duplicate keys, NUL and control
 * characters, string lengths, numbers (C locale, ranges), paths that must
 * stay in their folders, and files that are not regular files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calib.h"
#include "calibrate.h"
#include "fit.h"
#include "err.h"
#include "fsx.h"
#include "record.h"
#include "tmpl.h"
#include "ydoc.h"

/* Parses text; returns the code and leaves the first problem (or "") in msg. */
static int parse(const char *text, size_t len, char *msg, size_t msglen)
{
	struct ydiag diag = {0};
	struct ydoc *doc = NULL;
	int rc = ydoc_load_buf(&doc, "t.yaml", text, len, &diag);

	snprintf(msg, msglen, "%s", diag.n ? diag.msgs[0] : "");
	ydoc_free(doc);
	ydiag_free(&diag);
	return rc;
}

/* Asserts that text is refused with a message containing want. */
static void refused(const char *text, const char *want)
{
	char msg[1024];
	int rc = parse(text, strlen(text), msg, sizeof msg);
	if (rc != DDT_EINPUT || !strstr(msg, want))
		fail_msg("'%s': wanted an error with '%s', got %d '%s'", text, want, rc, msg);
}

static void accepted(const char *text)
{
	char msg[1024];
	int rc = parse(text, strlen(text), msg, sizeof msg);
	if (rc != 0)
		fail_msg("'%s' was refused: %s", text, msg);
}

/* A temporary folder, removed by the caller with fsx_rm_rf. */
static char *tmpdir(void)
{
	char *d = strdup("/tmp/ddt-limits-XXXXXX");
	assert_non_null(d);
	assert_non_null(mkdtemp(d));
	return d;
}

static void write_file(const char *path, const char *text)
{
	assert_int_equal(fsx_write_all(path, text, strlen(text)), 0);
}

static void test_limits__file_over_the_size_cap_is_refused(void **state)
{
	(void)state;
	char *dir = tmpdir(), *path = fsx_join(dir, "big.yaml");
	struct ydiag diag = {0};
	struct ydoc *doc = NULL;
	int fd = open(path, O_CREAT | O_WRONLY, 0644);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)YDOC_MAX_BYTES + 1), 0); /* sparse */
	close(fd);
	assert_int_equal(ydoc_load_file(&doc, path, &diag), DDT_EINPUT);
	assert_null(doc);
	assert_non_null(strstr(diag.msgs[0], "larger than"));
	ydiag_free(&diag);
	fsx_rm_rf(dir);
	free(path);
	free(dir);
}

/* depth nested block mappings "a:\n  a:\n ... x" (depth mappings in all). */
static char *nested_maps(int depth)
{
	size_t cap = (size_t)depth * (size_t)(2 * depth + 8) + 16, k = 0;
	char *s = malloc(cap);
	assert_non_null(s);
	for (int i = 0; i < depth; i++) {
		for (int j = 0; j < 2 * i; j++)
			s[k++] = ' ';
		k += (size_t)sprintf(s + k, i + 1 < depth ? "a:\n" : "a: x\n");
	}
	s[k] = '\0';
	return s;
}

static void test_limits__nesting_at_the_cap_loads_one_deeper_is_refused(void **state)
{
	(void)state;
	char *ok = nested_maps(YDOC_MAX_DEPTH), *deep = nested_maps(YDOC_MAX_DEPTH + 1);
	char seq_ok[2 * YDOC_MAX_DEPTH + 8], seq_deep[2 * YDOC_MAX_DEPTH + 8];

	accepted(ok);
	refused(deep, "nested too deeply");
	/* "- - - ... x": one sequence per dash */
	for (int i = 0; i < YDOC_MAX_DEPTH; i++)
		memcpy(seq_ok + 2 * i, "- ", 2);
	strcpy(seq_ok + 2 * YDOC_MAX_DEPTH, "x");
	strcpy(seq_deep, "- ");
	strcat(seq_deep, seq_ok);
	accepted(seq_ok);
	refused(seq_deep, "nested too deeply");
	free(ok);
	free(deep);
}

static void test_limits__more_values_than_the_cap_are_refused(void **state)
{
	(void)state;
	/* one sequence holding YDOC_MAX_NODES scalars: one value too many */
	size_t n = YDOC_MAX_NODES, len = 2 * n + 1;
	char *s = malloc(len + 1), msg[256];
	assert_non_null(s);
	s[0] = '[';
	for (size_t i = 0; i < n; i++) {
		s[1 + 2 * i] = '0';
		s[2 + 2 * i] = ',';
	}
	s[len - 1] = ']';
	s[len] = '\0';
	assert_int_equal(parse(s, len, msg, sizeof msg), DDT_EINPUT);
	assert_non_null(strstr(msg, "more than"));
	free(s);
}

static void test_limits__anchors_aliases_and_tags_are_refused(void **state)
{
	(void)state;
	refused("a: &x 1\n", "t.yaml:1:4: anchors are not allowed");
	refused("a: &x {b: 1}\n", "anchors are not allowed");
	refused("a: &x [1]\n", "anchors are not allowed");
	refused("a: 1\nb: *x\n", "t.yaml:2:4: aliases are not allowed");
	refused("a: !!str 5\n", "t.yaml:1:4: tags are not allowed");
	refused("a: !custom {b: 1}\n", "tags are not allowed");
	refused("- !!seq [1]\n", "tags are not allowed");
	refused("? !!str k\n: v\n", "tags are not allowed");
	refused("a: 1\n---\nb: 2\n", "only one YAML document");
	refused("? [a]\n: 1\n", "keys must be plain scalars");
}

static void test_limits__duplicate_keys_are_refused_in_wide_mappings(void **state)
{
	(void)state;
	/* 20000 keys: linear time with the hashed check (quadratic took minutes) */
	size_t n = 20000;
	char *s = malloc(n * 16 + 32), msg[256];
	size_t k = 0;
	assert_non_null(s);
	for (size_t i = 0; i < n; i++)
		k += (size_t)sprintf(s + k, "k%zu: %zu\n", i, i);
	assert_int_equal(parse(s, k, msg, sizeof msg), 0);
	k += (size_t)sprintf(s + k, "k17: again\n");
	assert_int_equal(parse(s, k, msg, sizeof msg), DDT_EINPUT);
	assert_string_equal(msg, "t.yaml:20001:1: duplicate key 'k17' (first at line 18)");
	free(s);
	refused("{a: 1, b: 2, a: 3}", "duplicate key 'a'");
	refused("a: 1\n\"a\": 2\n", "duplicate key 'a'"); /* quoting does not make it new */
}

static void test_limits__nul_bytes_are_refused(void **state)
{
	(void)state;
	char msg[256];
	static const char raw[] = "a: b\0c\n";
	assert_int_equal(parse(raw, sizeof raw - 1, msg, sizeof msg), DDT_EINPUT);
	assert_non_null(strstr(msg, "NUL"));
	refused("a: \"b\\0c\"\n", "NUL");
	refused("a: \"b\\x00c\"\n", "NUL");
	refused("\"k\\0\": 1\n", "NUL");
}

static void test_limits__control_characters_in_strings_are_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {"a: \"\\e[31mred\"\n", "a: \"\\x01\"\n", "a: \"\\x7f\"\n",
					  "a: \"\\r\"\n", "a: \"\\u009b2J\"\n", "a: \"\\N\"\n",
					  "\"k\\x1b\": 1\n", "a: \"\\b\"\n"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		refused(bad[i], "control character");
	accepted("a: \"tab\\there\"\nb: \"two\\nlines\"\nc: \"caf\\u00e9 \\u20ac\"\n");
	accepted("a: |\n  block\n  text\n");
}

static void test_limits__string_length_cap(void **state)
{
	(void)state;
	size_t n = YDOC_MAX_SCALAR;
	char *s = malloc(n + 16), msg[256];
	assert_non_null(s);
	memcpy(s, "a: ", 3);
	memset(s + 3, 'x', n);
	s[3 + n] = '\n';
	assert_int_equal(parse(s, n + 4, msg, sizeof msg), 0);
	s[3 + n] = 'x';
	s[4 + n] = '\n';
	assert_int_equal(parse(s, n + 5, msg, sizeof msg), DDT_EINPUT);
	assert_non_null(strstr(msg, "longer than the limit"));
	free(s);
}

static void test_limits__invalid_utf8_is_refused(void **state)
{
	(void)state;
	char msg[256];
	static const char *const bad[] = {"a: \xff\xfe\n", "a: \xc3\x28\n", "a: \xed\xa0\x80\n",
					  "a: \xc0\xaf\n"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_int_equal(parse(bad[i], strlen(bad[i]), msg, sizeof msg), DDT_EINPUT);
		assert_non_null(strstr(msg, "t.yaml:"));
	}
}

/* Invalid UTF-8 is blamed on the byte where it starts: its line, and its
 * column in characters (a two-byte é before it is one column), in every kind
 * of file ddt reads, as one line. */
static void test_limits__invalid_utf8_names_its_line_and_column(void **state)
{
	(void)state;
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"a: 1\nb: 2\nname: \"ok \xff bad\"\n", "t.yaml:3:11: "},
		{"a: 1\nc: \"caf\xc3\xa9 \xc3\x28\"\n", "t.yaml:2:10: "},
		{"\xed\xa0\x80: 1\n", "t.yaml:1:1: "},
		{"a:\n  - x\n  - y\xc0\xaf\n", "t.yaml:3:6: "},
	};
	char msg[256];
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		assert_int_equal(parse(cases[i].text, strlen(cases[i].text), msg, sizeof msg),
				 DDT_EINPUT);
		if (strncmp(msg, cases[i].want, strlen(cases[i].want)) || strchr(msg, '\n'))
			fail_msg("case %zu: wanted '%s...', got '%s'", i, cases[i].want, msg);
		assert_non_null(strstr(msg, "UTF-8"));
	}

	/* the loaders of templates, calibration files and run records */
	char *dir = tmpdir(), *path = fsx_join(dir, "x.yaml"), want[4200];
	struct ydiag diag = {0};
	struct tmpl t;
	struct calib cal;
	struct run_record r;
	snprintf(want, sizeof want, "%s:2:16: ", path);
	write_file(path, "name: x\ndescription: \"b\xff\"\n");
	assert_int_not_equal(tmpl_load(&t, path, &diag), 0);
	tmpl_free(&t);
	assert_true(diag.n >= 1);
	assert_memory_equal(diag.msgs[0], want, strlen(want));
	ydiag_free(&diag);
	assert_int_not_equal(calib_load(&cal, path, &diag), 0);
	calib_free(&cal);
	assert_true(diag.n >= 1);
	assert_memory_equal(diag.msgs[0], want, strlen(want));
	ydiag_free(&diag);
	assert_int_not_equal(record_read(&r, path, &diag), 0);
	record_free(&r);
	assert_true(diag.n >= 1);
	assert_memory_equal(diag.msgs[0], want, strlen(want));
	ydiag_free(&diag);
	fsx_rm_rf(dir);
	free(path);
	free(dir);
}

/* Bidi controls leave every string the reader gives, keys included; other
 * characters of the same bytes' neighbourhood (U+2010, U+2065, U+206A) stay. */
static void test_limits__bidi_controls_are_removed_from_strings(void **state)
{
	(void)state;
	const char *text = "\xe2\x80\xaek\xe2\x81\xa6" "ey: \"\xe2\x80\xae" "abc\xe2\x80\xac"
			   "\xe2\x80\x8e\xe2\x80\x8f\xe2\x81\xa9\xd8\x9c\xe2\x80\x90\xe2\x81\xa5"
			   "\xe2\x81\xaa\xe2\x80\xaa\xe2\x80\xad\"\n";
	struct ydiag diag = {0};
	struct ydoc *doc = NULL;
	assert_int_equal(ydoc_load_buf(&doc, "t.yaml", text, strlen(text), &diag), 0);
	assert_string_equal(doc->root->keys[0]->str, "key");
	assert_string_equal(doc->root->items[0]->str, "abc\xe2\x80\x90\xe2\x81\xa5\xe2\x81\xaa");
	ydoc_free(doc);
	ydiag_free(&diag);
}

#define LOCALE_DIR "/tmp/ddt-test-locales"

/* Puts de_DE.UTF-8 (decimal comma) in force from LOCALE_DIR, building it
 * there once (into a temporary folder renamed into place, so runs at the same
 * time never see half of it). Returns 0 when the locale is in force, -1 when
 * this machine cannot make it. */
static int enter_comma_locale(const char *tmp)
{
	char cmd[512];
	if (!fsx_exists(LOCALE_DIR "/de_DE.UTF-8")) {
		snprintf(cmd, sizeof cmd,
			 "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1", tmp);
		if (system(cmd) != 0)
			return -1;
		rename(tmp, LOCALE_DIR); /* fails harmlessly when another run won */
	}
	setenv("LOCPATH", LOCALE_DIR, 1);
	if (!setlocale(LC_ALL, "de_DE.UTF-8"))
		return -1;
	return strcmp(localeconv()->decimal_point, ",") ? -1 : 0;
}

static void test_limits__numbers_read_and_write_in_the_c_locale(void **state)
{
	(void)state;
	char *dir = tmpdir(), *buf = NULL;
	size_t len = 0;
	double v = 0;
	struct yout y;
	FILE *fp;

	if (enter_comma_locale(dir) != 0) {
		setlocale(LC_ALL, "C");
		unsetenv("LOCPATH");
		fsx_rm_rf(dir);
		free(dir);
		skip(); /* no localedef or no locale sources here */
	}
	int point = yget_parse_num("1.5", &v), comma;
	double got = v;
	comma = yget_parse_num("1,5", &v);
	fp = open_memstream(&buf, &len);
	yout_init(&y, fp);
	yout_map(&y);
	yout_kv_num(&y, "x", 0.25);
	yout_end(&y);
	fclose(fp);
	setlocale(LC_ALL, "C"); /* before any assertion: the other tests run in C */
	unsetenv("LOCPATH");
	assert_int_equal(point, 0);
	assert_true(got == 1.5);
	assert_int_equal(comma, -1);
	assert_string_equal(buf, "x: 0.25\n");
	free(buf);
	fsx_rm_rf(dir);
	free(dir);
}

static void test_limits__numbers_are_range_checked(void **state)
{
	(void)state;
	static const char *const bad[] = {"1e309", "-1e309", "1e-400", "0x10", "1_000", "1,5",
					  "+-1", "--1", ".", "1e", "nan", "NaN", ".inf", "-.inf",
					  "infinity", " 1", "1 ", "0b101", "1.5.2", "١"};
	double v;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (yget_parse_num(bad[i], &v) == 0)
			fail_msg("'%s' parsed as %g", bad[i], v);
	assert_int_equal(yget_parse_num("-0", &v), 0);
	assert_int_equal(yget_parse_num(".5", &v), 0);
	assert_true(v == 0.5);
	assert_int_equal(yget_parse_num("1.7976931348623157e308", &v), 0);

	/* whole numbers must fit an int; the getters say which key */
	struct ydiag diag = {0};
	struct ydoc *doc;
	const char *text = "ok: 2147483647\nbig: 2147483648\nneg: -2147483649\nfrac: 1.5\n"
			   "q: \"5\"\nneg0: -1\n";
	assert_int_equal(ydoc_load_buf(&doc, "n.yaml", text, strlen(text), &diag), 0);
	struct yctx c = {"n.yaml", &diag, NULL};
	int i = 0;
	assert_int_equal(yget_int(&c, doc->root, "ok", 0, &i), 0);
	assert_int_equal(i, 2147483647);
	assert_int_equal(yget_int(&c, doc->root, "big", 0, &i), DDT_EINPUT);
	assert_int_equal(yget_int(&c, doc->root, "neg", 0, &i), DDT_EINPUT);
	assert_int_equal(yget_int(&c, doc->root, "frac", 0, &i), DDT_EINPUT);
	assert_int_equal(yget_int(&c, doc->root, "q", 0, &i), DDT_EINPUT);
	assert_int_equal(yget_int(&c, doc->root, "neg0", Y_NONNEG, &i), DDT_EINPUT);
	assert_int_equal(i, 2147483647); /* untouched by the refusals */
	assert_int_equal(diag.n, 5);
	assert_non_null(strstr(diag.msgs[0], "n.yaml:2:6: big must be a whole number"));
	ydoc_free(doc);
	ydiag_free(&diag);
}

static void test_limits__what_the_writer_writes_the_reader_reads(void **state)
{
	(void)state;
	/* bytes the reader refuses (not UTF-8, control characters) go out as
	 * U+FFFD, so a record is never written unreadable */
	static const char *const in[] = {"ok \xff\xfe end", "\x01\x1b[31m", "tab\there", "a\x7f",
					 "\xc2\x9b" "2J", "caf\xc3\xa9", "\xed\xa0\x80", "\xf0\x9f\x98\x80",
					 "cut \xe2\x82"};
	static const char *const out[] = {"ok \xef\xbf\xbd\xef\xbf\xbd end",
					  "\xef\xbf\xbd\xef\xbf\xbd[31m", "tab\there",
					  "a\xef\xbf\xbd", "\xef\xbf\xbd" "2J", "caf\xc3\xa9",
					  "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", "\xf0\x9f\x98\x80",
					  "cut \xef\xbf\xbd\xef\xbf\xbd"};
	for (size_t i = 0; i < sizeof in / sizeof *in; i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *fp = open_memstream(&buf, &len);
		struct yout y;
		struct ydiag diag = {0};
		struct ydoc *doc = NULL;
		yout_init(&y, fp);
		yout_map(&y);
		yout_kv_str(&y, "s", in[i]);
		yout_end(&y);
		fclose(fp);
		if (ydoc_load_buf(&doc, "w.yaml", buf, len, &diag) != 0)
			fail_msg("case %zu: written as %s, not read back: %s", i, buf, diag.msgs[0]);
		assert_string_equal(ydoc_get(doc->root, "s")->str, out[i]);
		ydoc_free(doc);
		ydiag_free(&diag);
		free(buf);
	}
}

/* Writes a valid run record to dir/run.yaml with one field replaced:
 * "template: cpu" -> "template: <tmpl>" etc. Returns the path. */
static char *record_with(const char *dir, const char *run_id, const char *tmpl_name,
			 const char *op)
{
	char *path = fsx_join(dir, "run.yaml"), text[2048];
	snprintf(text, sizeof text,
		 "schema: 1\nrun_id: \"%s\"\ncreated: 2026-01-01T00:00:00Z\ntemplate: \"%s\"\n"
		 "provenance: {git_rev: a, compiler: b, build: c, cuda_runtime: '', cuda_driver: '',"
		 " nccl: '', host: h}\n"
		 "devices:\n  - {kind: cpu, index: 0, name: c, arch: x86_64, cores: 2, mem_gb: 1,"
		 " sm_clock_mhz: ~, mem_clock_mhz: ~, peak_gbps: ~, copy_gbps: 1}\n"
		 "rows:\n  - {op: \"%s\", variant: v, backend: cpu, device: 0, params: {M: 1},"
		 " samples: 1, median_us: 1, p10_us: 1, p90_us: 1, min_us: 1, max_us: 1,"
		 " stdev_us: 0, bytes: 1, flops: 1, gbps: 1, pct_peak: 1, max_err: ~,"
		 " sm_clock_mhz: ~, status: ok, reason: ''}\n",
		 run_id, tmpl_name, op);
	write_file(path, text);
	return path;
}

/* Reads path as a record; returns the code, first problem in msg. */
static int read_record(const char *path, char *msg, size_t len)
{
	struct run_record r;
	struct ydiag diag = {0};
	int rc = record_read(&r, path, &diag);
	snprintf(msg, len, "%s", diag.n ? diag.msgs[0] : "");
	record_free(&r);
	ydiag_free(&diag);
	return rc;
}

static void test_limits__run_records_keep_names_inside_their_folders(void **state)
{
	(void)state;
	char *dir = tmpdir(), *path, msg[1024];
	static const char *const bad_ids[] = {"../../etc",      "20260101T000000Z-a/b",
					      "20260101T000000Z-..", "20260101T000000Z-",
					      "20260101T000000Z-a.b", ".20260101T000000Z-a",
					      "2026010xT000000Z-a", ""};
	static const char *const bad_templates[] = {"../../x", "a/b", ".hidden", "..", "."};
	char long_op[64];

	path = record_with(dir, "20260101T000000Z-host", "cpu", "memcpy");
	assert_int_equal(read_record(path, msg, sizeof msg), 0);
	free(path);
	for (size_t i = 0; i < sizeof bad_ids / sizeof *bad_ids; i++) {
		assert_false(record_run_id_valid(bad_ids[i]));
		path = record_with(dir, bad_ids[i], "cpu", "memcpy");
		assert_int_equal(read_record(path, msg, sizeof msg), DDT_EINPUT);
		free(path);
	}
	for (size_t i = 0; i < sizeof bad_templates / sizeof *bad_templates; i++) {
		path = record_with(dir, "20260101T000000Z-host", bad_templates[i], "memcpy");
		assert_int_equal(read_record(path, msg, sizeof msg), DDT_EINPUT);
		assert_non_null(strstr(msg, "is not a file name"));
		free(path);
	}
	/* a string longer than its field is a problem, never a silent cut */
	memset(long_op, 'o', 40);
	long_op[40] = '\0';
	path = record_with(dir, "20260101T000000Z-host", "cpu", long_op);
	assert_int_equal(read_record(path, msg, sizeof msg), DDT_EINPUT);
	assert_non_null(strstr(msg, "op: longer than 31 characters"));
	free(path);
	fsx_rm_rf(dir);
	free(dir);
}


/* A record of n rows as a fleet's merged record holds them: every field set,
 * four params, a reason on the failed ones. */
static void full_record(struct run_record *r, size_t n)
{
	struct rec_device d = {.kind = "cuda", .name = "NVIDIA H200", .arch = "sm_90",
			       .cores = 132, .mem_gb = 141, .sm_clock_mhz = 1980,
			       .mem_clock_mhz = 3201, .peak_gbps = 4800, .copy_gbps = 4000};
	memset(r, 0, sizeof *r);
	r->schema = RECORD_SCHEMA;
	snprintf(r->run_id, sizeof r->run_id, "20260101T000000Z-fleet");
	snprintf(r->created, sizeof r->created, "2026-01-01T00:00:00Z");
	snprintf(r->template_name, sizeof r->template_name, "gpu");
	snprintf(r->prov.build, sizeof r->prov.build, "O2-native+cuda");
	assert_int_equal(record_add_device(r, &d), 0);
	for (size_t i = 0; i < n; i++) {
		struct rec_row w = {.op = "moe_w4a16", .variant = "cold", .backend = "cuda",
				    .samples = 100, .status = REC_OK};
		double *f[] = {&w.median_us, &w.p10_us, &w.p90_us, &w.min_us, &w.max_us,
			       &w.stdev_us, &w.bytes, &w.flops, &w.gbps, &w.pct_peak,
			       &w.max_err, &w.sm_clock_mhz};
		for (size_t k = 0; k < sizeof f / sizeof *f; k++)
			*f[k] = 1.2345678 + (double)(i * 13 + k);
		rec_row_param_set(&w, "M", (double)(i % 512));
		rec_row_param_set(&w, "ctx", (double)(i / 512));
		rec_row_param_set(&w, "K", 7168);
		rec_row_param_set(&w, "N", 2048);
		if (i % 100 == 99) {
			w.status = REC_FAILED;
			snprintf(w.reason, sizeof w.reason, "max_err 0.5 > tol 1e-3 at row %zu", i);
		}
		assert_int_equal(record_add_row(r, &w), 0);
	}
}

static void test_limits__a_run_record_of_100k_rows_loads(void **state)
{
	(void)state;
	char *dir = tmpdir(), *path = fsx_join(dir, "run.yaml");
	struct run_record r, back;
	struct ydiag diag = {0};

	full_record(&r, 100000);
	assert_int_equal(record_write(&r, path), 0);
	int rc = record_read(&back, path, &diag);
	if (rc)
		fail_msg("a 100,000-row record was refused: %s", diag.n ? diag.msgs[0] : err_msg());
	assert_int_equal(back.nrows, 100000);
	assert_string_equal(back.rows[99999].reason, r.rows[99999].reason);
	record_free(&back);
	record_free(&r);
	ydiag_free(&diag);
	fsx_rm_rf(dir);
	free(dir);
	free(path);
}

/* Loads dir/name as a template; returns the code and the first problem. */
static int load_template(const char *dir, const char *name, char *msg, size_t len)
{
	char *path = fsx_join(dir, name);
	struct ydiag diag = {0};
	struct tmpl t;
	int rc = tmpl_load(&t, path, &diag);
	snprintf(msg, len, "%s", diag.n ? diag.msgs[0] : "");
	tmpl_free(&t);
	ydiag_free(&diag);
	free(path);
	return rc;
}

static const char scenario_text[] =
	"scenarios:\n  - {name: s, target: b300, pipeline: native, block: 8, budget: 8, accept: 4}\n";

static void test_limits__templates_stay_in_their_folder(void **state)
{
	(void)state;
	char *dir = tmpdir(), *sub = fsx_join(dir, "sub"), *p, text[1024], msg[1024];
	static const char *const bad_extends[] = {"../parent.yaml", "/etc/passwd", "\"\"",
						  ".parent.yaml", "sub/parent.yaml", ".."};
	static const char *const bad_names[] = {"../evil", "a/b", ".hidden", "\"\""};

	assert_int_equal(fsx_mkdir_p(sub), 0);
	snprintf(text, sizeof text, "name: parent\n%s", scenario_text);
	p = fsx_join(dir, "parent.yaml");
	write_file(p, text);
	free(p);
	p = fsx_join(sub, "parent.yaml");
	write_file(p, text);
	free(p);
	p = fsx_join(dir, "child.yaml");
	write_file(p, "name: child\nextends: parent.yaml\n");
	free(p);
	assert_int_equal(load_template(dir, "child.yaml", msg, sizeof msg), 0);
	for (size_t i = 0; i < sizeof bad_extends / sizeof *bad_extends; i++) {
		snprintf(text, sizeof text, "name: child\nextends: %s\n%s", bad_extends[i],
			 scenario_text);
		p = fsx_join(sub, "child.yaml");
		write_file(p, text);
		free(p);
		assert_int_equal(load_template(sub, "child.yaml", msg, sizeof msg), DDT_EINPUT);
		if (!strstr(msg, "extends: name a template in the same folder"))
			fail_msg("extends %s: %s", bad_extends[i], msg);
	}
	for (size_t i = 0; i < sizeof bad_names / sizeof *bad_names; i++) {
		snprintf(text, sizeof text, "name: %s\n%s", bad_names[i], scenario_text);
		p = fsx_join(dir, "t.yaml");
		write_file(p, text);
		free(p);
		assert_int_equal(load_template(dir, "t.yaml", msg, sizeof msg), DDT_EINPUT);
		assert_non_null(strstr(msg, "is not a file name"));
	}
	free(sub);
	fsx_rm_rf(dir);
	free(dir);
}

static void test_limits__template_strings_and_counts_are_capped(void **state)
{
	(void)state;
	char *dir = tmpdir(), *p = fsx_join(dir, "t.yaml"), msg[1024];
	char text[4096], name[80];
	size_t k;

	memset(name, 'n', 60);
	name[60] = '\0';
	snprintf(text, sizeof text,
		 "name: t\nscenarios:\n  - {name: %s, target: b300, pipeline: native, block: 8,"
		 " budget: 8, accept: 4}\n",
		 name);
	write_file(p, text);
	assert_int_equal(load_template(dir, "t.yaml", msg, sizeof msg), DDT_EINPUT);
	assert_non_null(strstr(msg, "name: longer than 47 characters"));

	/* one scenario more than the cap */
	size_t big = (TMPL_MAX_SCENARIOS + 1) * 96 + 64;
	char *many = malloc(big);
	assert_non_null(many);
	k = (size_t)sprintf(many, "name: t\nscenarios:\n");
	for (int i = 0; i <= TMPL_MAX_SCENARIOS; i++)
		k += (size_t)sprintf(many + k,
				     "  - {name: s%d, target: b300, pipeline: native, block: 8,"
				     " budget: 8, accept: 4}\n",
				     i);
	write_file(p, many);
	assert_int_equal(load_template(dir, "t.yaml", msg, sizeof msg), DDT_EINPUT);
	assert_non_null(strstr(msg, "scenarios: more than"));
	free(many);
	free(p);
	fsx_rm_rf(dir);
	free(dir);
}

static void test_limits__files_that_are_not_regular_are_refused_without_blocking(void **state)
{
	(void)state;
	char *dir = tmpdir(), *fifo = fsx_join(dir, "x.yaml"), *data = NULL;
	struct ydiag diag = {0};
	struct calib *cal = calloc(1, sizeof *cal);
	struct calibration cal_d_s, *cal_d = &cal_d_s;

	assert_non_null(cal);
	alarm(20); /* a blocked open fails the test instead of hanging it */
	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_int_equal(fsx_read_all(fifo, 1 << 20, &data, NULL), DDT_EINPUT);
	assert_non_null(strstr(err_msg(), "not a regular file"));
	assert_int_equal(fsx_read_all("/dev/zero", 1 << 20, &data, NULL), DDT_EINPUT);
	assert_null(data);
	/* a calibration folder with a FIFO among its files */
	assert_int_equal(calibrate_load(cal, cal_d, dir, NULL, &diag), DDT_EINPUT);
	assert_non_null(strstr(diag.msgs[0], "not a regular file"));
	alarm(0);
	calib_free(cal);
	free(cal);
	ydiag_free(&diag);
	fsx_rm_rf(dir);
	free(fifo);
	free(dir);
}

/* The code of c0/d0 loaded again with the one --set argument arg
 * (calibrate_with). */
static int set_code(const struct calib *c0, const struct calibration *d0, const char *arg)
{
	struct calib *c = calloc(1, sizeof *c);
	struct calibration d;
	struct calibrate_opts o = {.sets = &arg, .nsets = 1};
	assert_non_null(c);
	int rc = calibrate_with(c, &d, c0, d0, &o);
	calib_free(c);
	free(c);
	return rc;
}

static void test_limits__set_overrides_are_checked(void **state)
{
	(void)state;
	struct ydiag diag = {0};
	struct calib *cal = calloc(1, sizeof *cal);
	struct calibration cal_d_s, *cal_d = &cal_d_s;
	char longkey[400];
	static const char *const bad[] = {
		"model.hidden=1e300", "model.hidden=-7168", "model.hidden=7168.5",
		"model.layers=2147483648", "native_cut=nan", "native_cut=inf", "native_cut=0x1",
		"native_cut=1.5", "native_cut=", "=0.3", "native_cut", "no_such_key=1",
		"gpus.nope.bw_tbps=1", "gpus.b300.bw_tbps=0", "gpus.b300=1", "anchors.nope.tok_s=1",
		"anchors.sglang_limits.max_budget=1e300", "moe_reference.tp=1e12",
		"moe_reference.mnan_ms=1", "moe_reference.curve=cubic", "model.hidden=1 ",
	};

	assert_non_null(cal);
	assert_int_equal(calibrate_load(cal, cal_d, "calibration", NULL, &diag), 0);
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		err_clear();
		int rc = set_code(cal, cal_d, bad[i]);
		if (rc != DDT_EINPUT || !err_msg()[0])
			fail_msg("--set %s: wanted DDT_EINPUT with a message, got %d '%s'", bad[i], rc,
				 err_msg());
	}
	memset(longkey, 'k', sizeof longkey - 3);
	strcpy(longkey + sizeof longkey - 3, "=1");
	assert_int_equal(set_code(cal, cal_d, longkey), DDT_EINPUT);
	assert_int_equal(set_code(cal, cal_d, "model.hidden=7168"), 0);
	assert_int_equal(set_code(cal, cal_d, "native_cut=0.3"), 0);
	calib_free(cal);
	free(cal);
	ydiag_free(&diag);
}

/* Every input of the committed fuzz corpus, through the loaders the fuzz
 * targets drive: a crash the fuzzer finds is added there (fuzz/run says
 * how) and so stays a regression test of `make test` and `make asan`. */
static void test_limits__fuzz_corpus_replays_cleanly(void **state)
{
	(void)state;
	static const char *const targets[] = {"calib", "template", "record", "set"};
	struct calib *cal = calloc(1, sizeof *cal);
	struct calibration cal_d_s, *cal_d = &cal_d_s;
	int replayed = 0;

	assert_non_null(cal);
	for (size_t k = 0; k < sizeof targets / sizeof *targets; k++) {
		char dir[64];
		struct dirent **list;
		snprintf(dir, sizeof dir, "fuzz/corpus/%s", targets[k]);
		int n = scandir(dir, &list, NULL, alphasort);
		assert_true(n > 2);
		for (int i = 0; i < n; i++) {
			char *path = fsx_join(dir, list[i]->d_name), *data = NULL;
			size_t len = 0;
			struct ydiag diag = {0};
			int rc;
			if (list[i]->d_name[0] == '.' ||
			    fsx_read_all(path, 1 << 24, &data, &len) != 0)
				goto next;
			err_clear();
			if (k == 0) {
				rc = calibrate_load(cal, cal_d, path, NULL, &diag);
				calib_free(cal);
			} else if (k == 1) {
				struct tmpl t;
				rc = tmpl_load_buf(&t, "templates/fuzz-input.yaml", data, len, &diag);
				tmpl_free(&t);
			} else if (k == 2) {
				struct run_record r, back;
				rc = record_read_buf(&r, "run.yaml", data, len, &diag);
				if (rc == 0) { /* what reads, writes and reads back the same */
					char *out = NULL;
					size_t olen = 0;
					FILE *fp = open_memstream(&out, &olen);
					assert_int_equal(record_emit(&r, fp), 0);
					fclose(fp);
					assert_int_equal(record_read_buf(&back, "again.yaml", out, olen,
									 &diag), 0);
					assert_int_equal(back.nrows, r.nrows);
					record_free(&back);
					free(out);
				}
				record_free(&r);
			} else {
				char *save = NULL;
				static const char *sets[256];
				struct calibrate_opts o = {.sets = sets};
				for (char *a = strtok_r(data, "\n", &save); a && o.nsets < 256;
				     a = strtok_r(NULL, "\n", &save))
					sets[o.nsets++] = a;
				/* the shipped calibration loads: a failure is a --set's */
				rc = calibrate_load(cal, cal_d, "calibration", &o, &diag);
				assert_int_equal(diag.n, 0);
				calib_free(cal);
			}
			if (rc && !diag.n && !err_msg()[0])
				fail_msg("%s: error %d with no message", path, rc);
			assert_true(rc == 0 || rc == DDT_EINPUT);
			replayed++;
		next:
			ydiag_free(&diag);
			free(data);
			free(path);
			free(list[i]);
		}
		free(list);
	}
	printf("fuzz corpus: %d inputs replayed through the loaders\n", replayed);
	free(cal);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limits__file_over_the_size_cap_is_refused),
		cmocka_unit_test(test_limits__nesting_at_the_cap_loads_one_deeper_is_refused),
		cmocka_unit_test(test_limits__more_values_than_the_cap_are_refused),
		cmocka_unit_test(test_limits__anchors_aliases_and_tags_are_refused),
		cmocka_unit_test(test_limits__duplicate_keys_are_refused_in_wide_mappings),
		cmocka_unit_test(test_limits__nul_bytes_are_refused),
		cmocka_unit_test(test_limits__control_characters_in_strings_are_refused),
		cmocka_unit_test(test_limits__string_length_cap),
		cmocka_unit_test(test_limits__invalid_utf8_is_refused),
		cmocka_unit_test(test_limits__invalid_utf8_names_its_line_and_column),
		cmocka_unit_test(test_limits__bidi_controls_are_removed_from_strings),
		cmocka_unit_test(test_limits__numbers_read_and_write_in_the_c_locale),
		cmocka_unit_test(test_limits__numbers_are_range_checked),
		cmocka_unit_test(test_limits__what_the_writer_writes_the_reader_reads),
		cmocka_unit_test(test_limits__run_records_keep_names_inside_their_folders),
		cmocka_unit_test(test_limits__a_run_record_of_100k_rows_loads),
		cmocka_unit_test(test_limits__templates_stay_in_their_folder),
		cmocka_unit_test(test_limits__template_strings_and_counts_are_capped),
		cmocka_unit_test(test_limits__files_that_are_not_regular_are_refused_without_blocking),
		cmocka_unit_test(test_limits__set_overrides_are_checked),
		cmocka_unit_test(test_limits__fuzz_corpus_replays_cleanly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
