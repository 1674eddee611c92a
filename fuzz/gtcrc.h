/*
 * gtcrc.h - the CRC repair the .gtrace fuzz targets share (fuzz_gtfile.c,
 * fuzz_gtstream.c).  Every chunk of a .gtrace is CRC-protected, so random
 * mutations would almost never get past the checksums: for inputs whose
 * last byte is odd a target reads a copy whose file header CRC and chunk
 * CRCs are recomputed, so that mutated lengths, tables and event columns
 * reach the decoders.  Layout: docs/file-format.md (a 64-byte file header,
 * its CRC at 60; chunks of a 24-byte header, payload length at 12, payload
 * CRC over header bytes 0-15 and the payload at 16, header CRC at 20).
 */
#ifndef GTRACE_FUZZ_GTCRC_H
#define GTRACE_FUZZ_GTCRC_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* v little-endian at p */
static inline void gtcrc_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* recompute the file header CRC and every chunk's CRCs of b[0..n) in place;
 * a chunk whose payload runs past n gets its header CRC only, and ends the walk */
static inline void gtcrc_fix(uint8_t *b, size_t n)
{
	if (n < 64)
		return;
	gtcrc_put32(b + 60, (uint32_t)crc32(0, b, 60));
	size_t pos = 64;
	while (n - pos >= 24) {
		uint8_t *h = b + pos;
		uint32_t stored = (uint32_t)h[12] | (uint32_t)h[13] << 8 | (uint32_t)h[14] << 16 |
				  (uint32_t)h[15] << 24;
		if (stored <= n - pos - 24) {
			uLong c = crc32(0, h, 16);
			gtcrc_put32(h + 16, (uint32_t)crc32(c, h + 24, stored));
		}
		gtcrc_put32(h + 20, (uint32_t)crc32(0, h, 20));
		if (stored > n - pos - 24)
			break;
		pos += 24 + stored;
	}
}

/* the bytes a target reads: data itself, or (last byte odd) a repaired
 * copy in *copy (free it; NULL when none).  NULL when the copy cannot be
 * allocated: skip the input */
static inline const uint8_t *gtcrc_input(const uint8_t *data, size_t size, uint8_t **copy)
{
	*copy = NULL;
	if (!size || !(data[size - 1] & 1))
		return data;
	*copy = malloc(size);
	if (!*copy)
		return NULL;
	memcpy(*copy, data, size);
	gtcrc_fix(*copy, size);
	return *copy;
}

#endif
