/*
 * xplane_space.c - the allocator the XSpace is unpacked with (see
 * xplane_priv.h): the space's many small objects (planes, metadata maps,
 * names, stats) go to a bump arena given back at once at the end, instead
 * of one malloc and one free each (about a tenth of the instructions of a
 * TensorFlow profile's import went to malloc, free and protobuf-c's
 * free_unpacked); the packed lines, most of the bytes, are blocks of their
 * own, given back one by one as soon as the line is mapped, so that memory
 * holds the store and the lines not yet read, never the whole file twice.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "xplane_priv.h"

#define XPS_BIG (16u << 10)        /* blocks of this size or more are malloc'd alone */

static void *space_alloc(void *ad, size_t size)
{
	struct xpspace *a = ad;
	if (size < XPS_BIG)
		return a->small.pa.alloc(a->small.pa.allocator_data, size);
	if (a->n_big == a->cap_big) {
		size_t nc = a->cap_big ? a->cap_big * 2 : 256;
		void **nb = realloc(a->big, nc * sizeof(*nb));
		if (!nb)
			return NULL;
		a->big = nb;
		a->cap_big = nc;
	}
	void *p = malloc(size);
	if (p)
		a->big[a->n_big++] = p;
	return p;
}

/* protobuf-c frees through this only what it unpacked and then dropped
 * (a damaged message): everything is given back by xplane_space_done */
static void space_free(void *ad, void *p)
{
	(void)ad;
	(void)p;
}

void xplane_space_init(struct xpspace *a)
{
	memset(a, 0, sizeof(*a));
	xplane_meta_arena_init(&a->small);
	a->pa.alloc = space_alloc;
	a->pa.free = space_free;
	a->pa.allocator_data = a;
}

void xplane_space_release(struct xpspace *a, void *p)
{
	if (!p || !a->n_big)
		return;
	/* lines are released in the order they were unpacked: look from where
	 * the last one was found */
	for (size_t k = 0; k < a->n_big; k++) {
		size_t i = (a->cursor + k) % a->n_big;
		if (a->big[i] == p) {
			free(p);
			a->big[i] = NULL;
			a->cursor = i + 1;
			return;
		}
	}
}

void xplane_space_done(struct xpspace *a)
{
	for (size_t i = 0; i < a->n_big; i++)
		free(a->big[i]);
	free(a->big);
	xplane_meta_arena_done(&a->small);
	memset(a, 0, sizeof(*a));
}
