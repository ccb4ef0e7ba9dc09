/* record.c - run records: YAML emit, strict read, and run ids. */
#include "record.h"

#include "harness.h"

#include "err.h"
#include "fsx.h"
#include "yschema.h"

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

/* ---------------------------------------------------------------- schema */

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

#define FIELD_STR(obj, f) ((char *)(obj) + (f)->off)
#define FIELD_STR_C(obj, f) ((const char *)(obj) + (f)->off)

const struct yschema_name record_status_names[] = {{"ok", REC_OK},
						   {"failed", REC_FAILED},
						   {"skipped", REC_SKIPPED},
						   {"unsupported", REC_UNSUPPORTED},
						   {NULL, 0}};
const struct yschema_name record_stop_names[] = {{"rsd", HARNESS_STOP_RSD},
						 {"ci", HARNESS_STOP_CI},
						 {"timeout", HARNESS_STOP_TIMEOUT},
						 {"max_samples", HARNESS_STOP_MAX_SAMPLES},
						 {NULL, 0}};

/* A row's params: a mapping keyed by the op's parameters, {M: 9, k: 64},
 * into the row's {key, val} pairs, kept sorted by key (rec_row_param). */
static const struct yschema_field param_value[] = {
	YS_VALUE(struct rec_param, val, YS_NUM, 0, .help = "the parameter's value"),
};
static const struct yschema param_schema = YS_TABLE("params", param_value, 1);

static int param_cmp(const void *a, const void *b)
{
	return strcmp(((const struct rec_param *)a)->key, ((const struct rec_param *)b)->key);
}

#define DEV(m, ty, fl, u, h) YS_FIELD(struct rec_device, m, ty, fl, .unit = (u), .help = (h))
#define DEV_NUM (Y_REQUIRED | Y_NONNEG | Y_NULLABLE)
static const struct yschema_field device_fields[] = {
	DEV(kind, YS_STR, Y_REQUIRED, NULL, "cpu or cuda"),
	DEV(index, YS_INT, Y_REQUIRED | Y_NONNEG, NULL, "CUDA ordinal; 0 for the CPU"),
	DEV(name, YS_STR, Y_REQUIRED, NULL, "the device's name"),
	DEV(arch, YS_STR, Y_REQUIRED, NULL, "sm_90; x86_64 for the CPU"),
	DEV(cores, YS_INT, Y_REQUIRED | Y_NONNEG, NULL, "SMs or CPU cores"),
	DEV(mem_gb, YS_NUM, DEV_NUM, "GB", "device memory (RAM for the CPU)"),
	DEV(sm_clock_mhz, YS_NUM, DEV_NUM, "MHz", "default SM clock (null: unknown)"),
	DEV(mem_clock_mhz, YS_NUM, DEV_NUM, "MHz", "memory clock (null: unknown)"),
	DEV(peak_gbps, YS_NUM, Y_REQUIRED | Y_POSITIVE | Y_NULLABLE, "GB/s",
	    "datasheet bandwidth (null: unknown)"),
	YS_FIELD(struct rec_device, copy_gbps, YS_NUM, Y_REQUIRED | Y_POSITIVE | Y_NULLABLE,
		 .unit = "GB/s", .help = "copy bandwidth, the %-of-peak base",
		 .source = "measured by the bench's copy probe"),
};
static const struct yschema device_schema = YS_TABLE("devices[]", device_fields, 0);

/* The keys through `device`, then the rest: a row's device is checked
 * against the record's devices between them (record_read_row). */
