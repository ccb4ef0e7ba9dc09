/* regress_walk.h - the walk state of regress.c, shared with regress_env.c (machine and environment changes); private to the regression stage. */
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

#endif
