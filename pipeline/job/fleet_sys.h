/* fleet_sys.h - what the fleet's jobs (fleet_slurm.c, fleet_jobs.c, fleet_merge.c) share with the system: child processes and their argument vectors, Slurm's clients, paths, the time. */
#ifndef DDT_FLEET_SYS_H
#define DDT_FLEET_SYS_H

#include <stddef.h>

/* malloc'd printf-formatted path; NULL on allocation failure. */
char *fleet_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Runs argv (no shell) with its stdout into out and stderr into errb (each
 * NUL-terminated, truncated to its size), waiting at most timeout_s. *status
 * is the exit status, or -1 when it could not start, died of a signal or ran
 * out of time (then it is killed). Returns 0, or DDT_EIO when no pipe or
 * process could be made. */
int fleet_proc_run(char *const argv[], char *out, size_t olen, char *errb, size_t elen,
		   double timeout_s, int *status);

/* The first line of s, trimmed, into buf (s may be buf). */
void fleet_first_line(char *buf, size_t len, const char *s);

/* Runs a Slurm client command (argv, no shell; at most 120 s); its stdout
 * into out (truncated to olen). Returns 0, or DDT_EGENERIC naming the command
 * and the first line it printed on stderr, or DDT_EIO. */
int fleet_slurm_cmd(char *const argv[], char *out, size_t olen);

/* Now as ISO 8601 UTC ("2026-01-01T02:00:00Z") into buf (len >= 21). */
void fleet_now_iso(char *buf, size_t len);

/* An argument vector whose strings it owns. */
struct fleet_argv {
	int n;
	char *v[64];
};

/* Appends a printf-formatted string to a (at most 63; a->v stays
 * NULL-terminated). Returns 0, DDT_EGENERIC when full, or the nomem error. */
int fleet_argv_add(struct fleet_argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Frees a's strings; a is empty after. */
void fleet_argv_free(struct fleet_argv *a);

#endif
