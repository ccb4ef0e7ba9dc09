/* test_hostile.c - hostile strings through the documents: markup, formula-
 * like text, very long words and bytes that are not UTF-8, put where users
 * can put them (the run record, the calibration's sources), rendered with
 * report_render; the PDF must show them as text and the spreadsheet must hold
 * them as strings, never as formulas. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdint.h>
#include <unistd.h>
#include <zlib.h>

#include "helpers.h"
#include "csv.h"
#include "test_report_fixture.h"

#define MARKUP_TEXT "<b>bold</b> & <span foreground='red'>x</span> &amp; </i>"
#define FORMULA_TEXT "=cmd|' /C calc'!A1"
#define LINK_TEXT "=HYPERLINK(\"http://example.invalid\",\"click\")"
#define PLUS_TEXT "+1+1"
#define AT_TEXT "@SUM(1)"
/* Unicode bidi controls: RLO ... PDF makes "gnp.exe" show as "exe.png";
 * LRI/PDI, RLE, LRM and RLM around other words. */
#define BIDI_TEXT "\xe2\x80\xaegnp.exe\xe2\x80\xac \xe2\x81\xa6lr\xe2\x81\xa9 " \
		  "\xe2\x80\xabrle\xe2\x80\xac\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c end"
#define BIDI_SHOWN "gnp.exe lr rle end"

static char home[64]; /* a project folder with a hostile calibration */
static char real_home[2048];

/* ---------------------------------------------------------------- zip */

/* The inflated bytes of every member of the zip at path whose name starts
 * with prefix, concatenated (malloc'd, NUL-terminated), or NULL. */
static char *zip_members(const char *path, const char *prefix)
{
	char *zip = NULL, *out = NULL;
	size_t len = 0, olen = 0;
	FILE *mem = NULL;

	if (fsx_read_all(path, 1 << 26, &zip, &len) != 0 || len < 22)
		goto done;
	const unsigned char *z = (const unsigned char *)zip, *eocd = z + len - 22;
#define U16(p) ((unsigned)(p)[0] | (unsigned)(p)[1] << 8)
#define U32(p) (U16(p) | (uint32_t)U16((p) + 2) << 16)
	if (U32(eocd) != 0x06054b50)
		goto done;
	size_t n = U16(eocd + 10), cd = U32(eocd + 16);
	mem = open_memstream(&out, &olen);
	for (size_t i = 0; i < n && cd + 46 <= len; i++) {
		const unsigned char *e = z + cd;
		size_t nlen = U16(e + 28), xlen = U16(e + 30), clen = U16(e + 32);
		size_t csize = U32(e + 20), usize = U32(e + 24), lho = U32(e + 42);
		int method = (int)U16(e + 10);
		if (U32(e) != 0x02014b50 || cd + 46 + nlen > len)
			break;
		if (nlen >= strlen(prefix) && !memcmp(e + 46, prefix, strlen(prefix)) &&
		    lho + 30 <= len) {
			const unsigned char *l = z + lho;
			size_t data = lho + 30 + U16(l + 26) + U16(l + 28);
			char *buf = malloc(usize + 1);
			uLongf got = (uLongf)usize;
			if (buf && data + csize <= len) {
				if (method == 0 && csize == usize)
					memcpy(buf, z + data, usize);
				else {
					z_stream s;
					memset(&s, 0, sizeof s);
					s.next_in = (Bytef *)(z + data);
					s.avail_in = (uInt)csize;
					s.next_out = (Bytef *)buf;
					s.avail_out = (uInt)usize;
					inflateInit2(&s, -MAX_WBITS);
					inflate(&s, Z_FINISH);
					got = s.total_out;
					inflateEnd(&s);
				}
				fwrite(buf, 1, got, mem);
			}
			free(buf);
		}
		cd += 46 + nlen + xlen + clen;
	}
#undef U16
#undef U32
done:
	if (mem)
		fclose(mem);
	free(zip);
	return out;
}

/* ---------------------------------------------------------------- setup */

