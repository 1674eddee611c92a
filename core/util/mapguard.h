/*
 * mapguard.h - reading a mapped input file that another process may
 * truncate while it is read.  A read of a mapped page past the file's new
 * end raises SIGBUS, which kills the process.  While a mapping is guarded,
 * a SIGBUS inside it replaces the rest of the mapping by zero pages (the
 * faulting read is retried and reads zeros) and marks the guard hit; the
 * reader then fails on the zeros as on any damaged input, cleans up as
 * usual (no jump out of the decoder, nothing leaks), and the caller names
 * the cause from mapguard_end.  A SIGBUS anywhere else goes to the handler
 * that was there before (by default: the process ends as it would have).
 */
#ifndef GTRACE_MAPGUARD_H
#define GTRACE_MAPGUARD_H

#include <stddef.h>

#define MAPGUARD_SLOTS 16

/* guard [p, p + len) (a whole mmap); a slot number, or -1 when all slots
 * are taken (the mapping is then read unguarded) */
int mapguard_begin(const void *p, size_t len);
/* 1 when a SIGBUS was caught in slot (-1: 0) since mapguard_begin: the
 * rest of its mapping reads zeros from then on; the guard stays */
int mapguard_hit(int slot);
/* stop guarding slot (-1: nothing); 1 when a SIGBUS was caught in it (the
 * file shrank while it was read), else 0 */
int mapguard_end(int slot);

#endif
