/* fleet_sys.c - what the fleet's jobs share with the system: child processes, Slurm's clients, paths, the time. */
#include "fleet_sys.h"

#include "err.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How long a Slurm client command may take before it counts as failed. */
#define SLURM_CMD_TIMEOUT_S 120

/* ---------------------------------------------------------------- processes */

/* Reads what is ready on fd into buf (keeping at most len-1 bytes, dropping the
 * rest); returns 0 at end of file, 1 while open. */
static int drain(int fd, char *buf, size_t len, size_t *used)
{
	char tmp[4096];
	ssize_t n = read(fd, tmp, sizeof tmp);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 1;
	if (n <= 0)
		return 0;
	size_t take = *used + (size_t)n < len ? (size_t)n : len - 1 - *used;
	memcpy(buf + *used, tmp, take);
	*used += take;
	buf[*used] = '\0';
	return 1;
}

/* Runs argv (no shell) with its stdout into out and stderr into errb (each
 * NUL-terminated, truncated to its size), waiting at most timeout_s. *status
 * is the exit status, or -1 when it could not start, died of a signal or ran
 * out of time (then it is killed). Returns 0, or DDT_EIO when no pipe or
 * process could be made. */
int fleet_proc_run(char *const argv[], char *out, size_t olen, char *errb, size_t elen,
		   double timeout_s, int *status)
{
	int po[2], pe[2], ws = 0;
	size_t uo = 0, ue = 0;
	pid_t pid;

	out[0] = errb[0] = '\0';
	*status = -1;
	if (pipe(po) != 0)
		return err_set(DDT_EIO, "pipe: %s", strerror(errno));
	if (pipe(pe) != 0) {
		close(po[0]);
		close(po[1]);
		return err_set(DDT_EIO, "pipe: %s", strerror(errno));
	}
	if ((pid = fork()) < 0) {
		close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
		return err_set(DDT_EIO, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		dup2(po[1], STDOUT_FILENO);
		dup2(pe[1], STDERR_FILENO);
		close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
	int open_o = 1, open_e = 1;
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (open_o || open_e) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		double left = timeout_s - (double)(now.tv_sec - t0.tv_sec) -
			      (double)(now.tv_nsec - t0.tv_nsec) * 1e-9;
		if (left <= 0) {
			kill(pid, SIGKILL);
			snprintf(errb, elen, "%s: no answer within %.0f s", argv[0], timeout_s);
			break;
		}
		fds[0].fd = open_o ? po[0] : -1;
		fds[1].fd = open_e ? pe[0] : -1;
		if (poll(fds, 2, (int)(left * 1000) + 1) < 0 && errno != EINTR)
			break;
		if (open_o && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)))
			open_o = drain(po[0], out, olen, &uo);
		if (open_e && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)))
			open_e = drain(pe[0], errb, elen, &ue);
	}
	close(po[0]);
	close(pe[0]);
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(ws) && !(open_o || open_e))
		*status = WEXITSTATUS(ws);
	return 0;
}

/* The first line of s, trimmed, into buf. */
void fleet_first_line(char *buf, size_t len, const char *s)
{
	s += strspn(s, " \t\n");
	size_t n = strcspn(s, "\n");
	if (n >= len)
		n = len - 1;
	memmove(buf, s, n); /* buf may be s itself */
	buf[n] = '\0';
}

/* Runs a Slurm client command; on success its stdout is in out. On failure
 * returns DDT_EGENERIC with the command and its first stderr line. */
int fleet_slurm_cmd(char *const argv[], char *out, size_t olen)
{
	char errb[2048], line[400];
	int status, rc = fleet_proc_run(argv, out, olen, errb, sizeof errb, SLURM_CMD_TIMEOUT_S, &status);
	if (rc)
		return rc;
	if (status != 0) {
		fleet_first_line(line, sizeof line, errb[0] ? errb : out);
		return err_set(DDT_EGENERIC, "%s failed (exit %d): %s", argv[0], status,
			       line[0] ? line : "no message");
	}
	return 0;
}

/* ---------------------------------------------------------------- small helpers */

void fleet_now_iso(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* malloc'd "<dir>/<fmt...>"; NULL on allocation failure. */
char *fleet_path(const char *fmt, ...)
{
	va_list ap;
	char *p = NULL;
	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) < 0)
		p = NULL;
	va_end(ap);
	return p;
}

int fleet_argv_add(struct fleet_argv *a, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	if (a->n >= 63)
		return err_set(DDT_EGENERIC, "too many arguments");
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return err_nomem();
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
	return 0;
}

void fleet_argv_free(struct fleet_argv *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->v[i]);
	a->n = 0;
}