/* Copies src to dst, replacing the first "source: " value with text. */
static int copy_with_source(const char *src, const char *dst, const char *text)
{
	char *data = NULL, *at, *eol, *out = NULL;
	size_t len;
	int rc = fsx_read_all(src, 1 << 20, &data, &len);
	if (rc)
		return rc;
	if (!(at = strstr(data, "source: ")) || !(eol = strchr(at, '\n'))) {
		free(data);
		return -1;
	}
	at += strlen("source: ");
	if (asprintf(&out, "%.*s%s%s", (int)(at - data), data, text, eol) < 0)
		out = NULL;
	rc = out ? fsx_write_all(dst, out, strlen(out)) : -1;
	free(out);
	free(data);
	return rc;
}

static int setup(void **state)
{
	(void)state;
	char src[4096], dst[4096], link[4096], longword[400];
	const char *h = getenv("DDT_HOME");
	struct dirent **list;
	int n, rc = 0;

	if (h && *h)
		snprintf(real_home, sizeof real_home, "%s", h);
	else if (!getcwd(real_home, sizeof real_home))
		return -1;
	snprintf(home, sizeof home, "/tmp/ddt-hostile-XXXXXX");
	if (!mkdtemp(home))
		return -1;
	snprintf(dst, sizeof dst, "%s/calibration", home);
	snprintf(link, sizeof link, "%s/templates", home);
	if (fsx_mkdir_p(dst) || fsx_mkdir_p(link))
		return -1;
	/* fonts and templates as they are; the calibration with hostile sources */
	snprintf(src, sizeof src, "%s/fonts", real_home);
	snprintf(link, sizeof link, "%s/fonts", home);
	if (symlink(src, link) != 0)
		return -1;
	snprintf(src, sizeof src, "%s/templates/default.yaml", real_home);
	snprintf(dst, sizeof dst, "%s/templates/default.yaml", home);
	{
		char *t = NULL;
		size_t tl;
		if (fsx_read_all(src, 1 << 20, &t, &tl) || fsx_write_all(dst, t, tl))
			return -1;
		free(t);
	}
	memset(longword, 'W', sizeof longword - 1);
	longword[sizeof longword - 1] = '\0';
	snprintf(src, sizeof src, "%s/calibration", real_home);
	n = scandir(src, &list, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		const char *name = list[i]->d_name;
		char from[4096], to[4096], text[1024];
		snprintf(from, sizeof from, "%s/calibration/%s", real_home, name);
		snprintf(to, sizeof to, "%s/calibration/%s", home, name);
		if (name[0] != '.' && strstr(name, ".yaml")) {
			/* every file's first source: markup, formulas, a 399-letter word */
			snprintf(text, sizeof text, "\"%s %s %s %s %.200s\"",
				 !strcmp(name, "anchors.yaml") ? MARKUP_TEXT : "src",
				 "=cmd|' /C calc'!A1", PLUS_TEXT, AT_TEXT, longword);
			rc |= copy_with_source(from, to, text);
		}
		free(list[i]);
	}
	free(list);
	setenv("DDT_HOME", home, 1); /* fixture_home(): the stash reads from here */
	return rc ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	fsx_rm_rf(home);
	return 0;
}

/* Adds a failed tree_attn row at M=9 whose reason is reason. */
static int failed_row(struct run_record *r, const char *reason)
{
	struct rec_row w;
	memset(&w, 0, sizeof w);
	snprintf(w.op, sizeof w.op, "tree_attn");
	snprintf(w.variant, sizeof w.variant, "cold");
	snprintf(w.backend, sizeof w.backend, "cpu");
	w.median_us = w.p10_us = w.p90_us = w.min_us = w.max_us = w.stdev_us = NAN;
	w.bytes = w.flops = w.gbps = w.pct_peak = w.max_err = w.sm_clock_mhz = NAN;
	w.status = REC_FAILED;
	snprintf(w.reason, sizeof w.reason, "%s", reason);
	rec_row_param_set(&w, "M", 9);
	return record_add_row(r, &w);
}

