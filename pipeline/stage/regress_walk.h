/* regress_walk.h - the walk state of regress.c, shared with regress_env.c (machine and environment changes) and regress_wander.c (changes in series that wander); private to the regression stage. */
#ifndef DDT_REGRESS_WALK_H
#define DDT_REGRESS_WALK_H

#include "regress.h"

#include <stddef.h>

/* A series' walk state: where the current level started, the noise carried
 * over a confirmed change, and the run of flagged nights in progress. */
struct walk {
	size_t seg_start;   /* first point of the current level */
	double carry_noise; /* relative sigma carried over a step; NaN: none */
	size_t run_start;   /* first point of the flagged run */
	int run_len, run_dir;
	int measured;       /* measured points so far */
	int env_first;      /* the series continues another machine's: its first
			     * night is an environment change */
	size_t env_from;    /* then: the series it continues */
	size_t chg_pt;      /* the night that confirmed the step the current
			     * level began with, while its first bad night
			     * may still be placed again; SIZE_MAX: none */
	size_t prev_start;  /* first point of the level before the current */
	double *wc;         /* the last window sorted: wc[0] how many, then its
			     * values in time order and sorted
			     * (change_window_nights each); in one block, so
			     * that a copy of the walk (restored) cannot
			     * leave them out of step */
};

/* The last measured, judged point before i (a good night), or HIST_NO_RUN. */
size_t regress_last_good_run(const struct hist_series *s, size_t i);
/* A new level starts at point `from` (confirmed on point i): the points
 * since are good nights of it, and the noise is carried over. */
void regress_new_level(struct hist_series *s, struct walk *w, size_t from, size_t i,
		       double noise);

/* regress_env.c */
void regress_mark_machine_changes(const struct history *h, struct walk *ws, size_t *order);
void regress_note_machine_change(struct history *h, size_t si, const struct walk *w);
void regress_group_machines(const struct history *h, size_t *ms, size_t *bym);
void regress_machine_moves(const struct regress_conf *c, struct history *h, struct walk *ws,
			   const size_t *ms, const size_t *bym, const size_t *cur, size_t run);

/* regress_wander.c */
/* Whether the change found in y[0..m) holds once the nights' correlation
 * is allowed for: a series that wanders (periodic swings, a slow walk)
 * gives the change search nights that are not independent, and its t test
 * reads far too sure. Residuals about the fitted shape
 * (regress_step_holds: two levels split at `at`, segments lo..at..hi of
 * y; regress_drift_holds: a level then a line from hinge h with level a
 * and slope b, y[0..m)) give their lag-1 autocorrelation rho; the test is
 * taken again with the nights counted (1 - rho) / (1 + rho) times (the
 * variance of a mean of AR(1) nights), and must still reach max_p. White noise (rho not significant) is
 * judged as before. tmp: room for m values. */
int regress_step_holds(const struct regress_conf *c, const double *y, size_t lo, size_t at,
		       size_t hi, double *tmp);
int regress_drift_holds(const struct regress_conf *c, const double *y, size_t m, size_t h,
			double a, double b, double *tmp);
/* Whether the series keeps going back and forth across cut (the middle of
 * a change found tonight, at point i): over its last 3 x baseline_nights
 * measured, judged nights (outliers left out), the side it is on changes
 * only when swing_nights nights in a row lie on the other side, and it
 * changed side at least three times (four runs: a step is two, a step
 * and its fix three), and its nights before the change's first (point
 * from) are significantly autocorrelated (white noise around a level is
 * not). Then the "change" is one more swing of a series that swings
 * (periodic load, a wandering level), not a new level. tmp: room for
 * 3 x baseline_nights values. */
int regress_keeps_swinging(const struct regress_conf *c, const struct hist_series *s, size_t i,
			   double cut, size_t from, double *tmp);

#endif
