/* test_fsx.c - files ddt writes and deletes in a folder others can write:
 * links on the way or at the file are refused and never followed, the lock
 * file included, and a folder swapped for a link during a removal is removed
 * as the link (a swap loop against the sweep finds nothing outside touched). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "err.h"
#include "esc.h"
#include "fsx.h"
#include "lock.h"

#define VICTIM_TEXT "not ddt's: must survive\n"
#define OUTSIDE_FILES 200

static char root[64]; /* each test's own folder: runs/ (shared, hostile) and outside/ */

static char *path_in(const char *a, const char *b)
{
	char *p = fsx_join(a, b);
	assert_non_null(p);
	return p;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* The number of files in outside/ that still hold VICTIM_TEXT. */
static int outside_intact(void)
{
	int n = 0;
	for (int i = 0; i < OUTSIDE_FILES; i++) {
		char name[PATH_MAX];
		snprintf(name, sizeof name, "%s/outside/f%03d", root, i);
		char *t = helpers_slurp(name);
		n += !strcmp(t, VICTIM_TEXT);
		free(t);
	}
	return n;
}

static int setup(void **state)
{
	(void)state;
	char p[PATH_MAX];
	snprintf(root, sizeof root, "/tmp/ddt-fsx-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(p, sizeof p, "%s/runs", root);
	mkdir(p, 0777);
	snprintf(p, sizeof p, "%s/outside", root);
	mkdir(p, 0777);
	for (int i = 0; i < OUTSIDE_FILES; i++) {
		snprintf(p, sizeof p, "%s/outside/f%03d", root, i);
		put(p, VICTIM_TEXT);
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return fsx_rm_rf(root);
}

static long dead_pid(void)
{
	int st;
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, &st, 0);
	return (long)pid;
}

/* ---------------------------------------------------------------- writes */

static void test_fsx__a_link_on_the_way_or_at_the_file_is_refused(void **state)
{
	(void)state;
	char *runs = path_in(root, "runs"), *out = path_in(root, "outside");
	char *dlink = path_in(runs, "docs"), *flink = path_in(runs, "run.yaml");
	char *victim = path_in(out, "f000"), *through = path_in(dlink, "x.txt");
	char *made = path_in(out, "x.txt"), *sub = path_in(dlink, "sub"), *osub = path_in(out, "sub");

	assert_int_equal(symlink(out, dlink), 0);
	assert_int_equal(symlink(victim, flink), 0);

	/* a folder on the way is a link: refused, named, nothing made outside */
	assert_int_equal(fsx_write_all(through, "x", 1), DDT_EIO);
	assert_non_null(strstr(err_msg(), "symbolic link"));
	assert_non_null(strstr(err_msg(), dlink));
	assert_false(fsx_exists(made));
	assert_int_equal(fsx_mkdir_p(sub), DDT_EIO);
	assert_false(fsx_exists(osub));
	assert_true(fsx_open_fd(through, O_WRONLY | O_CREAT, 0644) < 0);
	assert_false(fsx_exists(made));

	/* the file itself is a link: refused, the link and its target untouched */
	assert_int_equal(fsx_write_all(flink, "x", 1), DDT_EIO);
	assert_non_null(strstr(err_msg(), "symbolic link"));
	assert_int_equal(fsx_kind(flink), FSX_LINK);
	assert_true(fsx_open_fd(flink, O_WRONLY | O_TRUNC, 0644) < 0);
	assert_non_null(strstr(err_msg(), "symbolic link"));

	/* removing a link removes the link, never what it points at */
	assert_int_equal(fsx_rm_rf(dlink), 0);
	assert_int_equal(fsx_rm_rf(flink), 0);
	assert_int_equal(fsx_kind(dlink), FSX_NONE);
	assert_int_equal(outside_intact(), OUTSIDE_FILES);
	free(runs), free(out), free(dlink), free(flink), free(victim);
	free(through), free(made), free(sub), free(osub);
}

static void test_fsx__operator_links_are_resolved_once_where_paths_enter(void **state)
{
	(void)state;
	char *link = path_in(root, "runs-link"), *runs = path_in(root, "runs");
	char want[PATH_MAX + 16], got[PATH_MAX + 16], real[PATH_MAX], given[PATH_MAX + 16];

	assert_int_equal(symlink(runs, link), 0);
	assert_non_null(realpath(runs, real));
	snprintf(given, sizeof given, "%s/not/yet", link);
	snprintf(want, sizeof want, "%s/not/yet", real);
	assert_int_equal(fsx_canonical(given, got, sizeof got), 0);
	assert_string_equal(got, want);
	/* written through the canonical path: lands in runs/ */
	assert_int_equal(fsx_mkdir_p(got), 0);
	assert_int_equal(fsx_kind(want), FSX_DIR);
	assert_int_equal(fsx_canonical(given, got, 8), DDT_EINPUT);
	assert_int_equal(unlink(link), 0);
	free(link), free(runs);
}

/* ---------------------------------------------------------------- the lock */

static void test_fsx__lock_file_that_is_a_link_or_a_second_name_is_never_written(void **state)
{
	(void)state;
	char *runs = path_in(root, "runs"), *lockp = path_in(runs, ".nightly.lock");
	char *victim = path_in(root, "outside/f001");
	int fd = 0;

	assert_int_equal(symlink(victim, lockp), 0); /* ln -s /etc/shadow runs/.nightly.lock */
	assert_int_equal(lock_take(lockp, &fd, NULL), DDT_EIO);
	assert_int_equal(fd, -1);
	assert_non_null(strstr(err_msg(), "symbolic link"));
	assert_int_equal(unlink(lockp), 0);

	assert_int_equal(link(victim, lockp), 0); /* a hard link to the same file */
	assert_int_equal(lock_take(lockp, &fd, NULL), DDT_EIO);
	assert_non_null(strstr(err_msg(), "another name"));
	assert_int_equal(unlink(lockp), 0);

	assert_int_equal(mkfifo(lockp, 0600), 0);
	assert_int_equal(lock_take(lockp, &fd, NULL), DDT_EIO);
	assert_int_equal(unlink(lockp), 0);
	assert_int_equal(outside_intact(), OUTSIDE_FILES);
	free(runs), free(lockp), free(victim);
}

static void test_fsx__held_lock_names_its_holder_and_since_when(void **state)
{
	(void)state;
	char *lockp = path_in(root, "lockfile"), want[64];
	struct lock_holder h = {0};
	time_t before = time(NULL);
	int a, b;

	assert_int_equal(lock_take(lockp, &a, NULL), 0);
	assert_int_equal(lock_take(lockp, &b, &h), DDT_ELOCKED);
	assert_int_equal(b, -1);
	assert_int_equal(h.pid, (long)getpid());
	assert_true(h.since >= (long long)before - 1 && h.since <= (long long)time(NULL));
	snprintf(want, sizeof want, "(pid %ld, since ", (long)getpid());
	assert_non_null(strstr(err_msg(), want));
	lock_release(a);
	assert_int_equal(lock_take(lockp, &b, &h), 0);
	lock_release(b);
	free(lockp);
}

/* ---------------------------------------------------------------- removal */

/* The swapper: forever moves runs/<tmp> aside and puts a link to outside/ in
 * its place, then puts it back (what a hostile user of runs/ can do). */
static void swap_forever(const char *runs, const char *tmp)
{
	char *a = path_in(runs, tmp), *aside = path_in(runs, "aside"), *out = path_in(root, "outside");
	for (;;) {
		if (rename(a, aside) == 0) {
			if (symlink(out, a) == 0) {
				for (volatile int spin = 0; spin < 2000; spin++)
					;
				unlink(a);
			}
			rename(aside, a);
		}
	}
}

/* Fills runs/<tmp> (a dead writer's temporary folder) with files. */
static void make_temp_folder(const char *runs, const char *tmp)
{
	char *a = path_in(runs, tmp), *aside = path_in(runs, "aside");
	if (!fsx_exists(a) && !fsx_exists(aside) && mkdir(a, 0777) == 0)
		for (int i = 0; i < 20; i++) {
			char name[PATH_MAX];
			snprintf(name, sizeof name, "%s/f%03d", a, i);
			int fd = open(name, O_WRONLY | O_CREAT | O_NOFOLLOW, 0644);
			if (fd >= 0)
				close(fd);
		}
	free(a);
	free(aside);
}

static void test_fsx__sweep_under_a_link_swap_touches_nothing_outside(void **state)
{
	(void)state;
	char *runs = path_in(root, "runs"), tmp[64];
	int removed = 0, rounds = 0;
	struct timespec t0, t;

	snprintf(tmp, sizeof tmp, ".20260101T000000Z-a.tmp-%ld", dead_pid());
	make_temp_folder(runs, tmp);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		swap_forever(runs, tmp);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do { /* three seconds of sweeps against the swap loop */
		make_temp_folder(runs, tmp);
		removed += lock_sweep_temps(runs);
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 3 && outside_intact() == OUTSIDE_FILES);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	printf("%d sweeps, %d temporary entries removed\n", rounds, removed);
	assert_true(removed > 0); /* the sweep did remove folders during the swaps */
	assert_int_equal(outside_intact(), OUTSIDE_FILES);
	free(runs);
}

/* ---------------------------------------------------------------- reading beneath */

/* Under a folder registered as one others write (fsx_confine_reads), a file
 * is read only through no link at all (at the file or on the way) and only
 * when it is a regular file: a FIFO answers at once, a device is refused, a
 * link to a mode-600 file leaks nothing. Outside it, the operator's own links
 * are followed as before. */
static void test_fsx__files_under_a_shared_folder_are_read_beneath_it(void **state)
{
	(void)state;
	char *runs = path_in(root, "runs"), *run = path_in(runs, "r"), *secret = path_in(root, "secret");
	char *f = path_in(run, "run.yaml"), *fifo = path_in(run, "fifo"), *dev = path_in(run, "null");
	char *sub = path_in(run, "sub"), *via = path_in(run, "sub/run.yaml"), *data = NULL;
	char real[PATH_MAX];
	size_t len = 0;

	assert_int_equal(fsx_mkdir_p(run), 0);
	put(secret, "root:$6$secret:0:0\n");
	assert_int_equal(chmod(secret, 0600), 0);
	assert_non_null(realpath(runs, real));
	fsx_confine_reads(real);
	free(f), free(fifo), free(dev), free(sub), free(via), free(run);
	run = path_in(real, "r");
	f = path_in(run, "run.yaml"), fifo = path_in(run, "fifo"), dev = path_in(run, "null");
	sub = path_in(run, "sub"), via = path_in(run, "sub/run.yaml");

	assert_int_equal(symlink(secret, f), 0); /* at the file */
	assert_int_equal(fsx_read_all(f, 1 << 20, &data, &len), DDT_EINPUT);
	assert_null(strstr(err_msg(), "secret"));
	assert_non_null(strstr(err_msg(), "not followed"));
	assert_int_equal(symlink(root, sub), 0); /* on the way: sub -> the test's folder */
	char *via_secret = path_in(run, "sub/secret");
	assert_int_equal(fsx_read_all(via_secret, 1 << 20, &data, &len), DDT_EINPUT);
	assert_non_null(strstr(err_msg(), "not followed"));
	free(via_secret);
	char *up = path_in(run, "../../secret"); /* and out by .. */
	assert_int_not_equal(fsx_read_all(up, 1 << 20, &data, &len), 0);
	free(up);
	assert_int_equal(mkfifo(fifo, 0666), 0); /* no writer: a blocking open would hang */
	assert_int_equal(fsx_read_all(fifo, 1 << 20, &data, &len), DDT_EINPUT);
	assert_non_null(strstr(err_msg(), "not a regular file"));
	if (mknod(dev, S_IFCHR | 0666, makedev(1, 3)) == 0) { /* /dev/null, as root */
		assert_int_equal(fsx_read_all(dev, 1 << 20, &data, &len), DDT_EINPUT);
		assert_non_null(strstr(err_msg(), "not a regular file"));
	}
	assert_int_equal(unlink(f), 0);
	put(f, "schema: 3\n");
	assert_int_equal(fsx_read_all(f, 1 << 20, &data, &len), 0);
	assert_string_equal(data, "schema: 3\n");
	free(data);
	/* openat2, then the openat walk (kernels without openat2): the same */
	int dir = open(real, O_PATH | O_DIRECTORY);
	assert_true(dir >= 0);
	for (int walk = 0; walk < 2; walk++) {
		if (walk)
			setenv("DDT_NO_OPENAT2", "1", 1);
		assert_int_equal(fsx_open_beneath(dir, "r/sub/secret", O_RDONLY), -1);
		assert_int_equal(errno, ELOOP);
		assert_int_equal(fsx_open_beneath(dir, "r/../../secret", O_RDONLY), -1);
		assert_int_equal(errno, EXDEV);
		assert_int_equal(fsx_open_beneath(dir, "/etc/passwd", O_RDONLY), -1);
		int fd = fsx_open_beneath(dir, "r/run.yaml", O_RDONLY);
		assert_true(fd >= 0);
		close(fd);
		fd = fsx_open_beneath(dir, "r/fifo", O_RDONLY | O_NONBLOCK); /* does not block */
		assert_true(fd >= 0);
		close(fd);
	}
	unsetenv("DDT_NO_OPENAT2");
	close(dir);
	free(f), free(fifo), free(dev), free(sub), free(via), free(run), free(runs), free(secret);
}

/* The trust rule: the running user's or root's, writable by its owner
 * alone; anything else is named with why. */
static void test_fsx__trust_rule_names_why(void **state)
{
	(void)state;
	char *p = path_in(root, "t"), why[96];
	struct stat st;

	put(p, "x");
	assert_int_equal(chmod(p, 0644), 0);
	assert_int_equal(fsx_trusted_path(p, why, sizeof why), 1);
	assert_int_equal(chmod(p, 0664), 0);
	assert_int_equal(fsx_trusted_path(p, why, sizeof why), 0);
	assert_string_equal(why, "writable by group or others (mode 0664)");
	assert_int_equal(chmod(p, 0644), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(p, 65534, 65534), 0);
		assert_int_equal(fsx_trusted_path(p, why, sizeof why), 0);
		assert_non_null(strstr(why, "owned by uid 65534"));
	}
	assert_int_equal(lstat(p, &st), 0);
	free(p);
	p = path_in(root, "l");
	assert_int_equal(symlink("t", p), 0);
	assert_int_equal(fsx_trusted_path(p, why, sizeof why), 0);
	assert_string_equal(why, "a symbolic link");
	free(p);
}

/* --log's file: appended to when it is ours; a link, a second name or
 * another user's file is refused and left as it was. */
static void test_fsx__log_file_is_opened_by_the_trust_rule(void **state)
{
	(void)state;
	char *runs = path_in(root, "runs"), *log = path_in(runs, "cron.log");
	char *victim = path_in(root, "outside/f000");

	int fd = fsx_open_append(log);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "a\n", 2), 2);
	close(fd);
	assert_true((fd = fsx_open_append(log)) >= 0);
	assert_int_equal(write(fd, "b\n", 2), 2);
	close(fd);
	char *t = helpers_slurp(log);
	assert_string_equal(t, "a\nb\n");
	free(t);
	assert_int_equal(unlink(log), 0);
	assert_int_equal(symlink(victim, log), 0);
	assert_int_equal(fsx_open_append(log), -1);
	assert_int_equal(unlink(log), 0);
	assert_int_equal(link(victim, log), 0);
	assert_int_equal(fsx_open_append(log), -1);
	assert_non_null(strstr(err_msg(), "hard link"));
	assert_int_equal(unlink(log), 0);
	put(log, "theirs\n");
	assert_int_equal(chmod(log, 0666), 0);
	assert_int_equal(fsx_open_append(log), -1);
	assert_non_null(strstr(err_msg(), "writable by group or others"));
	assert_int_equal(outside_intact(), OUTSIDE_FILES);
	free(runs), free(log), free(victim);
}