/* A night whose record carries hostile strings in every free-text field. */
static int hostile_record(const char *runs, char *id, size_t len)
{
	struct run_record r;
	struct rec_device dev = {.kind = "cpu", .arch = "x86_64", .cores = 2, .mem_gb = 16,
				 .sm_clock_mhz = NAN, .mem_clock_mhz = NAN, .peak_gbps = NAN,
				 .copy_gbps = 20};
	char created[24], *dir, *path;
	int rc;

	memset(&r, 0, sizeof r);
	r.schema = RECORD_SCHEMA;
	fixture_id(30, r.run_id, sizeof r.run_id, created, sizeof created);
	snprintf(r.created, sizeof r.created, "%s", created);
	snprintf(r.template_name, sizeof r.template_name, "default");
	snprintf(r.prov.git_rev, sizeof r.prov.git_rev, "%s", LINK_TEXT);
	snprintf(r.prov.compiler, sizeof r.prov.compiler, "%s", MARKUP_TEXT);
	snprintf(r.prov.build, sizeof r.prov.build, "%s", PLUS_TEXT);
	snprintf(r.prov.host, sizeof r.prov.host, "%s", "h<o>&st");
	/* markup, then bytes that are not UTF-8 and a control character: the
	 * writer must store them as U+FFFD so the record stays readable */
	snprintf(dev.name, sizeof dev.name, "%s \xff\xfe\x01 end", MARKUP_TEXT);
	rc = record_add_device(&r, &dev);
	static const double ms[] = {1, 9, 17, 33, 65, 129};
	for (size_t i = 0; !rc && i < sizeof ms / sizeof *ms; i++)
		rc = fixture_row(&r, "moe_w4a16", ms[i], 40 + 9 * ms[i], 1, 30);
	if (!rc)
		rc = failed_row(&r, FORMULA_TEXT " " MARKUP_TEXT);
	if (!rc && (dir = fsx_join(runs, r.run_id)) != NULL) {
		fsx_mkdir_p(dir);
		path = fsx_join(dir, "run.yaml");
		rc = path ? record_write(&r, path) : -1;
		free(path);
		free(dir);
	}
	snprintf(id, len, "%s", r.run_id);
	record_free(&r);
	return rc;
}

/* The text pdftotext finds in path (malloc'd). */
static char *pdf_text(const char *path)
{
	char cmd[4200], *buf = NULL;
	size_t len = 0;
	FILE *p, *m = open_memstream(&buf, &len);
	int c;
	snprintf(cmd, sizeof cmd, "pdftotext -enc UTF-8 -nopgbrk '%s' - 2>/dev/null", path);
	if ((p = popen(cmd, "r")) != NULL) {
		while ((c = fgetc(p)) != EOF)
			fputc(c, m);
		pclose(p);
	}
	fclose(m);
	return buf;
}

/* True when text holds s, its whitespace runs read as one space (the PDF's
 * text may break lines anywhere). */
static int has_text(const char *text, const char *s)
{
	char *a = malloc(strlen(text) + 1);
	size_t k = 0;
	int found;
	assert_non_null(a);
	for (const char *p = text; *p;)
		if ((unsigned char)*p <= ' ') {
			while (*p && (unsigned char)*p <= ' ')
				p++;
			a[k++] = ' ';
		} else
			a[k++] = *p++;
	a[k] = '\0';
	found = strstr(a, s) != NULL;
	free(a);
	return found;
}

