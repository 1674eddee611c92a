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

int gtfile_summary_write(struct gt_file_writer *w, const struct gt_store *s)
{
	struct gt_lsum *m = NULL;
	int rc = gt_lsum_build(s, &m);
	if (rc || !m)
		return rc;
	struct gtfile_buf *raw = gtfile_writer_raw(w);
	const size_t per = (GTFILE_TABLE_SPLIT_BYTES - HDR_BYTES - REC_BYTES) /
			   GTFILE_SUMMARY_ENTRY_BYTES;
	uint32_t nrec = 0;
	rc = begin(raw, m);
	for (size_t l = 0; l < m->nlanes && !rc; l++)
		for (int k = 0; k < m->nlev && !rc; k++) {
			const struct gt_lsum_ent *e = m->lane[l].e[k];
			for (size_t done = 0, n = m->lane[l].n[k]; done < n && !rc;) {
				size_t room = (GTFILE_TABLE_SPLIT_BYTES - raw->n - REC_BYTES) /
					      GTFILE_SUMMARY_ENTRY_BYTES;
				if (raw->n + REC_BYTES + GTFILE_SUMMARY_ENTRY_BYTES > GTFILE_TABLE_SPLIT_BYTES) {
					rc = emit(w, nrec);
					nrec = 0;
					if (!rc)
						rc = begin(raw, m);
					continue;
				}
				size_t c = n - done < room ? n - done : room;
				c = c < per ? c : per;
				unsigned char *p = gtfile_buf_add(raw, NULL, REC_BYTES +
								  c * GTFILE_SUMMARY_ENTRY_BYTES);
				if (!p) {
					rc = -ENOMEM;
					break;
				}
				gtfile_put32(p, (uint32_t)l);
				gtfile_put32(p + 4, (uint32_t)k);
				gtfile_put32(p + 8, (uint32_t)c);
				p += REC_BYTES;
				for (size_t i = 0; i < c; i++, p += GTFILE_SUMMARY_ENTRY_BYTES) {
					const struct gt_lsum_ent *x = &e[done + i];
					gtfile_put32(p, x->idx);
					gtfile_put32(p + 4, x->count);
					gtfile_put64(p + 8, (uint64_t)x->busy_ns);
					gtfile_put64(p + 16, (uint64_t)x->dom_dur);
					gtfile_put32(p + 24, x->dom_name);
					gtfile_put32(p + 28, x->dom_kfs);
				}
				done += c;
				nrec++;
			}
		}
	if (!rc && nrec)
		rc = emit(w, nrec);
	raw->n = 0;
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
