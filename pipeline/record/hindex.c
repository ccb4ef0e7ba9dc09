/* hindex.c - the history's SQLite index: runs/.index.sqlite read and kept up to date. */
#include "hindex.h"

#include "err.h"
#include "fsx.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* PRAGMA user_version of an index this ddt writes. Raise it whenever the
 * tables change or what history.c derives from a record changes (a series'
 * key, history_machine_of's fingerprint, a point's fields): an index of
 * another version is rebuilt. */
#define HINDEX_SCHEMA 3
#define STR_(x) #x
#define STR(x) STR_(x)

static const char schema_sql[] =
	"CREATE TABLE runs(id INTEGER PRIMARY KEY, run_id TEXT NOT NULL UNIQUE,"
	" size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, skipped TEXT, created TEXT,"
	" template TEXT, git_rev TEXT, engine_rev TEXT, machine_known INTEGER,"
	" load_avg_1m REAL, cpu_steal_pct REAL, cpu_others_pct REAL, cpu_mhz REAL,"
	" cpus INTEGER, ngpus INTEGER, env TEXT);"
	"CREATE TABLE run_gpus(run INTEGER NOT NULL, slot INTEGER NOT NULL, gpu INTEGER,"
	" sm_clock_mhz REAL, mem_clock_mhz REAL, temp_c REAL, throttle TEXT,"
	" other_procs INTEGER, PRIMARY KEY(run, slot)) WITHOUT ROWID;"
	"CREATE TABLE series(id INTEGER PRIMARY KEY, op TEXT NOT NULL, variant TEXT NOT NULL,"
	" params TEXT NOT NULL, device TEXT NOT NULL, backend TEXT NOT NULL,"
	" build TEXT NOT NULL, machine TEXT NOT NULL,"
	" UNIQUE(op, variant, params, device, backend, build, machine));"
	"CREATE TABLE points(run INTEGER NOT NULL, row INTEGER NOT NULL,"
	" series INTEGER NOT NULL, status TEXT NOT NULL, median_us REAL, spread_us REAL,"
	" samples INTEGER, reason TEXT NOT NULL, PRIMARY KEY(run, row)) WITHOUT ROWID;"
	"CREATE TABLE run_points(run INTEGER PRIMARY KEY, data BLOB NOT NULL);"
	"CREATE VIEW history AS SELECT r.run_id, r.created, s.op, s.variant, s.params,"
	" s.device, s.backend, s.build, s.machine, p.status, p.median_us, p.spread_us,"
	" p.samples, p.reason FROM points p JOIN runs r ON r.id = p.run"
	" JOIN series s ON s.id = p.series WHERE r.skipped IS NULL;";

/* A run's points as a load reads them (run_points.data): its rows of the
 * points table packed in row order, one step a night instead of one a row
 * (SQLite spends about 0.4 us a column of a row: 15 ms of a 22 ms load of
 * 365 nights x 100 rows read from the points table). Little-endian: the
 * number of points (u32), then each point in PK_FIXED bytes: the series id
 * (u32), status (u8), samples (i32), median_us and spread_us (IEEE 754
 * binary64, NaN kept), the reason's length (u8); then the reason's bytes.
 * The points table holds the same rows, for queries. */
enum { PK_COUNT = 4 };
enum { PK_SERIES = 0, PK_STATUS = 4, PK_SAMPLES = 5, PK_MEDIAN = 9, PK_SPREAD = 17,
       PK_RLEN = 25, PK_FIXED = 26 };

/* The statements a load reads with. */
enum { R_RUN, R_GPUS, R_PTS, R_KEY, R_COUNT };
static const char *const read_sql[R_COUNT] = {
	"SELECT created, template, git_rev, engine_rev, machine_known, load_avg_1m,"
	" cpu_steal_pct, cpu_others_pct, cpu_mhz, cpus, ngpus, env FROM runs"
	" WHERE id = ?1 AND size = ?2 AND mtime_ns = ?3 AND skipped IS NULL",
	"SELECT gpu, sm_clock_mhz, mem_clock_mhz, temp_c, throttle, other_procs FROM run_gpus"
	" WHERE run = ?1 ORDER BY slot",
	"SELECT data FROM run_points WHERE run = ?1",
	"SELECT op, variant, params, device, backend, build, machine FROM series WHERE id = ?1",
};

/* An indexed run, as the index listed it when opened. */
struct hix_entry {
	char *name;
	sqlite3_int64 id, size, mtime_ns;
	char *skipped; /* the warning of a record indexed as skipped; NULL */
	int seen;      /* a run folder of this name was there */
};

/* A run parsed by this load, to be stored. */
struct hix_note {
	char *name, *why;   /* why: the skip warning, or NULL */
	sqlite3_int64 size, mtime_ns;
	size_t run;         /* its night in h */
	size_t *order, n;   /* its series in the order of its rows */
};

