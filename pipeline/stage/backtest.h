/* backtest.h - the cross-GPU backtest: each measured GPU projected from each
 * other one, its own measurements held out of the transfer calibration.
 *
 * For every kernel class of the calibration's measured tables (and tonight's
 * fleet series merged into them) and every ordered pair (A, B) of GPUs that
 * both have a series: the transfer is calibrated without B (xfer.h), A's
 * measured times are moved onto B at every M both measured, and the band
 * p5-p95 of the calibrated lognormal factor is set beside B's measured time.
 * Per pair: the share of B's points inside p5-p95 and the median |error| of
 * p50; pooled over the points per class and target family, per class, and
 * over every class.
 */
#ifndef DDT_BACKTEST_H
#define DDT_BACKTEST_H

#include <stdio.h>

#include "calib.h"
#include "calibrate.h"
#include "project.h"

/* What each pair's fit holds out beside the target's own series: its twins
 * always (and, across memory kinds, the target's kind); BACKTEST_FAMILY
 * also the target's whole family. */
enum backtest_hold { BACKTEST_GPU, BACKTEST_FAMILY };

/* Which points are scored (NULL: every one): M in [m_min, m_max] (NaN: no
 * bound), and only the pairs of `pairs` ("from:to,from:to"; NULL: all). */
struct backtest_win {
	double m_min, m_max;
	const char *pairs;
};

/* The backtest with mode's hold-out over the points w lets in (NULL: all)
 * into p->xback and p->xsum, as backtest_xgpu. Returns 0 or DDT_ENOMEM. */
int backtest_hold(struct projection *p, const struct calib *c, const struct calibration *d,
		  enum backtest_hold mode, const struct backtest_win *w);

/* The implementation backtest (ximpl.h): each implementation of the
 * transfer's class (moe_transfer.class) held out whole with every layout of
 * its build (engine and version), its measured pairs projected by the
 * shared law of the other builds with the gap sized without them,
 * into p->iback, p->isum and p->iback_* (nothing with fewer than two
 * implementations); each row's transfer gap from the entries of d. Returns 0
 * or DDT_ENOMEM. */
int backtest_ximpl(struct projection *p, const struct calib *c, const struct calibration *d,
		   const struct backtest_win *w);

/* The implementation backtest's points as CSV (class, from, to, m,
 * measured_us, p5_us, p50_us, p95_us). */
void backtest_write_points(const struct projection *p, FILE *fp);

/* Where the implementation gap alone passes this 90% half-width, %, no
 * narrower band is honest: page one says so instead of printing one. */
#define BACKTEST_HONEST_PCT 25

/* The caveat on the implementation gap of p's calibrated rows (the widest
 * one) into buf: 1 when written, 0 when no row carries a gap. */
int backtest_gap_note(const struct projection *p, const struct calib *c,
		      const struct calibration *d, char *buf, size_t len);

/* The implementation backtest as text. */
void backtest_write_impl_text(const struct projection *p, FILE *fp);

/* The implementation gap of c's transfer class with every build in, as
 * text: per measured M in w's range and pair kind, the builds and points
 * behind it, the signed bias (+: the law predicts slower than measured),
 * its standard error, whether it is corrected (systematic) and the gap's
 * 90% half-width. Returns 0 or DDT_ENOMEM. */
int backtest_write_gap(const struct calib *c, const struct calibration *d,
		       const struct backtest_win *w, FILE *fp);

/* Runs the backtest over the measured tables in use (calibrate_meas: c's,
 * or d's with tonight's fleet; d may be NULL) into p->xback and p->xsum
 * (replacing what is there) and the pooled p->xback_*; sets each row's
 * xfer_cover_pct and xfer_err_pct from the pair (the MoE reference GPU in
 * use -> its target) of the transfer's class. Returns 0 or DDT_ENOMEM. */
int backtest_xgpu(struct projection *p, const struct calib *c, const struct calibration *d);

/* The backtest as text: one line per pair, then the pooled figures per
 * class and target family. */
void backtest_write_text(const struct projection *p, FILE *fp);

/* The pooled figures of class cls and target family fam ("": every one) from
 * p->xsum: points, share inside p5-p95 and median |error|, %; n 0 when there
 * are none. Cannot fail. */
void backtest_pooled(const struct projection *p, const char *cls, const char *fam, int *n,
		     double *cover_pct, double *err_pct);

#endif
