/*
 * gtfile_sumpage.c - the pages chunk (type 14, format 1.1) and the loader
 * of the summary's pages (gtrace/lsum.h gt_lsum_set_pages).
 *
 * Payload: i64 origin ns, i64 base ns, u32 levels, u32 entry size (32),
 * u32 pages, u32 0; pages x {u64 file offset of a summary chunk, u32
 * level, u32 first lane, u32 lanes, u32 first bucket, u32 buckets, u32 0},
 * by rising offset.  Each page is a summary chunk (type 13) holding only
 * records of its level, its lanes and buckets.  The loader reads it with
 * pread and checks it as the reader checks any chunk (both CRCs, lengths,
 * the zstd content size, the summary's value checks).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "gtfile_summary.h"
#include "gtfile_sumpage.h"

#define HDR_BYTES 32u
#define REC_BYTES 16u
#define TIME_LIMIT ((int64_t)1 << 62)

int gtfile_sumdir_parse(const unsigned char *p, size_t len, struct gtfile_sumdir *d, char *why,
			size_t whylen)
{
	memset(d, 0, sizeof(*d));
	if (len < HDR_BYTES) {
		snprintf(why, whylen, "%zu bytes, shorter than its header", len);
		return -EINVAL;
	}
	d->origin_ns = (int64_t)gtfile_get64(p);
	d->base_ns = (int64_t)gtfile_get64(p + 8);
	uint32_t nlev = gtfile_get32(p + 16), esz = gtfile_get32(p + 20), n = gtfile_get32(p + 24);
	if (d->base_ns <= 0 || nlev < 1 || nlev > GT_LSUM_MAXLEV || esz < GTFILE_SUMPAGE_BYTES ||
	    esz > 4096 || (len - HDR_BYTES) / esz < n) {
		snprintf(why, whylen, "bad header (%u levels, entry %u bytes, %u pages in %zu bytes)",
			 nlev, esz, n, len);
		return -EINVAL;
	}
	d->nlev = (int)nlev;
	d->pg = calloc(n ? n : 1, sizeof(*d->pg));
	if (!d->pg)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		const unsigned char *q = p + HDR_BYTES + (size_t)i * esz;
		struct gt_lsum_page *g = &d->pg[i];
		g->key = gtfile_get64(q);
		g->level = gtfile_get32(q + 8);
		g->lane0 = gtfile_get32(q + 12);
		g->nlanes = gtfile_get32(q + 16);
		g->b0 = gtfile_get32(q + 20);
		g->nb = gtfile_get32(q + 24);
		if ((i && g->key <= d->pg[i - 1].key) || g->key < GTFILE_HDR_BYTES ||
		    g->level >= nlev) {
			snprintf(why, whylen, "page %u: offset %llu or level %u out of order or range", i,
				 (unsigned long long)g->key, g->level);
			gtfile_sumdir_free(d);
			return -EINVAL;
		}
	}
	d->n = n;
	return 0;
}

void gtfile_sumdir_free(struct gtfile_sumdir *d)
{
	free(d->pg);
	d->pg = NULL;
	d->n = 0;
}

int gtfile_sumdir_has(const struct gtfile_sumdir *d, uint64_t off)
{
	size_t lo = 0, hi = d->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->pg[mid].key < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->n && d->pg[lo].key == off;
}

struct ld {
	int fd;
	uint64_t len;
	size_t nstr;
	int64_t origin, base;
	int nlev;
	ZSTD_DCtx *dc;
	unsigned char *in, *out;
	size_t in_cap, out_cap;
};

static int grow(unsigned char **b, size_t *cap, size_t n)
{
	if (n <= *cap)
		return 0;
	unsigned char *nb = realloc(*b, n);
	if (!nb)
		return -ENOMEM;
	*b = nb;
	*cap = n;
	return 0;
}

static int pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	for (size_t done = 0; done < n;) {
		ssize_t r = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		done += (size_t)r;
	}
	return 0;
}

/* the payload of the summary chunk at pg->key into *p, *len */
static int read_chunk(struct ld *c, const struct gt_lsum_page *pg, const unsigned char **p,
		      size_t *len)
{
	unsigned char h[GTFILE_CHUNK_HDR];
	if (pg->key > c->len || c->len - pg->key < GTFILE_CHUNK_HDR)
		return -EIO;
	int rc = pread_all(c->fd, h, sizeof(h), pg->key);
	if (rc)
		return rc;
	uint32_t type = gtfile_get32(h), flags = gtfile_get32(h + 4), raw = gtfile_get32(h + 8);
	uint32_t stored = gtfile_get32(h + 12);
	if (gtfile_get32(h + 20) != (uint32_t)crc32(0, h, 20) || type != GTFILE_CH_SUMMARY ||
	    raw > GTFILE_MAX_CHUNK_BYTES || stored > GTFILE_MAX_CHUNK_BYTES ||
	    (flags & ~GTFILE_CHUNK_ZSTD) || (!(flags & GTFILE_CHUNK_ZSTD) && raw != stored) ||
	    c->len - pg->key - GTFILE_CHUNK_HDR < stored)
		return -EIO;
	if ((rc = grow(&c->in, &c->in_cap, stored ? stored : 1)) ||
	    (rc = pread_all(c->fd, c->in, stored, pg->key + GTFILE_CHUNK_HDR)))
		return rc;
	uLong crc = crc32(crc32(0, h, 16), c->in, stored);
	if (gtfile_get32(h + 16) != (uint32_t)crc)
		return -EIO;
	if (!(flags & GTFILE_CHUNK_ZSTD)) {
		*p = c->in;
		*len = stored;
		return 0;
	}
	if (ZSTD_getFrameContentSize(c->in, stored) != raw || grow(&c->out, &c->out_cap, raw ? raw : 1))
		return -EIO;
	size_t n = ZSTD_decompressDCtx(c->dc, c->out, raw, c->in, stored);
	if (ZSTD_isError(n) || n != raw)
		return -EIO;
	*p = c->out;
	*len = raw;
	return 0;
}

