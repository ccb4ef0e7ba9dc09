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
#include "project.h"

/* Runs the backtest over c's measured tables into p->xback and p->xsum
 * (replacing what is there) and the pooled p->xback_*; sets each row's
 * xfer_cover_pct and xfer_err_pct from the pair (moe_reference.gpu -> its
 * target) of the transfer's class. Returns 0 or DDT_ENOMEM. */
int backtest_xgpu(struct projection *p, const struct calib *c);

/* The backtest as text: one line per pair, then the pooled figures per
 * class and target family. */
void backtest_write_text(const struct projection *p, FILE *fp);

/* The pooled figures of class cls and target family fam ("": every one) from
 * p->xsum: points, share inside p5-p95 and median |error|, %; n 0 when there
 * are none. Cannot fail. */
void backtest_pooled(const struct projection *p, const char *cls, const char *fam, int *n,
		     double *cover_pct, double *err_pct);

#endif
