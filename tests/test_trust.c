/* test_trust.c - a shared runs/ as a hostile co-user would try it: a second
 * uid (65534, through setpriv) plants run folders, a lock, links at run ids
 * and at the log, an index; the clock goes back. What root then writes,
 * prints, keeps and points reports/latest at must not change
 * (docs/reliability.md, "Threat model"). Run as root, as CI does; skipped otherwise. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "fsx.h"

#define AS_NOBODY "setpriv --reuid=65534 --regid=65534 --clear-groups "

static char root[64];   /* the test's folder (0755) */
static char proj[2048]; /* the project folder (calibration, fonts) */
static char runs[128], reports[128], tmpl[128];

/* ---------------------------------------------------------------- helpers */

/* Runs a shell command; fails the test when it exits non-zero. */
static void sh_ok(const char *fmt, ...)
{
	char cmd[8192], *out = NULL;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	int st = helpers_run(&out, cmd);
	if (st != 0)
		fail_msg("%s: exit %d: %s", cmd, st, out);
	free(out);
}

/* Runs `ddt nightly` on runs/ and reports/ with extra args (may be "") and
 * env (assignments before it, may be ""); returns its exit status, stdout
 * and stderr (malloc'd). */
static int nightly_env(const char *env, const char *extra, char **out, char **err)
{
	char cmd[8192], fo[160], fe[160];
	snprintf(fo, sizeof fo, "%s/out.txt", root);
	snprintf(fe, sizeof fe, "%s/err.txt", root);
	snprintf(cmd, sizeof cmd,
		 "cd %s && %s DDT_HOME=%s %s nightly --runs %s --reports %s --template %s "
		 "--calibration %s/calibration %s >%s 2>%s",
		 root, env, proj, helpers_bin(), runs, reports, tmpl, proj, extra, fo, fe);
	int st = system(cmd);
	*out = helpers_slurp(fo);
	*err = helpers_slurp(fe);
	printf("--- nightly %s: %d\n%s%s", extra, WEXITSTATUS(st), *out, *err);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int nightly(const char *extra, char **out, char **err)
{
	return nightly_env("", extra, out, err);
}

/* The environment that preloads tests/plant_shim.c into ddt: the second
 * user plants the name ddt renames a folder to in `into`, in `at`, the
 * first `times` times, just before the rename. */
static void plant_env(char *env, size_t len, const char *into, const char *at, int times)
{
	char self[1024];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	assert_true(n > 0);
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	snprintf(env, len,
		 "LD_PRELOAD=%s/plant_shim.so ASAN_OPTIONS=verify_asan_link_order=0 "
		 "DDT_PLANT_INTO=%s DDT_PLANT_AT=%s DDT_PLANT_TIMES=%d",
		 self, into, at, times);
}

/* True when dir/name is the second user's planted folder, its file whole. */
static int still_planted(const char *dir, const char *name)
{
	char p[512];
	struct stat st;
	snprintf(p, sizeof p, "%s/%s/mine", dir, name);
	return stat(p, &st) == 0 && st.st_uid == 65534 && st.st_size == 5;
}

/* The run id reports/latest points at, into id ("" when none). */
static void latest(char *id, size_t len)
{
	char link[160];
	snprintf(link, sizeof link, "%s/latest", reports);
	ssize_t n = readlink(link, id, len - 1);
	id[n > 0 ? n : 0] = '\0';
}

/* The id of the newest run folder made by root (by name). */
static void newest_run(char *id, size_t len)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "ls %s | grep -v 2999 | grep '^20' | sort | tail -1 | tr -d '\\n'",
		 runs);
	assert_int_equal(helpers_capture(cmd, id, len), 0);
	assert_true(id[0]);
}

/* True when no line of text starts with word, and text holds no ESC byte. */
static int clean_lines(const char *text, const char *word)
{
	if (strchr(text, '\033'))
		return 0;
	for (const char *l = text; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, word, strlen(word)))
			return 0;
	return 1;
}

static int need_root(void)
{
	if (geteuid() == 0 && system("setpriv --version >/dev/null 2>&1") == 0)
		return 1;
	printf("skipped: needs root and setpriv to act as a second user\n");
	return 0;
}

