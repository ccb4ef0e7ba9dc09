/* hindex_query.c - one read-only SQL statement against the history's index, its rows as CSV (ddt history --sql). */
#include "hindex.h"

#include "csv.h"
#include "err.h"
#include "fsx.h"

#include <sqlite3.h>
#include <string.h>
#include <stdlib.h>

/* Lets a user's query read, and refuses ATTACH and DETACH (another file)
 * and every PRAGMA (writable_schema and the like: a reader needs none). */
static int query_auth(void *arg, int action, const char *a, const char *b, const char *c,
		      const char *d)
{
	(void)arg, (void)a, (void)b, (void)c, (void)d;
	return action == SQLITE_ATTACH || action == SQLITE_DETACH || action == SQLITE_PRAGMA
		       ? SQLITE_DENY
		       : SQLITE_OK;
}

/* Writes column i of the current row as a CSV field. */
static void query_field(FILE *fp, sqlite3_stmt *st, int i)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		fprintf(fp, "%lld", (long long)sqlite3_column_int64(st, i));
		break;
	case SQLITE_FLOAT:
		fprintf(fp, "%.15g", sqlite3_column_double(st, i));
		break;
	case SQLITE_NULL:
		break;
	default:
		csv_field(fp, (const char *)sqlite3_column_text(st, i));
	}
}

/* Steps st to its end, writing each row. Returns an SQLite code. */
static int query_rows(sqlite3_stmt *st, FILE *fp)
{
	int rc, n = sqlite3_column_count(st);
	for (int i = 0; i < n; i++) {
		if (i)
			fputc(',', fp);
		csv_field(fp, sqlite3_column_name(st, i));
	}
	fputc('\n', fp);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < n; i++) {
			if (i)
				fputc(',', fp);
			query_field(fp, st, i);
		}
		fputc('\n', fp);
	}
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int hindex_query(const char *runs_dir, const char *sql, FILE *fp)
{
	char *path = fsx_join(runs_dir, HINDEX_NAME);
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	const char *tail = NULL;
	char why[96];
	int rc = 0;

	if (!path)
		return err_nomem();
	if (fsx_kind(path) != FSX_FILE) {
		rc = err_set(DDT_ENOTFOUND, "%s: %s", path,
			     fsx_kind(path) == FSX_NONE ? "no history index (no run records yet, or "
							  "this user may not write there)"
							: "not a regular file: not read");
		goto done;
	}
	if (!fsx_trusted_path(path, why, sizeof why)) {
		rc = err_set(DDT_EINPUT, "%s: not trusted (%s): not read (a nightly replaces it)",
			     path, why);
		goto done;
	}
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW, NULL) !=
		    SQLITE_OK ||
	    hindex_harden(db, 1) != SQLITE_OK || sqlite3_busy_timeout(db, HINDEX_BUSY_MS) != SQLITE_OK ||
	    sqlite3_set_authorizer(db, query_auth, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, sql, -1, &st, &tail) != SQLITE_OK) {
		rc = err_set(DDT_EINPUT, "--sql: %s", db ? sqlite3_errmsg(db) : "out of memory");
		goto done;
	}
	tail += strspn(tail, " \t\r\n;");
	if (!st || *tail || !sqlite3_stmt_readonly(st))
		rc = err_set(DDT_EINPUT, "--sql: %s", !st ? "no statement" : *tail
						      ? "one statement only"
						      : "a statement that reads only (SELECT ...)");
	else if (query_rows(st, fp) != SQLITE_OK)
		rc = err_set(DDT_EINPUT, "--sql: %s", sqlite3_errmsg(db));
done:
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(path);
	return rc;
}
