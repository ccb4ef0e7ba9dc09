/* test_report_fixture.h - builds stored runs the way the nightly stage does
 * (record, stashed calibration and template, projection, verdicts), for the
 * document tests and the report benchmark. Include once per program. */
#ifndef TEST_REPORT_FIXTURE_H
#define TEST_REPORT_FIXTURE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "calib.h"
#include "calibrate.h"
#include "fit.h"
#include "err.h"
#include "fsx.h"
#include "history.h"
#include "project.h"
#include "record.h"
#include "regress.h"
#include "report.h"
#include "report_load.h"
#include "tmpl.h"

/* The project folder (calibration/, templates/, fonts/): $DDT_HOME or the
 * current folder, where `make test` runs. */
static const char *fixture_home(void)
{
	const char *h = getenv("DDT_HOME");
	return h && *h ? h : ".";
}

/* Run id and ISO time of night n (one a day from 2025-01-01 02:00 UTC). */
static void fixture_id(int night, char *id, size_t len, char *created, size_t clen)
{
	time_t t = 1735696800 + (time_t)night * 86400;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(id, len, "%Y%m%dT%H%M%SZ-fixture", &tm);
	strftime(created, clen, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* One kernel row: op at M on the CPU device, median slowed by `slow`. */
static int fixture_row(struct run_record *r, const char *op, double M, double base_us,
		       double slow, int night)
{
	struct rec_row w;
	/* a little deterministic noise, so baselines have a spread */
	double noise = 1 + 0.004 * sin(night * 1.7 + M);
	memset(&w, 0, sizeof w);
	snprintf(w.op, sizeof w.op, "%s", op);
	snprintf(w.variant, sizeof w.variant, "cold");
	snprintf(w.backend, sizeof w.backend, "cpu");
	w.samples = 20;
	w.median_us = base_us * slow * noise;
	w.p10_us = w.median_us * 0.98;
	w.p90_us = w.median_us * 1.03;
	w.min_us = w.median_us * 0.97;
	w.max_us = w.median_us * 1.08;
	w.stdev_us = w.median_us * 0.01;
	w.bytes = 1e6 * M;
	w.flops = 2e6 * M;
	w.gbps = w.bytes / w.median_us / 1e3;
	w.pct_peak = w.gbps / 20 * 100;
	w.max_err = 1e-6;
	w.sm_clock_mhz = NAN;
	w.status = REC_OK;
	rec_row_param_set(&w, "M", M);
	rec_row_param_set(&w, "tp", 8);
	return record_add_row(r, &w);
}

/* Writes runs_dir/<id of night n>/run.yaml; from `slow_from` on, moe_w4a16
 * at M=9 runs `slow` times slower (a regression to find). */
static int fixture_record(const char *runs_dir, int night, int slow_from, double slow,
			  char *id, size_t idlen)
{
	struct run_record r;
	struct rec_device dev = {.kind = "cpu", .name = "Fixture CPU <2 cores> & \"quotes\"",
				 .arch = "x86_64", .cores = 2, .mem_gb = 16,
				 .sm_clock_mhz = NAN, .mem_clock_mhz = NAN, .peak_gbps = NAN,
				 .copy_gbps = 20};
	char created[24], *dir, *path;
	int rc;
	double s9 = night >= slow_from ? slow : 1;

	memset(&r, 0, sizeof r);
	r.schema = RECORD_SCHEMA;
	fixture_id(night, r.run_id, sizeof r.run_id, created, sizeof created);
	snprintf(r.created, sizeof r.created, "%s", created);
	snprintf(r.template_name, sizeof r.template_name, "default");
	snprintf(r.prov.git_rev, sizeof r.prov.git_rev, "abc1234");
	snprintf(r.prov.compiler, sizeof r.prov.compiler, "gcc 12.2.0");
	snprintf(r.prov.build, sizeof r.prov.build, "O2-native");
	snprintf(r.prov.host, sizeof r.prov.host, "fixture");
	rc = record_add_device(&r, &dev);
	static const double ms[] = {1, 9, 17, 33, 65, 129};
	for (size_t i = 0; !rc && i < sizeof ms / sizeof *ms; i++)
		rc = fixture_row(&r, "moe_w4a16", ms[i], 40 + 9 * ms[i], ms[i] == 9 ? s9 : 1, night);
	for (int i = 0; !rc && i < 3; i++)
		rc = fixture_row(&r, "tree_attn", 9 << (2 * i), 12 + 3.0 * (9 << (2 * i)), 1, night);
	if (!rc) {
		struct rec_row w;
		memset(&w, 0, sizeof w);
		snprintf(w.op, sizeof w.op, "allreduce");
		snprintf(w.variant, sizeof w.variant, "nccl");
		snprintf(w.backend, sizeof w.backend, "nccl");
		w.median_us = w.p10_us = w.p90_us = w.min_us = w.max_us = w.stdev_us = NAN;
		w.bytes = w.flops = w.gbps = w.pct_peak = w.max_err = w.sm_clock_mhz = NAN;
		w.status = REC_SKIPPED;
		snprintf(w.reason, sizeof w.reason, "needs 2 GPUs, found 0");
		rc = record_add_row(&r, &w);
	}
	if (!rc && (dir = fsx_join(runs_dir, r.run_id)) != NULL) {
		fsx_mkdir_p(dir);
		path = fsx_join(dir, "run.yaml");
		rc = path ? record_write(&r, path) : -1;
		free(path);
		free(dir);
	}
	if (id)
		snprintf(id, idlen, "%s", r.run_id);
	record_free(&r);
	return rc;
}

/* Stores what the nightly stores beside night n's record: the calibration
 * and template (report_stash_inputs), projection.yaml and verdicts.yaml
 * (from the history of runs_dir up to that night). samples > 0 overrides the
 * template's Monte Carlo sample count (keeps tests fast). */
static int fixture_finish(const char *runs_dir, const char *id, int samples)
{
	char cal_dir[4096], tpl[4096], *dir = fsx_join(runs_dir, id), *p = NULL;
	struct calib cal;
	struct calibration cal_d;
	struct tmpl t;
	struct run_record rec;
	struct projection proj;
	struct project_config cfg;
	struct history h;
	struct regress_conf rc_conf;
	struct regress_night night;
	struct regress_impacts imp = {0};
	struct model m;
	struct ydiag diag = {0};
	int rc = DDT_ENOMEM;

	memset(&proj, 0, sizeof proj);
	memset(&h, 0, sizeof h);
	memset(&night, 0, sizeof night);
	snprintf(cal_dir, sizeof cal_dir, "%s/calibration", fixture_home());
	snprintf(tpl, sizeof tpl, "%s/templates/default.yaml", fixture_home());
	if (!dir || (rc = report_stash_inputs(dir, cal_dir, tpl)) != 0)
		goto out_early;
	if ((rc = calibrate_load(&cal, &cal_d, cal_dir, NULL, &diag)) != 0 || (rc = tmpl_load(&t, tpl, &diag)) != 0) {
		ydiag_print(&diag, stderr);
		goto out_early;
	}
	p = fsx_join(dir, "run.yaml");
	rc = record_read(&rec, p, &diag);
	free(p);
	if (!rc)
		rc = project_config_load(&cfg, &t, &diag);
	if (!rc && samples > 0)
		cfg.samples = samples;
	if (!rc)
		rc = project_run(&proj, &cal, &cal_d, &t, &rec, &cfg);
	if (!rc && (p = fsx_join(dir, "projection.yaml")) != NULL) {
		rc = project_write(&proj, p);
		free(p);
	}
	if (!rc)
		rc = regress_conf_load(&rc_conf, &t, &diag);
	if (!rc)
		rc = history_load_until(&h, runs_dir, id, &diag);
	if (!rc) {
		long run = history_run_index(&h, id);
		regress_history(&rc_conf, &h);
		rc = model_prepare(&m, &cal, &cal_d, NULL);
		if (!rc)
			rc = regress_impact(&imp, &rc_conf, &h, (size_t)run, &m, t.scenarios,
					    t.nscenarios);
		if (!rc)
			rc = regress_night_build(&night, &h, (size_t)run, &imp);
		if (!rc && (p = fsx_join(dir, "verdicts.yaml")) != NULL) {
			rc = regress_night_write(&night, p);
			free(p);
		}
	}
	if (rc)
		ydiag_print(&diag, stderr);
	regress_impacts_free(&imp);
	regress_night_free(&night);
	history_free(&h);
	project_free(&proj);
	record_free(&rec);
	tmpl_free(&t);
	calib_free(&cal);
out_early:
	ydiag_free(&diag);
	free(dir);
	return rc;
}

/* A runs folder with `nights` nights, the last two finished (projection and
 * verdicts; the one before the last with half the draws, so its medians
 * differ a little: page one's "since the previous night"); the regression
 * starts two nights before the end. */
static int fixture_runs(const char *runs_dir, int nights, int samples, char *last_id,
			size_t len)
{
	char prev[128] = "";
	int rc = fsx_mkdir_p(runs_dir);
	for (int n = 0; !rc && n < nights; n++) {
		snprintf(prev, sizeof prev, "%s", n ? last_id : "");
		rc = fixture_record(runs_dir, n, nights - 2, 1.25, last_id, len);
	}
	if (!rc && prev[0] && samples > 1)
		rc = fixture_finish(runs_dir, prev, samples / 2);
	return rc ? rc : fixture_finish(runs_dir, last_id, samples);
}

#endif
