/* history.c - loads run records into series, one point per night. */
#include "history.h"

#include "acks.h"

#include "err.h"
#include "fsx.h"
#include "hindex.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* FNV-1a of s into h. */
static uint32_t fnv1a(uint32_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

char *history_machine_of(char *buf, size_t len, const struct run_record *r,
			 const struct rec_row *row)
{
	char host[64], what[320];
	const char *dash = strstr(r->run_id, "Z-");
	snprintf(host, sizeof host, "%s", r->prov.host[0] ? r->prov.host : dash ? dash + 2 : "?");
	host[strcspn(host, ".")] = '\0'; /* the short name, as run ids have it */
	if ((size_t)row->device < r->ndevices) {
		const struct rec_device *d = &r->devices[row->device];
		int cuda = !strcmp(d->kind, "cuda");
		snprintf(what, sizeof what, "%s|%s|%d|%.0f|%.0f|%.0f|%s", d->kind, d->name, d->cores,
			 isfinite(d->mem_gb) ? d->mem_gb : -1,
			 isfinite(d->sm_clock_mhz) ? d->sm_clock_mhz : -1,
			 isfinite(d->mem_clock_mhz) ? d->mem_clock_mhz : -1,
			 cuda ? r->prov.cuda_driver : "");
	} else
		snprintf(what, sizeof what, "no device");
	snprintf(buf, len, "%s:%08x", host, fnv1a(2166136261u, what));
	return buf;
}

char *history_env_of(char *buf, size_t len, const struct run_record *r)
{
	const struct rec_provenance *p = &r->prov;
	const char *const name[] = {"compiler", "cuda", "driver", "nccl", "build", "host",
				    "template"};
	const char *const val[] = {p->compiler, p->cuda_runtime, p->cuda_driver, p->nccl,
				   p->build,    p->host,	 r->template_name};
	size_t off = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof name / sizeof *name && off + 1 < len; i++) {
		off += (size_t)snprintf(buf + off, len - off, "%s%s=", i ? ";" : "", name[i]);
		for (const char *c = val[i]; *c && off + 1 < len; c++) /* no ';' in a value */
			buf[off++] = *c == ';' ? ',' : *c;
		buf[off < len ? off : len - 1] = '\0';
	}
	return buf;
}

/* The value of field f[0..flen) in env ("" when absent) into out[olen]. */
static void env_field(const char *env, const char *f, size_t flen, char *out, size_t olen)
{
	out[0] = '\0';
	for (const char *s = env; *s; s += strcspn(s, ";"), s += *s == ';') {
		size_t n = strcspn(s, ";");
		if (n > flen && !strncmp(s, f, flen) && s[flen] == '=') {
			snprintf(out, olen, "%.*s", (int)(n - flen - 1), s + flen + 1);
			return;
		}
	}
}

char *history_env_diff(const char *a, const char *b, char *buf, size_t len)
{
	buf[0] = '\0';
	if (!a[0] || !b[0])
		return buf;
	for (const char *s = a; *s; s += strcspn(s, ";"), s += *s == ';') {
		size_t flen = strcspn(s, "=;");
		char va[128], vb[128];
		env_field(a, s, flen, va, sizeof va);
		env_field(b, s, flen, vb, sizeof vb);
		if (strcmp(va, vb)) {
			snprintf(buf, len, "%.*s %s -> %s", (int)flen, s, va[0] ? va : "(none)",
				 vb[0] ? vb : "(none)");
			return buf;
		}
	}
	return buf;
}

void history_key_of(struct hist_key *k, const struct run_record *r, const struct rec_row *row)
{
	memset(k, 0, sizeof *k);
	snprintf(k->op, sizeof k->op, "%s", row->op);
	snprintf(k->variant, sizeof k->variant, "%s", row->variant);
	rec_row_params_str(row, k->params, sizeof k->params);
	if ((size_t)row->device < r->ndevices)
		snprintf(k->device, sizeof k->device, "%s", r->devices[row->device].name);
	snprintf(k->backend, sizeof k->backend, "%s", row->backend);
	snprintf(k->build, sizeof k->build, "%s", r->prov.build);
	history_machine_of(k->machine, sizeof k->machine, r, row);
}

