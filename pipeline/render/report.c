/* report.c - the document stage: loads a stored run, renders
 * reports/<run-id>/ as a whole, points reports/latest at the newest. */
#include "report.h"

#include "chart.h"
#include "err.h"
#include "fsx.h"
#include "chart_report.h"
#include "report_data.h"
#include "report_pdf.h"
#include "report_summary.h"
#include "xlsx.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STORED_MAX_BYTES (64u << 20)

/* ---------------------------------------------------------------- output */

/* fsyncs a file or folder. */
static int fsync_path(const char *path)
{
	int fd = open(path, O_RDONLY), rc = 0;
	if (fd < 0 || fsync(fd) != 0)
		rc = err_set(DDT_EIO, "%s: fsync failed: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The spreadsheet under a temporary name, synced, then renamed into place
 * (libxlsxwriter writes by file name, not through a FILE). */
static int write_xlsx(const struct report_data *d, const char *dir)
{
	char *tmp = fsx_join(dir, ".report.xlsx.tmp"), *fin = fsx_join(dir, "report.xlsx");
	int rc = 0;
	if (!tmp || !fin)
		rc = err_nomem();
	else if ((rc = xlsx_write_report(d, tmp)) != 0 || (rc = fsync_path(tmp)) != 0)
		unlink(tmp);
	else if (rename(tmp, fin) != 0)
		rc = err_set(DDT_EIO, "%s: cannot rename into place: %s", fin, strerror(errno));
	free(tmp);
	free(fin);
	return rc;
}

static int write_summary(const struct report_data *d, const char *dir)
{
	char *path = fsx_join(dir, "summary.txt");
	struct fsx_file f;
	int rc;
	if (!path)
		return err_nomem();
	if ((rc = fsx_open(&f, path)) == 0) {
		report_write_summary(d, f.fp);
		rc = fsx_commit(&f);
	}
	free(path);
	return rc;
}

/* Writes every chart section's PNG into dir/charts (which exists). */
static int write_charts(const struct report_data *d, const char *charts)
{
	int rc = 0;
	for (int i = 0; !rc && i < d->spec.nsections; i++) {
		const struct report_section *s = &d->spec.sections[i];
		struct report_chart arg = {d, s};
		char name[96], *path;
		if (!report_section_is_chart(s->kind))
			continue;
		report_chart_name(&d->spec, i, name, sizeof name);
		if (!(path = fsx_join(charts, name)))
			rc = err_nomem();
		else
			rc = chart_write_png(path, d->spec.chart_width_pt, d->spec.chart_height_pt,
					     d->spec.png_scale, chart_report_draw, &arg);
		free(path);
	}
	return rc ? rc : fsync_path(charts);
}

/* Puts tmp_dir in place of final_dir, which exists: the two are exchanged in
 * one step, so a reader sees the old documents or the new, never a mix; the
 * old ones (now at tmp_dir) are then removed. */
static int replace_dir(const char *tmp_dir, const char *final_dir)
{
	char *copy = strdup(final_dir);
	int rc = fsync_path(tmp_dir);

	if (!copy)
		return err_nomem();
	if (!rc && renameat2(AT_FDCWD, tmp_dir, AT_FDCWD, final_dir, RENAME_EXCHANGE) != 0)
		rc = err_set(DDT_EIO, "%s: cannot replace: %s", final_dir, strerror(errno));
	if (!rc)
		rc = fsync_path(dirname(copy));
	free(copy);
	if (!rc)
		fsx_rm_rf(tmp_dir);
	return rc;
}

/* True for a folder name that is a rendered run. */
static int is_run_dir(const struct dirent *e)
{
	return !fsx_is_temp_name(e->d_name) && record_run_id_valid(e->d_name);
}

/* The newest run id among dir's folders into id ("" when none). */
static int newest_run(const char *dir, char *id, size_t len)
{
	struct dirent **list;
	int n = scandir(dir, &list, is_run_dir, alphasort);
	id[0] = '\0';
	if (n < 0)
		return err_set(DDT_EIO, "%s: cannot read folder: %s", dir, strerror(errno));
	if (n > 0 && strlen(list[n - 1]->d_name) < len)
		memcpy(id, list[n - 1]->d_name, strlen(list[n - 1]->d_name) + 1);
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return 0;
}

/* Points reports_dir/latest at the newest rendered run: a new link under a
 * temporary name renamed over the old one. */
static int point_latest(const char *reports_dir)
{
	char id[96], *link = fsx_join(reports_dir, "latest"), *tmp = NULL;
	int rc = newest_run(reports_dir, id, sizeof id);

	if (!link || asprintf(&tmp, "%s/.latest.tmp-%ld", reports_dir, (long)getpid()) < 0) {
		free(link);
		return err_nomem();
	}
	if (!rc && id[0]) {
		unlink(tmp);
		if (symlink(id, tmp) != 0 || rename(tmp, link) != 0) {
			rc = err_set(DDT_EIO, "%s: cannot point at %s: %s", link, id, strerror(errno));
			unlink(tmp);
		} else
			rc = fsync_path(reports_dir);
	}
	free(tmp);
	free(link);
	return rc;
}

/* Writes every document into dir, one after the other on this thread. Text
 * is laid out on one thread only: pango's font maps are per thread, but the
 * fontconfig patterns and cairo's FreeType font faces under them are shared
 * by the whole process, and a chart laid out on a second thread beside the
 * PDF moved the PDF's line breaks (a re-render differed 1 time in 60). */
static int render_into(const struct report_data *d, const char *dir)
{
	char *pdf = fsx_join(dir, "report.pdf"), *charts = fsx_join(dir, "charts");
	int rc = 0;

	if (!pdf || !charts)
		rc = err_nomem();
	else if (mkdir(charts, 0777) != 0)
		rc = err_set(DDT_EIO, "%s: cannot create folder: %s", charts, strerror(errno));
	if (!rc && (rc = pdf_write_report(d, pdf)) == 0 && (rc = write_xlsx(d, dir)) == 0 &&
	    (rc = write_summary(d, dir)) == 0)
		rc = write_charts(d, charts);
	free(pdf);
	free(charts);
	return rc;
}

int report_render(const struct report_ctx *ctx, const char *reports_dir, const char *run_id)
{
	struct report_data d;
	struct ydiag diag = {0};
	char *conf = NULL, *final = NULL, *tmp = NULL;
	int rc;

	/* fontconfig resolves a relative FONTCONFIG_FILE against its own folder */
	if (asprintf(&conf, "%s/fonts/fonts.conf", ctx->home ? ctx->home : ".") < 0)
		return err_nomem();
	char *abs = realpath(conf, NULL);
	rc = abs ? chart_fonts_init(abs)
		 : err_set(DDT_EINPUT, "%s: the project's fontconfig file is missing: %s", conf,
			   strerror(errno));
	free(abs);
	free(conf);
	if (rc)
		return rc;
	if ((rc = report_data_load(&d, ctx->runs_dir, run_id, &diag)) != 0)
		goto done;
	if ((rc = fsx_mkdir_p(reports_dir)) != 0)
		goto done;
	if (!(final = fsx_join(reports_dir, run_id))) {
		rc = err_nomem();
		goto done;
	}
	if ((rc = fsx_dir_begin(final, &tmp)) != 0)
		goto done;
	if ((rc = render_into(&d, tmp)) != 0) {
		fsx_rm_rf(tmp);
		goto done;
	}
	rc = fsx_exists(final) ? replace_dir(tmp, final) : fsx_dir_commit(tmp, final);
	if (rc)
		fsx_rm_rf(tmp);
	else
		rc = point_latest(reports_dir);
	if (!rc && !ctx->quiet)
		printf("ddt report: %s/{report.pdf, report.xlsx, summary.txt, charts/}\n", final);
done:
	free(final);
	free(tmp);
	report_data_free(&d);
	ydiag_free(&diag);
	return rc;
}

/* ---------------------------------------------------------------- stash */

static int copy_file(const char *src, const char *dst)
{
	char *data;
	size_t len;
	int rc = fsx_read_all(src, STORED_MAX_BYTES, &data, &len);
	if (rc)
		return rc;
	rc = fsx_write_all(dst, data, len);
	free(data);
	return rc;
}

/* Copies src into folder dir under its own name. */
static int copy_into(const char *src, const char *dir, const char *name)
{
	char *copy = strdup(src), *dst = copy ? fsx_join(dir, name ? name : basename(copy)) : NULL;
	int rc = dst ? copy_file(src, dst) : err_nomem();
	free(dst);
	free(copy);
	return rc;
}

static int yaml_file(const struct dirent *e)
{
	size_t n = strlen(e->d_name);
	return !fsx_is_temp_name(e->d_name) && n > 5 && !strcmp(e->d_name + n - 5, ".yaml");
}

static int stash_calibration(const char *dir, const char *calibration)
{
	struct stat st;
	struct dirent **list;
	int n, rc = 0;

	if ((rc = fsx_mkdir_p(dir)) != 0)
		return rc;
	if (stat(calibration, &st) != 0)
		return err_set(DDT_EINPUT, "%s: no such calibration file or folder", calibration);
	if (!S_ISDIR(st.st_mode))
		return copy_into(calibration, dir, NULL);
	if ((n = scandir(calibration, &list, yaml_file, alphasort)) < 0)
		return err_set(DDT_EIO, "%s: cannot read folder: %s", calibration, strerror(errno));
	for (int i = 0; i < n; i++) {
		char *src = fsx_join(calibration, list[i]->d_name);
		if (!rc)
			rc = src ? copy_into(src, dir, NULL) : err_nomem();
		free(src);
		free(list[i]);
	}
	free(list);
	return rc;
}

static int stash_template(const char *dir, const char *template_path)
{
	struct tmpl t;
	struct ydiag diag = {0};
	int rc = tmpl_load(&t, template_path, &diag);

	if (rc && diag.n)
		err_set(rc, "%s", diag.msgs[0]);
	if (!rc && (rc = fsx_mkdir_p(dir)) == 0 &&
	    (rc = copy_into(template_path, dir, "template.yaml")) == 0 && t.parent) {
		char *copy = strdup(t.parent->file);
		if (!copy)
			rc = err_nomem();
		else if (!strcmp(basename(copy), "template.yaml"))
			rc = err_set(DDT_EINPUT, "%s: a parent template cannot be named template.yaml",
				     t.parent->file);
		else
			rc = copy_into(t.parent->file, dir, NULL);
		free(copy);
	}
	tmpl_free(&t);
	ydiag_free(&diag);
	return rc;
}

int report_stash_inputs(const char *run_dir, const char *calibration, const char *template_path)
{
	char *cdir = fsx_join(run_dir, "calibration"), *tdir = fsx_join(run_dir, "template");
	int rc = !cdir || !tdir ? err_nomem() : 0;
	if (!rc)
		rc = stash_calibration(cdir, calibration);
	if (!rc)
		rc = stash_template(tdir, template_path);
	free(cdir);
	free(tdir);
	return rc;
}

/* ---------------------------------------------------------------- stored runs */

int report_newest_run(const char *runs_dir, char *id, size_t len)
{
	struct dirent **list;
	int n = scandir(runs_dir, &list, is_run_dir, alphasort);
	id[0] = '\0';
	if (n < 0)
		return err_set(DDT_ENOTFOUND, "%s: cannot read folder: %s", runs_dir,
			       strerror(errno));
	for (int i = n - 1; i >= 0 && !id[0]; i--) {
		char *p = NULL;
		size_t nl = strlen(list[i]->d_name);
		if (nl < len && asprintf(&p, "%s/%s/run.yaml", runs_dir, list[i]->d_name) >= 0 &&
		    fsx_exists(p))
			memcpy(id, list[i]->d_name, nl + 1);
		free(p);
	}
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return id[0] ? 0 : err_set(DDT_ENOTFOUND, "no runs in %s", runs_dir);
}
