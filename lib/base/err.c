/* SPDX-License-Identifier: MIT */
/* err.c: an object's last failure, described. */
#include <stdarg.h>
#include <stdio.h>

#include "err.h"

int sp_err_set(struct sp_err *e, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}