int history_key_same_but_machine(const struct hist_key *a, const struct hist_key *b)
{
	return !strcmp(a->op, b->op) && !strcmp(a->variant, b->variant) &&
	       !strcmp(a->params, b->params) && !strcmp(a->device, b->device) &&
	       !strcmp(a->backend, b->backend) && !strcmp(a->build, b->build);
}

int history_key_equal(const struct hist_key *a, const struct hist_key *b)
{
	return history_key_same_but_machine(a, b) && !strcmp(a->machine, b->machine);
}

char *history_key_label(const struct hist_key *k, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s %s [%s, %s, %s, %s]", k->op, k->variant, k->params, k->backend,
		 k->device, k->build, k->machine);
	return buf;
}

/* FNV-1a over every field history_key_equal compares, each with its NUL. */
static uint64_t key_hash(const struct hist_key *k)
{
	const char *const f[] = {k->op,      k->variant, k->params, k->device,
				 k->backend, k->build,   k->machine};
	uint64_t h = 1469598103934665603u;
	for (size_t i = 0; i < sizeof f / sizeof *f; i++)
		for (const char *s = f[i];; s++) {
			h = (h ^ (unsigned char)*s) * 1099511628211u;
			if (!*s)
				break;
		}
	return h;
}

long history_find(const struct history *h, const struct hist_key *k)
{
	size_t mask = h->index_cap - 1;
	if (!h->index_cap)
		return -1;
	for (size_t i = key_hash(k) & mask; h->index[i]; i = (i + 1) & mask)
		if (history_key_equal(&h->series[h->index[i] - 1].key, k))
			return (long)(h->index[i] - 1);
	return -1;
}

/* Replaces the open-addressing table *slot (*cap slots) by one for items
 * 0..n) with room for at least `want` (half full at most): item k, hashed
 * by hash(items, k), in slot k + 1; 0 empty. Returns 0 or DDT_ENOMEM (the
 * old table kept). */
static int slots_build(size_t **slot, size_t *cap, size_t want, size_t n,
		       uint64_t (*hash)(const void *items, size_t k), const void *items)
{
	size_t c = 64;
	while (c < 2 * want)
		c *= 2;
	size_t *t = calloc(c, sizeof *t);
	if (!t)
		return err_nomem();
	for (size_t k = 0; k < n; k++) {
		size_t i = hash(items, k) & (c - 1);
		while (t[i])
			i = (i + 1) & (c - 1);
		t[i] = k + 1;
	}
	free(*slot);
	*slot = t;
	*cap = c;
	return 0;
}

static uint64_t series_hash(const void *series, size_t k)
{
	return key_hash(&((const struct hist_series *)series)[k].key);
}

/* Rebuilds the series index with room for at least `want` series. Returns
 * 0 or DDT_ENOMEM (the old index kept). */
static int index_rebuild(struct history *h, size_t want)
{
	return slots_build(&h->index, &h->index_cap, want, h->n, series_hash, h->series);
}

long history_run_index(const struct history *h, const char *run_id)
{
	for (size_t i = 0; i < h->nruns; i++)
		if (!strcmp(h->runs[i].run_id, run_id))
			return (long)i;
	return -1;
}

const struct hist_point *history_point_at(const struct hist_series *s, size_t run)
{
	/* points are in run order: binary search */
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->pts[mid].run < run)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && s->pts[lo].run == run ? &s->pts[lo] : NULL;
}

/* Makes room for one more element of size elem in *arr holding n of *cap.
 * Returns 0 or DDT_ENOMEM. */