static void test_hostile__documents_show_hostile_strings_as_text(void **state)
{
	(void)state;
	char runs[128], reports[128], last[96], id[96], *dir, *p, *text;
	struct report_ctx ctx;

	snprintf(runs, sizeof runs, "%s/runs", home);
	snprintf(reports, sizeof reports, "%s/reports", home);
	assert_int_equal(fixture_runs(runs, 3, 200, last, sizeof last), 0);
	assert_int_equal(hostile_record(runs, id, sizeof id), 0);
	assert_int_equal(fixture_finish(runs, id, 200), 0);

	/* the record with bad bytes was written readable */
	dir = fsx_join(runs, id);
	p = fsx_join(dir, "run.yaml");
	{
		struct run_record r;
		struct ydiag diag = {0};
		int rc = record_read(&r, p, &diag);
		ydiag_print(&diag, stderr);
		assert_int_equal(rc, 0);
		assert_non_null(strstr(r.devices[0].name, "\xef\xbf\xbd"));
		assert_string_equal(r.rows[r.nrows - 1].reason, FORMULA_TEXT " " MARKUP_TEXT);
		record_free(&r);
		ydiag_free(&diag);
	}
	free(p);
	free(dir);

	memset(&ctx, 0, sizeof ctx);
	ctx.runs_dir = runs;
	ctx.home = home;
	ctx.quiet = 1;
	assert_int_equal(report_render(&ctx, reports, id), 0);

	/* the PDF shows the markup as characters */
	dir = fsx_join(reports, id);
	p = fsx_join(dir, "report.pdf");
	text = pdf_text(p);
	assert_non_null(text);
	if (!text[0])
		skip(); /* no pdftotext here */
	static const char *const shown[] = {"<b>bold</b> &", "<span foreground='red'>x</span>",
					    "&amp; </i>", "h<o>&st", "=HYPERLINK(", "+1+1"};
	for (size_t i = 0; i < sizeof shown / sizeof *shown; i++)
		if (!has_text(text, shown[i]))
			fail_msg("the PDF does not show '%s' as text", shown[i]);
	free(text);
	free(p);

	/* the spreadsheet holds them as strings; no formula holds them */
	p = fsx_join(dir, "report.xlsx");
	char *strings = zip_members(p, "xl/sharedStrings.xml");
	char *sheets = zip_members(p, "xl/worksheets/");
	assert_non_null(strings);
	assert_non_null(sheets);
	static const char *const as_strings[] = {"=cmd|", "=HYPERLINK(", "+1+1", "@SUM(1)",
						 "&lt;b&gt;bold&lt;/b&gt; &amp;"};
	for (size_t i = 0; i < sizeof as_strings / sizeof *as_strings; i++)
		if (!strstr(strings, as_strings[i]))
			fail_msg("the spreadsheet's strings lack '%s'", as_strings[i]);
	int formulas = 0;
	for (const char *f = sheets; (f = strstr(f, "<f>")) != NULL; f += 3) {
		const char *end = strstr(f, "</f>");
		char one[2048];
		assert_non_null(end);
		snprintf(one, sizeof one, "%.*s", (int)(end - f - 3), f + 3);
		if (strstr(one, "cmd") || strstr(one, "HYPERLINK") || strstr(one, "@SUM") ||
		    strstr(one, "calc"))
			fail_msg("a formula holds input text: %s", one);
		formulas++;
	}
	printf("spreadsheet: %d formulas, none holding input text; every hostile string a "
	       "string cell\n",
	       formulas);
	free(strings);
	free(sheets);
	free(p);
	free(dir);
}

/* Where a bidi control (U+061C, U+200E-200F, U+202A-202E, U+2066-2069)
 * starts in s, or NULL. */
static const char *find_bidi(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i + 1 < len; i++) {
		if (p[i] == 0xd8 && p[i + 1] == 0x9c)
			return s + i;
		if (i + 2 < len && p[i] == 0xe2 &&
		    ((p[i + 1] == 0x80 && (p[i + 2] == 0x8e || p[i + 2] == 0x8f ||
					   (p[i + 2] >= 0xaa && p[i + 2] <= 0xae))) ||
		     (p[i + 1] == 0x81 && p[i + 2] >= 0xa6 && p[i + 2] <= 0xa9)))
			return s + i;
	}
	return NULL;
}

static void assert_no_bidi(const char *what, const char *s, size_t len)
{
	const char *at = find_bidi(s, len);
	if (at)
		fail_msg("%s holds a bidi control at byte %zu: '%.40s'", what, (size_t)(at - s),
			 at > s + 20 ? at - 20 : s);
}

/* Names with bidi controls (a device, a build, a host, a reason) reach no
 * document: the PDF shows them in the order written, the spreadsheet,
 * summary.txt and the history CSV hold none of the controls. */
