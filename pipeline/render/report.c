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

static int write_summary(const struct report_data *d, const char *dir)
{
	char *path = fsx_join(dir, "summary.txt");
	struct fsx_file f;
	int rc;
	if (!path)
		return err_nomem();
	if ((rc = fsx_open(&f, path)) == 0) {
		report_summary_write(d, f.fp);
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
		char name[96], why[200], *path;
		if (!chart_report_is_chart(s->kind) || chart_report_empty(d, s, why, sizeof why))
			continue; /* an empty chart is a line in the documents, no file */
		chart_report_name(&d->spec, i, name, sizeof name);
		if (!(path = fsx_join(charts, name)))
			rc = err_nomem();
		else
			rc = chart_write_png(path, d->spec.chart_width_pt, d->spec.chart_height_pt,
					     d->spec.png_scale, chart_report_draw, &arg);
		free(path);
	}
	return rc ? rc : fsx_fsync_path(charts);
}

/* Puts tmp_dir in place of final_dir, which exists: the two are exchanged in
 * one step, so a reader sees the old documents or the new, never a mix; the
 * old ones (now at tmp_dir) are then removed. Only a folder of ours is
 * replaced: one the trust rule does not trust (fsx_trusted), there before or
 * put there since the check, is left where it was and named. */
static int replace_dir(const char *tmp_dir, const char *final_dir)
{
	char why[96];
	int rc = fsx_fsync_path(tmp_dir);

	if (!rc && !fsx_trusted_path(final_dir, why, sizeof why))
		return err_set(DDT_EIO, "%s: a folder not ours (%s): not replaced, the documents "
					"not written (remove it)",
			       final_dir, why);
	if (!rc)
		rc = fsx_rename(tmp_dir, final_dir, FSX_EXCHANGE);
	if (!rc && !fsx_trusted_path(tmp_dir, why, sizeof why)) {
		/* swapped in after the check: give it its name back */
		rc = fsx_rename(tmp_dir, final_dir, FSX_EXCHANGE);
		return err_set(DDT_EIO, "%s: a folder not ours (%s)%s: not replaced, the documents "
					"not written (remove it)",
			       final_dir, why, rc ? ", left at its temporary name" : "");
	}
	if (!rc)
		fsx_rm_rf(tmp_dir);
	return rc;
}

/* ---------------------------------------------------------------- order */

/* When run id was committed: the modification time of its run.yaml in
 * runs_dir or its .fleet/ (written once, just before the run folder is put
 * in place, and never again: later writes in the folder, such as a
 * repaired projection, do not move it; stamped by the file system that
 * holds runs/, whatever the run id says); else the documents folder's own. */
static struct timespec committed_at(int runs_fd, int reports_fd, const char *id)
{
	static const char *const where[] = {"", ".fleet/"};
	char p[300];
	struct stat st;

