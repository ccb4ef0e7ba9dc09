/* test_site.c - the history web site (pipeline/render/site.h): what the
 * overview and a series page say, escaping of outside text, links that
 * resolve, byte-identical rebuilds, its template keys; and the site loaded
 * from its files by a headless Chromium, whose DOM is checked the same way
 * (screenshots kept under build/test-site/ when that fails). */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>
#include <stdint.h>
#include <cmocka.h>

#include "helpers.h"
#include "site_build.h"
#include "test_report_fixture.h"

#define NIGHTS 8
#define SAMPLES 200

static char root[256], runs[300], reports[300], id[96];
#define COMPARE_URL "https://git.example/ddt/compare/"
static struct site_conf conf = {
	.chart_width_pt = 720,
	.chart_height_pt = 300,
	.alert_nights = 14,
};

/* Night NIGHTS: one more night whose device name, host and a reason are
 * hostile markup, series of their own. */
static int hostile_night(void)
{
	struct run_record r;
	struct rec_device dev = {.kind = "cpu", .name = "<script>alert('dev')</script>",
				 .arch = "x86_64", .cores = 2, .mem_gb = 16, .sm_clock_mhz = NAN,
				 .mem_clock_mhz = NAN, .peak_gbps = NAN, .copy_gbps = 20};
	char created[24], *dir, *path;
	int rc;

	memset(&r, 0, sizeof r);
	r.schema = RECORD_SCHEMA;
	fixture_id(NIGHTS, r.run_id, sizeof r.run_id, created, sizeof created);
	snprintf(r.created, sizeof r.created, "%s", created);
	snprintf(r.template_name, sizeof r.template_name, "default");
	snprintf(r.prov.git_rev, sizeof r.prov.git_rev, "def5678");
	snprintf(r.prov.build, sizeof r.prov.build, "O2-native");
	snprintf(r.prov.host, sizeof r.prov.host, "<script>host</script>");
	rc = record_add_device(&r, &dev);
	if (!rc)
		rc = fixture_row(&r, "tree_attn", 9, 39, 1, NIGHTS);
	if (!rc) {
		struct rec_row w;
		memset(&w, 0, sizeof w);
		snprintf(w.op, sizeof w.op, "dense_gemv");
		snprintf(w.variant, sizeof w.variant, "cold");
		snprintf(w.backend, sizeof w.backend, "cpu");
		w.median_us = w.p10_us = w.p90_us = w.min_us = w.max_us = w.stdev_us = NAN;
		w.bytes = w.flops = w.gbps = w.pct_peak = w.max_err = w.sm_clock_mhz = NAN;
		w.status = REC_FAILED;
		snprintf(w.reason, sizeof w.reason, "<img src=x onerror=alert(1)> & \"broke\"");
		rc = record_add_row(&r, &w);
	}
	if (!rc && (dir = fsx_join(runs, r.run_id)) != NULL) {
		fsx_mkdir_p(dir);
		path = fsx_join(dir, "run.yaml");
		rc = path ? record_write(&r, path) : -1;
		free(path);
		free(dir);
	}
	snprintf(id, sizeof id, "%s", r.run_id);
	record_free(&r);
	return rc ? rc : fixture_finish(runs, id, SAMPLES);
}

/* Every night's stored template links commit ranges (regress.commit_url),
 * as a project's template would. */
static int link_ranges(const char *dir)
{
	char cmd[1200];
	snprintf(cmd, sizeof cmd,
		 "sed -i 's|^  commit_url: \"\"|  commit_url: \"" COMPARE_URL "{good}...{bad}\"|' "
		 "%s/*/template/template.yaml && grep -q '" COMPARE_URL "' %s/*/template/template.yaml",
		 dir, dir);
	return system(cmd);
}