static int setup_each(void **state)
{
	(void)state;
	const char *h = getenv("DDT_HOME");
	if (h && *h)
		snprintf(proj, sizeof proj, "%s", h);
	else if (!getcwd(proj, sizeof proj))
		return -1;
	snprintf(root, sizeof root, "/tmp/ddt-trust-XXXXXX");
	if (!mkdtemp(root) || chmod(root, 0755) != 0)
		return -1;
	snprintf(runs, sizeof runs, "%s/runs", root);
	snprintf(reports, sizeof reports, "%s/reports", root);
	snprintf(tmpl, sizeof tmpl, "%s/templates/tiny.yaml", root);
	char src[4096], *buf = NULL, *dst = fsx_join(root, "templates/default.yaml");
	size_t len = 0;
	snprintf(src, sizeof src, "%s/templates/default.yaml", proj);
	int rc = fsx_read_all(src, 1 << 20, &buf, &len) || fsx_mkdir_p(dst) || rmdir(dst) ||
		 fsx_write_all(dst, buf, len) ||
		 fsx_write_all(tmpl, helpers_tiny_yaml, strlen(helpers_tiny_yaml)) ||
		 fsx_mkdir_p(runs) || fsx_mkdir_p(reports) || chmod(runs, 01777) ||
		 chmod(reports, 0755);
	free(buf);
	free(dst);
	return rc ? -1 : 0;
}

static int teardown_each(void **state)
{
	(void)state;
	fsx_rm_rf(root);
	return 0;
}

/* ---------------------------------------------------------------- tests */

/* A run folder another user planted, committed "ahead" (its run.yaml dated
 * tomorrow, created 2999), with its calibration and template so that it
 * could be repaired, and a folder whose name holds a terminal escape:
 * neither becomes reports/latest, neither is repaired or rendered, and the
 * warnings show the escape escaped. A record of root's whose text holds a
 * line of its own shows it escaped too. */
static void test_trust__planted_run_decides_nothing(void **state)
{
	(void)state;
	char *out, *err, real[96], got[96];
	if (!need_root())
		skip();
	assert_int_equal(nightly("", &out, &err), 0);
	free(out), free(err);
	newest_run(real, sizeof real);
	/* the co-user copies the real night, re-dated, without its projection */
	sh_ok("cd %s && " AS_NOBODY "sh -c 'cp -r %s 29991231T000000Z-evil && "
	      "cd 29991231T000000Z-evil && rm -f projection.yaml && "
	      "sed -i -e \"s/%s/29991231T000000Z-evil/\" -e \"s/^created: .*/created: "
	      "2999-12-31T00:00:00Z/\" -e \"s/^schema: .*/schema: 3/\" -e \"/^# ddt-record-end/d\" "
	      "run.yaml && touch -d tomorrow run.yaml && cd .. && mkdir \"$(printf \"x\\033[31mred\")\"'",
	      runs, real, real);
	/* root's own damaged record, whose run id holds a line of its own */
	sh_ok("mkdir %s/20200101T000000Z-x && printf 'schema: 3\\nrun_id: \"bad\\\\nREGRESSION: "
	      "none, all clear\"\\n' > %s/20200101T000000Z-x/run.yaml",
	      runs, runs);
	int st = nightly("", &out, &err);
	assert_int_equal(st, 0);
	latest(got, sizeof got);
	assert_true(strncmp(got, "29991231", 8) != 0);
	assert_true(strcmp(got, real) > 0); /* tonight's, after the real night */
	char p[256];
	snprintf(p, sizeof p, "%s/29991231T000000Z-evil", reports);
	assert_int_equal(fsx_kind(p), FSX_NONE); /* not rendered */
	snprintf(p, sizeof p, "%s/29991231T000000Z-evil/projection.yaml", runs);
	assert_int_equal(fsx_kind(p), FSX_NONE); /* not repaired */
	assert_true(clean_lines(out, "REGRESSION") && clean_lines(err, "REGRESSION"));
	assert_non_null(strstr(err, "not trusted"));
	assert_non_null(strstr(err, "x\\e[31mred"));
	free(out), free(err);
	/* nor does `ddt report` render it, asked by name */
	char args[512];
	snprintf(args, sizeof args, "report 29991231T000000Z-evil --runs %s --reports %s", runs,
		 reports);
	st = helpers_ddt(&out, args);
	printf("%s", out);
	assert_int_not_equal(st, 0);
	assert_non_null(strstr(out, "not trusted"));
	snprintf(p, sizeof p, "%s/29991231T000000Z-evil", reports);
	assert_int_equal(fsx_kind(p), FSX_NONE);
	free(out);
}

