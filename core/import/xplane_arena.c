/*
 * xplane_arena.c - the bump allocator protobuf-c unpacks the space, a line
 * and an event into (xplane_priv.h).
 *
 * Small allocations are bumped through a list of 64 KiB chunks; reset
 * rewinds to the first chunk and keeps them all, so the next line reuses
 * the pages the previous one wrote (the import page-faults only as much
 * arena as its largest line needs; a freed and re-malloc'd arena faulted
 * every line's size again, a third of the import's page faults on a dense
 * profile).  An arena's first 4 MiB of chunks come from the heap, so a
 * second import in the process reuses them as the malloc'd objects did;
 * the rest, and large blocks of 1 MiB or more (a packed line, a long
 * line's array of events, protobuf-c's scan slabs), are mapped, so that
 * they leave the resident set when given back (freed heap memory stayed:
 * a profile of 19 MB peaked at 1.66x its store).  Large blocks are freed
 * by reset, or one by one by xplane_arena_release; reset keeps up to
 * XP_CACHE mapped ones for the next line's blocks of the same sizes
 * (158 k page faults instead of 197 k for the 183 MB profile).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "xplane_priv.h"

#define XP_CHUNK (64u * 1024u - 64u)   /* payload of a chunk (the malloc'd size stays under 64 KiB) */
#define XP_BIG (XP_CHUNK / 4)         /* larger: a block of its own */
#define XP_HEAP_CHUNKS 64             /* an arena's first 4 MiB of chunks from the heap, the rest mapped */
#define XP_MAP_BIG ((size_t)1 << 20)   /* a large block from here is mapped */

struct xpchunk {
	struct xpchunk *next;
	size_t map;                /* mapped length, 0 = malloc'd */
	max_align_t data[];
};

struct xpbig {
	struct xpbig *prev, *next;
	size_t map;
	max_align_t data[];
};

/* n bytes mapped (map = n), else malloc'd (map = 0): mapped memory goes
 * back to the system when unmapped; freed heap memory stays resident
 * (glibc raises its mmap threshold to a freed mapped block's size, and
 * the heap is trimmed only at its top): 16.7 MB beyond a 30 MB store
 * after a 19 MB profile was read, 60 MB beyond 271 MB on a 183 MB one */
static void *block(size_t n, int map, size_t *len)
{
	*len = 0;
	if (map) {
		void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
			*len = n;
			return p;
		}
	}
	return malloc(n);
}

static void unblock(void *p, size_t len)
{
	if (len)
		munmap(p, len);
	else
		free(p);
}

/* a mapped block freed earlier with room for n bytes and not twice as
 * large (best fit), taken out of the cache; NULL if none */
static struct xpbig *take(struct xparena *a, size_t n)
{
	int best = -1;
	for (int i = 0; i < XP_CACHE; i++) {
		struct xpbig *c = a->cache[i];
		if (c && c->map >= n && c->map / 2 <= n && (best < 0 || c->map < a->cache[best]->map))
			best = i;
	}
	if (best < 0)
		return NULL;
	struct xpbig *b = a->cache[best];
	a->cache[best] = NULL;
	return b;
}

/* a freed large block: a mapped one into the cache (its pages are written:
 * the next line's blocks of the same sizes reuse them instead of faulting
 * fresh ones; the smallest cached one gives way), a malloc'd one freed */
static void give(struct xparena *a, struct xpbig *b)
{
	if (!b->map) {
		free(b);
		return;
	}
	int slot = 0;
	for (int i = 0; i < XP_CACHE; i++) {
		if (!a->cache[i]) {
			slot = i;
			break;
		}
		if (a->cache[i]->map < a->cache[slot]->map)
			slot = i;
	}
	struct xpbig *out = a->cache[slot];
	if (out && out->map >= b->map) {
		unblock(b, b->map);
		return;
	}
	if (out)
		unblock(out, out->map);
	a->cache[slot] = b;
}

