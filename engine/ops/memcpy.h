/* memcpy.h - a large device copy: the bandwidth ceiling the other ops are measured against. */
#ifndef DDT_OPS_MEMCPY_H
#define DDT_OPS_MEMCPY_H

#include <stddef.h>
#include <stdint.h>

/* dst = src, bytes long; moves 2 x bytes (read + write). */
struct memcpy_inst {
	size_t bytes;

	/* inputs */
	uint8_t *src;     /* [bytes] */

	/* outputs */
	uint8_t *dst;     /* [bytes]: written by the op under test */
	uint8_t *ref;     /* [bytes]: written by the C reference */
};

#endif