static int reserve(void **arr, size_t n, size_t *cap, size_t elem)
{
	if (n < *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 16;
	void *p = realloc(*arr, ncap * elem);
	if (!p)
		return err_nomem();
	*arr = p;
	*cap = ncap;
	return 0;
}

long history_series_of(struct history *h, const struct hist_key *k)
{
	long i = history_find(h, k);
	if (i >= 0)
		return i;
	if (reserve((void **)&h->series, h->n, &h->cap, sizeof *h->series))
		return -1;
	if (2 * (h->n + 1) > h->index_cap && index_rebuild(h, h->n + 1))
		return -1;
	struct hist_series *s = &h->series[h->n];
	memset(s, 0, sizeof *s);
	s->key = *k;
	size_t mask = h->index_cap - 1, j = key_hash(k) & mask;
	while (h->index[j])
		j = (j + 1) & mask;
	h->index[j] = ++h->n;
	return (long)h->n - 1;
}

/* The analysis fields of p as regress_history expects them before it runs. */
static void point_clear_analysis(struct hist_point *p)
{
	p->baseline_us = p->noise_frac = p->delta_frac = p->z = NAN;
	p->band_lo_us = p->band_hi_us = NAN;
	p->verdict = p->verdict_night = REG_NEW;
	p->in_baseline = 0;
	p->good_run = p->bad_run = p->good_run_night = p->bad_run_night = HIST_NO_RUN;
	p->change_nights = 0;
}

static uint64_t text_hash(const void *text, size_t k)
{
	return fnv1a(2166136261u, ((char *const *)text)[k]);
}

/* t's stored copy of text, added when new; "" for "" or NULL. NULL on
 * allocation failure. */
static const char *texts_intern(struct hist_texts *t, const char *text)
{
	if (!text || !*text)
		return "";
	uint32_t hash = fnv1a(2166136261u, text);
	for (size_t i = t->slot_cap ? hash & (t->slot_cap - 1) : 0; t->slot_cap && t->slot[i];
	     i = (i + 1) & (t->slot_cap - 1))
		if (!strcmp(t->text[t->slot[i] - 1], text))
			return t->text[t->slot[i] - 1];
	if (reserve((void **)&t->text, t->n, &t->cap, sizeof *t->text) ||
	    (2 * (t->n + 1) > t->slot_cap &&
	     slots_build(&t->slot, &t->slot_cap, t->n + 1, t->n, text_hash, t->text)))
		return NULL;
	char *copy = strdup(text);
	if (!copy)
		return NULL;
	size_t i = hash & (t->slot_cap - 1);
	while (t->slot[i])
		i = (i + 1) & (t->slot_cap - 1);
	t->text[t->n] = copy;
	t->slot[i] = ++t->n;
	return copy;
}

static void texts_free(struct hist_texts *t)
{
	for (size_t k = 0; k < t->n; k++)
		free(t->text[k]);
	free(t->text);
	free(t->slot);
	memset(t, 0, sizeof *t);
}

int history_reason_set(struct history *h, struct hist_point *p, const char *fmt, ...)
{
	char buf[HIST_REASON_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	p->reason = texts_intern(&h->reasons, buf);
	if (p->reason)
		return 0;
	p->reason = "(reason not kept: out of memory)";
	return err_nomem();
}

int history_push_point(struct history *h, size_t si, const struct hist_point *p)
{
	struct hist_series *s = &h->series[si];
	if (s->n && s->pts[s->n - 1].run == p->run)
		return 0; /* the same key twice in one record: the first counts */
	if (reserve((void **)&s->pts, s->n, &s->cap, sizeof *s->pts))
		return DDT_ENOMEM;
	struct hist_point *q = &s->pts[s->n];
	*q = *p;
	point_clear_analysis(q);
	q->reason = "";
	if (p->reason && p->reason[0] && history_reason_set(h, q, "%s", p->reason))
		return DDT_ENOMEM;
	s->n++;
	return 0;
}

/* The measured fields of row's point on night run. */
static void point_init(struct hist_point *p, size_t run, const struct rec_row *row)
{
	memset(p, 0, sizeof *p);
	p->run = run;
	p->status = row->status;
	p->median_us = row->status == REC_OK && isfinite(row->median_us) && row->median_us > 0
			       ? row->median_us
			       : NAN;
	if (row->status == REC_OK && isnan(p->median_us)) {
		/* an ok row without a usable median cannot be compared */
		p->status = REC_FAILED;
		p->reason = "no usable median";
	} else
		p->reason = row->reason; /* history_push_point keeps a copy */
	p->samples = row->samples;
	/* p10..p90 spans 2.563 sigmas of normal noise; robust to a few slow samples */
	p->spread_us = isfinite(row->p90_us) && isfinite(row->p10_us) && row->p90_us > row->p10_us
			       ? (row->p90_us - row->p10_us) / 2.563
		       : isfinite(row->stdev_us) && row->stdev_us > 0 ? row->stdev_us
								      : NAN;
}

/* "2026-03-01T01:00:00Z" (or, given id, "20260301T010000Z-host") in seconds
 * since the epoch; -1 when malformed. */
static long long parse_time(const char *s, int id)
{
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	if (sscanf(s, id ? "%4d%2d%2dT%2d%2d%2dZ" : "%4d-%2d-%2dT%2d:%2d:%2dZ", &tm.tm_year,
		   &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (long long)timegm(&tm);
}

int history_add_run(struct history *h, const struct hist_run *r)
{
	for (size_t i = 0; i < h->nruns; i++)
		if (!strcmp(h->runs[i].run_id, r->run_id))
			return err_set(DDT_EINPUT, "run %s is already in the history", r->run_id);
	if (reserve((void **)&h->runs, h->nruns, &h->cap_runs, sizeof *h->runs))
		return DDT_ENOMEM;
	size_t run = h->nruns++;
	struct hist_run *hr = &h->runs[run];
	*hr = *r;
	if ((hr->t = parse_time(hr->created, 0)) < 0)
		hr->t = parse_time(hr->run_id, 1);
	hr->clock_behind = run > 0 && hr->t < h->runs[run - 1].t;
	return 0;
}

int history_add_record_series(struct history *h, const struct run_record *r, size_t *series,
			      size_t *nseries)
{
	struct hist_run hr;
	int rc;

	memset(&hr, 0, sizeof hr);
	snprintf(hr.run_id, sizeof hr.run_id, "%s", r->run_id);
	snprintf(hr.created, sizeof hr.created, "%s", r->created);
	snprintf(hr.template_name, sizeof hr.template_name, "%s", r->template_name);
	snprintf(hr.git_rev, sizeof hr.git_rev, "%s", r->prov.git_rev);
	snprintf(hr.engine_rev, sizeof hr.engine_rev, "%s", r->prov.engine_rev);
	hr.machine = r->machine;
	history_env_of(hr.env, sizeof hr.env, r);
	if ((rc = history_add_run(h, &hr)) != 0)
		return rc;
	size_t run = h->nruns - 1, n = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		struct hist_key k;
		struct hist_point p;
		history_key_of(&k, r, &r->rows[i]);
		long s = history_series_of(h, &k);
		if (s < 0)
			return DDT_ENOMEM;
		const struct hist_series *hs = &h->series[s];
		if (hs->n && hs->pts[hs->n - 1].run == run)
			continue; /* the same key twice in one record: the first counts */
		point_init(&p, run, &r->rows[i]);
		if (history_push_point(h, (size_t)s, &p))
			return DDT_ENOMEM;
		if (series)
			series[n++] = (size_t)s;
	}
	if (nseries)
		*nseries = n;
	return 0;
}

int history_add_record(struct history *h, const struct run_record *r)
{
	return history_add_record_series(h, r, NULL, NULL);
}

void history_free(struct history *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->series[i].pts);
	free(h->series);
	free(h->runs);
	free(h->index);
	texts_free(&h->reasons);
	free(h->acks);
	memset(h, 0, sizeof *h);
}

static int run_dir_entry(const struct dirent *e)
{
	return !fsx_is_temp_name(e->d_name);
}

/* Warns about a run folder that is not used (text: "skipped, REASON[:
 * detail]", the warning after the path, as the index keeps it), counts it,
 * and names it with its REASON in h->skipped_note while there is room. */
static void skip(struct history *h, struct ydiag *warnings, const char *path, const char *name,
		 const char *text)
{
	size_t used = strlen(h->skipped_note);
	const char *why = text;
	char item[160];

	ydiag_add(warnings, path, 0, 0, "%s", text);
	h->nskipped++;
	if (!strncmp(why, "skipped, ", 9) || !strncmp(why, "skipped: ", 9))
		why += 9;
	snprintf(item, sizeof item, "%s%s (%.*s)", used ? ", " : "", name,
		 (int)strcspn(why, ":"), why);
	if (used + strlen(item) + 16 < sizeof h->skipped_note)
		memcpy(h->skipped_note + used, item, strlen(item) + 1);
	else if (!strstr(h->skipped_note, ", ..."))
		snprintf(h->skipped_note + used, sizeof h->skipped_note - used, ", ...");
}

/* Parses runs_dir/name/run.yaml (path) into h, or warns and skips it,
 * naming why (unreadable, damaged, another run's record); tells ix (when
 * not NULL) either way, but of a record that could not be read (it may be
 * readable next time with the same size and time). Returns 0 or DDT_ENOMEM. */
static int parse_one(struct history *h, const char *path, const char *name,
		     const struct stat *st, struct hindex *ix, struct ydiag *warnings)
{
	struct run_record r;
	struct ydiag diag = {0};
	char why[640] = "";
	size_t *series = NULL, nseries = 0;
	int rc = record_read(&r, path, &diag), unread = rc && rc != DDT_EINPUT;

	if (rc == DDT_ENOMEM)
		goto done;
	if (rc) {
		const char *m = diag.n ? diag.msgs[0] : err_msg();
		size_t plen = strlen(path);
		if (!strncmp(m, path, plen) && !strncmp(m + plen, ": ", 2))
			m += plen + 2; /* the warning names the file itself */
		snprintf(why, sizeof why, "skipped, %s: %s", unread ? "unreadable" : "damaged record",
			 m);
	} else if (strcmp(r.run_id, name) != 0)
		snprintf(why, sizeof why,
			 "skipped, another run's record: its run id %s differs from its folder",
			 r.run_id);
	else if (!(series = malloc((r.nrows ? r.nrows : 1) * sizeof *series)))
		rc = err_nomem();
	else if ((rc = history_add_record_series(h, &r, series, &nseries)) == DDT_EINPUT)
		snprintf(why, sizeof why, "skipped, not added: %s", err_msg()); /* cannot happen */
	if (rc == DDT_ENOMEM)
		goto done;
	rc = 0;
	if (why[0])
		skip(h, warnings, path, name, why);
	if (ix && !unread)
		rc = hindex_note(ix, name, st, h->nruns - 1, series, nseries, why[0] ? why : NULL);
done:
	free(series);
	record_free(&r);
	ydiag_free(&diag);
	return rc;
}

/* Why runs_dir/name is not a run ddt can read, as "skipped, REASON[:
 * detail]" in why (len bytes), or "" when it is one to read: dir a folder,
 * path its run.yaml, a regular file (its stat in *st), both trusted
 * (fsx_trusted: another user's run is not history). *at is the one of them
 * to name. Nothing is followed: a link is named as one. Names that are not
 * run ids and are not folders (a lock, a note) are no runs at all: *is_run 0. */
static void unreadable_why(const char *name, const char *dir, const char *path, int *is_run,
			   const char **at, struct stat *st, char *why, size_t len)
{
	char untrusted[96];

	*is_run = 1;
	*at = dir;
	why[0] = '\0';
	int gone = lstat(dir, st) != 0, e = errno;
	if (gone || !S_ISDIR(st->st_mode)) {
		*is_run = record_run_id_valid(name);
		if (gone)
			snprintf(why, len, "skipped, unreadable: %s", strerror(e));
		else
			snprintf(why, len, "skipped, not a folder: %s where the run's folder should be",
				 S_ISLNK(st->st_mode) ? "a symbolic link" : "a file");
		return;
	}
	if (!fsx_trusted(st, untrusted, sizeof untrusted)) {
		snprintf(why, len, "skipped, not trusted: the folder is %s", untrusted);
		return;
	}
	*at = path;
	if (lstat(path, st) != 0)
		snprintf(why, len, errno == ENOENT ? "skipped, no run.yaml" : "skipped, unreadable: %s",
			 strerror(errno));
	else if (!S_ISREG(st->st_mode))
		snprintf(why, len, "skipped, unreadable: run.yaml is not a regular file");
	else if (!fsx_trusted(st, untrusted, sizeof untrusted))
		snprintf(why, len, "skipped, not trusted: run.yaml is %s", untrusted);
}

/* Reads runs_dir/name/run.yaml into h, from the index ix when it holds the
 * record as it is, or warns and skips it, naming why (unreadable, not a
 * folder, no record, damaged, another run's record). Returns 0, DDT_ENOMEM
 * or HINDEX_BROKEN. */
static int load_one(struct history *h, const char *runs_dir, const char *name,
		    struct hindex *ix, struct ydiag *warnings)
{
	char *dir = fsx_join(runs_dir, name), *path = dir ? fsx_join(dir, "run.yaml") : NULL;
	const char *cached = NULL, *at;
	char why[256];
	struct stat st;
	int rc = 0, is_run;

	if (!path) {
		rc = err_nomem();
		goto done;
	}
	unreadable_why(name, dir, path, &is_run, &at, &st, why, sizeof why);
	if (!is_run)
		goto done; /* a file beside the runs (a lock, a note): not a run */
	h->nfolders++;
	if (why[0]) {
		skip(h, warnings, at, name, why);
		goto done;
	}
	rc = ix ? hindex_take(ix, h, name, &st, &cached, warnings) : HINDEX_MISS;
	if (rc == HINDEX_SKIPPED)
		skip(h, warnings, path, name, cached);
	if (rc == HINDEX_MISS)
		rc = parse_one(h, path, name, &st, ix, warnings);
	else if (rc == HINDEX_ADDED || rc == HINDEX_SKIPPED)
		rc = 0;
done:
	free(path);
	free(dir);
	return rc;
}

/* Orders series by their first night, then by their order before (qsort). */
struct series_pos {
	size_t first, was;
};

static int cmp_series_pos(const void *a, const void *b)
{
	const struct series_pos *x = a, *y = b;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->was < y->was ? -1 : x->was > y->was;
}

static int cmp_point_run(const void *a, const void *b)
{
	const struct hist_point *x = a, *y = b;
	return x->run < y->run ? -1 : x->run > y->run;
}

/* Re-numbers the nights by perm (old index -> new) and re-orders every
 * series' points and the series (first appearance). Returns 0 or ENOMEM. */
static int renumber(struct history *h, const size_t *perm)
{
	struct series_pos *pos = malloc((h->n ? h->n : 1) * sizeof *pos);
	struct hist_series *ser = malloc((h->n ? h->n : 1) * sizeof *ser);
	int rc = 0;

	if (!pos || !ser) {
		rc = err_nomem();
		goto done;
	}
	for (size_t i = 0; i < h->n; i++) {
		struct hist_series *s = &h->series[i];
		for (size_t k = 0; k < s->n; k++)
			s->pts[k].run = perm[s->pts[k].run];
		qsort(s->pts, s->n, sizeof *s->pts, cmp_point_run);
		pos[i] = (struct series_pos){s->n ? s->pts[0].run : SIZE_MAX, i};
	}
	qsort(pos, h->n, sizeof *pos, cmp_series_pos);
	for (size_t i = 0; i < h->n; i++)
		ser[i] = h->series[pos[i].was];
	memcpy(h->series, ser, h->n * sizeof *ser);
	rc = index_rebuild(h, h->n);
done:
	free(pos);
	free(ser);
	return rc;
}

static int cmp_run_time(const void *a, const void *b)
{
	const struct hist_run *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return strcmp(x->run_id, y->run_id);
}

/* Puts the nights of a loaded history in the order of their created time
 * (then run id). Returns 0 or DDT_ENOMEM. */
static int order_by_created(struct history *h)
{
	struct hist_run *sorted = NULL;
	size_t *perm = NULL;
	int in_order = 1, rc;

	for (size_t i = 0; i < h->nruns; i++) {
		h->runs[i].clock_behind = 0; /* in created order none is behind */
		if (i && cmp_run_time(&h->runs[i - 1], &h->runs[i]) > 0)
			in_order = 0;
	}
	if (in_order)
		return 0;
	sorted = malloc(h->nruns * sizeof *sorted);
	perm = malloc(h->nruns * sizeof *perm);
	if (!sorted || !perm) {
		rc = err_nomem();
		goto done;
	}
	memcpy(sorted, h->runs, h->nruns * sizeof *sorted);
	qsort(sorted, h->nruns, sizeof *sorted, cmp_run_time);
	for (size_t i = 0; i < h->nruns; i++) /* run ids are unique */
		perm[history_run_index(h, sorted[i].run_id)] = i;
	memcpy(h->runs, sorted, h->nruns * sizeof *sorted);
	rc = renumber(h, perm);
done:
	free(sorted);
	free(perm);
	return rc;
}

/* Keeps the first k nights; series left without a point go. Returns 0 or
 * DDT_ENOMEM. */
static int keep_nights(struct history *h, size_t k)
{
	size_t out = 0;
	if (k >= h->nruns)
		return 0;
	h->nruns = k;
	for (size_t i = 0; i < h->n; i++) {
		struct hist_series *s = &h->series[i];
		while (s->n && s->pts[s->n - 1].run >= k)
			s->n--;
		if (!s->n) {
			free(s->pts);
			continue;
		}
		h->series[out++] = *s;
	}
	h->n = out;
	return index_rebuild(h, h->n);
}

/* How many nights of the ordered history are up to run `until` (see
 * history_load_until). */
static size_t nights_until(const struct history *h, const char *until)
{
	long at = history_run_index(h, until);
	long long t = parse_time(until, 1);
	size_t k = 0;

	if (at >= 0)
		return (size_t)at + 1;
	while (k < h->nruns && h->runs[k].t <= t)
		k++;
	return k;
}

/* Loads the folders list[0..n) of runs_dir into h (zeroed first) through
 * ix (may be NULL). Returns 0, DDT_ENOMEM or HINDEX_BROKEN. */
static int load_folders(struct history *h, const char *runs_dir, struct dirent **list, int n,
			struct hindex *ix, struct ydiag *warnings)
{
	int rc = 0;
	memset(h, 0, sizeof *h);
	for (int i = 0; i < n && !rc; i++)
		rc = load_one(h, runs_dir, list[i]->d_name, ix, warnings);
	if (!rc && ix)
		rc = hindex_flush(ix, h, warnings);
	return rc;
}

/* Drops the warnings after the first n. */
static void warnings_cut(struct ydiag *w, size_t n)
{
	while (w && w->n > n)
		free(w->msgs[--w->n]);
}

/* Loads through the index, once again from the records (rebuilding the
 * index) when it turns out damaged midway. Returns 0 or DDT_ENOMEM. */
static int load_indexed(struct history *h, const char *runs_dir, struct dirent **list, int n,
			struct ydiag *warnings)
{
	struct hindex *ix = NULL;
	int rc = hindex_open(&ix, runs_dir, warnings);

	for (int tries = 0; !rc; tries++) {
		size_t keep = warnings ? warnings->n : 0;
		if ((rc = load_folders(h, runs_dir, list, n, ix, warnings)) != HINDEX_BROKEN)
			break;
		history_free(h);
		warnings_cut(warnings, keep);
		if (tries) { /* damaged again: the records alone */
			hindex_close(ix);
			ix = NULL;
			rc = 0;
		} else
			rc = hindex_rebuild(&ix, warnings);
	}
	hindex_close(ix);
	return rc;
}

int history_load_with(struct history *h, const char *runs_dir, const char *until,
		      enum history_source src, struct ydiag *warnings)
{
	struct dirent **list = NULL;
	int n, rc = 0;

	memset(h, 0, sizeof *h);
	n = scandir(runs_dir, &list, run_dir_entry, alphasort);
	if (n < 0) {
		if (errno == ENOENT)
			return 0;
		return err_set(errno == ENOMEM ? DDT_ENOMEM : DDT_EIO, "%s: cannot read folder: %s",
			       runs_dir, strerror(errno));
	}
	if (src == HISTORY_INDEXED)
		rc = load_indexed(h, runs_dir, list, n, warnings);
	else
		rc = load_folders(h, runs_dir, list, n, NULL, warnings);
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
	if (!rc)
		rc = order_by_created(h);
	if (!rc && until)
		rc = keep_nights(h, nights_until(h, until));
	if (!rc)
		rc = acks_load(h, runs_dir, warnings);
	return rc;
}

int history_load_until(struct history *h, const char *runs_dir, const char *until,
		       struct ydiag *warnings)
{
	return history_load_with(h, runs_dir, until, HISTORY_INDEXED, warnings);
}

int history_load(struct history *h, const char *runs_dir, struct ydiag *warnings)
{
	return history_load_with(h, runs_dir, NULL, HISTORY_INDEXED, warnings);
}
