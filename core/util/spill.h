/*
 * spill.h - an analysis' big scratch arrays outside the process's resident
 * memory, under a memory budget (issue 16, docs/store.md).
 *
 * A spill is an unlinked file in TMPDIR (/var/tmp by default) mapped shared
 * into a large reservation of address space.  Arrays are carved from it;
 * their pages go to the page cache and, when the kernel needs the memory,
 * to the file.  The process keeps mapped only what it touched lately: the
 * users announce what they are about to touch (spill_touch), and once that
 * passes the allowance every page of the spill is dropped from the process
 * (MADV_DONTNEED), to be read back from the page cache or the file on the
 * next touch.  A drop never loses data, so any thread may drop while others
 * read and write: every call here is thread-safe.
 */
#ifndef GTRACE_UTIL_SPILL_H
#define GTRACE_UTIL_SPILL_H

#include <stddef.h>
#include <stdint.h>

struct spill;

/* a new spill whose mapped share stays within about allow bytes (plus the
 * one step announced last); 0, or -errno when TMPDIR holds no file or the
 * address space cannot be reserved */
int spill_new(size_t allow, struct spill **out);
void spill_free(struct spill *sp);
/* n bytes (rounded up to pages) of zeroed scratch, or NULL when the disk
 * or the reservation is full; nothing is mapped until touched (announce
 * the writes like the reads) */
void *spill_alloc(struct spill *sp, size_t n);
/* give back an allocation of n bytes (its disk space is freed) */
void spill_release(struct spill *sp, void *p, size_t n);
/* whether p lies in sp (NULL sp: no) */
int spill_owns(const struct spill *sp, const void *p);
/* about to touch n bytes of the spill: when the bytes touched since the
 * last drop pass the allowance, drop the whole spill from the process */
void spill_touch(struct spill *sp, size_t n);
/* a user going through an array of the spill mostly in order, with a
 * second array beside it (a bitmap): about to touch byte off of the first;
 * announces two pages when off is on another page than the last touch
 * (*pg: that page + 1, 0 at first) */
static inline void spill_touch_walk(struct spill *sp, uint64_t *pg, uint64_t off)
{
	uint64_t p = off / 4096 + 1;
	if (p != *pg) {
		*pg = p;
		spill_touch(sp, 2 * 4096);
	}
}
/* drops so far, and the most bytes allocated at once (tests, benchmarks) */
uint64_t spill_drops(const struct spill *sp);
size_t spill_peak(const struct spill *sp);

/* an unlinked read-write file in TMPDIR (or /var/tmp): an fd, or -errno
 * (also the memory budget's cache file, core/store/store_arena.c) */
int spill_tmpfile(void);

#endif
