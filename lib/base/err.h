/* SPDX-License-Identifier: MIT */
/*
 * err.h: the one-line description of its last failure that every object
 * of the library keeps, since the library never prints: the tools and
 * programs print it under their own name.
 */
#ifndef SP_ERR_H
#define SP_ERR_H

#define SP_ERR_MAX 512

struct sp_err {
	char msg[SP_ERR_MAX];	/* "" when nothing failed */
};

/*
 * Describe a failure in e (printf-style, cut at SP_ERR_MAX - 1 bytes) and
 * return code, so that a caller can write "return sp_err_set(...)".
 */
int sp_err_set(struct sp_err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
