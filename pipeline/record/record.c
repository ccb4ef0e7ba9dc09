/* record.c - run records: YAML emit, strict read, and run ids. */
#include "record.h"

#include "harness.h"

#include "err.h"
#include "fsx.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int grow(void **arr, size_t n, size_t elem)
{
	if (n & (n - 1))
		return 0; /* capacity is the next power of two */
	void *p = realloc(*arr, (n ? n * 2 : 16) * elem);
	if (!p)
		return err_nomem();
	*arr = p;
	return 0;
}

int record_add_row(struct run_record *r, const struct rec_row *row)
{
	if (grow((void **)&r->rows, r->nrows, sizeof *r->rows))
		return DDT_ENOMEM;
	r->rows[r->nrows++] = *row;
	return 0;
}

int record_add_device(struct run_record *r, const struct rec_device *dev)
{
	if (grow((void **)&r->devices, r->ndevices, sizeof *r->devices))
		return DDT_ENOMEM;
	r->devices[r->ndevices++] = *dev;
	return 0;
}

void record_free(struct run_record *r)
{
	free(r->rows);
	free(r->devices);
	memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- run ids */

void record_make_run_id(char *id, size_t len, char *created, size_t clen)
{
	char host[64] = "host", clean[64];
	time_t now = time(NULL);
	struct tm tm;
	size_t j = 0;

	gethostname(host, sizeof host - 1);
	host[sizeof host - 1] = '\0';
	for (size_t i = 0; host[i] && host[i] != '.' && j < sizeof clean - 1; i++)
		clean[j++] = isalnum((unsigned char)host[i]) || host[i] == '-' ? host[i] : '-';
	clean[j] = '\0';
	if (!j)
		snprintf(clean, sizeof clean, "host");
	gmtime_r(&now, &tm);
	snprintf(id, len, "%04d%02d%02dT%02d%02d%02dZ-%s", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, clean);
	if (created)
		strftime(created, clen, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int record_run_id_valid(const char *s)
{
	size_t n = strlen(s);
	if (n < 18 || n > 79 || s[8] != 'T' || s[15] != 'Z' || s[16] != '-')
		return 0;
	for (size_t i = 0; i < 15; i++)
		if (i != 8 && !isdigit((unsigned char)s[i]))
			return 0;
	for (size_t i = 17; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-')
			return 0;
	return 1;
}

/* ---------------------------------------------------------------- emit */

static void emit_device(struct yout *y, const struct rec_device *d)
{
	yout_map(y);
	yout_kv_str(y, "kind", d->kind);
	yout_kv_int(y, "index", d->index);
	yout_kv_str(y, "name", d->name);
	yout_kv_str(y, "arch", d->arch);
	yout_kv_int(y, "cores", d->cores);
	yout_kv_num(y, "mem_gb", d->mem_gb);
	yout_kv_num(y, "sm_clock_mhz", d->sm_clock_mhz);
	yout_kv_num(y, "mem_clock_mhz", d->mem_clock_mhz);
	yout_kv_num(y, "peak_gbps", d->peak_gbps);
	yout_kv_num(y, "copy_gbps", d->copy_gbps);
	yout_end(y);
}

static void emit_row(struct yout *y, const struct rec_row *w)
{
	yout_map(y);
	yout_kv_str(y, "op", w->op);
	yout_kv_str(y, "variant", w->variant);
	yout_kv_str(y, "backend", w->backend);
	yout_kv_int(y, "device", w->device);
	yout_key(y, "params");
	yout_map_flow(y);
	for (int i = 0; i < w->nparams; i++)
		yout_kv_num(y, w->params[i].key, w->params[i].val);
	yout_end(y);
	yout_kv_int(y, "samples", w->samples);
	yout_kv_num(y, "median_us", w->median_us);
	yout_kv_num(y, "p10_us", w->p10_us);
	yout_kv_num(y, "p90_us", w->p90_us);
	yout_kv_num(y, "min_us", w->min_us);
	yout_kv_num(y, "max_us", w->max_us);
	yout_kv_num(y, "stdev_us", w->stdev_us);
	yout_kv_num(y, "bytes", w->bytes);
	yout_kv_num(y, "flops", w->flops);
	yout_kv_num(y, "gbps", w->gbps);
	yout_kv_num(y, "pct_peak", w->pct_peak);
	yout_kv_num(y, "max_err", w->max_err);
	yout_kv_num(y, "sm_clock_mhz", w->sm_clock_mhz);
	yout_kv_str(y, "status", rec_status_name(w->status));
	yout_kv_str(y, "reason", w->reason);
	if (w->stop[0])
		yout_kv_str(y, "stop", w->stop);
	yout_end(y);
}

static void emit_machine(struct yout *y, const struct rec_machine *m)
{
	yout_key(y, "machine");
	yout_map(y);
	yout_kv_num(y, "load_avg_1m", m->load_avg_1m);
	yout_kv_num(y, "cpu_steal_pct", m->cpu_steal_pct);
	yout_kv_num(y, "cpu_others_pct", m->cpu_others_pct);
	yout_kv_num(y, "cpu_mhz", m->cpu_mhz);
	yout_kv_int(y, "cpus", m->cpus);
	yout_key(y, "gpus");
	yout_seq(y);
	for (int i = 0; i < m->ngpus; i++) {
		const struct rec_gpu_state *g = &m->gpus[i];
		yout_map(y);
		yout_kv_int(y, "index", g->index);
		yout_kv_num(y, "sm_clock_mhz", g->sm_clock_mhz);
		yout_kv_num(y, "mem_clock_mhz", g->mem_clock_mhz);
		yout_kv_num(y, "temp_c", g->temp_c);
		yout_kv_str(y, "throttle", g->throttle);
		yout_kv_int(y, "other_procs", g->other_procs);
		yout_end(y);
	}
	yout_end(y);
	yout_end(y);
}

/* The record's YAML, without its trailer. */
static int emit_body(const struct run_record *r, FILE *fp)
{
	struct yout y;
	const struct rec_provenance *p = &r->prov;

	yout_init(&y, fp);
	yout_map(&y);
	/* a record with a machine section is schema 2 whatever it was read as,
	 * one whose rows say what stopped them schema 3 */
	int schema = r->schema ? r->schema : RECORD_SCHEMA;
	if ((r->machine.known || r->prov.engine_rev[0]) && schema < 2)
		schema = 2;
	for (size_t i = 0; i < r->nrows && schema < 3; i++)
		if (r->rows[i].stop[0])
			schema = 3;
	yout_kv_int(&y, "schema", schema);
	yout_kv_str(&y, "run_id", r->run_id);
	yout_kv_str(&y, "created", r->created);
	yout_kv_str(&y, "template", r->template_name);
	yout_key(&y, "provenance");
	yout_map(&y);
	yout_kv_str(&y, "git_rev", p->git_rev);
	yout_kv_str(&y, "compiler", p->compiler);
	yout_kv_str(&y, "build", p->build);
	yout_kv_str(&y, "cuda_runtime", p->cuda_runtime);
	yout_kv_str(&y, "cuda_driver", p->cuda_driver);
	yout_kv_str(&y, "nccl", p->nccl);
	yout_kv_str(&y, "host", p->host);
	if (p->engine_rev[0])
		yout_kv_str(&y, "engine_rev", p->engine_rev);
	yout_end(&y);
	if (r->machine.known)
		emit_machine(&y, &r->machine);
	yout_key(&y, "devices");
	yout_seq(&y);
	for (size_t i = 0; i < r->ndevices; i++)
		emit_device(&y, &r->devices[i]);
	yout_end(&y);
	yout_key(&y, "rows");
	yout_seq(&y);
	for (size_t i = 0; i < r->nrows; i++)
		emit_row(&y, &r->rows[i]);
	yout_end(&y);
	yout_end(&y);
	/* errno is still the failed write's (ENOSPC, EFBIG): say it */
	return ferror(fp) ? err_set(DDT_EIO, "write failed: %s", strerror(errno ? errno : EIO)) : 0;
}

/* The body is built in memory first, so its digest is known when the
 * trailer goes last. */
int record_emit(const struct run_record *r, FILE *fp)
{
	char *body = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&body, &len);
	int rc = mem ? emit_body(r, mem) : err_nomem();

	if (mem && fclose(mem) != 0 && !rc)
		rc = err_nomem();
	if (!rc && (fwrite(body, 1, len, fp) != len ||
		    fprintf(fp, RECORD_TRAILER "rows=%zu fnv1a64=%016llx\n", r->nrows,
			    (unsigned long long)fsx_hash(FSX_HASH_SEED, body, len)) < 0))
		rc = err_set(DDT_EIO, "write failed: %s", strerror(errno ? errno : EIO));
	free(body);
	return rc;
}

int record_write(const struct run_record *r, const char *path)
{
	struct fsx_file f;
	int rc = fsx_open(&f, path);
	if (rc)
		return rc;
	if ((rc = record_emit(r, f.fp)) != 0) {
		fsx_abort(&f);
		return err_wrap(rc, "%s", path);
	}
	return fsx_commit(&f);
}

/* ---------------------------------------------------------------- read */

static void read_device(struct yctx *c, struct ydoc_node *m, struct rec_device *d)
{
	memset(d, 0, sizeof *d);
	yget_strcpy(c, m, "kind", Y_REQUIRED, d->kind, sizeof d->kind);
	yget_int(c, m, "index", Y_REQUIRED | Y_NONNEG, &d->index);
	yget_strcpy(c, m, "name", Y_REQUIRED, d->name, sizeof d->name);
	yget_strcpy(c, m, "arch", Y_REQUIRED, d->arch, sizeof d->arch);
	yget_int(c, m, "cores", Y_REQUIRED | Y_NONNEG, &d->cores);
	yget_num(c, m, "mem_gb", Y_REQUIRED | Y_NONNEG | Y_NULLABLE, &d->mem_gb);
	yget_num(c, m, "sm_clock_mhz", Y_REQUIRED | Y_NONNEG | Y_NULLABLE, &d->sm_clock_mhz);
	yget_num(c, m, "mem_clock_mhz", Y_REQUIRED | Y_NONNEG | Y_NULLABLE, &d->mem_clock_mhz);
	yget_num(c, m, "peak_gbps", Y_REQUIRED | Y_POSITIVE | Y_NULLABLE, &d->peak_gbps);
	yget_num(c, m, "copy_gbps", Y_REQUIRED | Y_POSITIVE | Y_NULLABLE, &d->copy_gbps);
	yget_check_unknown(c, m);
}

/* A row's stop as harness_stop_name writes it. */
static int record_stop_valid(const char *stop)
{
	for (int i = HARNESS_STOP_RSD; i <= HARNESS_STOP_MAX_SAMPLES; i++)
		if (!strcmp(stop, harness_stop_name(i)))
			return 1;
	return 0;
}

static void read_row(struct yctx *c, struct ydoc_node *m, struct rec_row *w, size_t ndev)
{
	struct ydoc_node *params = NULL;
	const char *status = "failed";
	static const char *const nums[] = {"median_us", "p10_us", "p90_us", "min_us", "max_us",
					   "stdev_us", "bytes", "flops", "gbps", "pct_peak",
					   "max_err", "sm_clock_mhz"};
	double *dst[] = {&w->median_us, &w->p10_us, &w->p90_us, &w->min_us, &w->max_us,
			 &w->stdev_us, &w->bytes, &w->flops, &w->gbps, &w->pct_peak,
			 &w->max_err, &w->sm_clock_mhz};

	memset(w, 0, sizeof *w);
	yget_strcpy(c, m, "op", Y_REQUIRED, w->op, sizeof w->op);
	yget_strcpy(c, m, "variant", Y_REQUIRED, w->variant, sizeof w->variant);
	yget_strcpy(c, m, "backend", Y_REQUIRED, w->backend, sizeof w->backend);
	yget_int(c, m, "device", Y_REQUIRED | Y_NONNEG, &w->device);
	if ((size_t)w->device >= ndev) { /* readers index devices[] with it */
		ydiag_add(c->diag, c->file, m->line, m->col, "device %d: no such device", w->device);
		w->device = 0;
	}
	if (!yget_node(c, m, "params", YDOC_MAP, Y_REQUIRED, &params) && params) {
		for (size_t i = 0; i < params->n; i++) {
			double v;
			params->used[i] = 1;
			if (yget_node_num(c, params->items[i], params->keys[i]->str, 0, &v))
				continue;
			if (rec_row_param_set(w, params->keys[i]->str, v))
				ydiag_add(c->diag, c->file, params->keys[i]->line,
					  params->keys[i]->col, "too many params or key too long");
		}
	}
	yget_int(c, m, "samples", Y_REQUIRED | Y_NONNEG, &w->samples);
	for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
		*dst[i] = NAN;
		yget_num(c, m, nums[i], Y_REQUIRED | Y_NULLABLE, dst[i]);
	}
	yget_str(c, m, "status", Y_REQUIRED, &status);
	if (rec_status_parse(status, &w->status)) {
		struct ydoc_node *n = ydoc_get(m, "status");
		ydiag_add(c->diag, c->file, n ? n->line : m->line, n ? n->col : m->col,
			  "status: expected ok, failed, skipped or unsupported, got '%s'", status);
	}
	yget_strcpy(c, m, "reason", Y_REQUIRED, w->reason, sizeof w->reason);
	yget_strcpy(c, m, "stop", 0, w->stop, sizeof w->stop); /* schema 3 */
	if (w->stop[0] && !record_stop_valid(w->stop)) {
		struct ydoc_node *n = ydoc_get(m, "stop");
		ydiag_add(c->diag, c->file, n->line, n->col,
			  "stop: expected rsd, ci, timeout or max_samples, got '%s'", w->stop);
	}
	yget_check_unknown(c, m);
}

static void read_prov(struct yctx *c, struct ydoc_node *m, struct rec_provenance *p)
{
	yget_strcpy(c, m, "git_rev", Y_REQUIRED, p->git_rev, sizeof p->git_rev);
	yget_strcpy(c, m, "compiler", Y_REQUIRED, p->compiler, sizeof p->compiler);
	yget_strcpy(c, m, "build", Y_REQUIRED, p->build, sizeof p->build);
	yget_strcpy(c, m, "cuda_runtime", Y_REQUIRED, p->cuda_runtime, sizeof p->cuda_runtime);
	yget_strcpy(c, m, "cuda_driver", Y_REQUIRED, p->cuda_driver, sizeof p->cuda_driver);
	yget_strcpy(c, m, "nccl", Y_REQUIRED, p->nccl, sizeof p->nccl);
	yget_strcpy(c, m, "host", Y_REQUIRED, p->host, sizeof p->host);
	yget_strcpy(c, m, "engine_rev", 0, p->engine_rev, sizeof p->engine_rev);
	yget_check_unknown(c, m);
}

static void read_gpu_state(struct yctx *c, struct ydoc_node *m, struct rec_gpu_state *g)
{
	memset(g, 0, sizeof *g);
	g->sm_clock_mhz = g->mem_clock_mhz = g->temp_c = NAN;
	g->other_procs = -1;
	yget_int(c, m, "index", Y_REQUIRED | Y_NONNEG, &g->index);
	yget_num(c, m, "sm_clock_mhz", Y_NONNEG | Y_NULLABLE, &g->sm_clock_mhz);
	yget_num(c, m, "mem_clock_mhz", Y_NONNEG | Y_NULLABLE, &g->mem_clock_mhz);
	yget_num(c, m, "temp_c", Y_NULLABLE, &g->temp_c);
	yget_strcpy(c, m, "throttle", 0, g->throttle, sizeof g->throttle);
	yget_int(c, m, "other_procs", 0, &g->other_procs);
	yget_check_unknown(c, m);
}

/* The optional machine section (schema 2): every key optional inside it. */
static void read_machine(struct yctx *c, struct ydoc_node *m, struct rec_machine *ms)
{
	struct ydoc_node *gpus = NULL;
	ms->known = 1;
	ms->load_avg_1m = ms->cpu_steal_pct = ms->cpu_others_pct = ms->cpu_mhz = NAN;
	yget_num(c, m, "load_avg_1m", Y_NONNEG | Y_NULLABLE, &ms->load_avg_1m);
	yget_num(c, m, "cpu_steal_pct", Y_NONNEG | Y_NULLABLE, &ms->cpu_steal_pct);
	yget_num(c, m, "cpu_others_pct", Y_NONNEG | Y_NULLABLE, &ms->cpu_others_pct);
	yget_num(c, m, "cpu_mhz", Y_NONNEG | Y_NULLABLE, &ms->cpu_mhz);
	yget_int(c, m, "cpus", Y_NONNEG, &ms->cpus);
	if (!yget_node(c, m, "gpus", YDOC_SEQ, 0, &gpus) && gpus)
		for (size_t i = 0; i < gpus->n; i++) {
			if (yget_expect(c, gpus->items[i], YDOC_MAP, "gpu state"))
				continue;
			if (ms->ngpus == RECORD_MAX_GPU_STATES) {
				ydiag_add(c->diag, c->file, gpus->items[i]->line,
					  gpus->items[i]->col, "machine.gpus: at most %d",
					  RECORD_MAX_GPU_STATES);
				break;
			}
			read_gpu_state(c, gpus->items[i], &ms->gpus[ms->ngpus++]);
		}
	yget_check_unknown(c, m);
}

/* True when s is "YYYY-MM-DDTHH:MM:SSZ" naming a real moment: month 1-12,
 * the day within its month (leap years counted), hour 0-23, minute and
 * second 0-59 (Feb 30 25:61 is damage, not a date). */
static int created_valid(const char *s)
{
	static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int y, mo, d, h, mi, sec, end = 0;

	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &mo, &d, &h, &mi, &sec, &end) != 6 ||
	    end != 20 || s[end] || mo < 1 || mo > 12 || h > 23 || mi > 59 || sec > 59 || d < 1 ||
	    h < 0 || mi < 0 || sec < 0 || y < 1970)
		return 0;
	for (int i = 0; i < 20; i++) /* digits where digits go: no sign, no space */
		if (!strchr("-T:Z", s[i]) && !isdigit((unsigned char)s[i]))
			return 0;
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return d <= mdays[mo - 1] + (mo == 2 && leap);
}