#define ROW_HEAD 4
#define ROW(m, ty, fl, u, h) YS_FIELD(struct rec_row, m, ty, fl, .unit = (u), .help = (h))
#define ROW_NUM(m, u, h) ROW(m, YS_NUM, Y_REQUIRED | Y_NULLABLE, u, h)
static const struct yschema_field row_fields[] = {
	ROW(op, YS_STR, Y_REQUIRED, NULL, "op table name"),
	ROW(variant, YS_STR, Y_REQUIRED, NULL, "cold, hot, eager, graph, ..."),
	ROW(backend, YS_STR, Y_REQUIRED, NULL, "cpu, cuda, nccl, mpi"),
	ROW(device, YS_INT, Y_REQUIRED | Y_NONNEG, NULL, "index into the record's devices"),
	YS_DICT_OF(struct rec_row, "params", params, nparams, struct rec_param, key, &param_schema,
		   Y_REQUIRED, .help = "the op's sizes, {KEY: number}"),
	ROW(samples, YS_INT, Y_REQUIRED | Y_NONNEG, NULL, "timed samples taken"),
	ROW_NUM(median_us, "us", "median time"),
	ROW_NUM(p10_us, "us", "10th percentile time"),
	ROW_NUM(p90_us, "us", "90th percentile time"),
	ROW_NUM(min_us, "us", "fastest sample"),
	ROW_NUM(max_us, "us", "slowest sample"),
	ROW_NUM(stdev_us, "us", "standard deviation of the samples"),
	ROW_NUM(bytes, "bytes", "moved per run"),
	ROW_NUM(flops, "flop", "done per run"),
	ROW_NUM(gbps, "GB/s", "bytes / median"),
	ROW_NUM(pct_peak, "%", "gbps / the device's copy bandwidth"),
	ROW_NUM(max_err, NULL, "largest error vs the C reference (null: not validated)"),
	ROW_NUM(sm_clock_mhz, "MHz", "median SM clock while sampling (null: unknown)"),
	YS_FIELD(struct rec_row, status, YS_ENUM, Y_REQUIRED, .names = record_status_names,
		 .help = "how the measurement ended"),
	ROW(reason, YS_STR, Y_REQUIRED, NULL, "one line; empty when ok"),
	YS_FIELD(struct rec_row, stop, YS_STR, YS_OMIT, .names = record_stop_names,
		 .help = "the rule that ended the samples (schema 3)",
		 .source = "the bench's stopping rule (harness_enough)"),
};
static const struct yschema row_schema = YS_TABLE("rows[]", row_fields, 0);
static const struct yschema row_head = YS_PART("rows[]", row_fields, ROW_HEAD);
static const struct yschema row_tail =
	YS_PART("rows[]", row_fields + ROW_HEAD, sizeof row_fields / sizeof *row_fields - ROW_HEAD);

#define PROV(m, h) YS_FIELD(struct rec_provenance, m, YS_STR, Y_REQUIRED, .help = (h))
static const struct yschema_field prov_fields[] = {
	PROV(git_rev, "project revision, +dirty when modified"),
	PROV(compiler, "the compiler that built ddt"),
	PROV(build, "build configuration: O2-native+cuda"),
	PROV(cuda_runtime, "CUDA runtime version, or empty"),
	PROV(cuda_driver, "CUDA driver version, or empty"),
	PROV(nccl, "NCCL version, or empty"),
	PROV(host, "the host's name"),
	YS_FIELD(struct rec_provenance, engine_rev, YS_STR, YS_OMIT,
		 .help = "the engine's own revision when built apart (schema 2)"),
};
static const struct yschema prov_schema = YS_TABLE("provenance", prov_fields, 0);

#define GPU(m, ty, fl, u, h)                                                                   \
	YS_FIELD(struct rec_gpu_state, m, ty, fl, .unit = (u), .help = (h), .source = "NVML")
static const struct yschema_field gpu_state_fields[] = {
	GPU(index, YS_INT, Y_REQUIRED | Y_NONNEG, NULL, "CUDA ordinal"),
	GPU(sm_clock_mhz, YS_NUM, Y_NONNEG | Y_NULLABLE, "MHz", "SM clock at the end of the run"),
	GPU(mem_clock_mhz, YS_NUM, Y_NONNEG | Y_NULLABLE, "MHz", "memory clock"),
	GPU(temp_c, YS_NUM, Y_NULLABLE, "C", "temperature"),
	GPU(throttle, YS_STR, 0, NULL, "clock-event reasons, comma-separated; empty: none"),
	GPU(other_procs, YS_INT, 0, NULL, "compute processes besides this one (-1: unknown)"),
};
/* A GPU state's numbers absent are unknown: NaN, and -1 other processes. */
static const struct rec_gpu_state gpu_state_unknown = {
	.sm_clock_mhz = NAN, .mem_clock_mhz = NAN, .temp_c = NAN, .other_procs = -1};
static const struct yschema gpu_state_schema =
	YS_TABLE_INIT("machine.gpus[]", gpu_state_fields, 0, &gpu_state_unknown);

#define MACH(m, u, h, src)                                                                     \
	YS_FIELD(struct rec_machine, m, YS_NUM, Y_NONNEG | Y_NULLABLE, .unit = (u), .help = (h),    \
		 .source = (src))
