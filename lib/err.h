/* err.h - error codes and the one-line error message of the failing call. */
#ifndef DDT_ERR_H
#define DDT_ERR_H

#include <stdarg.h>

/* Every fallible function returns one of these (0 = ok). A function that sets
 * an error leaves a one-line message behind for err_msg(); callers above it may
 * prefix context with err_wrap() but never replace the code. */
enum ddt_err {
	DDT_OK = 0,
	DDT_EGENERIC = -1, /* something failed; err_msg() says what */
	DDT_EINPUT = -2,   /* bad input or usage: exit status 2 */
	DDT_ENOMEM = -3,   /* allocation failed */
	DDT_EIO = -4,      /* a read or write failed (disk full, permissions) */
	DDT_ELOCKED = -5,  /* another nightly holds the lock: exit status 75 */
	DDT_ENOTFOUND = -6, /* a named thing does not exist */
	DDT_ETAKEN = -7     /* a name to create is already taken: nothing was moved */
};

/* Sets the message of the current error; returns code so callers can write
 * `return err_set(DDT_EINPUT, "...")`. */
int err_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prefixes the current message with context ("loading x: <old message>");
 * returns code unchanged. */
int err_wrap(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sets ENOMEM with a fixed message; returns DDT_ENOMEM. */
int err_nomem(void);

/* The last message set in this thread; "" when none. Never NULL. */
const char *err_msg(void);

/* Clears the message. */
void err_clear(void);

/* The process exit status for an error code (0, 1, 2 or 75). */
int err_exit_status(int code);

#endif