	for (size_t i = 0; runs_fd >= 0 && i < sizeof where / sizeof *where; i++) {
		snprintf(p, sizeof p, "%s%s/run.yaml", where[i], id);
		if (fstatat(runs_fd, p, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			return st.st_mtim;
	}
	if (fstatat(reports_fd, id, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return st.st_mtim;
	return (struct timespec){0, 0};
}

static int cmp_doc(const void *a, const void *b)
{
	const struct report_doc *x = a, *y = b;
	if (x->committed.tv_sec != y->committed.tv_sec)
		return x->committed.tv_sec < y->committed.tv_sec ? -1 : 1;
	if (x->committed.tv_nsec != y->committed.tv_nsec)
		return x->committed.tv_nsec < y->committed.tv_nsec ? -1 : 1;
	return strcmp(x->id, y->id);
}

/* Appends entry name of reports_fd to *docs when it is a rendered run. */
/* Appends {id, t} to *docs. */
static int doc_push(struct report_doc **docs, size_t *n, size_t *cap, const char *id,
		    struct timespec t)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct report_doc *p = realloc(*docs, ncap * sizeof *p);
		if (!p)
			return err_nomem();
		*docs = p;
		*cap = ncap;
	}
	struct report_doc *d = &(*docs)[(*n)++];
	snprintf(d->id, sizeof d->id, "%s", id);
	d->committed = t;
	return 0;
}

/* True when name in fd is a run's folder: a run id, not a temporary, a
 * trusted folder (fsx_trusted: not a link, not another user's); and, with
 * file, holding that trusted regular file, whose
 * stat is then *st (the folder's otherwise). */
static int run_folder_at(int fd, const char *name, const char *file, struct stat *st)
{
	char p[300];
	if (fsx_is_temp_name(name) || !record_run_id_valid(name) ||
	    strlen(name) >= sizeof ((struct report_doc *)0)->id ||
	    fstatat(fd, name, st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st->st_mode) ||
	    !fsx_trusted(st, NULL, 0)) /* another user's folder decides nothing */
		return 0;
	if (!file)
		return 1;
	snprintf(p, sizeof p, "%s/%s", name, file);
	return fstatat(fd, p, st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st->st_mode) &&
	       fsx_trusted(st, NULL, 0);
}

/* Appends entry name of reports_fd to *docs when it is a rendered run. */
static int doc_add(struct report_doc **docs, size_t *n, size_t *cap, int runs_fd, int reports_fd,
		   const char *name)
{
	struct stat st;
	if (!run_folder_at(reports_fd, name, NULL, &st))
		return 0;
	return doc_push(docs, n, cap, name, committed_at(runs_fd, reports_fd, name));
}

int report_documents(const char *reports_dir, const char *runs_dir, struct report_doc **docs,
		     size_t *n)
{
	int reports_fd = fsx_dir_fd(reports_dir), runs_fd, dup_fd, rc = 0;
	size_t cap = 0;
	DIR *d;
	struct dirent *e;

	*docs = NULL;
	*n = 0;
	if (reports_fd < 0)
		return errno == ENOENT ? (err_clear(), 0) : DDT_EIO;
	runs_fd = runs_dir ? fsx_dir_fd(runs_dir) : -1;
	err_clear(); /* no runs folder: the documents' own times */
	if ((dup_fd = dup(reports_fd)) < 0 || !(d = fdopendir(dup_fd))) {
		rc = err_set(DDT_EIO, "%s: cannot read folder: %s", reports_dir, strerror(errno));
		if (dup_fd >= 0)
			close(dup_fd);
	} else {
		while (!rc && (e = readdir(d)))
			rc = doc_add(docs, n, &cap, runs_fd, reports_fd, e->d_name);
		closedir(d);
	}
	if (!rc && *n)
		qsort(*docs, *n, sizeof **docs, cmp_doc);
	if (rc) {
		free(*docs);
		*docs = NULL;
		*n = 0;
	}
	if (runs_fd >= 0)
		close(runs_fd);
	close(reports_fd);
	return rc;
}

/* Points reports_dir/latest at the newest rendered run (by the time runs
 * were committed): a new link under a temporary name renamed over the old. */
static int point_latest(const char *reports_dir, const char *runs_dir)
{
	struct report_doc *docs;
	size_t n;
	char *link = NULL;
	int rc = report_documents(reports_dir, runs_dir, &docs, &n);

	if (!rc && n && !(link = fsx_join(reports_dir, "latest")))
		rc = err_nomem();
	else if (!rc && n)
		rc = fsx_symlink(docs[n - 1].id, link);
	free(link);
	free(docs);
	return rc;
}

/* report.xlsx to path, its What-if sheet's values made with the data (d->wi). */
static int write_xlsx(const struct report_data *d, const char *path)
{
	if (d->wi_rc)
		return err_wrap(d->wi_rc, "%s: the What-if sheet", path);
	return xlsx_write_report(d, &d->wi, path);
}

/* Writes every document into dir, one after the other on this thread. Text
 * is laid out on one thread only: pango's font maps are per thread, but the
 * fontconfig patterns and cairo's FreeType font faces under them are shared
 * by the whole process, and a chart laid out on a second thread beside the
 * PDF moved the PDF's line breaks (a re-render differed 1 time in 60). */
static int render_into(const struct report_data *d, const char *dir)
{
	char *pdf = fsx_join(dir, "report.pdf"), *xlsx = fsx_join(dir, "report.xlsx"),
	     *charts = fsx_join(dir, "charts");
	int rc = 0;

	if (!pdf || !xlsx || !charts)
		rc = err_nomem();
	else
		rc = fsx_mkdir_p(charts);
	/* the charts first: the PDF (every source linked) is the largest file,
	 * and a file size limit below it meets a chart first */
	if (!rc && (rc = write_charts(d, charts)) == 0 && (rc = report_pdf_write(d, pdf)) == 0 &&
	    (rc = write_xlsx(d, xlsx)) == 0)
		rc = write_summary(d, dir);
	free(pdf);
	free(xlsx);
	free(charts);
	return rc;
}

/* Puts the rendered tmp in place of final: a folder there is exchanged,
 * nothing there is a commit, anything else (a link someone made) is an
 * error naming it. */
static int put_in_place(const char *tmp, const char *final)
{
	switch (fsx_kind(final)) {
	case FSX_DIR:
		return replace_dir(tmp, final);
	case FSX_NONE:
		return fsx_dir_commit(tmp, final);
	case FSX_LINK:
		return err_set(DDT_EIO, "%s: a symbolic link where ddt keeps its documents: not "
					"followed (remove it)",
			       final);
	default:
		return err_set(DDT_EIO, "%s: not a folder: remove it", final);
	}
}

/* 0 when the folder of run id (when there) and its run.yaml are trusted
 * (fsx_trusted); else DDT_EINPUT naming why: no one renders another user's
 * run, root least of all. */
static int run_trusted(const char *runs_dir, const char *id)
{
	char *dir = fsx_join(runs_dir, id), *rec = dir ? fsx_join(dir, "run.yaml") : NULL, why[96];
	int rc = 0;

	if (!rec)
		rc = err_nomem();
	else if (fsx_kind(dir) != FSX_NONE && !fsx_trusted_path(dir, why, sizeof why))
		rc = err_set(DDT_EINPUT, "%s: not trusted (%s): not rendered", dir, why);
	else if (fsx_kind(rec) != FSX_NONE && !fsx_trusted_path(rec, why, sizeof why))
		rc = err_set(DDT_EINPUT, "%s: not trusted (%s): not rendered", rec, why);
	free(rec);
	free(dir);
	return rc;
}

int report_begin(const struct report_ctx *ctx, const char *run_id)
{
	char *conf = NULL;
	int rc;

	if ((rc = run_trusted(ctx->runs_dir, run_id)) != 0)
		return rc;
	/* fontconfig resolves a relative FONTCONFIG_FILE against its own folder */
	if (asprintf(&conf, "%s/fonts/fonts.conf", ctx->home ? ctx->home : ".") < 0)
		return err_nomem();
	char *abs = realpath(conf, NULL);
	rc = abs ? chart_fonts_init(abs)
		 : err_set(DDT_EINPUT, "%s: the project's fontconfig file is missing: %s", conf,
			   strerror(errno));
	free(abs);
	free(conf);
	return rc;
}

int report_write(const struct report_ctx *ctx, const char *reports_dir,
		 const struct report_data *d)
{
	const char *run_id = d->rec.run_id;
	char *final = NULL, *tmp = NULL;
	int rc;

	if ((rc = fsx_mkdir_p(reports_dir)) != 0)
		goto done;
	if (!(final = fsx_join(reports_dir, run_id))) {
		rc = err_nomem();
		goto done;
	}
	if ((rc = fsx_dir_begin(final, &tmp)) != 0)
		goto done;
	if ((rc = render_into(d, tmp)) != 0) {
		fsx_rm_rf(tmp);
		goto done;
	}
	if ((rc = put_in_place(tmp, final)) != 0 && fsx_trusted_path(tmp, NULL, 0))
		fsx_rm_rf(tmp); /* ours: never a folder swapped in by someone else */
	else
		rc = point_latest(reports_dir, ctx->runs_dir);
	if (!rc && !ctx->quiet)
		printf("ddt report: %s/{report.pdf, report.xlsx, summary.txt, charts/}\n", final);
done:
	free(final);
	free(tmp);
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
	/* the sources the calibration cites, which the documents link */
	char *src = rc ? NULL : fsx_join(calibration, SOURCES_FILE);
	if (!rc && !src)
		rc = err_nomem();
	else if (!rc && fsx_exists(src))
		rc = copy_into(src, dir, NULL);
	free(src);
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


int report_runs(const char *runs_dir, struct report_doc **runs, size_t *n)
{
	int fd = fsx_dir_fd(runs_dir), dup_fd, rc = 0;
	size_t cap = 0;
	struct stat st;
	struct dirent *e;
	DIR *d;

	*runs = NULL;
	*n = 0;
	if (fd < 0)
		return errno == ENOENT ? (err_clear(), 0) : DDT_EIO;
	if ((dup_fd = dup(fd)) < 0 || !(d = fdopendir(dup_fd))) {
		rc = err_set(DDT_EIO, "%s: cannot read folder: %s", runs_dir, strerror(errno));
		if (dup_fd >= 0)
			close(dup_fd);
	} else {
		while (!rc && (e = readdir(d)))
			if (run_folder_at(fd, e->d_name, "run.yaml", &st))
				rc = doc_push(runs, n, &cap, e->d_name, st.st_mtim);
		closedir(d);
	}
	close(fd);
	if (rc) {
		free(*runs);
		*runs = NULL;
		*n = 0;
	} else if (*n)
		qsort(*runs, *n, sizeof **runs, cmp_doc);
	return rc;
}

int report_newest_run(const char *runs_dir, char *id, size_t len)
{
	struct report_doc *runs;
	size_t n;
	int rc = report_runs(runs_dir, &runs, &n);

	id[0] = '\0';
	if (rc)
		return err_set(DDT_ENOTFOUND, "%s", err_msg());
	if (n && strlen(runs[n - 1].id) < len)
		memcpy(id, runs[n - 1].id, strlen(runs[n - 1].id) + 1);
	free(runs);
	return id[0] ? 0 : err_set(DDT_ENOTFOUND, "no runs in %s", runs_dir);
}