static int setup(void **state)
{
	struct report_ctx c = {runs, fixture_home(), 1, NULL};
	char prev[96];
	(void)state;
	snprintf(root, sizeof root, "/tmp/ddt-site-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(runs, sizeof runs, "%s/runs", root);
	snprintf(reports, sizeof reports, "%s/reports", root);
	if (fixture_runs(runs, NIGHTS, SAMPLES, prev, sizeof prev) != 0 || hostile_night() != 0 ||
	    link_ranges(runs) != 0 || report_render(&c, reports, prev) != 0 || report_render(&c, reports, id) != 0 ||
	    site_build(runs, reports, fixture_home(), &conf, NULL, NULL) != 0) {
		fprintf(stderr, "setup: %s\n", err_msg());
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fsx_rm_rf(root);
	return 0;
}

/* ---------------------------------------------------------------- helpers */

static char *read_site(const char *rel)
{
	char p[600];
	snprintf(p, sizeof p, "%s/%s", reports, rel);
	return helpers_slurp(p);
}

/* The site's page of the series whose label holds needle (malloc'd path
 * relative to reports/), found through the overview's link to it. */
static char *series_href(const char *html, const char *needle)
{
	const char *at = strstr(html, "id=\"series\"");
	assert_non_null(at);
	at = strstr(at, needle);
	assert_non_null(at);
	const char *a = at;
	while (a > html && strncmp(a, "<a href=\"", 9))
		a--;
	assert_true(a > html);
	a += 9;
	return strndup(a, strcspn(a, "\""));
}

/* The text of html with its tags dropped and entities left: for phrases
 * that span cells. */
static char *text_of(const char *html)
{
	char *t = malloc(strlen(html) + 1), *o = t;
	int in_tag = 0;
	for (const char *s = html; *s; s++) {
		if (*s == '<')
			in_tag = 1;
		else if (*s == '>') {
			in_tag = 0;
			*o++ = ' ';
		} else if (!in_tag)
			*o++ = *s;
	}
	*o = '\0';
	return t;
}

/* Percent-decodes s into a new string. */
static char *url_decode(const char *s, size_t n)
{
	char *o = malloc(n + 1), *p = o;
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (s[i] == '%' && i + 2 < n + 1 && sscanf(s + i + 1, "%2x", &v) == 1) {
			*p++ = (char)v;
			i += 2;
		} else
			*p++ = s[i];
	}
	*p = '\0';
	return o;
}

/* Every href="..." and src="..." of html that is relative names a file that
 * exists beside page (a path under reports/); returns how many were
 * checked. Absolute ones (http:, https:) must be the commit links. */
static int check_links(const char *html, const char *page)
{
	static const char *const attrs[] = {"href=\"", "src=\""};
	char dir[600], path[1200];
	int n = 0;

	snprintf(dir, sizeof dir, "%s/%s", reports, page);
	*strrchr(dir, '/') = '\0';
	for (size_t k = 0; k < 2; k++)
		for (const char *a = strstr(html, attrs[k]); a; a = strstr(a + 1, attrs[k])) {
			const char *v = a + strlen(attrs[k]);
			size_t len = strcspn(v, "\"#");
			if (!strncmp(v, COMPARE_URL, strlen(COMPARE_URL)))
				continue;
			if (!strncmp(v, "file://", 7)) { /* the browser's DOM resolves nothing */
				v += 7;
				snprintf(dir, sizeof dir, "/");
			}
			if (strstr(v, "://") && strstr(v, "://") < v + len)
				fail_msg("%s: link %.*s leaves the site", page, (int)len, v);
			char *rel = url_decode(v, len);
			snprintf(path, sizeof path, "%s/%s", dir, rel);
			if (access(path, R_OK) != 0)
				fail_msg("%s: link %s: %s does not exist", page, rel, path);
			free(rel);
			n++;
		}
	return n;
}

/* The id of the first alert in state `state` that reports/<night>/summary.txt
 * lists, into id (7 bytes). */
static void summary_alert(const char *reps, const char *night, const char *state, char *id)
{
	char p[700], pat[64];
	snprintf(p, sizeof p, "%s/%s/summary.txt", reps, night);
	char *sum = helpers_slurp(p);
	assert_non_null(sum);
	snprintf(pat, sizeof pat, "  alert ");
	const char *a = strstr(sum, pat);
	for (; a; a = strstr(a + 1, pat))
		if (!strncmp(a + 15, state, strlen(state)))
			break;
	if (!a)
		fail_msg("%s lists no %s alert", p, state);
	snprintf(id, 7, "%s", a + 8);
	free(sum);
}

/* ---------------------------------------------------------------- tests */

static void test_site__overview_shows_headline_band_and_open_alert(void **state)
{
	(void)state;
	char *html = read_site("index.html"), *t = text_of(html);
	/* the newest night and its headline scenarios with their band */
	assert_non_null(strstr(t, id));
	assert_non_null(strstr(t, "b300-b8-native"));
	assert_non_null(strstr(html, "class=\"n headline\""));
	assert_non_null(strstr(t, "p5-p95"));
	/* the regression of moe_w4a16 M=9 is the open alert summary.txt lists: its
	 * id, age, size and interval, its range linked through regress.commit_url */
	char sid[16], cell[96];
	summary_alert(reports, id, "open", sid);
	const char *alerts = strstr(html, "id=\"alerts\""), *end = strstr(html, "id=\"recent\"");
	assert_non_null(alerts);
	assert_non_null(strstr(alerts, "<p>1 open, 0 answered"));
	snprintf(cell, sizeof cell, "<td class=\"a-open\">open <code>%s</code></td>", sid);
	const char *row = strstr(alerts, cell);
	assert_true(row && row < end);
	const char *series = strstr(row, "moe_w4a16/cold M=9");
	assert_true(series && series < strstr(row, "</tr>"));
	assert_non_null(strstr(series, "+25."));
	assert_non_null(strstr(series, "%, +")); /* its 95% interval "[+2x.x%, +2x.x%]" */
	assert_non_null(strstr(row, "nights ("));
	assert_non_null(strstr(row, "href=\"" COMPARE_URL "abc1234...abc1234\""));
	/* and the series' row says the same */
	const char *srow = strstr(strstr(html, "id=\"series\""), "moe_w4a16/cold M=9,");
	const char *scell = strstr(srow, cell);
	assert_true(scell && scell < strstr(srow, "</tr>"));
	/* the newest night's failed kernel, from its verdicts.yaml */
	assert_non_null(strstr(strstr(html, "id=\"tonight\""), "class=\"v-failed\""));
	free(html);
	free(t);
}

static void test_site__series_page_shows_change_point_and_nights(void **state)
{
	(void)state;
	char *html = read_site("index.html"), *href = series_href(html, "moe_w4a16/cold M=9,");
	char *page = read_site(href);
	/* the regression began on night NIGHTS-2 */
	char bad[96], created[24];
	fixture_id(NIGHTS - 2, bad, sizeof bad, created, sizeof created);
	const char *ch = strstr(page, "id=\"changes\"");
	assert_non_null(ch);
	assert_non_null(strstr(ch, bad));
	assert_non_null(strstr(ch, "class=\"v-regression\""));
	assert_non_null(strstr(ch, "+25."));
	/* its chart, and every night with its documents where retention kept them */
	assert_non_null(strstr(page, ".svg\""));
	char *svg_name = strndup(href, strlen(href) - 5), svg[200];
	snprintf(svg, sizeof svg, "%s.svg", svg_name);
	char *chart = read_site(svg);
	assert_non_null(strstr(chart, "<svg"));
	char night[96];
	fixture_id(NIGHTS - 1, night, sizeof night, created, sizeof created);
	snprintf(svg, sizeof svg, "../%s/report.pdf", night);
	assert_non_null(strstr(page, svg));
	free(chart);
	free(svg_name);
	free(page);
	free(href);
	free(html);
}

/* Every file of the site, with f called on each page. */
static void each_page(void (*f)(const char *html, const char *rel))
{
	char dir[600];
	DIR *d;
	struct dirent *e;
	char *html = read_site("index.html");
	f(html, "index.html");
	free(html);
	snprintf(dir, sizeof dir, "%s/site", reports);
	assert_non_null(d = opendir(dir));
	while ((e = readdir(d)))
		if (strstr(e->d_name, ".html") || strstr(e->d_name, ".svg")) {
			char rel[300];
			snprintf(rel, sizeof rel, "site/%s", e->d_name);
			html = read_site(rel);
			f(html, rel);
			free(html);
		}
	closedir(d);
}

static void no_markup_from_outside(const char *html, const char *rel)
{
	if (strstr(html, "<script") || strstr(html, "<img src=x"))
		fail_msg("%s holds unescaped outside text", rel);
}

static void test_site__outside_text_is_escaped(void **state)
{
	(void)state;
	each_page(no_markup_from_outside);
	char *html = read_site("index.html");
	assert_non_null(strstr(html, "&lt;script&gt;alert(&#39;dev&#39;)&lt;/script&gt;"));
	assert_non_null(strstr(html, "&lt;script&gt;host&lt;/script&gt;:")); /* the machine's host */
	char *href = series_href(html, "dense_gemv/cold");
	char *page = read_site(href);
	assert_non_null(strstr(page, "&lt;img src=x onerror=alert(1)&gt; &amp; &quot;broke&quot;"));
	free(page);
	free(href);
	free(html);
}

static int nlinks;
static void links_resolve(const char *html, const char *rel)
{
	if (strstr(rel, ".html"))
		nlinks += check_links(html, rel);
}

static void test_site__every_link_resolves(void **state)
{
	(void)state;
	nlinks = 0;
	each_page(links_resolve);
	assert_true(nlinks > 50);
}

static void test_site__rebuild_is_byte_identical(void **state)
{
	(void)state;
	char cmd[1400], out[256];
	snprintf(cmd, sizeof cmd, "cp -r %s %s/before", reports, root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(site_build(runs, reports, fixture_home(), &conf, NULL, NULL), 0);
	snprintf(cmd, sizeof cmd, "diff -r %s/before %s >/dev/null && echo same", root, reports);
	helpers_capture(cmd, out, sizeof out);
	assert_string_equal(out, "same\n");
	/* no temporary folder left beside it */
	snprintf(cmd, sizeof cmd, "ls -a %s | grep -c tmp", reports);
	helpers_capture(cmd, out, sizeof out);
	assert_string_equal(out, "0\n");
}

static void test_site__news_names_headline_and_alerts(void **state)
{
	(void)state;
	struct site_news news;
	size_t pages = 0;
	assert_int_equal(site_build(runs, reports, fixture_home(), &conf, &news, &pages), 0);
	assert_string_equal(news.run_id, id);
	assert_non_null(strstr(news.headline, "b300-b8-native"));
	assert_non_null(strstr(news.headline, "tok/s (p5-p95 "));
	assert_int_equal(news.nalerts, 1);
	/* the nightly's own line for it, range link and all */
	char sid[16];
	summary_alert(reports, id, "open", sid);
	assert_int_equal(strncmp(news.alerts[0], "alert ", 6), 0);
	assert_int_equal(strncmp(news.alerts[0] + 6, sid, 6), 0);
	assert_non_null(strstr(news.alerts[0], "1 series regression, +25."));
	assert_non_null(strstr(news.alerts[0], " " COMPARE_URL "abc1234...abc1234"));
	assert_true(pages > 10);
}

static void test_site__conf_errors_name_file_line_column(void **state)
{
	(void)state;
	char path[400], text[1200];
	struct tmpl t;
	struct site_conf c;
	struct ydiag diag = {0};
	snprintf(path, sizeof path, "%s/bad.yaml", root);
	snprintf(text, sizeof text,
		 "name: bad\nextends: default.yaml\nsite:\n  source: x\n"
		 "  commit_url: \"https://x/commit/{rev}\"\n  chart_width_pt: 720\n"
		 "  chart_height_pt: 300\n  alert_nights: 14\n  colour: red\n");
	snprintf(text + 600, 600, "cp %s/templates/default.yaml %s/", fixture_home(), root);
	assert_int_equal(system(text + 600), 0);
	assert_int_equal(fsx_write_all(path, text, strlen(text)), 0);
	assert_int_equal(tmpl_load(&t, path, &diag), 0);
	assert_int_equal(site_conf_load(&c, &t, &diag), DDT_EINPUT);
	assert_int_equal(diag.n, 2);
	assert_non_null(strstr(diag.msgs[0], "bad.yaml:5:15: site.commit_url: moved to regress.commit_url"));
	assert_non_null(strstr(diag.msgs[1], "bad.yaml:9:3: unknown key 'colour'"));
	tmpl_free(&t);
	ydiag_free(&diag);
}

/* A regression that a later improvement undoes: the nightly's list drops its
 * alert, and so does the site (it had its own "closed" once). */
static void test_site__series_that_returned_has_no_alert(void **state)
{
	(void)state;
	char r2[400], rep2[400], last[96], p[600];
	snprintf(r2, sizeof r2, "%s/runs-back", root);
	snprintf(rep2, sizeof rep2, "%s/reports-back", root);
	assert_int_equal(fsx_mkdir_p(r2), 0);
	for (int n = 0; n < 16; n++) /* M=9 25% slower on nights 6-10, back from 11 */
		assert_int_equal(fixture_record(r2, n, n <= 10 ? 6 : 99, 1.25, last, sizeof last), 0);
	assert_int_equal(fixture_finish(r2, last, SAMPLES), 0);
	assert_int_equal(site_build(r2, rep2, fixture_home(), &conf, NULL, NULL), 0);
	snprintf(p, sizeof p, "%s/index.html", rep2);
	char *html = helpers_slurp(p), *href = series_href(html, "moe_w4a16/cold M=9,");
	assert_non_null(strstr(html, "<p>0 open, 0 answered"));
	const char *row = strstr(strstr(html, "id=\"series\""), "moe_w4a16/cold M=9,");
	assert_non_null(row);
	const char *none = strstr(row, "<td class=\"a-none\">-</td>");
	assert_true(none && none < strstr(row, "</tr>"));
	snprintf(p, sizeof p, "%s/%s", rep2, href);
	char *page = helpers_slurp(p);
	assert_non_null(strstr(page, "No alert (open or answered) as of the newest night."));
	const char *ch = strstr(page, "id=\"changes\"");
	const char *imp = strstr(ch, "class=\"v-improvement\""), *reg = strstr(ch, "class=\"v-regression\"");
	assert_non_null(imp);
	assert_non_null(reg);
	assert_true(imp < reg); /* newest first */
	assert_null(strstr(ch, "class=\"a-open\""));
	free(page);
	free(href);
	free(html);
}

/* `ddt ack` answers the open alert: the site marks it acknowledged with the
 * answer, as summary.txt does, and the news has no open alert left. */
static void test_site__acknowledged_alert_shows_acknowledged(void **state)
{
	(void)state;
	char r2[400], rep2[400], args[1400], sid[16], cell[128], *out = NULL;
	struct report_ctx c = {r2, fixture_home(), 1, NULL};
	struct site_news news;
	snprintf(r2, sizeof r2, "%s/runs-ack", root);
	snprintf(rep2, sizeof rep2, "%s/reports-ack", root);
	snprintf(args, sizeof args, "cp -r %s %s", runs, r2);
	assert_int_equal(system(args), 0);
	summary_alert(reports, id, "open", sid);
	snprintf(args, sizeof args, "ack %s --runs %s --reason 'known <b>slow</b>'", sid, r2);
	assert_int_equal(helpers_ddt(&out, args), 0);
	free(out);
	assert_int_equal(report_render(&c, rep2, id), 0);
	assert_int_equal(site_build(r2, rep2, fixture_home(), &conf, &news, NULL), 0);
	assert_int_equal(news.nalerts, 0);
	char p[700];
	snprintf(p, sizeof p, "%s/index.html", rep2);
	char *html = helpers_slurp(p), *href = series_href(html, "moe_w4a16/cold M=9,");
	/* summary.txt of the same night says acknowledged; the site says the same */
	summary_alert(rep2, id, "acknowledged", cell);
	assert_string_equal(cell, sid);
	const char *alerts = strstr(html, "id=\"alerts\"");
	assert_non_null(strstr(alerts, "<p>0 open, 1 answered"));
	snprintf(cell, sizeof cell, "<td class=\"a-acknowledged\">acknowledged <code>%s</code></td>",
		 sid);
	const char *row = strstr(alerts, cell);
	assert_true(row && row < strstr(html, "id=\"recent\""));
	assert_non_null(strstr(row, "acknowledged by "));
	assert_non_null(strstr(row, ": known &lt;b&gt;slow&lt;/b&gt;</td>"));
	assert_null(strstr(html, "class=\"a-open\""));
	snprintf(p, sizeof p, "%s/%s", rep2, href);
	char *page = helpers_slurp(p);
	assert_non_null(strstr(strstr(page, "id=\"alerts\""), cell));
	free(page);
	free(html);
	/* answered again as a false alarm: the newest answer counts, as in the nightly */
	snprintf(args, sizeof args, "ack %s --runs %s --invalid --reason noise", sid, r2);
	assert_int_equal(helpers_ddt(&out, args), 0);
	free(out);
	assert_int_equal(site_build(r2, rep2, fixture_home(), &conf, NULL, NULL), 0);
	snprintf(p, sizeof p, "%s/index.html", rep2);
	html = helpers_slurp(p);
	snprintf(cell, sizeof cell, "<td class=\"a-invalid\">invalid <code>%s</code></td>", sid);
	row = strstr(strstr(html, "id=\"alerts\""), cell);
	assert_non_null(row);
	assert_non_null(strstr(row, "marked invalid by "));
	assert_non_null(strstr(row, ": noise</td>"));
	free(href);
	free(html);
}

static void test_site__ddt_site_command(void **state)
{
	(void)state;
	char args[1200], *out = NULL, other[400], p[500];
	snprintf(other, sizeof other, "%s/reports-cmd", root);
	snprintf(args, sizeof args, "site --runs %s --reports %s", runs, other);
	assert_int_equal(helpers_ddt(&out, args), 0);
	assert_non_null(strstr(out, "/index.html and 12 series pages under "));
	free(out);
	snprintf(p, sizeof p, "%s/index.html", other);
	assert_true(fsx_exists(p));
	/* no run yet: one line, a failure, nothing written */
	snprintf(p, sizeof p, "%s/empty", root);
	snprintf(args, sizeof args, "site --runs %s --reports %s/reports", p, p);
	assert_int_equal(helpers_ddt(&out, args), 1);
	assert_non_null(strstr(out, "ddt site: "));
	assert_non_null(strstr(out, "no run yet"));
	free(out);
	snprintf(p, sizeof p, "%s/empty/reports/index.html", root);
	assert_false(fsx_exists(p));
}

/* ---------------------------------------------------------------- in a browser */

/* Chromium's DOM of page (a path under reports/) into *dom, a screenshot to
 * shot; returns its exit status. Generous time: a loaded machine is slow,
 * never wrong. */
static int chromium(const char *page, char **dom, const char *shot)
{
	char cmd[3000], prof[400];
	int rc;
	snprintf(prof, sizeof prof, "%s/chromium-profile", root);
	snprintf(cmd, sizeof cmd,
		 "(timeout 180 chromium --headless --no-sandbox --disable-gpu --no-first-run "
		 "--disable-dev-shm-usage --user-data-dir=%s --virtual-time-budget=5000 "
		 "--dump-dom 'file://%s/%s' 2>>%s/chromium.log)",
		 prof, reports, page, root);
	rc = helpers_run(dom, cmd);
	if (shot) {
		snprintf(cmd, sizeof cmd,
			 "mkdir -p build/test-site && timeout 180 chromium --headless --no-sandbox "
			 "--disable-gpu --no-first-run --disable-dev-shm-usage --user-data-dir=%s "
			 "--window-size=1280,2000 --screenshot=%s 'file://%s/%s' >/dev/null 2>&1",
			 prof, shot, reports, page);
		(void)system(cmd);
	}
	return rc;
}

static void test_site__chromium_shows_the_site_from_its_files(void **state)
{
	(void)state;
	char out[256], *dom = NULL, *series = NULL;
	helpers_capture("command -v chromium", out, sizeof out);
	if (!out[0]) {
		/* tools/ensure-test-tools (run by make test) installs it; without apt or network
		 * it cannot */
		print_message("SKIP: chromium is not installed and tools/ensure-test-tools could not "
			      "install it (apt-get install chromium)\n");
		skip();
	}
	(void)!system("rm -f build/test-site/index.png build/test-site/series.png"); /* stale */
	char *html = read_site("index.html");
	char *href = series_href(html, "moe_w4a16/cold M=9,");
	free(html);
	/* the DOM as the browser built it from the file: headline, open alert;
	 * a series page: its change point, its chart; every link a file */
	const char *why = NULL;
	char *t = NULL;
	if (chromium("index.html", &dom, NULL) != 0)
		why = "index.html did not load";
	else if (!strstr(dom, "class=\"n headline\"") || !strstr(t = text_of(dom), "b300-b8-native"))
		why = "the overview shows no headline";
	else if (!strstr(dom, "<td class=\"a-open\">open <code>"))
		why = "the overview shows no open alert";
	else if (check_links(dom, "index.html") < 20)
		why = "the overview has too few links";
	else if (chromium(href, &series, NULL) != 0)
		why = "the series page did not load";
	else if (!strstr(series, "id=\"changes\"") || !strstr(series, "class=\"v-regression\""))
		why = "the series page shows no change point";
	else if (check_links(series, href) < 5)
		why = "the series page has too few links";
	if (why) {
		chromium("index.html", &(char *){NULL}, "build/test-site/index.png");
		chromium(href, &(char *){NULL}, "build/test-site/series.png");
		fail_msg("chromium: %s (screenshots: build/test-site/index.png, series.png)", why);
	}
	free(t);
	free(dom);
	free(series);
	free(href);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_site__overview_shows_headline_band_and_open_alert),
		cmocka_unit_test(test_site__series_page_shows_change_point_and_nights),
		cmocka_unit_test(test_site__outside_text_is_escaped),
		cmocka_unit_test(test_site__every_link_resolves),
		cmocka_unit_test(test_site__rebuild_is_byte_identical),
		cmocka_unit_test(test_site__news_names_headline_and_alerts),
		cmocka_unit_test(test_site__conf_errors_name_file_line_column),
		cmocka_unit_test(test_site__series_that_returned_has_no_alert),
		cmocka_unit_test(test_site__acknowledged_alert_shows_acknowledged),
		cmocka_unit_test(test_site__ddt_site_command),
		cmocka_unit_test(test_site__chromium_shows_the_site_from_its_files),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
