/* project_schema.h - the tables of projection.yaml's keys (yschema.h) its
 * writer (project_yaml.c) and its strict reader (project_read.c) both go
 * by, so that what is written reads back. */
#ifndef DDT_PROJECT_SCHEMA_H
#define DDT_PROJECT_SCHEMA_H

#include "yschema.h"

/* A band: {point, p5, p50, p95}, each a number or null, on one line. */
extern const struct yschema project_schema_band;
/* One row of rows: (scenario, acceptance) with its bands and figures. */
extern const struct yschema project_schema_row;
/* A tornado's bar, a fitted parameter and a point of the MoE fit (each on
 * one line), a leave-one-out backtest, a pair of the cross-GPU backtest. */
extern const struct yschema project_schema_bar;
extern const struct yschema project_schema_param;
extern const struct yschema project_schema_fit_point;
extern const struct yschema project_schema_backtest;
extern const struct yschema project_schema_xback;
/* projection.yaml's identity (schema, run_id, template, calibration), its
 * head (samples, seed, curve ... context_law, notes) and the calibrated
 * point. */
extern const struct yschema project_schema_ident;
extern const struct yschema project_schema_head;
extern const struct yschema project_schema_central;
/* A tornado (its bars) and the budget grid (its lists and cells). */
extern const struct yschema project_schema_tornado;
extern const struct yschema project_schema_grid;
/* The top-level key xbacktest (ddt backtest writes it alone). */
extern const struct yschema project_schema_xback_sec;

/* projection.yaml's top-level keys as the parts it is written in, in
 * order: each part a table of struct projection's fields and the
 * PROJECT_TEXT_* section it is (0: the document's own: schema and
 * identity, rows, the calibrated point); the list ends at s NULL. */
struct project_schema_part {
	const struct yschema *s;
	unsigned section;
};
extern const struct project_schema_part project_schema_doc[];

#endif
