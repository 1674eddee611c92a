/*
 * gtfile_summary.c - summary chunks (type 13, format 1.1): the per-lane
 * summary of gtrace/lsum.h, written before the index, read into the store.
 *
 * Payload: i64 origin ns, i64 base ns, u32 levels, u32 entry size (32),
 * u32 records, u32 0; then records {u32 lane, u32 level, u32 entries, u32 0}
 * each followed by its entries {u32 bucket, u32 count, i64 busy ns, i64
 * dominant duration, u32 dominant name, u32 dominant kind|sub<<8|flags<<16}.
 * A lane's level may continue in a later record (chunks are cut at about
 * GTFILE_TABLE_SPLIT_BYTES); buckets rise strictly within a lane's level.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtfile_tables.h"
#include "gtfile_summary.h"

#define HDR_BYTES 32u
#define TIME_LIMIT ((int64_t)1 << 62)
#define REC_BYTES 16u

/* start a chunk payload in raw */
static int begin(struct gtfile_buf *raw, const struct gt_lsum *m)
{
	raw->n = 0;
	unsigned char *p = gtfile_buf_add(raw, NULL, HDR_BYTES);
	if (!p)
		return -ENOMEM;
	gtfile_put64(p, (uint64_t)m->origin_ns);
	gtfile_put64(p + 8, (uint64_t)m->base_ns);
	gtfile_put32(p + 16, (uint32_t)m->nlev);
	gtfile_put32(p + 20, GTFILE_SUMMARY_ENTRY_BYTES);
	return 0;
}

static int emit(struct gt_file_writer *w, uint32_t nrec)
{
	gtfile_put32(gtfile_writer_raw(w)->p + 24, nrec);
	return gtfile_writer_chunk(w, GTFILE_CH_SUMMARY, 0);
}

/* a record of c entries of lane l, level k into raw; 0 or -ENOMEM */
static int record(struct gtfile_buf *raw, uint32_t l, uint32_t k, const struct gt_lsum_ent *e,
		  size_t c)
{
	unsigned char *p = gtfile_buf_add(raw, NULL, REC_BYTES + c * GTFILE_SUMMARY_ENTRY_BYTES);
	if (!p)
		return -ENOMEM;
	gtfile_put32(p, l);
	gtfile_put32(p + 4, k);
	gtfile_put32(p + 8, (uint32_t)c);
	p += REC_BYTES;
	for (size_t i = 0; i < c; i++, p += GTFILE_SUMMARY_ENTRY_BYTES) {
		const struct gt_lsum_ent *x = &e[i];
		gtfile_put32(p, x->idx);
		gtfile_put32(p + 4, x->count);
		gtfile_put64(p + 8, (uint64_t)x->busy_ns);
		gtfile_put64(p + 16, (uint64_t)x->dom_dur);
		gtfile_put32(p + 24, x->dom_name);
		gtfile_put32(p + 28, x->dom_kfs);
	}
	return 0;
}

/* the levels that are not paged, lane by lane (chunks cut at about
 * GTFILE_TABLE_SPLIT_BYTES, a lane's level continuing in the next) */
static int write_resident(struct gt_file_writer *w, const struct gt_lsum *m, const int *paged)
{
	struct gtfile_buf *raw = gtfile_writer_raw(w);
	uint32_t nrec = 0;
	int rc = begin(raw, m);
	for (size_t l = 0; l < m->nlanes && !rc; l++)
		for (int k = 0; k < m->nlev && !rc; k++) {
			const struct gt_lsum_ent *e = m->lane[l].e[k];
			for (size_t done = 0, n = paged[k] ? 0 : m->lane[l].n[k]; done < n && !rc;) {
				if (raw->n + REC_BYTES + GTFILE_SUMMARY_ENTRY_BYTES > GTFILE_TABLE_SPLIT_BYTES) {
					rc = emit(w, nrec);
					nrec = 0;
					if (!rc)
						rc = begin(raw, m);
					continue;
				}
				size_t room = (GTFILE_TABLE_SPLIT_BYTES - raw->n - REC_BYTES) /
					      GTFILE_SUMMARY_ENTRY_BYTES;
				size_t c = n - done < room ? n - done : room;
				rc = record(raw, (uint32_t)l, (uint32_t)k, e + done, c);
				done += c;
				nrec++;
			}
		}
	if (!rc && nrec)
		rc = emit(w, nrec);
	raw->n = 0;
	return rc;
}

