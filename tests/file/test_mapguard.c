/*
 * test_mapguard.c - a guarded mapping survives its file shrinking under it
 * (core/util/mapguard.c): the read past the new end reads zeros instead of
 * ending the process with SIGBUS, mapguard_hit says so while the guard
 * stays (what the live receiver polls for its ring), mapguard_end says it
 * once more; an unguarded mapping is untouched by the handler.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "../../core/util/mapguard.h"

Test(mapguard, shrunk_file_reads_zeros_and_is_reported)
{
	char path[] = "/tmp/gtrace-mapguard-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	unlink(path);
	long pg = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)pg * 8;
	char *buf = malloc(len);
	memset(buf, 0x5a, len);
	cr_assert_eq(write(fd, buf, len), (ssize_t)len);
	free(buf);
	volatile unsigned char *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	cr_assert_neq((void *)p, MAP_FAILED);
	int slot = mapguard_begin((const void *)p, len);
	cr_assert_geq(slot, 0);
	cr_assert_eq(p[0], 0x5a);
	cr_assert_eq(mapguard_hit(slot), 0, "no fault yet");
	cr_assert_eq(ftruncate(fd, pg * 2), 0);      /* the peer shrinks it */
	cr_assert_eq(p[pg], 0x5a, "still inside the file");
	cr_assert_eq(p[pg * 5], 0, "past the new end: zeros, not SIGBUS");
	cr_assert_eq(mapguard_hit(slot), 1, "the fault is reported");
	cr_assert_eq(mapguard_hit(slot), 1, "and stays reported while guarded");
	cr_assert_eq(mapguard_end(slot), 1);
	cr_assert_eq(mapguard_hit(-1), 0);
	munmap((void *)p, len);
	close(fd);
}
