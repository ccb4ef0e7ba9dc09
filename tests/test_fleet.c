/* test_fleet.c - the fleet on constructed records: the cross-device table, the merged record, each node's named outcome, time limits, task and plan files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csv.h"
#include "err.h"
#include "fleet.h"
#include "fsx.h"
#include "record.h"
#include "tmpl.h"

/* ---------------------------------------------------------------- builders */

static void add_device(struct run_record *r, const char *name, double copy_gbps)
{
	struct rec_device d = {.kind = "cuda", .arch = "sm_90", .cores = 132, .mem_gb = 80,
			       .sm_clock_mhz = NAN, .mem_clock_mhz = NAN, .peak_gbps = NAN,
			       .copy_gbps = copy_gbps};
	snprintf(d.name, sizeof d.name, "%s", name);
	d.index = (int)r->ndevices;
	assert_int_equal(record_add_device(r, &d), 0);
}

/* A row of op at M on device dev taking us µs and moving bytes. */
static void add_row(struct run_record *r, const char *op, const char *backend, int dev, double m,
		    double us, double bytes, enum rec_status st)
{
	struct rec_row w = {.device = dev, .samples = 10, .median_us = us, .p10_us = us,
			    .p90_us = us, .min_us = us, .max_us = us, .stdev_us = 0, .bytes = bytes,
			    .flops = NAN, .gbps = bytes / us / 1e3, .pct_peak = NAN, .max_err = 0,
			    .sm_clock_mhz = NAN, .status = st};
	snprintf(w.op, sizeof w.op, "%s", op);
	snprintf(w.variant, sizeof w.variant, "cold");
	snprintf(w.backend, sizeof w.backend, "%s", backend);
	rec_row_param_set(&w, "M", m);
	rec_row_param_set(&w, "hidden", 7168);
	if (st != REC_OK)
		snprintf(w.reason, sizeof w.reason, "validation failed");
	assert_int_equal(record_add_row(r, &w), 0);
}

static void record_init(struct run_record *r, const char *id, const char *host, const char *build)
{
	memset(r, 0, sizeof *r);
	r->schema = RECORD_SCHEMA;
	snprintf(r->run_id, sizeof r->run_id, "%s", id);
	snprintf(r->created, sizeof r->created, "2026-01-01T02:00:00Z");
	snprintf(r->template_name, sizeof r->template_name, "gpu");
	snprintf(r->prov.host, sizeof r->prov.host, "%s", host);
	snprintf(r->prov.build, sizeof r->prov.build, "%s", build);
}

static const struct fleet_xrow *xrow_find(const struct fleet_xtable *x, double m, int target,
					  int source)
{
	char want[32];
	snprintf(want, sizeof want, "M=%g,", m);
	for (size_t i = 0; i < x->n; i++)
		if (x->rows[i].target == target && x->rows[i].source == source &&
		    !strncmp(x->rows[i].params, want, strlen(want)))
			return &x->rows[i];
	return NULL;
}

/* ---------------------------------------------------------------- cross-device table */

static void test_fleet__xtable_projects_by_copy_bandwidth(void **state)
{
	(void)state;
	struct run_record r;
	struct fleet_xtable x;

	record_init(&r, "20260101T020000Z-fleet-login", "login", "O2");
	add_device(&r, "H100 @a", 3000);
	add_device(&r, "H200 @b", 4500);
	add_device(&r, "L40S @c", 750);
	/* MoE at M=9: 300 µs on H100, 220 µs on H200, 1100 µs on L40S */
	add_row(&r, "moe_w4a16", "cuda", 0, 9, 300, 1e9, REC_OK);
	add_row(&r, "moe_w4a16", "cuda", 1, 9, 220, 1e9, REC_OK);
	add_row(&r, "moe_w4a16", "cuda", 2, 9, 1100, 1e9, REC_OK);
	assert_int_equal(fleet_xtable_build(&x, &r), 0);
	assert_int_equal(x.n, 6); /* every ordered pair of 3 devices */

	/* H200 projected from H100: 300 x 3000 / 4500 = 200 µs; it measured 220 */
	const struct fleet_xrow *w = xrow_find(&x, 9, 1, 0);
	assert_non_null(w);
	assert_string_equal(w->op, "moe_w4a16");
	assert_string_equal(w->backend, "cuda");
	assert_true(fabs(w->projected_us - 200) < 1e-9);
	assert_true(fabs(w->measured_us - 220) < 1e-9);
	assert_true(fabs(w->err_pct - (200.0 / 220 - 1) * 100) < 1e-9);
	assert_true(fabs(w->factor - 1.1) < 1e-9); /* gains less than bandwidth promises */
	/* and the other way: H100 from H200, 220 x 4500 / 3000 = 330 vs 300 */
	w = xrow_find(&x, 9, 0, 1);
	assert_non_null(w);
	assert_true(fabs(w->projected_us - 330) < 1e-9);
	assert_true(fabs(w->err_pct - 10) < 1e-9);
	/* L40S from H100: 300 x 3000 / 750 = 1200 vs 1100 */
	w = xrow_find(&x, 9, 2, 0);
	assert_non_null(w);
	assert_true(fabs(w->projected_us - 1200) < 1e-9);

	/* one kernel per pair: the pair's medians are that kernel's */
	assert_int_equal(x.npairs, 6);
	for (size_t i = 0; i < x.npairs; i++) {
		assert_int_equal(x.pairs[i].n, 1);
		if (x.pairs[i].target == 1 && x.pairs[i].source == 0)
			assert_true(fabs(x.pairs[i].median_factor - 1.1) < 1e-9);
	}
	fleet_xtable_free(&x);
	record_free(&r);
}