struct hindex {
	sqlite3 *db;
	char *path, *runs_dir;
	int readonly;              /* opened read-only: nothing is stored */
	int in_read;               /* a read transaction is open */
	char damage[128];          /* what is damaged, when SQLite did not say */
	struct hix_entry *e;       /* [ne] sorted by name */
	size_t ne;
	long *hist_of;             /* [nhist_of] by series id: its index in h, -1 */
	size_t nhist_of;
	sqlite3_int64 *id_of;      /* [nid_of] by series index in h: its id, 0 */
	size_t nid_of;
	struct hix_note *notes;
	size_t nnotes, cap_notes;
	sqlite3_stmt *q[R_COUNT];  /* read_sql, prepared at open */
};

/* Is this an SQLite result that says the file is not a sound index? */
static int sql_damaged(int rc)
{
	rc &= 0xff;
	return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB || rc == SQLITE_FORMAT ||
	       rc == SQLITE_SCHEMA || rc == SQLITE_ERROR || rc == SQLITE_MISMATCH;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct hix_entry *)a)->name, ((const struct hix_entry *)b)->name);
}

static char *dup_col(sqlite3_stmt *st, int col)
{
	const unsigned char *s = sqlite3_column_text(st, col);
	return s ? strdup((const char *)s) : NULL;
}

/* Lists the indexed runs into ix->e. Returns 0, DDT_ENOMEM or the SQLite
 * error. */
static int list_runs(struct hindex *ix)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc = sqlite3_prepare_v2(ix->db, "SELECT run_id, id, size, mtime_ns, skipped FROM runs",
				    -1, &st, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (ix->ne == cap) {
			size_t ncap = cap ? 2 * cap : 512;
			void *p = realloc(ix->e, ncap * sizeof *ix->e);
			if (!p)
				goto nomem;
			ix->e = p;
			cap = ncap;
		}
		struct hix_entry *e = &ix->e[ix->ne];
		memset(e, 0, sizeof *e);
		e->id = sqlite3_column_int64(st, 1);
		e->size = sqlite3_column_int64(st, 2);
		e->mtime_ns = sqlite3_column_int64(st, 3);
		if (!(e->name = dup_col(st, 0)))
			goto nomem;
		ix->ne++;
		if (sqlite3_column_type(st, 4) != SQLITE_NULL && !(e->skipped = dup_col(st, 4)))
			goto nomem;
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return rc;
	if (ix->ne)
		qsort(ix->e, ix->ne, sizeof *ix->e, cmp_entry);
	return 0;
nomem:
	sqlite3_finalize(st);
	return err_nomem();
}

/* Prepares the statements a load reads with. Returns an SQLite code. */
static int prepare_reads(struct hindex *ix)
{
	int rc = SQLITE_OK;
	for (int k = 0; k < R_COUNT && rc == SQLITE_OK; k++)
		rc = sqlite3_prepare_v2(ix->db, read_sql[k], -1, &ix->q[k], NULL);
	return rc;
}

/* Reads the schema version; creates the tables in an empty file. Returns an
 * SQLite code (SQLITE_NOTADB for a version this ddt does not write). */