/* Another user holds an flock on a lock file of theirs, written to say its
 * holder is pid 1 since three hours: the nightly replaces it, runs, and
 * never advises killing pid 1. */
static void test_trust__lock_file_of_another_user_decides_nothing(void **state)
{
	(void)state;
	char *out, *err, lockp[160];
	if (!need_root())
		skip();
	snprintf(lockp, sizeof lockp, "%s/.nightly.lock", runs);
	sh_ok(AS_NOBODY "sh -c 'echo \"1 %lld\" > %s'", (long long)time(NULL) - 3 * 3600, lockp);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setpgid(0, 0);
		execlp("setpriv", "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
		       "flock", "-o", lockp, "sleep", "60", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) { /* until the co-user holds it */
		int fd = open(lockp, O_RDONLY);
		int held = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0;
		if (fd >= 0)
			close(fd);
		if (held)
			break;
		usleep(10000);
	}
	int st = nightly("", &out, &err);
	kill(-pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_int_equal(st, 0);
	assert_null(strstr(err, "kill 1"));
	assert_non_null(strstr(err, "not trusted"));
	struct stat s;
	assert_int_equal(lstat(lockp, &s), 0);
	assert_int_equal(s.st_uid, 0); /* the lock is root's own now */
	free(out), free(err);
}

/* Dangling links at tonight's run ids (and the next seconds'): the night
 * gets the next free id, whole; none is lost. */
static void test_trust__taken_run_ids_lose_no_night(void **state)
{
	(void)state;
	char *out, *err, host[64] = "host", clean[64], cmd[8192];
	size_t j = 0, used = 0;
	if (!need_root())
		skip();
	gethostname(host, sizeof host - 1);
	for (size_t i = 0; host[i] && host[i] != '.' && j < sizeof clean - 1; i++)
		clean[j++] = (host[i] >= 'a' && host[i] <= 'z') || (host[i] >= 'A' && host[i] <= 'Z') ||
				     (host[i] >= '0' && host[i] <= '9') || host[i] == '-'
			     ? host[i]
			     : '-';
	clean[j] = '\0';
	used = (size_t)snprintf(cmd, sizeof cmd, "cd %s && " AS_NOBODY "sh -c '", runs);
	time_t now = time(NULL);
	for (int s = 0; s < 30; s++) {
		struct tm tm;
		time_t t = now + s;
		gmtime_r(&t, &tm);
		used += (size_t)snprintf(cmd + used, sizeof cmd - used,
					 "ln -s /nonexistent %04d%02d%02dT%02d%02d%02dZ-%s; ",
					 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
					 tm.tm_min, tm.tm_sec, clean);
	}
	snprintf(cmd + used, sizeof cmd - used, "true'");
	sh_ok("%s", cmd);
	int st = nightly("", &out, &err);
	assert_int_equal(st, 0);
	char found[96] = "";
	snprintf(cmd, sizeof cmd, "cd %s && for d in 20*-%s-2; do [ -f $d/run.yaml ] && echo $d; done",
		 runs, clean);
	assert_int_equal(helpers_capture(cmd, found, sizeof found), 0);
	assert_true(strstr(found, "-2") != NULL);
	assert_non_null(strstr(err, "taken"));
	free(out), free(err);
}

/* The second user plants tonight's run id in runs/ at the moment of the
 * commit, then the next id at the retry: the night still lands whole, at
 * ID-3, and every file in it names ID-3 (run.yaml with its trailer, the
 * verdicts, the projection); its documents and latest follow; the planted
 * folders stay as they were. The next night reads it as an undamaged night. */
static void test_trust__name_taken_at_commit_loses_no_night(void **state)
{
	(void)state;
	char *out, *err, env[2048], id[96], base[96], want[128], p[512], *txt;
	if (!need_root())
		skip();
	assert_int_equal(nightly("", &out, &err), 0); /* a night before: tonight is judged */
	free(out), free(err);
	for (time_t t0 = time(NULL); time(NULL) == t0;) /* tonight's id: a second of its own */
		usleep(20000);
	plant_env(env, sizeof env, runs, runs, 2);
	int st = nightly_env(env, "", &out, &err);
	assert_int_equal(st, 0);
	latest(id, sizeof id);
	assert_non_null(strstr(id, "-3"));
	snprintf(base, sizeof base, "%.*s", (int)(strstr(id, "-3") - id), id);
	char two[128];
	snprintf(two, sizeof two, "%s-2", base);
	assert_true(still_planted(runs, base));
	assert_true(still_planted(runs, two));
	snprintf(want, sizeof want, "run_id: \"%s\"\n", id);
	static const char *const files[] = {"run.yaml", "verdicts.yaml", "projection.yaml"};
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof p, "%s/%s/%s", runs, id, files[i]);
		txt = helpers_slurp(p);
		assert_non_null(txt);
		if (!strstr(txt, want))
			fail_msg("%s does not name %s", p, id);
		for (int k = 0; k < 2; k++) { /* no line names the ids taken */
			char old[160];
			snprintf(old, sizeof old, "run_id: \"%s\"\n", k ? two : base);
			if (strstr(txt, old))
				fail_msg("%s names %s", p, k ? two : base);
		}
		free(txt);
	}
	snprintf(p, sizeof p, "%s/%s/report.pdf", reports, id);
	assert_int_equal(access(p, F_OK), 0);
	assert_non_null(strstr(err, "taken"));
	free(out), free(err);
	assert_int_equal(nightly("", &out, &err), 0);
	assert_null(strstr(err, "damaged"));
	assert_non_null(strstr(out, "3 nights, 2 series")); /* the two before it read */
	free(out), free(err);
}