/* Outside text is shown with its controls escaped: no line of its own, no
 * terminal escape; UTF-8 text and plain backslashes are left as they are. */
static void test_fsx__outside_text_is_escaped(void **state)
{
	(void)state;
	char out[64];
	assert_string_equal(esc_text(out, sizeof out, "a\nREGRESSION: none"), "a\\nREGRESSION: none");
	assert_string_equal(esc_text(out, sizeof out, "x\033[31mred\r\t\x7f"),
			    "x\\e[31mred\\r\\t\\x7f");
	assert_string_equal(esc_text(out, sizeof out, "\xc2\x9b" "2J caf\xc3\xa9"),
			    "\\u009b2J caf\xc3\xa9");
	assert_string_equal(esc_text(out, sizeof out, "C:\\dir \\n"), "C:\\dir \\\\n");
	assert_string_equal(esc_text(out, 6, "ab\ncd"), "ab\\nc"); /* cut at a whole escape */
	assert_string_equal(esc_text(out, 4, "ab\ncd"), "ab");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	assert_int_equal(esc_line(m, "one\ntwo"), 0);
	fclose(m);
	assert_string_equal(buf, "one\\ntwo\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fsx__a_link_on_the_way_or_at_the_file_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fsx__operator_links_are_resolved_once_where_paths_enter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fsx__lock_file_that_is_a_link_or_a_second_name_is_never_written, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fsx__held_lock_names_its_holder_and_since_when, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fsx__sweep_under_a_link_swap_touches_nothing_outside, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fsx__files_under_a_shared_folder_are_read_beneath_it, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fsx__trust_rule_names_why, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fsx__log_file_is_opened_by_the_trust_rule, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fsx__outside_text_is_escaped, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
