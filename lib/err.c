/* err.c - thread-local last error message, in the manner of libgit2's giterr. */
#include "err.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char err_buf[1024];

int err_set(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err_buf, sizeof err_buf, fmt, ap);
	va_end(ap);
	return code;
}

int err_wrap(int code, const char *fmt, ...)
{
	char prefix[512], old[sizeof err_buf];
	va_list ap;

	memcpy(old, err_buf, sizeof old);
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	snprintf(err_buf, sizeof err_buf, "%s: %s", prefix, old);
	return code;
}

int err_nomem(void)
{
	return err_set(DDT_ENOMEM, "out of memory");
}

const char *err_msg(void)
{
	return err_buf;
}

void err_clear(void)
{
	err_buf[0] = '\0';
}

int err_exit_status(int code)
{
	switch (code) {
	case DDT_OK:
		return 0;
	case DDT_EINPUT:
		return 2;
	case DDT_ELOCKED:
		return 75;
	default:
		return 1;
	}
}