/* the records of a page's payload into pg->e, pg->at; -EIO when anything
 * is out of the page's level, lanes, buckets or order, or a value is bad */
static int parse_page(struct ld *c, struct gt_lsum_page *pg, const unsigned char *p, size_t len)
{
	if (len < HDR_BYTES || (int64_t)gtfile_get64(p) != c->origin ||
	    (int64_t)gtfile_get64(p + 8) != c->base || gtfile_get32(p + 16) != (uint32_t)c->nlev ||
	    gtfile_get32(p + 20) < GTFILE_SUMMARY_ENTRY_BYTES || gtfile_get32(p + 20) > 4096)
		return -EIO;
	size_t esz = gtfile_get32(p + 20), nrec = gtfile_get32(p + 24);
	size_t total = (len - HDR_BYTES) / esz;
	pg->e = malloc((total ? total : 1) * sizeof(*pg->e));
	pg->at = calloc((size_t)pg->nlanes + 1, sizeof(*pg->at));
	if (!pg->e || !pg->at)
		return -ENOMEM;
	const int64_t W = c->base << (2 * pg->level);
	size_t pos = HDR_BYTES, n = 0;
	uint32_t next = 0;   /* lanes before lane0 + next have their start in at[] */
	for (size_t r = 0; r < nrec; r++) {
		if (len - pos < REC_BYTES)
			return -EIO;
		uint32_t lane = gtfile_get32(p + pos), lev = gtfile_get32(p + pos + 4);
		uint32_t cnt = gtfile_get32(p + pos + 8);
		pos += REC_BYTES;
		if (lev != pg->level || lane < pg->lane0 || lane - pg->lane0 >= pg->nlanes ||
		    lane - pg->lane0 + 1 < next || (len - pos) / esz < cnt)
			return -EIO;
		uint32_t li = lane - pg->lane0;
		for (; next <= li; next++)
			pg->at[next] = (uint32_t)n;
		for (uint32_t i = 0; i < cnt; i++, pos += esz) {
			const unsigned char *q = p + pos;
			struct gt_lsum_ent x = { gtfile_get32(q), gtfile_get32(q + 4),
						 (int64_t)gtfile_get64(q + 8), (int64_t)gtfile_get64(q + 16),
						 gtfile_get32(q + 24), gtfile_get32(q + 28) };
			if (x.idx < pg->b0 || x.idx - pg->b0 >= pg->nb ||
			    (n > pg->at[li] && x.idx <= pg->e[n - 1].idx) || x.busy_ns < 0 ||
			    x.busy_ns > W || (__int128)c->origin + (__int128)x.idx * W > TIME_LIMIT ||
			    x.dom_dur < 0 || (x.dom_name != UINT32_MAX && x.dom_name >= c->nstr))
				return -EIO;
			pg->e[n++] = x;
		}
	}
	for (; next <= pg->nlanes; next++)
		pg->at[next] = (uint32_t)n;
	return 0;
}

static int load(void *ctx, struct gt_lsum_page *pg)
{
	struct ld *c = ctx;
	const unsigned char *p;
	size_t len;
	int rc = read_chunk(c, pg, &p, &len);
	if (!rc)
		rc = parse_page(c, pg, p, len);
	return rc;
}

static void done(void *ctx)
{
	struct ld *c = ctx;
	close(c->fd);
	ZSTD_freeDCtx(c->dc);
	free(c->in);
	free(c->out);
	free(c);
}

int gtfile_sumpage_attach(struct gt_lsum *m, const struct gtfile_sumdir *d, int fd, uint64_t len,
			  const char *name, size_t nstr, char *why, size_t whylen)
{
	(void)name;
	if (m->origin_ns != d->origin_ns || m->base_ns != d->base_ns || m->nlev != d->nlev) {
		snprintf(why, whylen, "geometry differs from the summary chunks");
		return -EINVAL;
	}
	struct ld *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	c->dc = ZSTD_createDCtx();
	c->len = len;
	c->nstr = nstr;
	c->origin = m->origin_ns;
	c->base = m->base_ns;
	c->nlev = m->nlev;
	if (c->fd < 0 || !c->dc) {
		int e = c->fd < 0 ? -errno : -ENOMEM;
		if (c->fd >= 0)
			close(c->fd);
		ZSTD_freeDCtx(c->dc);
		free(c);
		return e;
	}
	int rc = gt_lsum_set_pages(m, d->pg, d->n, load, done, c);
	if (rc) {
		done(c);
		if (rc == -EINVAL)
			snprintf(why, whylen, "pages overlap, name a missing lane or level, or a level "
				 "that is also resident");
	}
	return rc;
}
