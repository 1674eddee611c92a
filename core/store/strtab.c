/*
 * strtab.c - string interning and content-interned record tables.
 *
 * Strings live in arena blocks that never move, so a pointer returned by
 * gt_store_str() stays valid for the life of the store.  Id 0 is "".
 * The hash index is open addressing over ids (id + 1, 0 = empty).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "store_priv.h"

#define STRTAB_BLOCK STRTAB_BLOCK_BYTES

uint64_t strtab_hash(const void *p, size_t len)
{
	/* FNV-1a, 64 bit, with a final mix */
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 1099511628211ull;
	}
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return h;
}

static int strtab_grow_hash(struct strtab *t)
{
	size_t ncap = t->hcap ? t->hcap * 2 : 1024;
	uint32_t *nh = calloc(ncap, sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	for (size_t id = 0; id < t->n; id++) {
		size_t m = ncap - 1, i = strtab_hash(t->str[id], t->len[id]) & m;
		while (nh[i])
			i = (i + 1) & m;
		nh[i] = (uint32_t)id + 1;
	}
	free(t->hash);
	t->hash = nh;
	t->hcap = ncap;
	return 0;
}

int strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	return strtab_intern(t, "", 0) == 0 ? 0 : -ENOMEM;
}

void strtab_done(struct strtab *t)
{
	for (size_t i = 0; i < t->n_blocks; i++)
		free(t->blocks[i]);
	free(t->blocks);
	free(t->str);
	free(t->len);
	free(t->hash);
	memset(t, 0, sizeof(*t));
}

uint32_t strtab_find(const struct strtab *t, const char *s, size_t len)
{
	if (!t->hcap)
		return UINT32_MAX;
	size_t m = t->hcap - 1, i = strtab_hash(s, len) & m;
	for (; t->hash[i]; i = (i + 1) & m) {
		uint32_t id = t->hash[i] - 1;
		if (t->len[id] == len && memcmp(t->str[id], s, len) == 0)
			return id;
	}
	return UINT32_MAX;
}

static char *strtab_alloc(struct strtab *t, size_t n)
{
	if (n > STRTAB_BLOCK / 4) {
		/* big strings get a block of their own, inserted before the current one */
		char *b = malloc(n);
		char **nb = realloc(t->blocks, (t->n_blocks + 1) * sizeof(*nb));
		if (!b || !nb) {
			free(b);
			if (nb)
				t->blocks = nb;
			return NULL;
		}
		t->blocks = nb;
		if (t->n_blocks) {
			nb[t->n_blocks] = nb[t->n_blocks - 1];
			nb[t->n_blocks - 1] = b;
		} else {
			nb[0] = b;
			t->blk_used = t->blk_cap = 0;
		}
		t->n_blocks++;
		return b;
	}
	if (!t->n_blocks || t->blk_used + n > t->blk_cap) {
		char *b = malloc(STRTAB_BLOCK);
		char **nb = realloc(t->blocks, (t->n_blocks + 1) * sizeof(*nb));
		if (!b || !nb) {
			free(b);
			if (nb)
				t->blocks = nb;
			return NULL;
		}
		t->blocks = nb;
		nb[t->n_blocks++] = b;
		t->blk_used = 0;
		t->blk_cap = STRTAB_BLOCK;
	}
	char *p = t->blocks[t->n_blocks - 1] + t->blk_used;
	t->blk_used += n;
	return p;
}

uint32_t strtab_intern(struct strtab *t, const char *s, size_t len)
{
	uint32_t id = strtab_find(t, s, len);
	if (id != UINT32_MAX)
		return id;
	if (len > UINT32_MAX - 1 || t->n >= UINT32_MAX - 1)
		return UINT32_MAX;
	if ((t->n + 1) * 2 > t->hcap && strtab_grow_hash(t))
		return UINT32_MAX;
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 1024;
		const char **ns = realloc(t->str, nc * sizeof(*ns));
		if (!ns)
			return UINT32_MAX;
		t->str = ns;
		uint32_t *nl = realloc(t->len, nc * sizeof(*nl));
		if (!nl)
			return UINT32_MAX;
		t->len = nl;
		t->cap = nc;
	}
	char *p = strtab_alloc(t, len + 1);
	if (!p)
		return UINT32_MAX;
	if (len)
		memcpy(p, s, len);
	p[len] = '\0';
	id = (uint32_t)t->n++;
	t->str[id] = p;
	t->len[id] = (uint32_t)len;
	size_t m = t->hcap - 1, i = strtab_hash(s, len) & m;
	while (t->hash[i])
		i = (i + 1) & m;
	t->hash[i] = id + 1;
	return id;
}

void rectab_init(struct rectab *t, size_t rec_size)
{
	memset(t, 0, sizeof(*t));
	t->rec_size = rec_size;
}

void rectab_done(struct rectab *t)
{
	free(t->rec);
	free(t->hash);
	t->rec = NULL;
	t->hash = NULL;
	t->n = t->cap = t->hcap = 0;
}

const void *rectab_at(const struct rectab *t, uint32_t id)
{
	if (id == 0 || id > t->n)
		return NULL;
	return t->rec + (size_t)(id - 1) * t->rec_size;
}

static int rectab_rehash(struct rectab *t, size_t ncap)
{
	uint32_t *nh = calloc(ncap, sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	for (size_t k = 0; k < t->n; k++) {
		size_t m = ncap - 1;
		size_t i = strtab_hash(t->rec + k * t->rec_size, t->rec_size) & m;
		while (nh[i])
			i = (i + 1) & m;
		nh[i] = (uint32_t)k + 1;
	}
	free(t->hash);
	t->hash = nh;
	t->hcap = ncap;
	return 0;
}

uint32_t rectab_intern(struct rectab *t, const void *rec)
{
	uint64_t h = strtab_hash(rec, t->rec_size);
	if (t->hcap) {
		size_t m = t->hcap - 1;
		for (size_t i = h & m; t->hash[i]; i = (i + 1) & m)
			if (!memcmp(t->rec + (size_t)(t->hash[i] - 1) * t->rec_size, rec, t->rec_size))
				return t->hash[i];
	}
	if ((t->n + 1) * 2 > t->hcap && rectab_rehash(t, t->hcap ? t->hcap * 2 : 256))
		return 0;
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 64;
		unsigned char *nr = realloc(t->rec, nc * t->rec_size);
		if (!nr)
			return 0;
		t->rec = nr;
		t->cap = nc;
	}
	memcpy(t->rec + t->n * t->rec_size, rec, t->rec_size);
	t->n++;
	size_t m = t->hcap - 1, i = h & m;
	while (t->hash[i])
		i = (i + 1) & m;
	t->hash[i] = (uint32_t)t->n;
	return (uint32_t)t->n;
}