/* levels with at least this many entries are paged, in slabs of this many
 * buckets, pages of about this many entries (GTRACE_SUMMARY_PAGE_MIN,
 * GTRACE_SUMMARY_SLAB and GTRACE_SUMMARY_PAGE_ENTRIES change them, for
 * tests) */
static size_t page_min(void)
{
	const char *v = getenv("GTRACE_SUMMARY_PAGE_MIN");
	return v && *v ? (size_t)strtoull(v, NULL, 10) : GTFILE_SUMMARY_PAGE_MIN;
}

static size_t page_entries(void)
{
	const char *v = getenv("GTRACE_SUMMARY_PAGE_ENTRIES");
	size_t n = v && *v ? (size_t)strtoull(v, NULL, 10) : GTFILE_SUMPAGE_ENTRIES;
	return n ? n : 1;
}

static uint64_t slab_buckets(void)
{
	const char *v = getenv("GTRACE_SUMMARY_SLAB");
	uint64_t s = v && *v ? strtoull(v, NULL, 10) : GTFILE_SUMPAGE_SLAB;
	return s ? s : 1;
}

struct dir {
	unsigned char *p;   /* page entries, GTFILE_SUMPAGE_BYTES each */
	size_t n, cap;
};

static int dir_add(struct dir *d, uint64_t off, uint32_t k, uint32_t lane0, uint32_t nl,
		   uint32_t b0, uint32_t nb)
{
	if (d->n == d->cap) {
		size_t nc = d->cap ? d->cap * 2 : 64;
		unsigned char *np = realloc(d->p, nc * GTFILE_SUMPAGE_BYTES);
		if (!np)
			return -ENOMEM;
		d->p = np;
		d->cap = nc;
	}
	unsigned char *q = d->p + d->n++ * GTFILE_SUMPAGE_BYTES;
	memset(q, 0, GTFILE_SUMPAGE_BYTES);
	gtfile_put64(q, off);
	gtfile_put32(q + 8, k);
	gtfile_put32(q + 12, lane0);
	gtfile_put32(q + 16, nl);
	gtfile_put32(q + 20, b0);
	gtfile_put32(q + 24, nb);
	return 0;
}

/* the lanes [lane0, l) of one slab as one page chunk, if it holds any record */
static int page_out(struct gt_file_writer *w, struct dir *d, uint32_t nrec, uint32_t k,
		    size_t lane0, size_t l, uint32_t b0, uint32_t nb)
{
	if (!nrec)
		return 0;
	int rc = dir_add(d, gtfile_writer_offset(w), k, (uint32_t)lane0, (uint32_t)(l - lane0),
			 b0, nb);
	return rc ? rc : emit(w, nrec);
}

/* level k as pages: slabs of GTFILE_SUMPAGE_SLAB buckets (a row of the
 * trace view drawn from a level spans 400 to 1,600 of its buckets: 1 to 4
 * slabs), each cut into runs of lanes of about GTFILE_SUMPAGE_ENTRIES
 * entries, rising slab by slab (a reader that reads every chunk still sees
 * each lane's buckets rise) */