static void test_fleet__xtable_pairs_take_medians_over_kernels(void **state)
{
	(void)state;
	struct run_record r;
	struct fleet_xtable x;

	record_init(&r, "20260101T020000Z-fleet-login", "login", "O2");
	add_device(&r, "A", 1000);
	add_device(&r, "B", 2000);
	/* three kernels; B projected from A: 100, 50, 25 µs against 50, 40, 50 */
	add_row(&r, "k", "cuda", 0, 1, 100, 1, REC_OK);
	add_row(&r, "k", "cuda", 1, 1, 50, 1, REC_OK);   /* err 0% */
	add_row(&r, "k", "cuda", 0, 2, 100, 1, REC_OK);
	add_row(&r, "k", "cuda", 1, 2, 40, 1, REC_OK);   /* 50 vs 40: +25% */
	add_row(&r, "k", "cuda", 0, 3, 50, 1, REC_OK);
	add_row(&r, "k", "cuda", 1, 3, 50, 1, REC_OK);   /* 25 vs 50: -50% */
	assert_int_equal(fleet_xtable_build(&x, &r), 0);
	assert_int_equal(x.n, 6);
	assert_int_equal(x.npairs, 2);
	const struct fleet_xpair *p = x.pairs[0].target == 1 ? &x.pairs[0] : &x.pairs[1];
	assert_int_equal(p->target, 1);
	assert_int_equal(p->source, 0);
	assert_int_equal(p->n, 3);
	assert_true(fabs(p->median_abs_err_pct - 25) < 1e-9);
	assert_true(fabs(p->median_factor - 1.0) < 1e-9); /* factors 1, 0.8, 2 */
	fleet_xtable_free(&x);
	record_free(&r);
}

static void test_fleet__devices_csv_holds_hostile_names_as_text(void **state)
{
	(void)state;
	struct run_record r;
	struct fleet_xtable x;
	char *buf = NULL, *line, *save = NULL, *f[32];
	size_t len = 0;
	int hostile = 0;

	record_init(&r, "20260101T020000Z-fleet-login", "login", "O2");
	add_device(&r, "=cmd|' /C calc'!A1", 1000);
	add_device(&r, "@SUM(1)", 2000);
	add_row(&r, "+k", "cuda", 0, 1, 100, 1, REC_OK);
	add_row(&r, "+k", "cuda", 1, 1, 50, 1, REC_OK);
	assert_int_equal(fleet_xtable_build(&x, &r), 0);
	assert_int_equal(x.n, 2);
	FILE *m = open_memstream(&buf, &len);
	fleet_write_devices_csv(m, &r, &x);
	fclose(m);
	/* every field a spreadsheet reads as text: none starts a formula */
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int n = csv_split(line, f, 32);
		assert_true(n > 0);
		for (int i = 0; i < n; i++) {
			assert_false(csv_formula_like(f[i]));
			hostile += !strcmp(f[i], "'=cmd|' /C calc'!A1") + !strcmp(f[i], "'@SUM(1)") +
				   !strcmp(f[i], "'+k");
		}
	}
	assert_int_equal(hostile, 2 * 3); /* each row: target, source, op */
	free(buf);
	fleet_xtable_free(&x);
	record_free(&r);
}

