/* fleet_sys.h - what the fleet's Slurm side (fleet_slurm.c) and its merge (fleet_merge.c) share. */
#ifndef DDT_FLEET_SYS_H
#define DDT_FLEET_SYS_H

#include <stddef.h>

/* malloc'd printf-formatted path; NULL on allocation failure. */
char *fleet_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Runs a Slurm client command (argv, no shell; at most 120 s); its stdout
 * into out (truncated to olen). Returns 0, or DDT_EGENERIC naming the command
 * and the first line it printed on stderr, or DDT_EIO. */
int fleet_slurm_cmd(char *const argv[], char *out, size_t olen);

/* Now as ISO 8601 UTC ("2026-01-01T02:00:00Z") into buf (len >= 21). */
void fleet_now_iso(char *buf, size_t len);

#endif