static int write_paged(struct gt_file_writer *w, const struct gt_lsum *m, int k, struct dir *d,
		       size_t *pos)
{
	struct gtfile_buf *raw = gtfile_writer_raw(w);
	uint64_t nbk = 0;
	for (size_t l = 0; l < m->nlanes; l++) {
		pos[l] = 0;
		size_t n = m->lane[l].n[k];
		if (n && (uint64_t)m->lane[l].e[k][n - 1].idx + 1 > nbk)
			nbk = (uint64_t)m->lane[l].e[k][n - 1].idx + 1;
	}
	uint64_t S = slab_buckets();
	size_t per = page_entries();
	int rc = 0;
	for (uint64_t b0 = 0; b0 < nbk && !rc; b0 += S) {
		uint64_t b1 = b0 + S < nbk ? b0 + S : nbk;
		size_t lane0 = 0, ents = 0;
		uint32_t nrec = 0;
		rc = begin(raw, m);
		for (size_t l = 0; l < m->nlanes && !rc; l++) {
			const struct gt_lsum_ent *e = m->lane[l].e[k];
			size_t c = 0, n = m->lane[l].n[k];
			while (pos[l] + c < n && e[pos[l] + c].idx < b1)
				c++;
			if (l > lane0 && ents + c > per) {
				rc = page_out(w, d, nrec, (uint32_t)k, lane0, l, (uint32_t)b0,
					      (uint32_t)(b1 - b0));
				if (!rc)
					rc = begin(raw, m);
				lane0 = l;
				ents = 0;
				nrec = 0;
			}
			if (c && !rc) {
				rc = record(raw, (uint32_t)l, (uint32_t)k, e + pos[l], c);
				pos[l] += c;
				ents += c;
				nrec++;
			}
		}
		if (!rc)
			rc = page_out(w, d, nrec, (uint32_t)k, lane0, m->nlanes, (uint32_t)b0,
				      (uint32_t)(b1 - b0));
	}
	raw->n = 0;
	return rc;
}

/* the pages chunk: the geometry, then where each page is */
static int write_dir(struct gt_file_writer *w, const struct gt_lsum *m, const struct dir *d)
{
	struct gtfile_buf *raw = gtfile_writer_raw(w);
	raw->n = 0;
	unsigned char *p = gtfile_buf_add(raw, NULL, HDR_BYTES + d->n * GTFILE_SUMPAGE_BYTES);
	if (!p)
		return -ENOMEM;
	gtfile_put64(p, (uint64_t)m->origin_ns);
	gtfile_put64(p + 8, (uint64_t)m->base_ns);
	gtfile_put32(p + 16, (uint32_t)m->nlev);
	gtfile_put32(p + 20, GTFILE_SUMPAGE_BYTES);
	gtfile_put32(p + 24, (uint32_t)d->n);
	gtfile_put32(p + 28, 0);
	memcpy(p + HDR_BYTES, d->p, d->n * GTFILE_SUMPAGE_BYTES);
	return gtfile_writer_chunk(w, GTFILE_CH_SUMPAGES, 0);
}

int gtfile_summary_write(struct gt_file_writer *w, const struct gt_store *s)
{
	struct gt_lsum *m = NULL;
	int rc = gt_lsum_build(s, &m);
	if (rc || !m)
		return rc;
	int paged[GT_LSUM_MAXLEV] = { 0 }, any = 0;
	size_t min = page_min();
	for (int k = 0; k < m->nlev; k++) {
		size_t n = 0;
		for (size_t l = 0; l < m->nlanes; l++)
			n += m->lane[l].n[k];
		paged[k] = n && n >= min;
		any |= paged[k];
	}
	rc = write_resident(w, m, paged);
	struct dir d = { 0 };
	size_t *pos = any && !rc ? malloc((m->nlanes ? m->nlanes : 1) * sizeof(*pos)) : NULL;
	if (any && !rc && !pos)
		rc = -ENOMEM;
	for (int k = m->nlev - 1; k >= 0 && any && !rc; k--)
		if (paged[k])
			rc = write_paged(w, m, k, &d, pos);
	if (any && !rc)
		rc = write_dir(w, m, &d);
	free(pos);
	free(d.p);
	gt_lsum_free(m);
	return rc;
}

