/*
 * fuzz_gtfile.c - libFuzzer target for the .gtrace reader: any bytes are
 * read into a fresh store, which is then freed.  Crashes, hangs, leaks and
 * huge allocations are bugs; errors are the expected outcome.
 *
 * Every chunk is CRC-protected, so random mutations would almost never get
 * past the checksums.  For inputs whose last byte is odd the target first
 * repairs the header and chunk checksums of a copy, so that the mutated
 * lengths, tables and event columns reach the decoders.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "gtrace/gtfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* recompute the file header CRC and every chunk's CRCs (layout: docs/file-format.md) */
static void fix_crcs(uint8_t *b, size_t n)
{
	if (n < 64)
		return;
	put32(b + 60, (uint32_t)crc32(0, b, 60));
	size_t pos = 64;
	while (n - pos >= 24) {
		uint8_t *h = b + pos;
		uint32_t stored = (uint32_t)h[12] | (uint32_t)h[13] << 8 | (uint32_t)h[14] << 16 |
				  (uint32_t)h[15] << 24;
		if (stored <= n - pos - 24) {
			uLong c = crc32(0, h, 16);
			put32(h + 16, (uint32_t)crc32(c, h + 24, stored));
		}
		put32(h + 20, (uint32_t)crc32(0, h, 20));
		if (stored > n - pos - 24)
			break;
		pos += 24 + stored;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = NULL;
	if (size && (data[size - 1] & 1)) {
		copy = malloc(size);
		if (!copy)
			return 0;
		memcpy(copy, data, size);
		fix_crcs(copy, size);
		data = copy;
	}
	struct gt_store *s = gt_store_new();
	if (s) {
		char err[256];
		struct gt_file_info info;
		gt_file_read_mem(data, size, "fuzz.gtrace", s, &info, err, sizeof(err));
		gt_store_free(s);
	}
	free(copy);
	return 0;
}