static void test_fleet__xtable_leaves_out_what_cannot_transfer(void **state)
{
	(void)state;
	struct run_record r;
	struct fleet_xtable x;

	record_init(&r, "20260101T020000Z-fleet-login", "login", "O2");
	add_device(&r, "A", 1000);
	add_device(&r, "B", 2000);
	add_device(&r, "C without a copy figure", NAN);
	add_row(&r, "failed_on_b", "cuda", 0, 1, 10, 1e6, REC_OK);
	add_row(&r, "failed_on_b", "cuda", 1, 1, 10, 1e6, REC_FAILED);
	add_row(&r, "allreduce", "nccl", 0, 9, 20, 1e5, REC_OK); /* links, not memory */
	add_row(&r, "allreduce", "nccl", 1, 9, 25, 1e5, REC_OK);
	add_row(&r, "launch", "cuda", 0, 1, 3, 0, REC_OK);       /* moves no bytes */
	add_row(&r, "launch", "cuda", 1, 1, 4, 0, REC_OK);
	add_row(&r, "only_on_a", "cuda", 0, 1, 10, 1e6, REC_OK);
	add_row(&r, "other_size", "cuda", 0, 1, 10, 1e6, REC_OK); /* params differ */
	add_row(&r, "other_size", "cuda", 1, 2, 10, 1e6, REC_OK);
	add_row(&r, "cpu_vs_cuda", "cpu", 0, 1, 10, 1e6, REC_OK); /* backends differ */
	add_row(&r, "cpu_vs_cuda", "cuda", 1, 1, 10, 1e6, REC_OK);
	add_row(&r, "on_c", "cuda", 2, 1, 10, 1e6, REC_OK);
	add_row(&r, "on_c", "cuda", 0, 1, 10, 1e6, REC_OK);
	assert_int_equal(fleet_xtable_build(&x, &r), 0);
	assert_int_equal(x.n, 0);
	assert_int_equal(x.npairs, 0);
	assert_int_equal(x.nskipped_devices, 1);
	fleet_xtable_free(&x);
	record_free(&r);
}

/* ---------------------------------------------------------------- merged record */

static void test_fleet__merge_records_keeps_nodes_apart_and_names_failures(void **state)
{
	(void)state;
	struct run_record recs[2], m;
	const char *nodes[2] = {"gpu01", "gpu02"};
	struct fleet_node failed = {.node = "gpu03", .task = 2, .ok = 0,
				    .reason = "gpu03: hung past its time limit (60 min)"};

	record_init(&recs[0], "20260101T020001Z-gpu01", "gpu01", "O2-native+cuda");
	record_init(&recs[1], "20260101T020002Z-gpu02", "gpu02", "O3+cuda");
	for (int i = 0; i < 2; i++) {
		add_device(&recs[i], "NVIDIA H200", 4500);
		add_device(&recs[i], "NVIDIA H200", 4400);
		add_row(&recs[i], "moe_w4a16", "cuda", 1, 9, 200 + i, 1e9, REC_OK);
	}
	assert_int_equal(fleet_merge_records(&m, "20260101T020000Z-fleet-login",
					     "2026-01-01T02:00:00Z", recs, nodes, 2, &failed, 1),
			 0);
	assert_string_equal(m.run_id, "20260101T020000Z-fleet-login");
	assert_int_equal(m.ndevices, 5);
	assert_string_equal(m.devices[0].name, "NVIDIA H200 @gpu01");
	assert_string_equal(m.devices[3].name, "NVIDIA H200 @gpu02");
	assert_int_equal(m.nrows, 3);
	assert_int_equal(m.rows[0].device, 1);
	assert_int_equal(m.rows[1].device, 3); /* gpu02's device 1 */
	assert_true(fabs(m.rows[1].median_us - 201) < 1e-9);
	assert_string_equal(m.prov.build, "mixed");
	/* the failed node: its own device and a failed row that names it */
	assert_string_equal(m.devices[4].kind, "node");
	assert_string_equal(m.devices[4].name, "gpu03");
	assert_string_equal(m.rows[2].op, "node");
	assert_string_equal(m.rows[2].variant, "gpu03");
	assert_string_equal(m.rows[2].backend, "slurm");
	assert_int_equal(m.rows[2].device, 4);
	assert_int_equal(m.rows[2].status, REC_FAILED);
	assert_non_null(strstr(m.rows[2].reason, "gpu03: hung"));

	/* it survives the record format (the documents read it back) */
	char dir[] = "/tmp/ddt-fleet-XXXXXX";
	struct run_record back;
	struct ydiag diag = {0};
	assert_non_null(mkdtemp(dir));
	char *path = fsx_join(dir, "run.yaml");
	assert_int_equal(record_write(&m, path), 0);
	int rc = record_read(&back, path, &diag);
	ydiag_print(&diag, stderr);
	assert_int_equal(rc, 0);
	assert_int_equal(back.nrows, 3);
	assert_string_equal(back.rows[2].reason, m.rows[2].reason);
	record_free(&back);
	ydiag_free(&diag);
	free(path);
	fsx_rm_rf(dir);

	/* two nodes' records give a cross-device table between them */
	struct fleet_xtable x;
	assert_int_equal(fleet_xtable_build(&x, &m), 0);
	assert_int_equal(x.n, 2);
	fleet_xtable_free(&x);
	record_free(&m);
	record_free(&recs[0]);
	record_free(&recs[1]);
}

