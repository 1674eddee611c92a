/*
 * fuzz_pinj_elf.c - libFuzzer target for the ELF reader of ptrace
 * injection (capture/pinj_elf.c).  gtrace, often as root, reads the
 * target's libc through /proc/PID/root: a file a container's owner
 * controls.  Any bytes: open, look up symbols, search the trap, search a
 * string.  Crashes, reads past the end and misaligned reads are bugs;
 * errors and misses are the expected outcome.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/pinj.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);     /* aligned, as a file read is */
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	struct gt_pinj_elf e;
	char err[128];
	if (gt_pinj_elf_from_mem(&e, copy, size, err, sizeof(err)) == 0) {
		uint64_t v;
		gt_pinj_elf_sym(&e, "dlopen", &v);
		gt_pinj_elf_sym(&e, "gtrace_inject_attach", &v);
		gt_pinj_elf_find_code(&e, NULL, 4, 4, &v);
		gt_pinj_elf_find_code(&e, NULL, 1, 1, &v);
		gt_pinj_elf_find_code(&e, "\x0f\x05", 2, 1, &v);
		gt_pinj_elf_has_bytes(&e, GT_PINJ_IDENT, sizeof(GT_PINJ_IDENT) - 1);
	}
	free(copy);
	return 0;
}
