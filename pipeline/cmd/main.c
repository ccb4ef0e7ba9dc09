/* main.c - the ddt command: one binary, one subcommand per stage. */
#include "cmd.h"
#include "err.h"
#include "help.h"

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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
		cmd_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		cmd_usage(stdout);
		return stdout_checked(0);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("ddt %s\n", help_version);
		return stdout_checked(0);
	}
	const struct cmd *c = cmd_find(argv[1]);
	if (c)
		return stdout_checked(c->run(argc - 1, argv + 1));
	char names[512];
	cmd_names(names, sizeof names);
	fprintf(stderr, "ddt: unknown command '%.80s'; the commands: %s (see 'ddt --help')\n",
		argv[1], names);
	return 2;
}