int gtfile_summary_read(const unsigned char *p, size_t len, const struct gt_store *s,
			struct gt_lsum **mp, char *why, size_t whylen)
{
	if (len < HDR_BYTES) {
		snprintf(why, whylen, "%zu bytes, shorter than its header", len);
		return -EINVAL;
	}
	int64_t origin = (int64_t)gtfile_get64(p), base = (int64_t)gtfile_get64(p + 8);
	uint32_t nlev = gtfile_get32(p + 16), esz = gtfile_get32(p + 20);
	uint32_t nrec = gtfile_get32(p + 24);
	/* times are within +-2^62 (evcheck): the origin and every bucket's start
	 * too, and the widest level is at most 2^61, so that a bucket's end
	 * fits in 63 bits (queries compute offsets from the origin in 128) */
	if (base <= 0 || nlev < 1 || nlev > GT_LSUM_MAXLEV ||
	    base > ((TIME_LIMIT / 2) >> (2 * (nlev - 1))) || origin < -TIME_LIMIT ||
	    origin > TIME_LIMIT ||
	    esz < GTFILE_SUMMARY_ENTRY_BYTES || esz > 4096) {
		snprintf(why, whylen, "bad geometry (base %lld ns, %u levels, entry %u bytes)",
			 (long long)base, nlev, esz);
		return -EINVAL;
	}
	struct gt_lsum *m = *mp;
	if (!m) {
		m = gt_lsum_new(origin, base, (int)nlev, gt_store_lane_count(s));
		if (!m)
			return -ENOMEM;
		*mp = m;
	} else if (m->origin_ns != origin || m->base_ns != base || m->nlev != (int)nlev) {
		snprintf(why, whylen, "geometry differs from the first summary chunk");
		return -EINVAL;
	}
	size_t pos = HDR_BYTES, nstr = gt_store_str_count(s);
	for (uint32_t r = 0; r < nrec; r++) {
		if (len - pos < REC_BYTES) {
			snprintf(why, whylen, "record %u runs past the end", r);
			return -EINVAL;
		}
		uint32_t lane = gtfile_get32(p + pos), lev = gtfile_get32(p + pos + 4);
		uint32_t cnt = gtfile_get32(p + pos + 8);
		pos += REC_BYTES;
		if (lane >= m->nlanes || lev >= nlev || (len - pos) / esz < cnt) {
			snprintf(why, whylen, "record %u: lane %u level %u with %u entries does not fit "
				 "(%zu lanes, %u levels)", r, lane, lev, cnt, m->nlanes, nlev);
			return -EINVAL;
		}
		struct gt_lsum_lane *ln = &m->lane[lane];
		struct gt_lsum_ent *ne = realloc(ln->e[lev], (ln->n[lev] + cnt + 1) * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		ln->e[lev] = ne;
		int64_t W = base << (2 * lev);
		for (uint32_t i = 0; i < cnt; i++, pos += esz) {
			const unsigned char *q = p + pos;
			struct gt_lsum_ent x = { gtfile_get32(q), gtfile_get32(q + 4),
						 (int64_t)gtfile_get64(q + 8), (int64_t)gtfile_get64(q + 16),
						 gtfile_get32(q + 24), gtfile_get32(q + 28) };
			size_t n = ln->n[lev];
			if ((n && x.idx <= ne[n - 1].idx) || x.busy_ns < 0 || x.busy_ns > W ||
			    (__int128)origin + (__int128)x.idx * W > TIME_LIMIT ||
			    x.dom_dur < 0 || (x.dom_name != UINT32_MAX && x.dom_name >= nstr)) {
				snprintf(why, whylen, "lane %u level %u bucket %u: out of order or bad "
					 "values", lane, lev, x.idx);
				return -EINVAL;
			}
			ne[n] = x;
			ln->n[lev] = n + 1;
		}
	}
	return 0;
}