static const struct yschema_field machine_fields[] = {
	MACH(load_avg_1m, NULL, "1-minute load average when the run began", "getloadavg"),
	MACH(cpu_steal_pct, "%", "CPU time stolen by the hypervisor during the run",
	     "/proc/stat"),
	MACH(cpu_others_pct, "%", "CPU time other processes took during the run",
	     "/proc/stat"),
	MACH(cpu_mhz, "MHz", "mean current frequency of the online CPUs", "sysfs cpufreq"),
	YS_FIELD(struct rec_machine, cpus, YS_INT, Y_NONNEG, .help = "online CPUs"),
	YS_LIST_OF(struct rec_machine, "gpus", gpus, ngpus, &gpu_state_schema, 0,
		   .help = "each GPU's state while the run measured"),
};
static const struct yschema machine_schema = YS_TABLE("machine", machine_fields, 0);

/* The optional machine section (schema 2): every key optional inside it;
 * a record without one has its machine state unknown (known 0). */
static void machine_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
			 void *obj)
{
	struct rec_machine *ms = &((struct run_record *)obj)->machine;
	struct ydoc_node *n = NULL;
	if (yget_node(c, m, f->key, YDOC_MAP, f->flags, &n) || !n)
		return;
	ms->known = 1;
	yschema_read(c, n, &machine_schema, ms);
}

static void machine_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	const struct rec_machine *ms = &((const struct run_record *)obj)->machine;
	if (!ms->known)
		return;
	yout_key(y, f->key);
	yschema_write_item(y, &machine_schema, ms);
}

/* The schema a record is written with: a record with a machine section is
 * schema 2 whatever it was read as, one whose rows say what stopped them
 * schema 3. */
static void schema_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	const struct run_record *r = obj;
	int schema = r->schema ? r->schema : RECORD_SCHEMA;
	if ((r->machine.known || r->prov.engine_rev[0]) && schema < 2)
		schema = 2;
	for (size_t i = 0; i < r->nrows && schema < 3; i++)
		if (r->rows[i].stop[0])
			schema = 3;
	yout_kv_int(y, f->key, schema);
}

static void schema_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
			void *obj)
{
	struct run_record *r = obj;
	yget_int(c, m, f->key, f->flags, &r->schema);
	if (r->schema > RECORD_SCHEMA)
		ydiag_add(c->diag, c->file, m->line, m->col,
			  "schema %d is newer than this ddt reads (%d)", r->schema, RECORD_SCHEMA);
}

static void str_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	yout_kv_str(y, f->key, FIELD_STR_C(obj, f));
}

/* run_id, created, template: text read as YS_STR reads it, then checked. */
static void run_id_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
			void *obj)
{
	char *s = FIELD_STR(obj, f);
	if (!yget_strcpy(c, m, f->key, f->flags, s, f->size) && !record_run_id_valid(s))
		ydiag_add(c->diag, c->file, 0, 0, "run_id '%s' is not YYYYMMDDTHHMMSSZ-host", s);
}

static void created_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
			 void *obj)
{
	char *s = FIELD_STR(obj, f);
	if (!yget_strcpy(c, m, f->key, f->flags, s, f->size) && !created_valid(s))
		ydiag_add(c->diag, c->file, 0, 0,
			  "created '%s' is not a date and time of the calendar (YYYY-MM-DDTHH:MM:SSZ)",
			  s);
}

static void template_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
			  void *obj)
{
	char *s = FIELD_STR(obj, f);
	if (!yget_strcpy(c, m, f->key, f->flags, s, f->size) && !fsx_name_ok(s)) /* names a file */
		ydiag_add(c->diag, c->file, 0, 0, "template '%s' is not a file name", s);
}

/* A row read strictly, its device one of the ndev devices read before it
 * (readers index devices[] with it). */
static void record_read_row(struct yctx *c, struct ydoc_node *m, struct rec_row *w, size_t ndev)
{
	memset(w, 0, sizeof *w);
	yschema_read_fields(c, m, &row_head, w);
	if ((size_t)w->device >= ndev) {
		ydiag_add(c->diag, c->file, m->line, m->col, "device %d: no such device", w->device);
		w->device = 0;
	}
	yschema_read_fields(c, m, &row_tail, w);
	qsort(w->params, (size_t)w->nparams, sizeof *w->params, param_cmp); /* any order read */
	yget_check_unknown(c, m);
}

/* devices and rows: the lists, their room reserved before the read
 * (record_reserve), so reading them allocates nothing. */
static void devices_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
			 void *obj)
{
	struct run_record *r = obj;
	struct ydoc_node *n = NULL;
	if (yget_node(c, m, f->key, YDOC_SEQ, f->flags, &n) || !n)
		return;
	for (size_t i = 0; i < n->n; i++) {
		struct rec_device d;
		memset(&d, 0, sizeof d);
		if (yschema_read_item(c, n->items[i], &device_schema, &d, "device") &&
		    n->items[i]->kind != YDOC_MAP)
			continue;
		r->devices[r->ndevices++] = d;
	}
}