/* What a record's last line says (RECORD_TRAILER). */
struct trailer {
	int found;       /* 1: a whole trailer line ends the buffer */
	size_t rows;     /* the rows it counts */
	size_t body_len; /* the bytes before it, which its digest covers */
};

/* Finds and checks the trailer of buf: 0, or DDT_EINPUT with a diag when
 * it is there but does not match the body (changed, or cut and patched).
 * A buffer without one is left to the schema to judge (t->found 0). */
static int trailer_check(struct trailer *t, const char *name, const char *buf, size_t len,
			 struct ydiag *diag)
{
	unsigned long long want;
	size_t start, line = 1;
	int end = 0;

	memset(t, 0, sizeof *t);
	if (len < 2 || buf[len - 1] != '\n')
		return 0;
	for (start = len - 1; start > 0 && buf[start - 1] != '\n'; start--)
		;
	if (strncmp(buf + start, RECORD_TRAILER, strlen(RECORD_TRAILER)) != 0)
		return 0;
	for (size_t i = 0; i < start; i++)
		line += buf[i] == '\n';
	if (sscanf(buf + start + strlen(RECORD_TRAILER), "rows=%zu fnv1a64=%16llx%n", &t->rows,
		   &want, &end) != 2 ||
	    buf + start + strlen(RECORD_TRAILER) + end != buf + len - 1) {
		ydiag_add(diag, name, (int)line, 1, "damaged record: its end-of-record line is cut");
		return DDT_EINPUT;
	}
	if (fsx_hash(FSX_HASH_SEED, buf, start) != want) {
		ydiag_add(diag, name, (int)line, 1,
			  "damaged record: the bytes before its end-of-record line are not those it "
			  "was written with (cut or changed after it was written)");
		return DDT_EINPUT;
	}
	t->found = 1;
	t->body_len = start;
	return 0;
}

