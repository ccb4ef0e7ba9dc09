/* cmd_nightly.c - `ddt nightly`: the whole nightly job on this machine, or across a cluster. */
#include "cmd.h"

#include "err.h"
#include "esc.h"
#include "fsx.h"
#include "nightly.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct nightly_args {
	struct nightly_opts o;
	int slurm; /* never set here: --slurm hands the call to `ddt fleet submit` */
	const char *log; /* --log FILE */
};

typedef struct nightly_args A;
static const struct cli_opt nightly_opts[] = {
	CLI_OPT_FLAG(A, o.quiet, 'q', "quiet",
		     "print nothing on success; otherwise only regressions\n"
		     "and errors (for cron, which mails what is printed)"),
	CLI_OPT_FLAG(A, slurm, 0, "slurm",
		     "the night across a Slurm cluster's nodes (ddt nightly\n"
		     "--slurm --help)"),
	CLI_OPT_CALIBRATION(A, o.paths),
	CLI_OPT_TEMPLATE_AS(A, o.paths,
			    "job template: a name under templates/ or a path\n"
			    "(default: gpu when CUDA devices are present, else\n"
			    "cpu; default when that one is missing)"),
	CLI_OPT_RUNS(A, o.paths),
	CLI_OPT_REPORTS(A, o.paths),
	CLI_OPT_STR(A, log, 0, "log", "FILE",
		    "also append what is printed to FILE (for cron and\n"
		    "systemd: never a link, another user's file or one\n"
		    "others may write; then stdout only, with a warning)"),
	CLI_OPT_END,
};

const struct cli_spec cmd_nightly_spec = {
	.name = "nightly",
	.usage = "nightly [OPTIONS]",
	.about = "The nightly job. Takes runs/.nightly.lock (held by another nightly: exit 75\n"
		 "at once), picks the template (gpu when CUDA devices are present, else cpu;\n"
		 "or --template), then: bench -> run record -> history -> regression verdicts\n"
		 "and their cost in projected tok/s -> projection -> documents -> retention.\n"
		 "The run appears whole as runs/<run-id>/ (run.yaml, verdicts.yaml,\n"
		 "projection.yaml, the calibration and template used, nightly.log) and the\n"
		 "documents as reports/<run-id>/. A stage that fails is reported and the\n"
		 "stages that can still run do. Only the documents of the newest\n"
		 "nightly.keep_documents_runs runs are kept; run records are kept forever.",
	.opts = nightly_opts,
	.after = "exit status: 0 ok; 1 a stage failed; 2 bad input (template, calibration);\n"
		 "3 a regression was confirmed tonight; 4 a kernel failed validation;\n"
		 "75 another nightly holds the lock. When several apply: 2, 1, 4, then 3.",
};

/* --log: a process that copies what the nightly prints to stdout and FILE. */
struct tee {
	pid_t pid;
	int out, err; /* the nightly's own stdout and stderr */
};

/* Writes n bytes of b to fd, whatever part of them each write takes. */
static void put_all(int fd, const char *b, ssize_t n)
{
	for (ssize_t w; n > 0; b += w, n -= w)
		if ((w = write(fd, b, (size_t)n)) <= 0)
			return;
}

/* The copier: from the pipe to out and the log until the nightly is done. */
static void tee_copy(int from, int out, int log)
{
	char buf[4096];
	ssize_t n;
	signal(SIGPIPE, SIG_IGN); /* stdout gone: the log is still written */
	while ((n = read(from, buf, sizeof buf)) > 0) {
		put_all(out, buf, n);
		put_all(log, buf, n);
	}
	_exit(0);
}

/* Starts copying stdout and stderr to path as well (fsx_open_append: the
 * file is opened by the trust rules, never through a link). Returns 0, or
 * -1 with a warning printed and nothing changed. */
static int tee_start(struct tee *t, const char *path)
{
	int log = fsx_open_append(path), p[2] = {-1, -1};

	fflush(stdout);
	fflush(stderr);
	if (log < 0 || pipe(p) != 0 || (t->out = dup(1)) < 0 || (t->err = dup(2)) < 0 ||
	    (t->pid = fork()) < 0) {
		fputs("ddt nightly: warning: --log: ", stderr);
		esc_line(stderr, log < 0 ? err_msg() : "cannot start the copy to the log");
		if (log >= 0)
			close(log);
		return -1;
	}
	if (t->pid == 0) {
		close(p[1]);
		tee_copy(p[0], t->out, log);
	}
	close(p[0]);
	close(log);
	dup2(p[1], 1);
	dup2(p[1], 2);
	close(p[1]);
	return 0;
}

/* Puts stdout and stderr back and waits for the copier to write the rest. */
static void tee_end(struct tee *t)
{
	fflush(stdout);
	fflush(stderr);
	dup2(t->out, 1);
	dup2(t->err, 2);
	close(t->out);
	close(t->err);
	waitpid(t->pid, NULL, 0);
}

/* --slurm hands the night to `ddt fleet submit`; --log FILE (taken out of
 * the arguments it is given) copies what it prints, as for a local night. */
static int slurm_with_log(int argc, char **argv)
{
	const char *log = NULL;
	int n = 0, status;
	struct tee t;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--log") && i + 1 < argc)
			log = argv[++i];
		else if (!strncmp(argv[i], "--log=", 6))
			log = argv[i] + 6;
		else
			argv[n++] = argv[i];
	}
	argv[n] = NULL;
	if (!log || tee_start(&t, log) != 0)
		return cmd_fleet_submit("nightly", n, argv);
	status = cmd_fleet_submit("nightly", n, argv);
	tee_end(&t);
	return status;
}

int cmd_nightly(int argc, char **argv)
{
	struct nightly_args a = {0};
	int first, status;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--slurm"))
			return slurm_with_log(argc, argv);
	paths_init(&a.o.paths, "default");
	if ((status = cli_parse(&cmd_nightly_spec, &a, argc, argv, &first)) >= 0)
		return status;
	a.o.tty = cli_is_tty();
	struct tee t;
	if (!a.log || tee_start(&t, a.log) != 0)
		return nightly_run(&a.o);
	a.o.tty = 0; /* no progress line in the log */
	status = nightly_run(&a.o);
	tee_end(&t);
	return status;
}
