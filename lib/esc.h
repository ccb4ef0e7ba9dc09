/* esc.h - outside text made safe for a terminal, a log line and a mail line. */
#ifndef DDT_ESC_H
#define DDT_ESC_H

#include <stddef.h>
#include <stdio.h>

/* The one escaping function for text that came from outside ddt (names of
 * run folders, records' strings, file contents quoted in messages) before
 * it is printed, logged or mailed: every control character (C0, DEL and the
 * C1 controls U+0080..U+009F) is shown escaped, so no outside text starts a
 * line of its own or drives a terminal: newline "\n", carriage return "\r",
 * tab "\t", escape "\e", the others "\xHH" (C1: "\u0080"); a backslash is
 * doubled only in front of what would read as one of these. Writes at most
 * len - 1 bytes and a NUL into out (an escape is never cut in half);
 * returns out. */
char *esc_text(char *out, size_t len, const char *s);

/* Writes s escaped (esc_text, any length) and a newline to fp. Returns 0, or
 * EOF when the write failed. */
int esc_line(FILE *fp, const char *s);

#endif