static void *big(struct xparena *a, size_t size)
{
	size_t len, n = sizeof(struct xpbig) + size;
	if (n < size)
		return NULL;
	struct xpbig *b = n >= XP_MAP_BIG ? take(a, n) : NULL;
	if (!b) {
		if (!(b = block(n, n >= XP_MAP_BIG, &len)))
			return NULL;
		b->map = len;
	}
	b->prev = NULL;
	b->next = a->big;
	if (a->big)
		a->big->prev = b;
	a->big = b;
	return b->data;
}

/* the next chunk (kept from an earlier line, else a new one); 0 or -1 */
static int next_chunk(struct xparena *a)
{
	struct xpchunk *c = a->cur ? a->cur->next : a->first;
	if (!c) {
		size_t len;
		if (!(c = block(sizeof(*c) + XP_CHUNK, a->n_chunks >= XP_HEAP_CHUNKS, &len)))
			return -1;
		c->map = len;
		c->next = NULL;
		a->n_chunks++;
		if (a->cur)
			a->cur->next = c;
		else
			a->first = c;
	}
	a->cur = c;
	a->p = (unsigned char *)c->data;
	a->end = a->p + XP_CHUNK;
	return 0;
}

/* an allocation that does not fit the current chunk: a large block, else
 * the next chunk (out of line: the bump below stays a leaf function) */
static __attribute__((noinline)) void *alloc_slow(struct xparena *a, size_t size)
{
	if (size > XP_BIG)
		return big(a, size);
	if (next_chunk(a))
		return NULL;
	void *p = a->p;
	a->p += size;
	return p;
}

/* protobuf-c's alloc: 8-byte aligned (its structs hold no wider type) */
static void *arena_alloc(void *ad, size_t size)
{
	struct xparena *a = ad;
	uintptr_t p = ((uintptr_t)a->p + 7) & ~(uintptr_t)7;
	/* after a reset p and end are NULL: every size (0 too) goes the slow way */
	if (size > XP_BIG || p > (uintptr_t)a->end || size >= (uintptr_t)a->end - p)
		return alloc_slow(a, size);
	a->p = (unsigned char *)p + size;
	return (void *)p;
}

/* unlink big block b */
static void unlink_big(struct xparena *a, struct xpbig *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		a->big = b->next;
	if (b->next)
		b->next->prev = b->prev;
}

/* protobuf-c's free: a no-op, all goes at the reset (freeing protobuf-c's
 * scan slabs of a long line early changed no peak and cost the real
 * profile 12 k more page faults in 41 loads, glibc's mmap threshold
 * moving at other times) */
static void arena_free(void *ad, void *p)
{
	(void)ad;
	(void)p;
}

void xplane_arena_init(struct xparena *a)
{
	memset(a, 0, sizeof(*a));
	a->pa.alloc = arena_alloc;
	a->pa.free = arena_free;
	a->pa.allocator_data = a;
}

void xplane_arena_release(struct xparena *a, void *p, size_t n)
{
	if (!p || n <= XP_BIG)
		return;
	struct xpbig *b = (struct xpbig *)((unsigned char *)p - offsetof(struct xpbig, data));
	unlink_big(a, b);
	unblock(b, b->map);                /* not cached: nothing of this size comes again */
}

void xplane_arena_reset(struct xparena *a)
{
	while (a->big) {
		struct xpbig *n = a->big->next;
		give(a, a->big);
		a->big = n;
	}
	a->cur = NULL;
	a->p = a->end = NULL;
}

void xplane_arena_done(struct xparena *a)
{
	xplane_arena_reset(a);
	for (int i = 0; i < XP_CACHE; i++) {
		if (a->cache[i])
			unblock(a->cache[i], a->cache[i]->map);
		a->cache[i] = NULL;
	}
	while (a->first) {
		struct xpchunk *n = a->first->next;
		unblock(a->first, a->first->map);
		a->first = n;
	}
}
