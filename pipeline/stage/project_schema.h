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
/* projection.yaml's identity (run_id, template, calibration), its head
 * (samples, seed, curve ... context_law: also the text form's) and the
 * calibrated point. */
extern const struct yschema project_schema_ident;
extern const struct yschema project_schema_head;
extern const struct yschema project_schema_central;
/* The keys of a tornado and of the budget grid before their lists. */
extern const struct yschema project_schema_tornado;
extern const struct yschema project_schema_grid;

#endif
