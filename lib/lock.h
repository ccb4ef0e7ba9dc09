/* lock.h - the nightly's single-instance lock and the sweep of temporary names
 * left behind by killed processes. */
#ifndef DDT_LOCK_H
#define DDT_LOCK_H

/* Takes an exclusive, non-blocking flock on path (created when missing; the
 * folder must exist) and writes this pid into it. *fd receives the open
 * descriptor (close-on-exec), held until lock_release. Returns 0;
 * DDT_ELOCKED with a one-line message naming the holder's pid when another
 * process holds it (the file is left untouched); or DDT_EIO. */
int lock_take(const char *path, int *fd);

/* Releases the lock (the file stays, empty of meaning). fd < 0 is a no-op. */
void lock_release(int fd);

/* The pid a temporary name belongs to (".name.tmp-PID"), or 0 when name is
 * not one of ddt's temporary names. */
long lock_temp_owner(const char *name);

/* Removes the temporary entries of dir, and of each folder directly inside
 * it, whose owner process is no longer alive: what a killed writer left. Only
 * names starting with '.' and holding ".tmp-<pid>" are touched. Best effort;
 * returns how many entries were removed. */
int lock_sweep_temps(const char *dir);

#endif
