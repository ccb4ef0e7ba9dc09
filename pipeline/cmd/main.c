/* main.c - the ddt command: one binary, one subcommand per stage. */
#include "cmd.h"
#include "err.h"

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static void usage(FILE *fp)
{
	fprintf(fp, "usage: ddt COMMAND [OPTIONS]\n\n"
		    "ddt benchmarks the DDTree engine's kernels, tracks them night over night,\n"
		    "and projects decode throughput onto target GPUs.\n\ncommands:\n");
	for (size_t i = 0; i < cmd_count; i++)
		fprintf(fp, "  %-11s %s\n", cmd_list[i].name, cmd_list[i].summary);
	fprintf(fp, "\n'ddt COMMAND --help' describes a command.\n"
		    "exit status: 0 ok, 1 error, 2 usage or bad input, 3 regression found,\n"
		    "4 a kernel failed validation, 75 another nightly holds the lock\n");
}

/* What a command printed must have reached stdout: a full disk there is an
 * error, as for any Unix tool (status kept when it is one already). */
static int stdout_checked(int status)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return status;
	fprintf(stderr, "ddt: cannot write the output: %s\n", errno ? strerror(errno) : "error");
	return status ? status : 1;
}

int main(int argc, char **argv)
{
	setlocale(LC_ALL, "C");
	/* what ddt writes is writable by its owner alone, so that it passes the
	 * trust rule (fsx.h) when read back, whatever umask cron gave */
	umask(umask(0) | 022);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return stdout_checked(0);
	}
	const struct cmd *c = cmd_find(argv[1]);
	if (c)
		return stdout_checked(c->run(argc - 1, argv + 1));
	fprintf(stderr, "ddt: unknown command '%s' (see 'ddt --help')\n", argv[1]);
	return 2;
}
