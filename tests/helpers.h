/* helpers.h - what the tests share: running ddt and shell commands, reading
 * files whole, and the tiny CPU night the nightly tests run. */
#ifndef DDT_TESTS_HELPERS_H
#define DDT_TESTS_HELPERS_H

#include <stddef.h>

/* The ddt binary under test: $DDT_BIN, else build/ddt. */
const char *helpers_bin(void);

/* Runs cmd through the shell with stderr joined to stdout; returns the exit
 * status (128 when killed) and the output (malloc'd) in *out. */
int helpers_run(char **out, const char *cmd);

/* Runs "ddt args" through the shell with stderr joined to stdout; returns
 * the exit status (128 when killed) and the output (malloc'd) in *out. */
int helpers_ddt(char **out, const char *args);

/* The output of a shell command into buf (NUL-terminated, cut at len - 1
 * bytes); returns its wait status as pclose gives it, -1 when it cannot run. */
int helpers_capture(const char *cmd, char *buf, size_t len);

/* The whole file at path (malloc'd); "" when it cannot be read. */
char *helpers_slurp(const char *path);

/* A template for a night of a second or two: two small CPU ops, a short
 * stopping rule, a small projection (extends default.yaml). */
extern const char helpers_tiny_yaml[];

#endif
