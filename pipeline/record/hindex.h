/* hindex.h - the history's index (runs/.index.sqlite, SQLite): what each run
 * record adds to the history, kept by run id with the size and mtime of its
 * run.yaml, so a load parses only records that are new or changed. */
#ifndef DDT_HINDEX_H
#define DDT_HINDEX_H

#include <sys/stat.h>

#include "history.h"
#include "ydoc.h"

/*
 * The run folders stay the truth: the index is a cache any load may rebuild.
 * history_load opens it, takes from it each run whose run.yaml has the size
 * and mtime it was indexed with, parses the others and stores them, and
 * forgets runs whose folders are gone. A file that is not an SQLite database
 * of this schema is removed and rebuilt with a warning; a symbolic link, a
 * hard link or anything but a regular file at its name is refused (never
 * followed, never written) and the history is read from the records. SQLite
 * opens every file it uses with O_NOFOLLOW and SQLITE_OPEN_NOFOLLOW. Several
 * ddt processes may share it (SQLite's file locks: reads in a read
 * transaction, the writes of one load in one write transaction, waiting up to
 * HINDEX_BUSY_MS for the lock). The tables are in docs/nightly.md, "History index".
 */

#define HINDEX_NAME ".index.sqlite"
#define HINDEX_BUSY_MS 30000

struct hindex;

/* Opens (creating when absent) runs_dir/.index.sqlite for a load. *out is
 * NULL when the index cannot be used (a link at its name, no write access
 * and no index, a lock held past HINDEX_BUSY_MS): then a warning says why
 * where it is not plain permission, and the load reads every record.
 * Returns 0 or DDT_ENOMEM. */
int hindex_open(struct hindex **out, const char *runs_dir, struct ydiag *warnings);

/* What hindex_take did with a run folder. */
enum hindex_took {
	HINDEX_MISS,    /* not indexed, or indexed with another size or mtime:
			 * parse the record, then hindex_note it */
	HINDEX_ADDED,   /* the run and its points were added to h */
	HINDEX_SKIPPED, /* indexed as skipped: *why is the warning (owned by ix) */
	HINDEX_BROKEN,  /* the index is damaged: hindex_rebuild, load again */
};

/* Adds run `name` to h from the index when st (its run.yaml's stat) is the
 * size and mtime it was indexed with. A changed record is a miss with a
 * warning in warnings. Returns an enum hindex_took, or DDT_ENOMEM. */
int hindex_take(struct hindex *ix, struct history *h, const char *name, const struct stat *st,
		const char **why, struct ydiag *warnings);

/* Remembers run `name`, just parsed, for hindex_flush: night `run` of h,
 * whose rows went to series[0..nseries) in the order of the record's rows
 * (history_add_record_series), or, when why is not NULL, a record skipped
 * with that warning. Returns 0 or DDT_ENOMEM. */
int hindex_note(struct hindex *ix, const char *name, const struct stat *st, size_t run,
		const size_t *series, size_t nseries, const char *why);

/* Writes what hindex_note remembered and forgets indexed runs that no
 * hindex_take saw, in one transaction; before h's nights are re-ordered. A
 * failure is a warning: the history is whole without the index. Returns 0
 * or DDT_ENOMEM. */
int hindex_flush(struct hindex *ix, const struct history *h, struct ydiag *warnings);

/* Removes a damaged index and opens a new, empty one (a warning says so).
 * Returns 0 (*ix may then be NULL: no index) or DDT_ENOMEM. */
int hindex_rebuild(struct hindex **ix, struct ydiag *warnings);

void hindex_close(struct hindex *ix);

/* Makes a connection defensive: no writable_schema or other ways to corrupt
 * the file through SQL, no function with side effects run from the schema,
 * and, for a reader (reader 1), no write at all. Returns an SQLite code. */
struct sqlite3;
int hindex_harden(struct sqlite3 *db, int reader);

/* Runs one read-only SQL statement against runs_dir's index and writes its
 * result as CSV (a header of column names, then a line a row) to fp. The
 * database is opened read-only; ATTACH is refused. Returns 0, DDT_EINPUT
 * (the statement does not compile, is not one read-only statement, or fails;
 * the message is SQLite's) or DDT_ENOTFOUND (no index). */
int hindex_query(const char *runs_dir, const char *sql, FILE *fp);

#endif