/* ---------------------------------------------------------------- node outcomes */

static void plan_with(struct fleet_plan *p, const char *const *nodes, int n)
{
	memset(p, 0, sizeof *p);
	snprintf(p->time_limit, sizeof p->time_limit, "60");
	for (int i = 0; i < n; i++)
		assert_int_equal(fleet_plan_add_node(p, nodes[i]), 0);
}

static struct fleet_task task_of(int i, const char *node, enum fleet_task_state st, int code,
				 const char *run_id, const char *reason)
{
	struct fleet_task t = {.task = i, .state = st, .exit_code = code};
	snprintf(t.node, sizeof t.node, "%s", node);
	snprintf(t.started, sizeof t.started, "2026-01-01T02:00:0%dZ", i);
	snprintf(t.run_id, sizeof t.run_id, "%s", run_id);
	snprintf(t.reason, sizeof t.reason, "%s", reason);
	return t;
}

static void test_fleet__every_fault_is_a_named_node(void **state)
{
	(void)state;
	static const char *const names[] = {"n1", "n2", "n3", "n4", "n5", "n6"};
	struct fleet_plan p;
	struct fleet_node out[6];
	struct fleet_task tasks[6];
	/* Slurm's final state per array task; task 5 wrote no file */
	const char *slurm[6] = {"COMPLETED", "FAILED", "TIMEOUT", "COMPLETED", "NODE_FAIL",
				"DEADLINE"};
	const char *node_state[6] = {"idle", "idle", "idle", "down*, Not responding", "down",
				     NULL};

	plan_with(&p, names, 6);
	tasks[0] = task_of(0, "n1", FT_DONE, 0, "20260101T020000Z-n1", "");
	tasks[1] = task_of(1, "n2", FT_FAILED, 1, "", "injected failure");
	/* killed at the time limit, it wrote "failed" on its way out */
	tasks[2] = task_of(2, "n3", FT_FAILED, 143, "", "Terminated");
	/* n4 never came up: its task landed on n1, which was measured already */
	tasks[3] = task_of(3, "n1", FT_DUPLICATE, -1, "", "n1 was already measured");
	tasks[4] = task_of(4, "n6", FT_RUNNING, -1, "", "");
	fleet_nodes_decide(out, &p, tasks, 5, slurm, node_state);

	assert_true(out[0].ok);
	assert_int_equal(out[0].task, 0);
	assert_string_equal(out[0].run_id, "20260101T020000Z-n1");

	assert_false(out[1].ok);
	assert_non_null(strstr(out[1].reason, "n2: bench failed"));
	assert_non_null(strstr(out[1].reason, "exit 1"));
	assert_non_null(strstr(out[1].reason, "injected failure"));

	assert_false(out[2].ok);
	assert_non_null(strstr(out[2].reason, "n3: hung past its time limit (60 min)"));

	assert_false(out[3].ok);
	assert_int_equal(out[3].task, -1);
	assert_non_null(strstr(out[3].reason, "n4: never started"));
	assert_non_null(strstr(out[3].reason, "down*, Not responding"));
	assert_non_null(strstr(out[3].reason, "task 5 DEADLINE"));

	assert_false(out[4].ok);
	assert_non_null(strstr(out[4].reason, "n5: never started"));

	/* n6's task started and its node died under it */
	assert_false(out[5].ok);
	assert_int_equal(out[5].task, 4);
	assert_non_null(strstr(out[5].reason, "n6: the node failed"));
	fleet_plan_free(&p);
}