static void test_hostile__bidi_controls_never_reach_a_document(void **state)
{
	(void)state;
	char runs[128], reports[128], last[96], *dir, *p, *text = NULL, cmd[512];
	struct rec_device dev = {.kind = "cpu", .arch = "x86_64", .cores = 2, .mem_gb = 16,
				 .sm_clock_mhz = NAN, .mem_clock_mhz = NAN, .peak_gbps = NAN,
				 .copy_gbps = 20};
	struct run_record r;
	struct report_ctx ctx;
	char created[24];
	size_t len;

	snprintf(runs, sizeof runs, "%s/bidi-runs", home);
	snprintf(reports, sizeof reports, "%s/bidi-reports", home);
	assert_int_equal(fixture_runs(runs, 2, 200, last, sizeof last), 0);
	memset(&r, 0, sizeof r);
	r.schema = RECORD_SCHEMA;
	fixture_id(31, r.run_id, sizeof r.run_id, created, sizeof created);
	snprintf(r.created, sizeof r.created, "%s", created);
	snprintf(r.template_name, sizeof r.template_name, "default");
	snprintf(r.prov.build, sizeof r.prov.build, "%s", BIDI_TEXT);
	snprintf(r.prov.host, sizeof r.prov.host, "%s", BIDI_TEXT);
	snprintf(dev.name, sizeof dev.name, "%s", BIDI_TEXT);
	assert_int_equal(record_add_device(&r, &dev), 0);
	static const double ms[] = {1, 9, 17, 33, 65, 129};
	for (size_t i = 0; i < sizeof ms / sizeof *ms; i++)
		assert_int_equal(fixture_row(&r, "moe_w4a16", ms[i], 40 + 9 * ms[i], 1, 31), 0);
	assert_int_equal(failed_row(&r, BIDI_TEXT), 0);
	dir = fsx_join(runs, r.run_id);
	assert_int_equal(fsx_mkdir_p(dir), 0);
	p = fsx_join(dir, "run.yaml");
	assert_int_equal(record_write(&r, p), 0);
	free(p);
	free(dir);
	assert_int_equal(fixture_finish(runs, r.run_id, 200), 0);

	memset(&ctx, 0, sizeof ctx);
	ctx.runs_dir = runs;
	ctx.home = home;
	ctx.quiet = 1;
	assert_int_equal(report_render(&ctx, reports, r.run_id), 0);
	dir = fsx_join(reports, r.run_id);
	p = fsx_join(dir, "summary.txt");
	assert_int_equal(fsx_read_all(p, 1 << 24, &text, &len), 0);
	assert_no_bidi("summary.txt", text, len);
	free(text);
	free(p);
	p = fsx_join(dir, "report.xlsx");
	text = zip_members(p, "xl/");
	assert_non_null(text);
	assert_non_null(strstr(text, BIDI_SHOWN));
	assert_no_bidi("report.xlsx", text, strlen(text));
	free(text);
	free(p);
	p = fsx_join(dir, "report.pdf");
	text = pdf_text(p);
	assert_non_null(text);
	if (text[0]) { /* pdftotext is here */
		assert_no_bidi("report.pdf's text", text, strlen(text));
		if (!has_text(text, BIDI_SHOWN))
			fail_msg("the PDF does not show '%s' in the order written", BIDI_SHOWN);
	}
	free(text);
	free(p);
	free(dir);

	/* the history CSV */
	const char *bin = getenv("DDT_BIN");
	snprintf(cmd, sizeof cmd, "'%s' history --runs %s --format csv",
		 bin && *bin ? bin : "build/ddt", runs);
	FILE *pp = popen(cmd, "r"), *m = open_memstream(&text, &len);
	int c;
	assert_non_null(pp);
	while ((c = fgetc(pp)) != EOF)
		fputc(c, m);
	assert_int_equal(pclose(pp), 0);
	fclose(m);
	assert_non_null(strstr(text, BIDI_SHOWN));
	assert_no_bidi("history --format csv", text, len);
	free(text);
	record_free(&r);
}

/* ---------------------------------------------------------------- CSV */

/* A night whose record has formula-like text where CSV columns come from:
 * the device name, the build, the host (the machine column), the revision
 * and a failed row's reason. */
static void csv_record(const char *runs, int night, char *id, size_t len)
{
	struct run_record r;
	struct rec_device dev = {.kind = "cpu", .arch = "x86_64", .cores = 2, .mem_gb = 16,
				 .sm_clock_mhz = NAN, .mem_clock_mhz = NAN, .peak_gbps = NAN,
				 .copy_gbps = 20};
	char created[24], *dir, *path;

	memset(&r, 0, sizeof r);
	r.schema = RECORD_SCHEMA;
	fixture_id(night, r.run_id, sizeof r.run_id, created, sizeof created);
	snprintf(r.created, sizeof r.created, "%s", created);
	snprintf(r.template_name, sizeof r.template_name, "default");
	snprintf(r.prov.git_rev, sizeof r.prov.git_rev, "%s", LINK_TEXT);
	snprintf(r.prov.build, sizeof r.prov.build, "%s", PLUS_TEXT);
	snprintf(r.prov.host, sizeof r.prov.host, "-host");
	snprintf(dev.name, sizeof dev.name, "%s", FORMULA_TEXT);
	assert_int_equal(record_add_device(&r, &dev), 0);
	assert_int_equal(fixture_row(&r, "moe_w4a16", 9, 121, 1, night), 0);
	assert_int_equal(failed_row(&r, AT_TEXT), 0);
	dir = fsx_join(runs, r.run_id);
	assert_int_equal(fsx_mkdir_p(dir), 0);
	path = fsx_join(dir, "run.yaml");
	assert_int_equal(record_write(&r, path), 0);
	snprintf(id, len, "%s", r.run_id);
	free(path);
	free(dir);
	record_free(&r);
}

