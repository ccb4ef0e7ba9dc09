/* chart_report.h - the report's charts: one cairo drawing per chart section. */
#ifndef DDT_CHART_REPORT_H
#define DDT_CHART_REPORT_H

#include <cairo.h>

#include "report_data.h"

struct report_chart {
	const struct report_data *d;
	const struct report_section *sec;
};

/* One target's curve on the throughput-per-GPU vs speed-per-user chart: at
 * each concurrency of the stored grid, its best budget's tok/s (the median
 * of the draws, and p5 / p95) per user (/ C) and per GPU (/ the replica's
 * GPUs). */
struct pareto_curve {
	int n;
	int conc[PROJECT_MAX_GRID_CONC], budget[PROJECT_MAX_GRID_CONC];
	double user[PROJECT_MAX_GRID_CONC], gpu[PROJECT_MAX_GRID_CONC]; /* median, per user / GPU */
	double lo[PROJECT_MAX_GRID_CONC], hi[PROJECT_MAX_GRID_CONC];     /* tok/s p5, p95 */
};
/* The curve of grid target t (d must hold a projection with a grid). */
void chart_report_pareto_curve(const struct report_data *d, int t, struct pareto_curve *pc);
/* Groups the grid's targets whose curves agree within 1% at every point
 * (one line and one ink: group k draws in chart_target_ink(k)): group[t] for
 * each target (-1: no curve). Returns the number of groups. */
int chart_report_pareto_groups(const struct report_data *d, int *group);
/* The GPUs one replica runs on: the model's tensor parallelism (at least 1). */
double chart_report_gpus(const struct report_data *d);

/* Draws a chart section (breakdown, acceptance, moe_curve, tornado, budget,
 * pareto, history) at w x h points; arg is a struct report_chart. */
void chart_report_draw(cairo_t *cr, double w, double h, const void *arg);
/* A history chart of chosen series (the PDF's history sections draw the same). */
struct chart_history {
	const struct history *h; /* analysed (regress_history) */
	size_t nruns;            /* the nights shown: h's first nruns */
	const int *idx;          /* the series shown: idx[0..n) of h */
	int n;
	const char *title;
};
/* Draws it at w x h points; arg is a struct chart_history (chart_draw_fn). */
void chart_report_history(cairo_t *cr, double w, double h, const void *arg);
/* The label of shown series k of a history chart (series idx[0..n) of h):
 * its params without those every shown series shares (else its variant),
 * then its host when the shown series come from more than one machine
 * ("B=8 lab2"). */
void chart_report_series_label(const struct history *h, const int *idx, int n, int k,
			       char *buf, size_t len);
/* The y range (µs) of a history chart of series idx[0..n) of h over its
 * first nruns nights: the medians', widened by their baseline bands to at
 * most half the lowest median and twice the highest (never below zero). */
void chart_report_history_range(const struct history *h, size_t nruns, const int *idx, int n,
				double *ymin, double *ymax);
/* Rows (0: the top) for n labels spanning x0[i]..x1[i] points, in order:
 * each the first row where it overlaps no label already placed (2 pt
 * apart), so no two labels in a row overlap. */
void chart_report_label_rows(const double *x0, const double *x1, int n, int *row);
/* The series a history section shows (at most HIST_SERIES, into idx), their
 * range in µs, and the most measured nights any of them has; returns how
 * many (chart_history.c). */
#define HIST_SERIES 6
int chart_history_pick(const struct report_data *d, const struct report_section *sec, int *idx,
		       int *nights, double *ymin, double *ymax);
struct chart;
/* Draws history section sec of d into c. */
void chart_history_draw(struct chart *c, const struct report_data *d,
			const struct report_section *sec);
/* True when chart section s would have nothing to draw (a history of one
 * night, no stored grid or tornado); msg then says why in a line, which the
 * documents print instead of an empty chart. */
int chart_report_empty(const struct report_data *d, const struct report_section *s, char *msg,
		       size_t len);
/* True for the section kinds drawn as charts. */
int chart_report_is_chart(enum report_section_kind k);
/* The file name of chart section i: "03-breakdown.png", "08-history-moe_w4a16.png". */
void chart_report_name(const struct report_spec *spec, int i, char *buf, size_t len);

#endif