/* The second user plants tonight's id in reports/ while the run folder is
 * put in place: the documents are not written there, the planted folder is
 * neither replaced nor removed, the failure names it, and the night is in
 * runs/ all the same. */
static void test_trust__documents_never_replace_a_planted_folder(void **state)
{
	(void)state;
	char *out, *err, env[2048], id[96], p[512];
	if (!need_root())
		skip();
	assert_int_equal(chmod(reports, 01777), 0); /* others may write reports/ too */
	plant_env(env, sizeof env, runs, reports, 1);
	int st = nightly_env(env, "", &out, &err);
	assert_int_not_equal(st, 0);
	newest_run(id, sizeof id);
	snprintf(p, sizeof p, "%s/%s/run.yaml", runs, id);
	assert_int_equal(access(p, F_OK), 0);
	assert_true(still_planted(reports, id));
	assert_non_null(strstr(err, "a folder not ours"));
	free(out), free(err);
}

/* Documents made again (`ddt report ID`) while the second user, in a
 * reports/ without the sticky bit, moves the run's documents away and puts
 * a folder of theirs at reports/ID between ddt's check and its exchange:
 * their folder gets its name back, is not removed, and the failure names
 * it. */
static void test_trust__documents_swapped_under_the_exchange_stay(void **state)
{
	(void)state;
	char *out, *err, env[2048], id[96], args[1024], cmd[8192];
	if (!need_root())
		skip();
	assert_int_equal(nightly("", &out, &err), 0);
	free(out), free(err);
	newest_run(id, sizeof id);
	assert_int_equal(chmod(reports, 0777), 0);
	plant_env(env, sizeof env, reports, reports, 1);
	snprintf(args, sizeof args, "report %s --runs %s --reports %s", id, runs, reports);
	snprintf(cmd, sizeof cmd, "cd %s && DDT_PLANT_SWAP=1 %s DDT_HOME=%s %s %s 2>&1", root, env,
		 proj, helpers_bin(), args);
	int st = helpers_run(&out, cmd);
	printf("%s", out);
	assert_int_not_equal(st, 0);
	assert_non_null(strstr(out, "a folder not ours"));
	assert_true(still_planted(reports, id));
	free(out);
}

/* --log FILE appends what the nightly prints, and never through a link
 * another user planted at FILE (the cron line's old `>>` followed it). */
static void test_trust__log_never_follows_a_planted_link(void **state)
{
	(void)state;
	char *out, *err, victim[160], arg[256];
	if (!need_root())
		skip();
	snprintf(victim, sizeof victim, "%s/victim", root);
	assert_int_equal(fsx_write_all(victim, "root:x:0:0\n", 11), 0);
	sh_ok("cd %s && " AS_NOBODY "ln -s %s nightly-cron.log", runs, victim);
	snprintf(arg, sizeof arg, "--quiet --log %s/nightly-cron.log", runs);
	int st = nightly(arg, &out, &err);
	char *v = helpers_slurp(victim);
	assert_string_equal(v, "root:x:0:0\n");
	free(v);
	assert_int_equal(st, 0);
	assert_non_null(strstr(err, "--log"));
	free(out), free(err);
	/* a log of root's own: appended, the same text as printed */
	snprintf(arg, sizeof arg, "--log %s/own.log", runs);
	assert_int_equal(nightly(arg, &out, &err), 0);
	free(out), free(err);
	assert_int_equal(nightly(arg, &out, &err), 0);
	snprintf(victim, sizeof victim, "%s/own.log", runs);
	v = helpers_slurp(victim);
	assert_non_null(strstr(v, out)); /* the second night's text, after the first's */
	assert_true(strlen(v) > strlen(out) + 10);
	free(v);
	free(out), free(err);
}