/* Runs `ddt ARGS` and checks its CSV output: no text field a spreadsheet
 * would read as a formula. Returns how many fields hold one of the hostile texts
 * neutralised (with the leading apostrophe). */
static int csv_of(const char *args)
{
	const char *bin = helpers_bin();
	char cmd[1024], line[8192], *f[64];
	int rows = 0, hostile = 0;
	static const char *const texts[] = {FORMULA_TEXT, LINK_TEXT, PLUS_TEXT, AT_TEXT};
	snprintf(cmd, sizeof cmd, "'%s' %s", bin, args);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof line, p)) {
		line[strcspn(line, "\n")] = '\0';
		if (!line[0]) /* the blank line between sections */
			continue;
		int n = csv_split(line, f, 64);
		assert_true(n > 0);
		rows++;
		for (int i = 0; i < n; i++) {
			char *end;
			strtod(f[i], &end);
			if (csv_formula_like(f[i]) && *end) /* a number such as -0.5 is a number */
				fail_msg("ddt %s: field '%s' reads as a formula", args, f[i]);
			for (size_t t = 0; t < sizeof texts / sizeof *texts; t++)
				hostile += f[i][0] == '\'' && !strncmp(f[i] + 1, texts[t], strlen(texts[t]));
		}
	}
	assert_int_equal(pclose(p), 0);
	assert_true(rows > 1);
	printf("ddt %.40s...: %d rows, %d hostile fields held as text\n", args, rows, hostile);
	return hostile;
}

static void test_hostile__every_csv_holds_formula_like_names_as_text(void **state)
{
	(void)state;
	char runs[128], a[96], b[96], args[512], tpath[256];

	snprintf(runs, sizeof runs, "%s/csv-runs", home);
	csv_record(runs, 40, a, sizeof a);
	csv_record(runs, 41, b, sizeof b);
	snprintf(args, sizeof args, "history --runs %s --format csv", runs);
	assert_true(csv_of(args) >= 2 * 3); /* device, build, reason (+ revision, machine) */
	snprintf(args, sizeof args, "compare %s %s --runs %s --format csv", a, b, runs);
	assert_true(csv_of(args) >= 2); /* device, build */
	/* the default template with one scenario (named nowhere else) renamed */
	char *def = NULL, *t = NULL, *at;
	size_t len;
	snprintf(tpath, sizeof tpath, "%s/templates/default.yaml", home);
	assert_int_equal(fsx_read_all(tpath, 1 << 20, &def, &len), 0);
	assert_non_null(at = strstr(def, "name: seed-b16-sglang\n"));
	assert_true(asprintf(&t, "%.*s%s%s", (int)(at - def),
			     def, "name: \"=HYPERLINK(\\\"http://example.invalid\\\",\\\"click\\\")\"\n",
			     at + strlen("name: seed-b16-sglang\n")) > 0);
	assert_non_null(at = strstr(t, "name: default\n"));
	memcpy(at, "name: hostil\n", strlen("name: hostil\n"));
	snprintf(tpath, sizeof tpath, "%s/templates/hostil.yaml", home);
	assert_int_equal(fsx_write_all(tpath, t, strlen(t)), 0);
	free(def);
	free(t);
	snprintf(args, sizeof args, "estimate --template hostil --format csv --samples 100");
	assert_true(csv_of(args) >= 1); /* the scenario's name */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile__documents_show_hostile_strings_as_text),
		cmocka_unit_test(test_hostile__every_csv_holds_formula_like_names_as_text),
		cmocka_unit_test(test_hostile__bidi_controls_never_reach_a_document),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
