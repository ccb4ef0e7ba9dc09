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
	const uint8_t *ref; /* [bytes]: the reference output, which for a copy is
			     * src itself (no second buffer to fault in and fill) */

	uint64_t seed;    /* src's seed (setup_from keeps the buffers for it) */
};

#endif