static int ensure_schema(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	int v = -1, rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (v == HINDEX_SCHEMA)
		return SQLITE_OK;
	if (v != 0)
		return v < 0 ? rc : SQLITE_NOTADB;
	rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return rc;
	/* another process may have made it meanwhile */
	rc = sqlite3_exec(db, "SELECT 1 FROM runs LIMIT 0", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		rc = sqlite3_exec(db, schema_sql, NULL, NULL, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_exec(db, "PRAGMA user_version = " STR(HINDEX_SCHEMA), NULL, NULL,
					  NULL);
	}
	if (rc == SQLITE_OK)
		return sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static sqlite3_int64 mtime_ns(const struct stat *st)
{
	return (sqlite3_int64)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* 1 with a warning when something other than a regular file with one name
 * (or nothing) is at path: the index is not used. */
static int path_refused(const char *path, struct ydiag *warnings)
{
	struct stat st;
	if (fsx_lstat(path, &st) != 0)
		return 0;
	if (S_ISLNK(st.st_mode))
		ydiag_add(warnings, path, 0, 0,
			  "a symbolic link where ddt keeps its history index: not followed, the "
			  "history is read from the run records (remove the link)");
	else if (!S_ISREG(st.st_mode) || st.st_nlink != 1)
		ydiag_add(warnings, path, 0, 0,
			  "not a regular file with one name where ddt keeps its history index: left "
			  "alone, the history is read from the run records (remove it)");
	else
		return 0;
	return 1;
}

/* Makes a connection defensive: no writable_schema or other ways to corrupt
 * the file through SQL (SQLITE_DBCONFIG_DEFENSIVE), no function with side
 * effects run from the schema (trusted_schema=OFF), and, for a reader, no
 * write at all (query_only). Returns an SQLite code. */
int hindex_harden(sqlite3 *db, int reader)
{
	int rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "PRAGMA trusted_schema = OFF", NULL, NULL, NULL);
	if (rc == SQLITE_OK && reader)
		rc = sqlite3_exec(db, "PRAGMA query_only = ON", NULL, NULL, NULL);
	return rc;
}

/* Replaces the index at path by an empty file of this user's when the trust
 * rule does not trust it (fsx_trusted: another user's, or writable by
 * others), and removes such a journal (another user's hot journal would be
 * played back into the index): the index is then rebuilt from the run
 * records, privately. Returns 0 (nothing untrusted is left) or 1 with a
 * warning (it could not be replaced: the index is not used). */
static int replace_untrusted(const char *path, struct ydiag *warnings)
{
	char journal[4200], why[96], *tmp = NULL;
	int fd, bad = 0;

	snprintf(journal, sizeof journal, "%s-journal", path);
	if (fsx_kind(journal) == FSX_FILE && !fsx_trusted_path(journal, why, sizeof why)) {
		ydiag_add(warnings, journal, 0, 0, "not trusted (%s): removed, never played back", why);
		bad = fsx_rm_rf(journal) != 0;
	}
	if (!bad && fsx_kind(path) == FSX_FILE && !fsx_trusted_path(path, why, sizeof why)) {
		ydiag_add(warnings, path, 0, 0,
			  "not trusted (%s): not read, replaced by an index rebuilt from the run "
			  "records",
			  why);
		bad = asprintf(&tmp, "%s.tmp-%ld", path, (long)getpid()) < 0 ||
		      (fd = fsx_open_fd(tmp, O_RDWR | O_CREAT | O_EXCL, 0644)) < 0;
		if (!bad)
			close(fd), bad = fsx_rename(tmp, path, FSX_REPLACE) != 0;
		if (bad && tmp)
			fsx_rm_rf(tmp);
		free(tmp);
	}
	if (bad)
		ydiag_add(warnings, path, 0, 0,
			  "cannot replace an index not trusted (%s): the history is read from the "
			  "run records",
			  err_msg());
	return bad;
}

/* Opens ix->path (read-write, created when absent; read-only when that is
 * all this user may) and checks its schema. Returns an SQLite code. */
static int open_db(struct hindex *ix)
{
	/* one thread uses a connection: no mutexes (SQLITE_OPEN_NOMUTEX) */
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW |
		    SQLITE_OPEN_NOMUTEX;
	int rc = sqlite3_open_v2(ix->path, &ix->db, flags, NULL);
	if (rc == SQLITE_CANTOPEN && fsx_exists(ix->path)) {
		sqlite3_close(ix->db);
		ix->readonly = 1;
		rc = sqlite3_open_v2(ix->path, &ix->db,
				     SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
				     NULL);
	}
	if (rc != SQLITE_OK)
		return rc;
	ix->readonly |= sqlite3_db_readonly(ix->db, "main") == 1;
	if ((rc = hindex_harden(ix->db, ix->readonly)) != SQLITE_OK)
		return rc;
	sqlite3_busy_timeout(ix->db, HINDEX_BUSY_MS);
	sqlite3_extended_result_codes(ix->db, 0);
	/* pages read through a mapping, not copied by read(2) */
	sqlite3_exec(ix->db, "PRAGMA mmap_size = 268435456", NULL, NULL, NULL);
	if ((rc = ensure_schema(ix->db)) == SQLITE_OK && (rc = list_runs(ix)) == SQLITE_OK)
		rc = prepare_reads(ix);
	return rc;
}

/* Ends the read transaction. The read statements are reset first: one left
 * on a row keeps the connection's read lock after COMMIT, and a connection
 * that holds one is not given the busy handler when it asks to write (SQLite
 * returns "database is locked" at once rather than risk a deadlock). */
static void end_read(struct hindex *ix)
{
	for (int k = 0; k < R_COUNT; k++)
		sqlite3_reset(ix->q[k]);
	if (ix->in_read)
		sqlite3_exec(ix->db, "COMMIT", NULL, NULL, NULL);
	ix->in_read = 0;
}

static void close_db(struct hindex *ix)
{
	for (int k = 0; k < R_COUNT; k++) {
		sqlite3_finalize(ix->q[k]);
		ix->q[k] = NULL;
	}
	sqlite3_close(ix->db);
	ix->db = NULL;
	ix->in_read = 0;
	for (size_t i = 0; i < ix->ne; i++) {
		free(ix->e[i].name);
		free(ix->e[i].skipped);
	}
	free(ix->e);
	ix->e = NULL;
	ix->ne = 0;
}

static void free_notes(struct hindex *ix)
{
	for (size_t i = 0; i < ix->nnotes; i++) {
		free(ix->notes[i].name);
		free(ix->notes[i].why);
		free(ix->notes[i].order);
	}
	ix->nnotes = 0;
}

void hindex_close(struct hindex *ix)
{
	if (!ix)
		return;
	end_read(ix);
	close_db(ix);
	free_notes(ix);
	free(ix->notes);
	free(ix->hist_of);
	free(ix->id_of);
	free(ix->path);
	free(ix->runs_dir);
	free(ix);
}

/* Removes the index file and its journal (links removed, never followed). */
static void remove_files(const char *path)
{
	char journal[4200];
	snprintf(journal, sizeof journal, "%s-journal", path);
	fsx_rm_rf(path);
	fsx_rm_rf(journal);
}

/* Opens ix's file; a damaged one is removed and made anew once, with a
 * warning. Returns 0 (ix usable), 1 (not usable) or DDT_ENOMEM. */
static int open_or_rebuild(struct hindex *ix, struct ydiag *warnings)
{
	int rc = open_db(ix);
	if (rc == DDT_ENOMEM)
		return rc;
	if (rc != SQLITE_OK && sql_damaged(rc) && !ix->readonly) {
		ydiag_add(warnings, ix->path, 0, 0,
			  "damaged or of another ddt version (%s): rebuilt from the run records",
			  ix->db ? sqlite3_errmsg(ix->db) : sqlite3_errstr(rc));
		close_db(ix);
		remove_files(ix->path);
		if ((rc = open_db(ix)) == DDT_ENOMEM)
			return rc;
	}
	if (rc == SQLITE_OK)
		return 0;
	if (rc == SQLITE_BUSY || rc == SQLITE_IOERR || sql_damaged(rc))
		ydiag_add(warnings, ix->path, 0, 0, "history index not used (%s)",
			  ix->db ? sqlite3_errmsg(ix->db) : sqlite3_errstr(rc));
	close_db(ix);
	return 1;
}

int hindex_open(struct hindex **out, const char *runs_dir, struct ydiag *warnings)
{
	struct hindex *ix = calloc(1, sizeof *ix);
	char journal[4200];
	int rc = 0;

	*out = NULL;
	if (!ix || !(ix->runs_dir = strdup(runs_dir)) ||
	    !(ix->path = fsx_join(runs_dir, HINDEX_NAME))) {
		hindex_close(ix);
		return err_nomem();
	}
	snprintf(journal, sizeof journal, "%s-journal", ix->path);
	if (path_refused(ix->path, warnings) || path_refused(journal, warnings) ||
	    replace_untrusted(ix->path, warnings) || (rc = open_or_rebuild(ix, warnings)) != 0) {
		hindex_close(ix);
		return rc < 0 ? rc : 0;
	}
	*out = ix;
	return 0;
}

int hindex_rebuild(struct hindex **ix, struct ydiag *warnings)
{
	int rc = SQLITE_READONLY;
	ydiag_add(warnings, (*ix)->path, 0, 0, "damaged (%s): %s",
		  (*ix)->damage[0] ? (*ix)->damage : sqlite3_errmsg((*ix)->db),
		  (*ix)->readonly ? "not used" : "rebuilt from the run records");
	if ((*ix)->in_read)
		sqlite3_exec((*ix)->db, "ROLLBACK", NULL, NULL, NULL);
	close_db(*ix);
	free_notes(*ix);
	if ((*ix)->readonly || (remove_files((*ix)->path), (rc = open_db(*ix)) != SQLITE_OK)) {
		hindex_close(*ix);
		*ix = NULL;
		return rc == DDT_ENOMEM ? rc : 0;
	}
	(*ix)->damage[0] = '\0';
	memset((*ix)->hist_of, 0xff, (*ix)->nhist_of * sizeof *(*ix)->hist_of);
	memset((*ix)->id_of, 0, (*ix)->nid_of * sizeof *(*ix)->id_of);
	return 0;
}

/* Grows *arr of *n elements of size elem to hold index i, new ones filled
 * with byte fill. Returns 0 or DDT_ENOMEM. */
static int grow(void **arr, size_t *n, size_t i, size_t elem, int fill)
{
	if (i < *n)
		return 0;
	size_t nn = *n ? *n : 64;
	while (nn <= i)
		nn *= 2;
	void *p = realloc(*arr, nn * elem);
	if (!p)
		return err_nomem();
	memset((char *)p + *n * elem, fill, (nn - *n) * elem);
	*arr = p;
	*n = nn;
	return 0;
}

static void copy_col(char *buf, size_t len, sqlite3_stmt *st, int col)
{
	const unsigned char *s = sqlite3_column_text(st, col);
	size_t n = s ? (size_t)sqlite3_column_bytes(st, col) : 0;
	n = n < len ? n : len - 1;
	if (n)
		memcpy(buf, s, n);
	buf[n] = '\0';
}

static double col_num(sqlite3_stmt *st, int col)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

/* The series index in h of series id sid, made in h when new. Returns it,
 * -1 (DDT_ENOMEM) or -2 (the index has no such series). */
static long series_of(struct hindex *ix, struct history *h, sqlite3_int64 sid)
{
	struct hist_key k;
	long s;

	if (sid <= 0 || grow((void **)&ix->hist_of, &ix->nhist_of, (size_t)sid, sizeof(long), 0xff))
		return sid <= 0 ? -2 : -1;
	if (ix->hist_of[sid] >= 0)
		return ix->hist_of[sid];
	sqlite3_reset(ix->q[R_KEY]);
	sqlite3_bind_int64(ix->q[R_KEY], 1, sid);
	if (sqlite3_step(ix->q[R_KEY]) != SQLITE_ROW)
		return -2;
	memset(&k, 0, sizeof k);
	copy_col(k.op, sizeof k.op, ix->q[R_KEY], 0);
	copy_col(k.variant, sizeof k.variant, ix->q[R_KEY], 1);
	copy_col(k.params, sizeof k.params, ix->q[R_KEY], 2);
	copy_col(k.device, sizeof k.device, ix->q[R_KEY], 3);
	copy_col(k.backend, sizeof k.backend, ix->q[R_KEY], 4);
	copy_col(k.build, sizeof k.build, ix->q[R_KEY], 5);
	copy_col(k.machine, sizeof k.machine, ix->q[R_KEY], 6);
	if ((s = history_series_of(h, &k)) < 0 ||
	    grow((void **)&ix->id_of, &ix->nid_of, (size_t)s, sizeof *ix->id_of, 0))
		return -1;
	ix->hist_of[sid] = s;
	ix->id_of[s] = sid;
	return s;
}

/* The night of entry e into r (and its GPUs). Returns SQLITE_ROW, SQLITE_DONE
 * (not as listed: changed meanwhile) or an error. */
static int read_run(struct hindex *ix, const struct hix_entry *e, struct hist_run *r)
{
	sqlite3_stmt *q = ix->q[R_RUN];
	int rc;

	sqlite3_reset(q);
	sqlite3_bind_int64(q, 1, e->id);
	sqlite3_bind_int64(q, 2, e->size);
	sqlite3_bind_int64(q, 3, e->mtime_ns);
	if ((rc = sqlite3_step(q)) != SQLITE_ROW)
		return rc;
	memset(r, 0, sizeof *r);
	snprintf(r->run_id, sizeof r->run_id, "%s", e->name);
	copy_col(r->created, sizeof r->created, q, 0);
	copy_col(r->template_name, sizeof r->template_name, q, 1);
	copy_col(r->git_rev, sizeof r->git_rev, q, 2);
	copy_col(r->engine_rev, sizeof r->engine_rev, q, 3);
	r->machine.known = sqlite3_column_int(q, 4);
	r->machine.load_avg_1m = col_num(q, 5);
	r->machine.cpu_steal_pct = col_num(q, 6);
	r->machine.cpu_others_pct = col_num(q, 7);
	r->machine.cpu_mhz = col_num(q, 8);
	r->machine.cpus = sqlite3_column_int(q, 9);
	r->machine.ngpus = sqlite3_column_int(q, 10);
	copy_col(r->env, sizeof r->env, q, 11);
	if (r->machine.ngpus < 0 || r->machine.ngpus > RECORD_MAX_GPU_STATES)
		return SQLITE_CORRUPT;
	q = ix->q[R_GPUS];
	sqlite3_reset(q);
	sqlite3_bind_int64(q, 1, e->id);
	for (int g = 0; g < r->machine.ngpus; g++) {
		struct rec_gpu_state *s = &r->machine.gpus[g];
		if ((rc = sqlite3_step(q)) != SQLITE_ROW)
			return rc == SQLITE_DONE ? SQLITE_CORRUPT : rc;
		s->index = sqlite3_column_int(q, 0);
		s->sm_clock_mhz = col_num(q, 1);
		s->mem_clock_mhz = col_num(q, 2);
		s->temp_c = col_num(q, 3);
		copy_col(s->throttle, sizeof s->throttle, q, 4);
		s->other_procs = sqlite3_column_int(q, 5);
	}
	return SQLITE_ROW;
}

static uint64_t get_le(const unsigned char *b, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

static void put_le(unsigned char *b, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		b[i] = (unsigned char)(v >> (8 * i));
}

static double get_f64(const unsigned char *b)
{
	uint64_t u = get_le(b, 8);
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}

static void put_f64(unsigned char *b, double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof u);
	put_le(b, u, 8);
}

/* Adds the packed point at b (n bytes left there) to the newest night of h.
 * Returns 0, HINDEX_BROKEN or DDT_ENOMEM. */
static int unpack_point(struct hindex *ix, struct history *h, const unsigned char *b, size_t n)
{
	char reason[256];
	struct hist_point p;
	long s;

	if (n < PK_FIXED || n - PK_FIXED < b[PK_RLEN] || b[PK_STATUS] > REC_UNSUPPORTED)
		return HINDEX_BROKEN;
	if ((s = series_of(ix, h, (sqlite3_int64)get_le(b + PK_SERIES, 4))) < 0)
		return s == -1 ? DDT_ENOMEM : HINDEX_BROKEN;
	memset(&p, 0, sizeof p);
	p.run = h->nruns - 1;
	p.status = (enum rec_status)b[PK_STATUS];
	p.samples = (int32_t)get_le(b + PK_SAMPLES, 4);
	p.median_us = get_f64(b + PK_MEDIAN);
	p.spread_us = get_f64(b + PK_SPREAD);
	memcpy(reason, b + PK_FIXED, b[PK_RLEN]);
	reason[b[PK_RLEN]] = '\0';
	p.reason = reason; /* copied by the push */
	return history_push_point(h, (size_t)s, &p) ? DDT_ENOMEM : 0;
}

/* Adds the points of run e (the newest night of h). Returns 0, HINDEX_BROKEN
 * (ix->damage says why when SQLite does not) or DDT_ENOMEM. */
static int read_points(struct hindex *ix, struct history *h, const struct hix_entry *e)
{
	sqlite3_stmt *q = ix->q[R_PTS];
	const unsigned char *b;
	size_t len, at = PK_COUNT, n = 0;
	int rc;

	sqlite3_reset(q);
	sqlite3_bind_int64(q, 1, e->id);
	if ((rc = sqlite3_step(q)) != SQLITE_ROW || sqlite3_column_type(q, 0) != SQLITE_BLOB) {
		if (rc == SQLITE_ROW || rc == SQLITE_DONE)
			snprintf(ix->damage, sizeof ix->damage, "no points of %.80s", e->name);
		return HINDEX_BROKEN;
	}
	b = sqlite3_column_blob(q, 0);
	len = (size_t)sqlite3_column_bytes(q, 0);
	rc = len < PK_COUNT ? HINDEX_BROKEN : 0;
	for (; !rc && at < len; n++, at += PK_FIXED + b[at + PK_RLEN])
		rc = unpack_point(ix, h, b + at, len - at);
	if (!rc && n != get_le(b, PK_COUNT))
		rc = HINDEX_BROKEN;
	if (rc == HINDEX_BROKEN)
		snprintf(ix->damage, sizeof ix->damage, "the points of %.80s do not read back",
			 e->name);
	return rc;
}

/* Ends the read transaction: other processes may write while this one
 * parses a record. */
static int miss(struct hindex *ix)
{
	end_read(ix);
	return HINDEX_MISS;
}

int hindex_take(struct hindex *ix, struct history *h, const char *name, const struct stat *st,
		const char **why, struct ydiag *warnings)
{
	struct hix_entry key = {.name = (char *)name}, *e;
	struct hist_run r;
	int rc;

	e = ix->ne ? bsearch(&key, ix->e, ix->ne, sizeof *ix->e, cmp_entry) : NULL;
	if (!e)
		return miss(ix);
	e->seen = 1;
	if (e->size != (sqlite3_int64)st->st_size || e->mtime_ns != mtime_ns(st)) {
		ydiag_add(warnings, ix->runs_dir, 0, 0,
			  "%s/run.yaml changed since it was indexed (size or modification time): "
			  "read again",
			  name);
		return miss(ix);
	}
	if (e->skipped) {
		*why = e->skipped;
		return HINDEX_SKIPPED;
	}
	if (!ix->in_read) {
		if (sqlite3_exec(ix->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
			return HINDEX_BROKEN;
		ix->in_read = 1;
	}
	if ((rc = read_run(ix, e, &r)) == SQLITE_DONE)
		return miss(ix); /* replaced since it was listed */
	if (rc != SQLITE_ROW)
		return HINDEX_BROKEN;
	if ((rc = history_add_run(h, &r)) != 0)
		return rc == DDT_ENOMEM ? rc : HINDEX_BROKEN;
	if ((rc = read_points(ix, h, e)) != 0)
		return rc;
	return HINDEX_ADDED;
}

int hindex_note(struct hindex *ix, const char *name, const struct stat *st, size_t run,
		const size_t *series, size_t nseries, const char *why)
{
	struct hix_note *n;

	if (ix->readonly)
		return 0;
	if (ix->nnotes == ix->cap_notes &&
	    grow((void **)&ix->notes, &ix->cap_notes, ix->nnotes, sizeof *ix->notes, 0))
		return DDT_ENOMEM;
	n = &ix->notes[ix->nnotes];
	memset(n, 0, sizeof *n);
	n->size = (sqlite3_int64)st->st_size;
	n->mtime_ns = mtime_ns(st);
	n->run = run;
	n->n = why ? 0 : nseries;
	if (!(n->name = strdup(name)) || (why && !(n->why = strdup(why))) ||
	    (n->n && !(n->order = malloc(n->n * sizeof *n->order)))) {
		free(n->name);
		free(n->why);
		return err_nomem();
	}
	if (n->n)
		memcpy(n->order, series, n->n * sizeof *n->order);
	ix->nnotes++;
	return 0;
}

/* The statements of a flush, prepared once. */
enum {
	W_DEL_PTS, W_DEL_PACKED, W_DEL_GPUS, W_DEL_RUN, W_RUN, W_GPU, W_KEY, W_NEW_KEY, W_PT,
	W_PACKED, W_COUNT
};
static const char *const write_sql[W_COUNT] = {
	"DELETE FROM points WHERE run IN (SELECT id FROM runs WHERE run_id = ?1)",
	"DELETE FROM run_points WHERE run IN (SELECT id FROM runs WHERE run_id = ?1)",
	"DELETE FROM run_gpus WHERE run IN (SELECT id FROM runs WHERE run_id = ?1)",
	"DELETE FROM runs WHERE run_id = ?1",
	"INSERT INTO runs(run_id, size, mtime_ns, skipped, created, template, git_rev,"
	" engine_rev, machine_known, load_avg_1m, cpu_steal_pct, cpu_others_pct, cpu_mhz, cpus,"
	" ngpus, env) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,"
	" ?16)",
	"INSERT INTO run_gpus VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	"SELECT id FROM series WHERE op = ?1 AND variant = ?2 AND params = ?3 AND device = ?4"
	" AND backend = ?5 AND build = ?6 AND machine = ?7",
	"INSERT INTO series(op, variant, params, device, backend, build, machine)"
	" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	"INSERT INTO points VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	"INSERT INTO run_points VALUES(?1, ?2)",
};

/* Runs a bound statement to its end and resets it. Returns an SQLite code. */
static int run_stmt(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
}

/* NaN is stored as NULL (SQLite has no NaN) and read back as NaN. */
static void bind_num(sqlite3_stmt *st, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_double(st, i, v);
}

/* Removes run `name` from the index. Returns an SQLite code. */
static int delete_run(sqlite3_stmt **w, const char *name)
{
	int rc = SQLITE_OK;
	for (int k = W_DEL_PTS; k <= W_DEL_RUN && rc == SQLITE_OK; k++) {
		bind_text(w[k], 1, name);
		rc = run_stmt(w[k]);
	}
	return rc;
}

/* The id of series s of h in the index, added when absent; 0 on error. */
static sqlite3_int64 series_id(struct hindex *ix, sqlite3_stmt **w, const struct history *h,
			       size_t s)
{
	const struct hist_key *k = &h->series[s].key;
	const char *f[] = {k->op, k->variant, k->params, k->device, k->backend, k->build,
			   k->machine};
	sqlite3_int64 id = 0;

	if (grow((void **)&ix->id_of, &ix->nid_of, s, sizeof *ix->id_of, 0))
		return 0;
	if (ix->id_of[s])
		return ix->id_of[s];
	for (int i = 0; i < 7; i++) {
		bind_text(w[W_KEY], i + 1, f[i]);
		bind_text(w[W_NEW_KEY], i + 1, f[i]);
	}
	if (sqlite3_step(w[W_KEY]) == SQLITE_ROW)
		id = sqlite3_column_int64(w[W_KEY], 0);
	sqlite3_reset(w[W_KEY]);
	if (!id && run_stmt(w[W_NEW_KEY]) == SQLITE_OK)
		id = sqlite3_last_insert_rowid(ix->db);
	return ix->id_of[s] = id;
}

/* Binds a note's run row (w[W_RUN]). */
static void bind_run(sqlite3_stmt *st, const struct hix_note *n, const struct hist_run *r)
{
	bind_text(st, 1, n->name);
	sqlite3_bind_int64(st, 2, n->size);
	sqlite3_bind_int64(st, 3, n->mtime_ns);
	for (int i = 4; i <= 16; i++)
		sqlite3_bind_null(st, i);
	if (n->why) {
		bind_text(st, 4, n->why);
		return;
	}
	bind_text(st, 5, r->created);
	bind_text(st, 6, r->template_name);
	bind_text(st, 7, r->git_rev);
	bind_text(st, 8, r->engine_rev);
	sqlite3_bind_int(st, 9, r->machine.known);
	bind_num(st, 10, r->machine.load_avg_1m);
	bind_num(st, 11, r->machine.cpu_steal_pct);
	bind_num(st, 12, r->machine.cpu_others_pct);
	bind_num(st, 13, r->machine.cpu_mhz);
	sqlite3_bind_int(st, 14, r->machine.cpus);
	sqlite3_bind_int(st, 15, r->machine.ngpus);
	bind_text(st, 16, r->env);
}

/* Stores the GPU states of the run just inserted. Returns an SQLite code. */
static int store_gpus(sqlite3_stmt *st, sqlite3_int64 id, const struct rec_machine *m)
{
	int rc = SQLITE_OK;
	for (int g = 0; g < m->ngpus && rc == SQLITE_OK; g++) {
		const struct rec_gpu_state *s = &m->gpus[g];
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int(st, 2, g);
		sqlite3_bind_int(st, 3, s->index);
		bind_num(st, 4, s->sm_clock_mhz);
		bind_num(st, 5, s->mem_clock_mhz);
		bind_num(st, 6, s->temp_c);
		bind_text(st, 7, s->throttle);
		sqlite3_bind_int(st, 8, s->other_procs);
		rc = run_stmt(st);
	}
	return rc;
}

/* Packs point p of series id sid at b (PK_FIXED bytes and its reason's);
 * returns the bytes written. */
static size_t pack_point(unsigned char *b, sqlite3_int64 sid, const struct hist_point *p)
{
	size_t rlen = strnlen(p->reason, HIST_REASON_LEN - 1);
	put_le(b + PK_SERIES, (uint64_t)sid, 4);
	b[PK_STATUS] = (unsigned char)p->status;
	put_le(b + PK_SAMPLES, (uint32_t)p->samples, 4);
	put_f64(b + PK_MEDIAN, p->median_us);
	put_f64(b + PK_SPREAD, p->spread_us);
	b[PK_RLEN] = (unsigned char)rlen;
	memcpy(b + PK_FIXED, p->reason, rlen);
	return PK_FIXED + rlen;
}

/* The bytes of noted run n's points packed. */
static size_t packed_size(const struct history *h, const struct hix_note *n)
{
	size_t len = PK_COUNT;
	for (size_t i = 0; i < n->n; i++) {
		const struct hist_point *p = history_point_at(&h->series[n->order[i]], n->run);
		len += PK_FIXED + (p ? strnlen(p->reason, HIST_REASON_LEN - 1) : 0);
	}
	return len;
}

/* Stores the points of noted run n (index id id), a row each and packed.
 * Returns an SQLite code (SQLITE_NOMEM for an allocation failure). */
static int store_points(struct hindex *ix, sqlite3_stmt **w, const struct history *h,
			const struct hix_note *n, sqlite3_int64 id)
{
	unsigned char *packed = malloc(packed_size(h, n));
	size_t len = PK_COUNT;
	int rc = packed ? SQLITE_OK : SQLITE_NOMEM;

	for (size_t i = 0; i < n->n && rc == SQLITE_OK; i++) {
		const struct hist_point *p = history_point_at(&h->series[n->order[i]], n->run);
		sqlite3_int64 sid = series_id(ix, w, h, n->order[i]);
		if (!sid || !p || sid > UINT32_MAX) {
			rc = SQLITE_ERROR;
			break;
		}
		sqlite3_stmt *st = w[W_PT];
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
		sqlite3_bind_int64(st, 3, sid);
		bind_text(st, 4, rec_status_name(p->status));
		bind_num(st, 5, p->median_us);
		bind_num(st, 6, p->spread_us);
		sqlite3_bind_int(st, 7, p->samples);
		bind_text(st, 8, p->reason);
		rc = run_stmt(st);
		len += pack_point(packed + len, sid, p);
	}
	if (rc == SQLITE_OK) {
		put_le(packed, n->n, PK_COUNT);
		sqlite3_bind_int64(w[W_PACKED], 1, id);
		sqlite3_bind_blob(w[W_PACKED], 2, packed, (int)len, SQLITE_STATIC);
		rc = run_stmt(w[W_PACKED]);
	}
	free(packed);
	return rc;
}

/* Stores one noted run, replacing what the index held under its name.
 * Returns an SQLite code (SQLITE_NOMEM for an allocation failure). */
static int store_note(struct hindex *ix, sqlite3_stmt **w, const struct history *h,
		      const struct hix_note *n)
{
	/* a skipped record added no night: its run is no index into h->runs */
	const struct hist_run *r = n->why ? NULL : &h->runs[n->run];
	sqlite3_int64 id;
	int rc = delete_run(w, n->name);

	if (rc != SQLITE_OK)
		return rc;
	bind_run(w[W_RUN], n, r);
	if ((rc = run_stmt(w[W_RUN])) != SQLITE_OK || n->why)
		return rc;
	id = sqlite3_last_insert_rowid(ix->db);
	if ((rc = store_gpus(w[W_GPU], id, &r->machine)) != SQLITE_OK)
		return rc;
	return store_points(ix, w, h, n, id);
}

/* The writes of a flush, inside its transaction. Returns an SQLite code. */
static int flush_writes(struct hindex *ix, const struct history *h)
{
	sqlite3_stmt *w[W_COUNT] = {0};
	int rc = SQLITE_OK, pruned = 0;

	for (int k = 0; k < W_COUNT && rc == SQLITE_OK; k++)
		rc = sqlite3_prepare_v2(ix->db, write_sql[k], -1, &w[k], NULL);
	for (size_t i = 0; i < ix->ne && rc == SQLITE_OK; i++)
		if (!ix->e[i].seen) {
			rc = delete_run(w, ix->e[i].name);
			pruned = 1;
		}
	for (size_t i = 0; i < ix->nnotes && rc == SQLITE_OK; i++)
		rc = store_note(ix, w, h, &ix->notes[i]);
	if (rc == SQLITE_OK && pruned)
		rc = sqlite3_exec(ix->db,
				  "DELETE FROM series WHERE id NOT IN (SELECT series FROM points)",
				  NULL, NULL, NULL);
	for (int k = 0; k < W_COUNT; k++)
		sqlite3_finalize(w[k]);
	return rc;
}

int hindex_flush(struct hindex *ix, const struct history *h, struct ydiag *warnings)
{
	int rc, stale = 0;

	end_read(ix);
	for (size_t i = 0; i < ix->ne; i++)
		stale |= !ix->e[i].seen;
	if (ix->readonly || (!stale && !ix->nnotes))
		return 0;
	if ((rc = sqlite3_exec(ix->db, "BEGIN IMMEDIATE", NULL, NULL, NULL)) == SQLITE_OK) {
		if ((rc = flush_writes(ix, h)) == SQLITE_OK)
			rc = sqlite3_exec(ix->db, "COMMIT", NULL, NULL, NULL);
		if (rc != SQLITE_OK)
			sqlite3_exec(ix->db, "ROLLBACK", NULL, NULL, NULL);
	}
	if (rc == SQLITE_NOMEM)
		return err_nomem();
	if (rc != SQLITE_OK)
		ydiag_add(warnings, ix->path, 0, 0, "history index not updated (%s)",
			  sqlite3_errmsg(ix->db));
	return 0;
}
