/*
 * fuzz_gtfile.c - libFuzzer target for the .gtrace reader: any bytes are
 * read into a fresh store, which is then freed.  Crashes, hangs, leaks and
 * huge allocations are bugs; errors are the expected outcome.
 *
 * Every chunk is CRC-protected, so random mutations would almost never get
 * past the checksums.  For inputs whose last byte is odd the target first
 * repairs the header and chunk checksums of a copy, so that the mutated
 * lengths, tables and event columns reach the decoders (gtcrc.h).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/gtfile.h"
#include "gtcrc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;
	data = gtcrc_input(data, size, &copy);
	if (!data)
		return 0;
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