static void test_fleet__node_listed_twice_takes_two_tasks(void **state)
{
	(void)state;
	static const char *const names[] = {"n1", "n1"};
	struct fleet_plan p;
	struct fleet_node out[2];
	struct fleet_task tasks[2];

	plan_with(&p, names, 2);
	tasks[0] = task_of(1, "n1", FT_DONE, 0, "20260101T020001Z-n1", "");
	tasks[1] = task_of(0, "n1", FT_DONE, 0, "20260101T020000Z-n1", "");
	fleet_nodes_decide(out, &p, tasks, 2, NULL, NULL);
	assert_true(out[0].ok && out[1].ok);
	assert_int_equal(out[0].task, 0); /* the lowest task first */
	assert_int_equal(out[1].task, 1);
	assert_string_equal(out[1].run_id, "20260101T020001Z-n1");
	fleet_plan_free(&p);
}

static void test_fleet__slurm_task_states_from_sacct_and_scontrol(void **state)
{
	(void)state;
	char st[6][32];
	memset(st, 0, sizeof st);
	fleet_task_states_parse(st, 6, "4711_0|COMPLETED\n4711_1|TIMEOUT\n4711_2|CANCELLED by 0\n"
				       "4711_[3-4]|PENDING\n4711_9|FAILED\n");
	assert_string_equal(st[0], "COMPLETED");
	assert_string_equal(st[1], "TIMEOUT");
	assert_string_equal(st[2], "CANCELLED");
	assert_string_equal(st[3], "PENDING");
	assert_string_equal(st[4], "PENDING");
	assert_string_equal(st[5], ""); /* task 9 is not one of ours */

	memset(st, 0, sizeof st);
	fleet_task_states_parse(st, 6,
				"JobId=9 ArrayJobId=5 ArrayTaskId=2 JobName=ddt-bench JobState=TIMEOUT "
				"Reason=TimeLimit\n"
				"JobId=5 ArrayJobId=5 ArrayTaskId=3-5%2 JobName=ddt-bench JobState=DEADLINE "
				"Reason=DeadLine\n"
				"JobId=7 ArrayJobId=5 ArrayTaskId=0 JobName=ddt-bench JobState=COMPLETED\n");
	assert_string_equal(st[0], "COMPLETED");
	assert_string_equal(st[1], "");
	assert_string_equal(st[2], "TIMEOUT");
	assert_string_equal(st[3], "DEADLINE");
	assert_string_equal(st[5], "DEADLINE");
}

/* ---------------------------------------------------------------- small parts */

static void test_fleet__slurm_time_limits(void **state)
{
	(void)state;
	double m = 0;
	assert_int_equal(fleet_time_min("90", &m), 0);
	assert_true(m == 90);
	assert_int_equal(fleet_time_min("1:30", &m), 0); /* MM:SS, seconds round up */
	assert_true(m == 2);
	assert_int_equal(fleet_time_min("1:30:00", &m), 0);
	assert_true(m == 90);
	assert_int_equal(fleet_time_min("0:00:01", &m), 0);
	assert_true(m == 1);
	assert_int_equal(fleet_time_min("2-0", &m), 0);
	assert_true(m == 2880);
	assert_int_equal(fleet_time_min("1-2:30", &m), 0);
	assert_true(m == 1440 + 150);
	assert_int_equal(fleet_time_min("1-00:00:30", &m), 0);
	assert_true(m == 1441);
	assert_int_equal(fleet_time_min("", &m), -1);
	assert_int_equal(fleet_time_min("x", &m), -1);
	assert_int_equal(fleet_time_min("1:2:3:4", &m), -1);
	assert_int_equal(fleet_time_min("-5", &m), -1);
	assert_int_equal(fleet_time_min("1-", &m), -1);
	assert_int_equal(fleet_time_min("10m", &m), -1);
}

static void test_fleet__busbw_is_nccl_tests_ring_figure(void **state)
{
	(void)state;
	assert_true(fabs(fleet_busbw(10, 8) - 17.5) < 1e-12);
	assert_true(fabs(fleet_busbw(10, 2) - 10) < 1e-12);
	assert_true(fleet_busbw(10, 1) == 0);
	assert_true(isnan(fleet_busbw(10, 0)));
}

