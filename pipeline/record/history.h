/* history.h - the measurement history: every run record under runs/, cut into
 * series (op x variant x params x device x backend x build x machine), one
 * point a night. */
#ifndef DDT_HISTORY_H
#define DDT_HISTORY_H

#include <stddef.h>

#include "record.h"
#include "ydoc.h"

/* A night's verdict on one series; regress.c decides them (see regress.h). */
enum regress_verdict {
	REG_NEW,         /* the series' first measured night */
	REG_SHORT,       /* fewer good nights than the baseline needs: "not enough history" */
	REG_OK,          /* within the band */
	REG_IMPROVEMENT, /* faster, confirmed by consecutive nights; the baseline moves */
	REG_SUSPECT,     /* outside the band for the first night: wait for the next */
	REG_REGRESSION,  /* slower, confirmed by consecutive nights; the baseline moves */
	REG_OUTLIER,     /* was suspect, and the next night came back: a one-off */
	REG_FAILED,      /* no measurement: the kernel failed (validation or error) */
	REG_SKIPPED,     /* no measurement: skipped or unsupported on this machine */
	REG_DRIFT,       /* the level moved gradually past the threshold; the baseline moves */
	REG_ENV,         /* "environment changed": a new machine, or most series of one
			  * machine moved together on one night; the baseline restarts */
	REG_UNJUDGED,    /* "not judgeable": the machine was contended that night */
	REG_COUNT
};

/* What makes two measurements comparable night over night. */
struct hist_key {
	char op[32];
	char variant[32];
	char params[256];  /* "M=9,ctx=4096" (rec_row_params_str, sorted keys) */
	char device[128];  /* the device's name */
	char backend[8];
	char build[64];    /* provenance build configuration */
	char machine[96];  /* "host:1a2b3c4d": the host and a fingerprint of the device */
};

/* One run of the history (a night). */
struct hist_run {
	char run_id[80];
	char created[24];
	char template_name[64];
	char git_rev[48];         /* the project's revision; "" unknown */
	char engine_rev[48];      /* the engine's own revision; "" when not recorded */
	struct rec_machine machine; /* the machine's state (known 0: not recorded) */
	char env[320];    /* what the code ran on besides the code: "compiler=..;cuda=..;
			   * driver=..;nccl=..;build=..;host=..;template=.."
			   * (history_env_of); "" unknown */
	long long t;      /* created in seconds since the epoch (the id's time
			   * when created is malformed): the nights' order */
	int clock_behind; /* added as the newest night while created before
			   * the night before it (history_add_record) */
};

/* One series on one night. The analysis fields are NaN / REG_NEW until
 * regress_history() fills them. 120 bytes: a year of nights of a hundred
 * series is 4 MB, read whole by every verdict walk. */
struct hist_point {
	size_t run;               /* index into history.runs */
	const char *reason;       /* the record's reason when not ok, or the
				   * analysis' note; "" none; never NULL. Kept
				   * once per text by the history (history_reason_set) */
	double median_us;         /* NaN unless status is ok */
	double spread_us;         /* the night's sample sigma: (p90 - p10) / 2.563, else
				   * stdev; NaN when the record has neither */
	double baseline_us;       /* median of the good nights before; NaN: none */
	double noise_frac;        /* robust sigma (MAD x scale) / baseline */
	double delta_frac;        /* median / baseline - 1 (positive: slower) */
	double z;                 /* (median - baseline) / robust sigma */
	double band_lo_us, band_hi_us; /* a median inside is not flagged */
	size_t good_run, bad_run; /* a change's last good and first bad night (run
				   * indexes; HIST_NO_RUN when the verdict names none) */
	enum rec_status status;
	int samples;              /* samples behind the median */
	enum regress_verdict verdict;       /* with hindsight: a suspect the next
					     * night reverted reads "outlier" */
	enum regress_verdict verdict_night; /* as decided on its own night */
	size_t good_run_night, bad_run_night; /* good_run and bad_run as its own
					       * night placed them (a change's
					       * first bad night can be placed
					       * again by later nights) */
	int in_baseline;          /* counts as a good night for later baselines */
	int change_nights;        /* drift: nights from its start to this one */
};

/* The longest reason a point keeps (a record row's reason's room). */
#define HIST_REASON_LEN sizeof(((struct rec_row *)0)->reason)

/* The distinct reason texts of a history's points, each stored once. */
struct hist_texts {
	char **text;              /* [n], each its own allocation */
	size_t n, cap;
	size_t *slot;             /* hashed lookup: [slot_cap] text + 1, 0 empty */
	size_t slot_cap;          /* a power of two, at least 2n; 0 while empty */
};

#define HIST_NO_RUN ((size_t)-1)

/* Someone's answer to a regression alert (runs/acks.yaml, acks.h): the
 * alert stops counting toward the nightly's exit status 3. */
struct hist_ack {
	char alert[16];    /* the alert's id (regress_alert.id) */
	char series[400];  /* the series' label (history_key_label); "" every series of it */
	int invalid;       /* a false alarm, not a real change */
	char reason[160];  /* "" none given */
	char at[24];       /* when, ISO 8601 UTC */
	char by[32];       /* $USER, "" unknown */
};

struct hist_series {
	struct hist_key key;
	size_t n, cap;
	struct hist_point *pts;   /* [n] in run order, at most one per run */
};

