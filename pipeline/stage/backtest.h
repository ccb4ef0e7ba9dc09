/* backtest.h - the cross-GPU backtest: each measured GPU projected from each
 * other one, its own measurements held out of the transfer fit.
 *
 * For every kernel class of the calibration's measured tables (and tonight's
 * fleet series merged into them) and every ordered pair (A, B) of GPUs that
 * both have a series: the transfer factors are fitted without B (fit_xfer),
 * A's measured curve is moved onto B (time x bw_A / bw_B x factor) at every
 * M both measured, and the band p5-p95 of the calibrated lognormal factor is
 * set beside B's measured time. Per pair: the share of B's points inside
 * p5-p95 and the median |error| of p50; pooled over every point of every
 * pair for the headline.
 */
#ifndef DDT_BACKTEST_H
#define DDT_BACKTEST_H

#include <stdio.h>

#include "calib.h"
#include "project.h"

/* Runs the backtest over c's measured tables into p->xback (replacing what
 * is there) and the pooled p->xback_*; sets each row's xfer_cover_pct and
 * xfer_err_pct from the pair (moe_reference.gpu -> its target) of the
 * transfer's class. Returns 0 or DDT_ENOMEM. */
int backtest_xgpu(struct projection *p, const struct calib *c);

/* The backtest as text: one line per pair, a line per class, the pooled
 * figures. */
void backtest_write_text(const struct projection *p, FILE *fp);

/* Pooled figures of one class ("": every class) from p->xback: points,
 * share inside p5-p95 and the median over pairs of their median |error|, %.
 * Cannot fail. */
void backtest_class(const struct projection *p, const char *cls, int *n, double *cover_pct,
		    double *err_pct);

#endif
