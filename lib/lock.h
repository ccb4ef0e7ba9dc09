/* lock.h - the nightly's single-instance lock and the sweep of temporary names
 * left behind by killed processes. */
#ifndef DDT_LOCK_H
#define DDT_LOCK_H

/* Who holds a lock: what its holder wrote in the lock file. */
struct lock_holder {
	long pid;         /* 0 when unknown */
	long long since;  /* when it took the lock, seconds since the epoch; 0 unknown */
	/* set when lock_take found a lock file it does not trust (fsx_trusted:
	 * another user's, or writable by others) and replaced it by its own:
	 * why, for a warning; "" otherwise */
	char replaced[128];
};

/* Takes an exclusive, non-blocking flock on path (created when missing; the
 * folder must exist) and writes "PID SINCE" into it. The file is reached
 * without following a link (fsx.h); a link, a hard link (another name of
 * some other file) or anything but a regular file there is refused, never
 * written. A lock file another user made (or one others may write) decides
 * nothing: it is replaced by a new one of ddt's own before the flock, its
 * contents never read (holder->replaced says why). *fd receives the open descriptor (close-on-exec), held until
 * lock_release. Returns 0; DDT_ELOCKED with *holder filled and a one-line
 * message naming the holder's pid and since when (the file is left
 * untouched); or DDT_EIO. holder may be NULL. */
int lock_take(const char *path, int *fd, struct lock_holder *holder);

/* Releases the lock (the file stays, empty of meaning). fd < 0 is a no-op. */
void lock_release(int fd);

/* The pid a temporary name belongs to (".name.tmp-PID"), or 0 when name is
 * not one of ddt's temporary names. */
long lock_temp_owner(const char *name);

/* Removes the temporary entries of dir, and of each folder directly inside
 * it, whose owner process is no longer alive: what a killed writer left. Only
 * names starting with '.' and holding ".tmp-<pid>" are touched. Folders are
 * opened and entries removed without following a link (a temporary folder
 * swapped for a link is removed as the link). Best effort; returns how many
 * entries were removed. */
int lock_sweep_temps(const char *dir);

#endif