struct history {
	size_t nruns, cap_runs;
	struct hist_run *runs;    /* [nruns] in the order of their created time
				   * (then run id); see history_add_record */
	size_t n, cap;
	struct hist_series *series; /* [n] in order of first appearance */
	size_t *index;            /* hashed series lookup: [index_cap] series + 1,
				   * 0 empty (open addressing) */
	size_t index_cap;         /* a power of two, at least 2n; 0 while empty */
	size_t nfolders;          /* run folders history_load saw */
	size_t nskipped;          /* of them, skipped with a warning */
	char skipped_note[160];   /* the first skipped, "ID (why), ..." */
	struct hist_texts reasons; /* the points' reason texts */
	size_t nacks;
	struct hist_ack *acks;    /* [nacks] runs/acks.yaml, oldest first */
};

/* Loads every run record runs_dir/<run-id>/run.yaml into h (zeroed first),
 * through the index runs_dir/.index.sqlite (hindex.h: only new or changed
 * records are parsed; the history is the same as from the records alone),
 * the nights in the order of their records' created time (ties by run id),
 * whatever their folders' names say. Temporary names (fsx_is_temp_name) and
 * files that are not named like a run (a lock) are skipped silently; a run
 * folder ddt cannot read (permissions, a file where the folder should be, no
 * run.yaml, a damaged record, a record whose run id differs from its folder)
 * is skipped with a warning in warnings naming it and why, counted in
 * h->nskipped and named in h->skipped_note. A missing runs_dir is an
 * empty history. Returns 0, or DDT_ENOMEM / DDT_EIO (runs_dir unreadable).
 * Free h with history_free even on error. */
int history_load(struct history *h, const char *runs_dir, struct ydiag *warnings);

/* The same, keeping only the nights up to run `until` in that order (the
 * history as it stood on that night; until NULL means all). When until is
 * not among them, the nights created at or before its id's time. */
int history_load_until(struct history *h, const char *runs_dir, const char *until,
		       struct ydiag *warnings);

/* Where history_load_with reads the nights from. */
enum history_source {
	HISTORY_INDEXED,      /* the index, parsing records it lacks (history_load) */
	HISTORY_RECORDS_ONLY, /* every record parsed; the index neither read nor written */
};
int history_load_with(struct history *h, const char *runs_dir, const char *until,
		      enum history_source src, struct ydiag *warnings);

/* Appends a run as the newest night (h zeroed or loaded): tonight is the
 * newest night whatever its clock says. When its created time is before the
 * previous newest night's, the run is marked clock_behind for the caller to
 * say so. A run id already in h is DDT_EINPUT. A row whose key repeats
 * within the record is ignored after the first. Returns 0, DDT_EINPUT or
 * DDT_ENOMEM. */
int history_add_record(struct history *h, const struct run_record *r);

/* The same, writing the series index of each row that made a point, in
 * row order, to series (r->nrows of room) and their count to *nseries. */
int history_add_record_series(struct history *h, const struct run_record *r, size_t *series,
			      size_t *nseries);

/* Appends night r (its run_id, created, template_name, git_rev, engine_rev
 * and machine; t and clock_behind are set here) without points, as
 * history_add_record does. Returns 0, DDT_EINPUT (run id already there) or
 * DDT_ENOMEM. */
int history_add_run(struct history *h, const struct hist_run *r);

/* Index of the series of key k, made (empty) when absent; -1 on allocation
 * failure. */
long history_series_of(struct history *h, const struct hist_key *k);

/* Appends p (its run, status, median_us, spread_us, samples and reason, any
 * string or NULL for none, kept by h; the analysis fields are set here) to
 * series s, unless s already has a point on p->run, which must be its
 * newest. Returns 0 or DDT_ENOMEM. */
int history_push_point(struct history *h, size_t s, const struct hist_point *p);

/* Sets the reason of p, a point of h, to the printf-style text (cut to
 * HIST_REASON_LEN - 1 bytes), kept once in h for h's life however many
 * points give it. On allocation failure the reason says so and DDT_ENOMEM
 * is returned. Returns 0 or DDT_ENOMEM. */
int history_reason_set(struct history *h, struct hist_point *p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void history_free(struct history *h);

/* The key of a record's row. */
void history_key_of(struct hist_key *k, const struct run_record *r, const struct rec_row *row);

/* "host:1a2b3c4d" of the row's device in r into buf: the host (provenance,
 * else the run id's) and a hash of the device's model, cores or SMs, memory,
 * clocks and driver. Derived from fields every record has, so records
 * written before it existed get the same machine as new ones. */
char *history_machine_of(char *buf, size_t len, const struct run_record *r,
			 const struct rec_row *row);

/* "compiler=gcc 13.2;cuda=13.0;driver=580.65;nccl=;build=O2-native;host=lab1;
 * template=gpu" of r into buf: the environment its provenance records
 * (the kernel version is not recorded). Returns buf. */
char *history_env_of(char *buf, size_t len, const struct run_record *r);

/* The first field of environment a that differs in b, as "compiler gcc 13 ->
 * gcc 14" into buf; "" when they agree or either is unknown (""). Returns
 * buf. */
char *history_env_diff(const char *a, const char *b, char *buf, size_t len);

/* 1 when a and b are the same series on any machine (every field but machine). */
int history_key_same_but_machine(const struct hist_key *a, const struct hist_key *b);

/* 1 when a and b name the same series. */
int history_key_equal(const struct hist_key *a, const struct hist_key *b);

/* "op/variant params [backend, device, build, machine]" into buf; returns buf. */
char *history_key_label(const struct hist_key *k, char *buf, size_t len);

/* Index of the series with key k, or -1 (a hashed lookup). */
long history_find(const struct history *h, const struct hist_key *k);

/* Index of the run with that id, or -1. */
long history_run_index(const struct history *h, const char *run_id);

/* The point of series s on run index run, or NULL when not measured then. */
const struct hist_point *history_point_at(const struct hist_series *s, size_t run);

#endif