static void test_fleet__task_and_plan_files_round_trip(void **state)
{
	(void)state;
	char dir[] = "/tmp/ddt-fleet-XXXXXX";
	struct ydiag diag = {0};
	assert_non_null(mkdtemp(dir));
	char *tpath = fsx_join(dir, "0.yaml"), *ppath = fsx_join(dir, "fleet.yaml");

	struct fleet_task t = task_of(3, "gpu-07", FT_TERMINATED, -1, "", "killed: \"time\" # limit"), u;
	snprintf(t.job_id, sizeof t.job_id, "123_3");
	assert_int_equal(fleet_task_write(&t, tpath), 0);
	assert_int_equal(fleet_task_read(&u, tpath, &diag), 0);
	assert_int_equal(u.task, 3);
	assert_string_equal(u.node, "gpu-07");
	assert_string_equal(u.job_id, "123_3");
	assert_int_equal(u.state, FT_TERMINATED);
	assert_int_equal(u.exit_code, -1);
	assert_string_equal(u.reason, t.reason);

	struct fleet_plan p, q;
	memset(&p, 0, sizeof p);
	fleet_make_id(p.id, sizeof p.id, p.created, sizeof p.created);
	assert_true(record_run_id_valid(p.id));
	assert_non_null(strstr(p.id, "Z-fleet-"));
	snprintf(p.ddt, sizeof p.ddt, "/opt/ddt/build/ddt");
	snprintf(p.runs, sizeof p.runs, "/shared/runs");
	snprintf(p.time_limit, sizeof p.time_limit, "1:30:00");
	snprintf(p.array_job, sizeof p.array_job, "4711");
	p.exclusive = 1;
	assert_int_equal(fleet_plan_add_node(&p, "gpu01"), 0);
	assert_int_equal(fleet_plan_add_node(&p, "gpu02"), 0);
	assert_int_equal(fleet_plan_add_node(&p, "a b"), DDT_EINPUT);
	assert_int_equal(fleet_plan_write(&p, ppath), 0);
	assert_int_equal(fleet_plan_read(&q, ppath, &diag), 0);
	assert_string_equal(q.id, p.id);
	assert_string_equal(q.runs, "/shared/runs");
	assert_string_equal(q.time_limit, "1:30:00");
	assert_string_equal(q.array_job, "4711");
	assert_int_equal(q.exclusive, 1);
	assert_int_equal(q.nnodes, 2);
	assert_string_equal(q.nodes[1], "gpu02");
	assert_string_equal(q.mpi_launcher, "");
	fleet_plan_free(&q);

	/* the launcher: left out when not chosen, srun or mpirun otherwise (as
	 * --mpi-launcher takes it); a plan that wrote it empty still reads */
	char *text = NULL;
	size_t len = 0;
	assert_int_equal(fsx_read_all(ppath, 1 << 20, &text, &len), 0);
	assert_null(strstr(text, "mpi_launcher"));
	free(text);
	snprintf(p.mpi_launcher, sizeof p.mpi_launcher, "mpirun");
	assert_int_equal(fleet_plan_write(&p, ppath), 0);
	assert_int_equal(fleet_plan_read(&q, ppath, &diag), 0);
	assert_string_equal(q.mpi_launcher, "mpirun");
	fleet_plan_free(&q);
	assert_int_equal(fsx_read_all(ppath, 1 << 20, &text, &len), 0);
	char *at = strstr(text, "mpi_launcher: mpirun\n"), *mod = malloc(len + 8);
	assert_non_null(at);
	assert_non_null(mod);
	for (int k = 0; k < 2; k++) {
		snprintf(mod, len + 8, "%.*smpi_launcher: %s\n%s", (int)(at - text), text,
			 k ? "pmi" : "\"\"", at + strlen("mpi_launcher: mpirun\n"));
		assert_int_equal(fsx_write_all(ppath, mod, strlen(mod)), 0);
		assert_int_equal(fleet_plan_read(&q, ppath, &diag), k ? DDT_EINPUT : 0);
		assert_string_equal(q.mpi_launcher, "");
		fleet_plan_free(&q);
	}
	assert_non_null(strstr(diag.msgs[diag.n - 1],
			       "mpi_launcher: expected srun or mpirun, got 'pmi'"));
	free(mod);
	free(text);
	/* a node that is not a node name is refused at its place in nodes */
	assert_int_equal(fleet_plan_write(&p, ppath), 0);
	assert_int_equal(fsx_read_all(ppath, 1 << 20, &text, &len), 0);
	assert_non_null(at = strstr(text, "  - gpu02\n"));
	int line = 1;
	for (const char *ch = text; ch < at; ch++)
		line += *ch == '\n';
	memcpy(at, "  - gpu;2", 9);
	assert_int_equal(fsx_write_all(ppath, text, len), 0);
	assert_int_equal(fleet_plan_read(&q, ppath, &diag), DDT_EINPUT);
	char want[64];
	snprintf(want, sizeof want, "fleet.yaml:%d:5: 'gpu;2' is not a node name", line);
	assert_non_null(strstr(diag.msgs[diag.n - 1], want));
	fleet_plan_free(&q);
	free(text);
	fleet_plan_free(&p);

	/* a damaged task file is an error naming the file and line */
	const char *bad = "task: 1\nnode: n1\nstate: exploded\n";
	assert_int_equal(fsx_write_all(tpath, bad, strlen(bad)), 0);
	assert_int_equal(fleet_task_read(&u, tpath, &diag), DDT_EINPUT);
	assert_true(diag.n >= 1);
	int found = 0;
	for (size_t i = 0; i < diag.n; i++)
		found |= strstr(diag.msgs[i], "0.yaml:3:8: state: expected running, done, failed, "
					      "terminated or duplicate, got 'exploded'") != NULL;
	assert_true(found);
	ydiag_free(&diag);
	free(tpath);
	free(ppath);
	fsx_rm_rf(dir);
}