/* The schema's part of the trailer check, once the record is read: a record
 * of schema 4 or later without one is cut short; the rows it counts must be
 * the rows read. */
static int trailer_agrees(const struct trailer *t, const struct run_record *r, const char *name,
			  struct ydiag *diag)
{
	if (!t->found && r->schema >= 4) {
		ydiag_add(diag, name, 0, 0,
			  "damaged record: no end-of-record line (schema %d records end with one): cut "
			  "short",
			  r->schema);
		return DDT_EINPUT;
	}
	if (t->found && t->rows != r->nrows) {
		ydiag_add(diag, name, 0, 0,
			  "damaged record: %zu rows read, its end-of-record line counts %zu", r->nrows,
			  t->rows);
		return DDT_EINPUT;
	}
	return 0;
}

/* Reads the record in doc (freed here), named path in messages. */
static int read_doc(struct run_record *r, struct ydoc *doc, const char *path,
		    struct ydiag *diag, size_t before)
{
	struct ydoc_node *root, *n;
	struct yctx c = {path, diag};

	root = doc->root;
	if (!root || yget_expect(&c, root, YDOC_MAP, "run record")) {
		if (!root)
			ydiag_add(diag, path, 0, 0, "empty run record");
		ydoc_free(doc);
		return DDT_EINPUT;
	}
	yget_int(&c, root, "schema", Y_REQUIRED | Y_POSITIVE, &r->schema);
	if (r->schema > RECORD_SCHEMA)
		ydiag_add(diag, path, root->line, root->col,
			  "schema %d is newer than this ddt reads (%d)", r->schema, RECORD_SCHEMA);
	size_t had = diag->n;
	yget_strcpy(&c, root, "run_id", Y_REQUIRED, r->run_id, sizeof r->run_id);
	if (diag->n == had && !record_run_id_valid(r->run_id)) /* names folders */
		ydiag_add(diag, path, 0, 0, "run_id '%s' is not YYYYMMDDTHHMMSSZ-host", r->run_id);
	had = diag->n;
	yget_strcpy(&c, root, "created", Y_REQUIRED, r->created, sizeof r->created);
	if (diag->n == had && !created_valid(r->created))
		ydiag_add(diag, path, 0, 0,
			  "created '%s' is not a date and time of the calendar (YYYY-MM-DDTHH:MM:SSZ)",
			  r->created);
	had = diag->n;
	yget_strcpy(&c, root, "template", Y_REQUIRED, r->template_name, sizeof r->template_name);
	if (diag->n == had && !fsx_name_ok(r->template_name)) /* names a file */
		ydiag_add(diag, path, 0, 0, "template '%s' is not a file name", r->template_name);
	if (!yget_node(&c, root, "provenance", YDOC_MAP, Y_REQUIRED, &n) && n)
		read_prov(&c, n, &r->prov);
	n = NULL;
	if (!yget_node(&c, root, "machine", YDOC_MAP, 0, &n) && n)
		read_machine(&c, n, &r->machine);
	if (!yget_node(&c, root, "devices", YDOC_SEQ, Y_REQUIRED, &n) && n)
		for (size_t i = 0; i < n->n; i++) {
			struct rec_device d;
			if (yget_expect(&c, n->items[i], YDOC_MAP, "device"))
				continue;
			read_device(&c, n->items[i], &d);
			if (record_add_device(r, &d))
				goto nomem;
		}
	n = NULL;
	if (!yget_node(&c, root, "rows", YDOC_SEQ, Y_REQUIRED, &n) && n && n->n > RECORD_MAX_ROWS)
		ydiag_add(diag, path, n->line, n->col,
			  "rows: more than %d (the most a run record holds)", RECORD_MAX_ROWS);
	else if (n)
		for (size_t i = 0; i < n->n; i++) {
			struct rec_row w;
			if (yget_expect(&c, n->items[i], YDOC_MAP, "row"))
				continue;
			read_row(&c, n->items[i], &w, r->ndevices);
			if (record_add_row(r, &w))
				goto nomem;
		}
	yget_check_unknown(&c, root);
	ydoc_free(doc);
	return diag->n > before ? DDT_EINPUT : 0;
nomem:
	ydoc_free(doc);
	return DDT_ENOMEM;
}

/* A record's YAML caps: the most rows it holds, not a generic file's. */
static const struct ydoc_caps record_caps = {RECORD_MAX_BYTES, RECORD_MAX_VALUES};

int record_read(struct run_record *r, const char *path, struct ydiag *diag)
{
	char *buf = NULL;
	size_t len = 0;
	int rc = ydoc_read_file(path, RECORD_MAX_BYTES, &buf, &len, diag);

	memset(r, 0, sizeof *r);
	if (rc)
		return rc;
	rc = record_read_buf(r, path, buf, len, diag);
	free(buf);
	return rc;
}

int record_read_buf(struct run_record *r, const char *name, const char *buf, size_t len,
		    struct ydiag *diag)
{
	struct ydoc *doc = NULL;
	struct trailer t;
	size_t before = diag->n;
	int rc;

	memset(r, 0, sizeof *r);
	if ((rc = trailer_check(&t, name, buf, len, diag)) != 0)
		return rc;
	if ((rc = ydoc_load_buf_capped(&doc, name, buf, len, &record_caps, diag)) != 0)
		return rc;
	if ((rc = read_doc(r, doc, name, diag, before)) != 0)
		return rc;
	return trailer_agrees(&t, r, name, diag);
}