static void devices_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	const struct run_record *r = obj;
	yout_key(y, f->key);
	yout_seq(y);
	for (size_t i = 0; i < r->ndevices; i++)
		yschema_write_item(y, &device_schema, &r->devices[i]);
	yout_end(y);
}

static void rows_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
		      void *obj)
{
	struct run_record *r = obj;
	struct ydoc_node *n = NULL;
	if (yget_node(c, m, f->key, YDOC_SEQ, f->flags, &n) || !n)
		return;
	if (n->n > RECORD_MAX_ROWS) {
		ydiag_add(c->diag, c->file, n->line, n->col,
			  "rows: more than %d (the most a run record holds)", RECORD_MAX_ROWS);
		return;
	}
	for (size_t i = 0; i < n->n; i++)
		if (!yget_expect(c, n->items[i], YDOC_MAP, "row"))
			record_read_row(c, n->items[i], &r->rows[r->nrows++], r->ndevices);
}

static void rows_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	const struct run_record *r = obj;
	yout_key(y, f->key);
	yout_seq(y);
	for (size_t i = 0; i < r->nrows; i++)
		yschema_write_item(y, &row_schema, &r->rows[i]);
	yout_end(y);
}

#define TOP(k, m, fl, rd, wr, h)                                                               \
	YS_KEYED(struct run_record, k, m, YS_CUSTOM, fl, .read = (rd), .write = (wr), .help = (h))
static const struct yschema_field record_fields[] = {
	TOP("schema", schema, Y_REQUIRED | Y_POSITIVE, schema_read, schema_write,
	    "the record's layout (RECORD_SCHEMA)"),
	TOP("run_id", run_id, Y_REQUIRED, run_id_read, str_write, "YYYYMMDDTHHMMSSZ-host"),
	TOP("created", created, Y_REQUIRED, created_read, str_write, "ISO 8601 UTC, from the run id"),
	TOP("template", template_name, Y_REQUIRED, template_read, str_write,
	    "the template the run measured"),
	YS_KEYED(struct run_record, "provenance", prov, YS_MAP, Y_REQUIRED, .sub = &prov_schema,
		 .help = "what built the run"),
	TOP("machine", machine, 0, machine_read, machine_write,
	    "the machine's state over the run (schema 2)"),
	TOP("devices", devices, Y_REQUIRED, devices_read, devices_write, "what the rows ran on"),
	TOP("rows", rows, Y_REQUIRED, rows_read, rows_write, "one per measurement"),
};
static const struct yschema record_schema = YS_TABLE("run record", record_fields, 0);

/* ---------------------------------------------------------------- emit */

/* The record's YAML, without its trailer. */
static int emit_body(const struct run_record *r, FILE *fp)
{
	yschema_write_doc(fp, &record_schema, r);
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

/* Room for the mappings of list key of root, as record_add_* would have
 * grown it; none when it is no list or longer than max (its reader refuses
 * it). Returns 0 or DDT_ENOMEM. */
static int reserve(void **arr, struct ydoc_node *root, const char *key, size_t max, size_t elem)
{
	struct ydoc_node *seq = ydoc_get(root, key);
	size_t n = 0, cap = 1;
	if (!seq || seq->kind != YDOC_SEQ || seq->n > max)
		return 0;
	for (size_t i = 0; i < seq->n; i++)
		n += seq->items[i]->kind == YDOC_MAP;
	if (!n)
		return 0;
	while (cap < n)
		cap <<= 1;
	return (*arr = malloc(cap * elem)) != NULL ? 0 : err_nomem();
}

/* Reads the record in doc (freed here), named path in messages. */
static int read_doc(struct run_record *r, struct ydoc *doc, const char *path,
		    struct ydiag *diag, size_t before)
{
	struct ydoc_node *root = doc->root;
	struct yctx c = {path, diag, NULL};
	int rc = 0;

	if (!root || yget_expect(&c, root, YDOC_MAP, "run record")) {
		if (!root)
			ydiag_add(diag, path, 0, 0, "empty run record");
		rc = DDT_EINPUT;
	} else if ((rc = reserve((void **)&r->devices, root, "devices", (size_t)-1,
				 sizeof *r->devices)) == 0 &&
		   (rc = reserve((void **)&r->rows, root, "rows", RECORD_MAX_ROWS, sizeof *r->rows)) ==
			   0) {
		yschema_read(&c, root, &record_schema, r);
		rc = diag->n > before ? DDT_EINPUT : 0;
	}
	ydoc_free(doc);
	return rc;
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