static void test_fleet__shipped_template_has_fleet_settings(void **state)
{
	(void)state;
	struct tmpl t;
	struct fleet_conf c;
	struct ydiag diag = {0};
	assert_int_equal(tmpl_load(&t, "templates/default.yaml", &diag), 0);
	int rc = fleet_conf_load(&c, &t, &diag);
	ydiag_print(&diag, stderr);
	assert_int_equal(rc, 0);
	assert_true(c.nm >= 1);
	assert_int_equal(c.allreduce_hidden, 7168);
	assert_true(c.task_time_min > 0 && c.start_within_min > 0 && c.poll_s > 0);
	tmpl_free(&t);
	ydiag_free(&diag);
}

/* The shipped template with its allreduce_m line replaced by line, loaded;
 * returns fleet_conf_load's code, its first problem in msg. */
static int load_allreduce_m(const char *line, struct fleet_conf *c, char *msg, size_t len)
{
	char dir[] = "/tmp/ddt-fleetconf-XXXXXX", *text = NULL;
	size_t n = 0;
	struct tmpl t;
	struct ydiag diag = {0};
	assert_non_null(mkdtemp(dir));
	char *path = fsx_join(dir, "default.yaml");
	assert_int_equal(fsx_read_all("templates/default.yaml", 1 << 20, &text, &n), 0);
	char *at = strstr(text, "  allreduce_m: [1, 9, 33, 73]\n");
	char *mod = malloc(n + strlen(line) + 1);
	assert_non_null(at);
	assert_non_null(mod);
	snprintf(mod, n + strlen(line) + 1, "%.*s%s%s", (int)(at - text), text, line,
		 strchr(at, '\n') + 1);
	assert_int_equal(fsx_write_all(path, mod, strlen(mod)), 0);
	assert_int_equal(tmpl_load(&t, path, &diag), 0);
	int rc = fleet_conf_load(c, &t, &diag);
	snprintf(msg, len, "%s", diag.n ? diag.msgs[0] : "");
	tmpl_free(&t);
	ydiag_free(&diag);
	free(mod);
	free(text);
	free(path);
	fsx_rm_rf(dir);
	return rc;
}

/* allreduce_m: 1 to FLEET_MAX_M whole numbers above zero, each problem at
 * its place. */
static void test_fleet__allreduce_sizes_are_a_short_list_of_whole_numbers(void **state)
{
	(void)state;
	struct fleet_conf c;
	char msg[512];
	assert_int_equal(load_allreduce_m("  allreduce_m: [2, 4]\n", &c, msg, sizeof msg), 0);
	assert_int_equal(c.nm, 2);
	assert_int_equal(c.allreduce_m[1], 4);
	/* the list, at its first character */
	assert_int_equal(load_allreduce_m("  allreduce_m: []\n", &c, msg, sizeof msg),
			 DDT_EINPUT);
	assert_non_null(strstr(msg, "default.yaml:"));
	assert_non_null(strstr(msg, ":16: allreduce_m: expected 1 to 16 values, got 0"));
	/* an item, at it */
	assert_int_equal(load_allreduce_m("  allreduce_m: [1, 0]\n", &c, msg, sizeof msg),
			 DDT_EINPUT);
	assert_non_null(strstr(msg, ":20: allreduce_m must be greater than zero, got 0"));
	assert_int_equal(load_allreduce_m("  allreduce_m: [1, 2.5]\n", &c, msg, sizeof msg),
			 DDT_EINPUT);
	assert_non_null(strstr(msg, ":20: allreduce_m must be a whole number, got 2.5"));
	assert_int_equal(load_allreduce_m("  allreduce_m: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, "
					  "13, 14, 15, 16, 17]\n",
					  &c, msg, sizeof msg),
			 DDT_EINPUT);
	assert_non_null(strstr(msg, "allreduce_m: at most 16 items, got 17"));
}