/* The clock went back a day: tonight is reports/latest all the same. */
static void test_trust__clock_back_tonight_is_latest(void **state)
{
	(void)state;
	char *out, *err, first[96], got[96];
	if (!need_root())
		skip();
	assert_int_equal(nightly("", &out, &err), 0);
	free(out), free(err);
	newest_run(first, sizeof first);
	/* the first night was committed "tomorrow" by tonight's clock */
	sh_ok("touch -d tomorrow %s/%s/run.yaml", runs, first);
	sleep(1); /* a new run id */
	assert_int_equal(nightly("", &out, &err), 0);
	latest(got, sizeof got);
	assert_true(got[0]);
	assert_string_not_equal(got, first);
	free(out), free(err);
}

/* An index another user replaced (forged: a night said to be skipped) is
 * not read; the history is the records'. No PRAGMA runs through --sql. */
static void test_trust__index_of_another_user_is_not_read(void **state)
{
	(void)state;
	char *out, *err, args[512];
	if (!need_root())
		skip();
	if (system("sqlite3 --version >/dev/null 2>&1") != 0) {
		printf("skipped: needs the sqlite3 command to forge an index\n");
		skip();
	}
	assert_int_equal(nightly("", &out, &err), 0);
	free(out), free(err);
	snprintf(args, sizeof args, "history --runs %s --template %s", runs, tmpl);
	assert_int_equal(helpers_ddt(&out, args), 0);
	free(out);
	sh_ok("cd %s && sqlite3 .index.sqlite \"UPDATE runs SET skipped = 'FORGED by uid 65534'\" "
	      "&& chown 65534 .index.sqlite",
	      runs);
	assert_int_equal(helpers_ddt(&out, args), 0);
	printf("%s", out);
	assert_null(strstr(out, "FORGED"));
	assert_non_null(strstr(out, "not trusted"));
	free(out);
	/* answers to alerts another user wrote are not read either */
	sh_ok("cd %s && " AS_NOBODY "sh -c 'printf \"schema: 1\\nacks: []\\n\" > acks.yaml'", runs);
	snprintf(args, sizeof args, "history --runs %s --template %s", runs, tmpl);
	assert_int_equal(helpers_ddt(&out, args), 0);
	printf("%s", out);
	assert_non_null(strstr(out, "acks.yaml: not trusted"));
	free(out);
	snprintf(args, sizeof args, "history --runs %s --sql 'PRAGMA writable_schema = 1'", runs);
	int st = helpers_ddt(&out, args);
	printf("%s", out);
	assert_int_not_equal(st, 0);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_trust__planted_run_decides_nothing, setup_each,
						teardown_each),
		cmocka_unit_test_setup_teardown(test_trust__lock_file_of_another_user_decides_nothing,
						setup_each, teardown_each),
		cmocka_unit_test_setup_teardown(test_trust__taken_run_ids_lose_no_night, setup_each,
						teardown_each),
		cmocka_unit_test_setup_teardown(test_trust__name_taken_at_commit_loses_no_night,
						setup_each, teardown_each),
		cmocka_unit_test_setup_teardown(test_trust__documents_never_replace_a_planted_folder,
						setup_each, teardown_each),
		cmocka_unit_test_setup_teardown(test_trust__documents_swapped_under_the_exchange_stay,
						setup_each, teardown_each),
		cmocka_unit_test_setup_teardown(test_trust__log_never_follows_a_planted_link,
						setup_each, teardown_each),
		cmocka_unit_test_setup_teardown(test_trust__clock_back_tonight_is_latest, setup_each,
						teardown_each),
		cmocka_unit_test_setup_teardown(test_trust__index_of_another_user_is_not_read,
						setup_each, teardown_each),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