static void test_fleet__devices_documents_name_devices_and_failures(void **state)
{
	(void)state;
	struct run_record r, m;
	const char *nodes[1] = {"gpu01"};
	struct fleet_node n[2] = {{.node = "gpu01", .task = 0, .ok = 1, .run_id = "20260101T020001Z-gpu01"},
				  {.node = "gpu02", .task = -1, .ok = 0,
				   .reason = "gpu02: never started: no task ran there"}};
	struct fleet_xtable x;
	char *text = NULL, *csv = NULL;
	size_t tlen = 0, clen = 0;

	record_init(&r, "20260101T020001Z-gpu01", "gpu01", "O2");
	add_device(&r, "H100", 3000);
	add_device(&r, "H200", 4500);
	add_row(&r, "moe_w4a16", "cuda", 0, 9, 300, 1e9, REC_OK);
	add_row(&r, "moe_w4a16", "cuda", 1, 9, 220, 1e9, REC_OK);
	add_row(&r, "allreduce", "mpi", 0, 9, 50, 129024, REC_OK);
	rec_row_param_set(&r.rows[2], "ranks", 8);
	assert_int_equal(fleet_merge_records(&m, "20260101T020000Z-fleet-x", "2026-01-01T02:00:00Z",
					     &r, nodes, 1, &n[1], 1),
			 0);
	assert_int_equal(fleet_xtable_build(&x, &m), 0);
	FILE *fp = open_memstream(&text, &tlen);
	fleet_write_devices_text(fp, &m, &x, n, 2, NULL, NULL);
	fclose(fp);
	fp = open_memstream(&csv, &clen);
	fleet_write_devices_csv(fp, &m, &x);
	fclose(fp);
	assert_non_null(strstr(text, "== device 0: H100 @gpu01"));
	assert_non_null(strstr(text, "== device 1: H200 @gpu01"));
	assert_non_null(strstr(text, "FAILED: gpu02: never started"));
	assert_non_null(strstr(text, "cross-device table"));
	assert_non_null(strstr(text, "all-reduce"));
	assert_non_null(strstr(text, "2.580")); /* algbw 2.58 GB/s, busbw x 1.75 = 4.516 */
	assert_non_null(strstr(text, "4.516"));
	assert_null(strstr(text, "== device 2")); /* the failed node has no device section */
	/* header + one row per (target, source) */
	int lines = 0;
	for (char *s = csv; *s; s++)
		lines += *s == '\n';
	assert_int_equal(lines, 1 + 2);
	assert_non_null(strstr(csv, "\"M=9,hidden=7168\""));
	free(text);
	free(csv);
	fleet_xtable_free(&x);
	record_free(&m);
	record_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fleet__xtable_projects_by_copy_bandwidth),
		cmocka_unit_test(test_fleet__xtable_pairs_take_medians_over_kernels),
		cmocka_unit_test(test_fleet__xtable_leaves_out_what_cannot_transfer),
		cmocka_unit_test(test_fleet__devices_csv_holds_hostile_names_as_text),
		cmocka_unit_test(test_fleet__merge_records_keeps_nodes_apart_and_names_failures),
		cmocka_unit_test(test_fleet__every_fault_is_a_named_node),
		cmocka_unit_test(test_fleet__node_listed_twice_takes_two_tasks),
		cmocka_unit_test(test_fleet__slurm_task_states_from_sacct_and_scontrol),
		cmocka_unit_test(test_fleet__slurm_time_limits),
		cmocka_unit_test(test_fleet__busbw_is_nccl_tests_ring_figure),
		cmocka_unit_test(test_fleet__task_and_plan_files_round_trip),
		cmocka_unit_test(test_fleet__shipped_template_has_fleet_settings),
		cmocka_unit_test(test_fleet__allreduce_sizes_are_a_short_list_of_whole_numbers),
		cmocka_unit_test(test_fleet__devices_documents_name_devices_and_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
