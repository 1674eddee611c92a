/*
 * gtfile_read.c - the .gtrace reader: header and version checks, the chunk
 * walk (lengths, CRC-32, zstd), dispatch to the table and event decoders,
 * and the cut-off rule.
 *
 * A file is complete when it ends with a valid END chunk.  The reader looks
 * at the END chunk and the index it points to first, only to size each
 * lane's event array exactly; then it walks the chunks in order.  A chunk
 * whose header is intact but whose payload runs past the end of the file,
 * or a partial chunk header, means the file was cut off: the store keeps
 * everything up to the last complete chunk.  Any checksum, length or
 * content error is an error, wherever it is.
 */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "../util/mapguard.h"
#include <zstd.h>
#include "gtfile_tables.h"
#include "gtfile_summary.h"
#include "gtfile_sumpage.h"
#include "gtrace_config.h"
#include "gtrace/mem_lane.h"

struct rd {
	const unsigned char *p;
	size_t len;
	const char *name;
	struct gt_store *s;
	char *err;
	size_t errlen;
	ZSTD_DCtx *dc;
	struct gtfile_buf out;        /* decompressed payload */
	uint64_t *idx_lane;           /* events per lane from the index, or NULL */
	size_t idx_nlanes;
	uint64_t idx_events;
	int have_index;
	size_t max_events;
	_Atomic uint64_t *progress;   /* optional: bytes walked so far, for a loading line */
	int mapped;                   /* p is a page-aligned mapping that may be dropped behind */
	size_t dropped;               /* bytes of it dropped so far */
	struct gt_lsum *sum;          /* summary chunks read so far, or NULL */
	int head;                     /* tables, summary and index only (gt_file_read_head) */
	int64_t idx_t0, idx_t1;       /* the index's span */
	uint64_t *jump;               /* head: offsets of the chunks that are not events */
	size_t njump, jk;
	int fd;                       /* the file (pages are read from it later), or -1 */
	struct gtfile_sumdir dir;     /* the summary's pages (pages chunk), when fd >= 0 */
	size_t dir_missing;           /* pages the index does not list as summary chunks */
};

/* 1 when the chunk at pos is a page of the summary, read on demand */
static int is_page(const struct rd *r, size_t pos)
{
	return r->dir.n && gtfile_sumdir_has(&r->dir, pos);
}

const char *gtfile_chunk_name(uint32_t type)
{
	static const char *const n[] = {
		"unknown", "strings", "lanes", "devices", "ranks", "kconf",
		"nccl", "events", "drops", "metadata", "index", "end", "padding",
		"summary", "summary pages",
	};
	return type < sizeof(n) / sizeof(n[0]) ? n[type] : "unknown";
}

int gt_file_sniff(const void *buf, size_t len)
{
	return len >= 8 && !memcmp(buf, GT_FILE_MAGIC, 8);
}

static int fail(struct rd *r, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct rd *r, int rc, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	int de = rc == -ENOMEM && r->s ? gt_store_cache_disk_error(r->s) : 0;
	if (de) {
		/* the memory was there: the budget's cache file had no disk */
		const char *t = getenv("TMPDIR");
		snprintf(r->err, r->errlen, "%s: the memory budget's cache file in %s: %s", r->name,
			 t && *t ? t : "/var/tmp", strerror(de));
		return -de;
	}
	snprintf(r->err, r->errlen, "%s: %s", r->name, msg);
	return rc;
}

/* chunk at pos: 1 complete (header fields out), 0 runs past the end,
 * negative on a bad header (message set) */
static int chunk_at(struct rd *r, size_t pos, uint32_t *type, uint32_t *flags, uint32_t *raw,
		    uint32_t *stored)
{
	if (r->len - pos < GTFILE_CHUNK_HDR)
		return 0;
	const unsigned char *h = r->p + pos;
	if (gtfile_get32(h + 20) != (uint32_t)crc32(0, h, 20))
		return fail(r, -EINVAL, "checksum mismatch in the chunk header at byte %zu", pos);
	*type = gtfile_get32(h);
	*flags = gtfile_get32(h + 4);
	*raw = gtfile_get32(h + 8);
	*stored = gtfile_get32(h + 12);
	if (*raw > GTFILE_MAX_CHUNK_BYTES || *stored > GTFILE_MAX_CHUNK_BYTES)
		return fail(r, -EINVAL, "%s chunk at byte %zu claims %u bytes (limit %u)",
			    gtfile_chunk_name(*type), pos, *raw > *stored ? *raw : *stored,
			    GTFILE_MAX_CHUNK_BYTES);
	if ((*flags & ~GTFILE_CHUNK_ZSTD) || (!(*flags & GTFILE_CHUNK_ZSTD) && *raw != *stored))
		return fail(r, -EINVAL, "%s chunk at byte %zu has bad flags or lengths",
			    gtfile_chunk_name(*type), pos);
	if (r->len - pos - GTFILE_CHUNK_HDR < *stored)
		return 0;
	if (r->head && (*type == GTFILE_CH_EVENTS || (*type == GTFILE_CH_SUMMARY && is_page(r, pos))))
		return 1;   /* not read: the full load (events) or the page's load checks it */
	uLong crc = crc32(0, h, 16);
	crc = crc32(crc, h + GTFILE_CHUNK_HDR, *stored);
	if (gtfile_get32(h + 16) != (uint32_t)crc)
		return fail(r, -EINVAL, "checksum mismatch in %s chunk at byte %zu",
			    gtfile_chunk_name(*type), pos);
	return 1;
}

/* the chunk's raw payload (decompressed into r->out when needed) */
static int payload(struct rd *r, size_t pos, uint32_t type, uint32_t flags, uint32_t raw,
		   uint32_t stored, const unsigned char **out)
{
	const unsigned char *src = r->p + pos + GTFILE_CHUNK_HDR;
	if (!(flags & GTFILE_CHUNK_ZSTD)) {
		*out = src;
		return 0;
	}
	unsigned long long fcs = ZSTD_getFrameContentSize(src, stored);
	if (fcs != raw)
		return fail(r, -EINVAL, "%s chunk at byte %zu: decompressed size mismatch",
			    gtfile_chunk_name(type), pos);
	r->out.n = 0;
	if (gtfile_buf_reserve(&r->out, raw ? raw : 1))
		return fail(r, -ENOMEM, "out of memory");
	size_t n = ZSTD_decompressDCtx(r->dc, r->out.p, raw, src, stored);
	if (ZSTD_isError(n) || n != raw)
		return fail(r, -EINVAL, "%s chunk at byte %zu: %s", gtfile_chunk_name(type), pos,
			    ZSTD_isError(n) ? "bad compressed data" : "decompressed size mismatch");
	*out = r->out.p;
	return 0;
}

/* the last pages chunk of the index's chunk list c[0..nch) into r->dir;
 * anything wrong is left for the walk (which then reads every page) */
static void peek_pages(struct rd *r, const unsigned char *c, size_t nch, uint64_t index_at)
{
	uint64_t at = 0;
	for (size_t i = 0; i < nch; i++)
		if (gtfile_get32(c + 16 * i + 8) == GTFILE_CH_SUMPAGES)
			at = gtfile_get64(c + 16 * i);
	uint32_t type, flags, raw, stored;
	const unsigned char *p;
	char why[200];
	if (!at || at >= index_at || chunk_at(r, at, &type, &flags, &raw, &stored) != 1 ||
	    type != GTFILE_CH_SUMPAGES)
		return;
	/* decompressed into a buffer of its own: r->out holds the index */
	struct gtfile_buf idx = r->out;
	r->out = (struct gtfile_buf){ 0 };
	if (!payload(r, at, type, flags, raw, stored, &p) &&
	    gtfile_sumdir_parse(p, raw, &r->dir, why, sizeof(why)))
		gtfile_sumdir_free(&r->dir);
	gtfile_buf_free(&r->out);
	r->out = idx;
	/* every page must be a summary chunk the index lists (both by offset) */
	size_t j = 0;
	for (size_t i = 0; i < r->dir.n; i++) {
		while (j < nch && gtfile_get64(c + 16 * j) < r->dir.pg[i].key)
			j++;
		if (j == nch || gtfile_get64(c + 16 * j) != r->dir.pg[i].key ||
		    gtfile_get32(c + 16 * j + 8) != GTFILE_CH_SUMMARY)
			r->dir_missing++;
	}
	if (r->dir_missing)
		gtfile_sumdir_free(&r->dir);
}

/* read END and the index if the file is complete, to size lanes exactly;
 * anything wrong here is left for the chunk walk to report */
static void peek_index(struct rd *r)
{
	uint32_t type, flags, raw, stored;
	size_t pos = r->len - GTFILE_END_BYTES;
	if (r->len < GTFILE_HDR_BYTES + GTFILE_END_BYTES ||
	    chunk_at(r, pos, &type, &flags, &raw, &stored) != 1 || type != GTFILE_CH_END ||
	    raw != 16 || flags)
		goto none;
	uint64_t at = gtfile_get64(r->p + pos + GTFILE_CHUNK_HDR);
	if (at < GTFILE_HDR_BYTES || at >= pos || chunk_at(r, at, &type, &flags, &raw, &stored) != 1 ||
	    type != GTFILE_CH_INDEX)
		goto none;
	const unsigned char *p;
	if (payload(r, at, type, flags, raw, stored, &p) || raw < 40)
		goto none;
	uint64_t ev = gtfile_get64(p);
	size_t nl = gtfile_get32(p + 24);
	if (ev > r->max_events || (raw - 40) / 8 < nl)
		goto none;
	r->idx_lane = malloc((nl ? nl : 1) * sizeof(uint64_t));
	if (!r->idx_lane)
		goto none;
	uint64_t sum = 0;
	for (size_t i = 0; i < nl; i++) {
		r->idx_lane[i] = gtfile_get64(p + 40 + 8 * i);
		sum += r->idx_lane[i] > ev ? ev + 1 : r->idx_lane[i];
	}
	if (sum != ev) {
		free(r->idx_lane);
		r->idx_lane = NULL;
		goto none;
	}
	r->idx_nlanes = nl;
	r->idx_events = ev;
	r->idx_t0 = (int64_t)gtfile_get64(p + 8);
	r->idx_t1 = (int64_t)gtfile_get64(p + 16);
	/* head: where the chunks other than events are, to jump over runs of
	 * event chunks without touching their pages (a cold disk reads only
	 * the tables, the summary and the index) */
	size_t nch = gtfile_get32(p + 28);
	if (r->fd >= 0 && (raw - 40 - nl * 8) / 16 >= nch)
		peek_pages(r, p + 40 + nl * 8, nch, at);
	if (r->head && (raw - 40 - nl * 8) / 16 >= nch) {
		r->jump = malloc((nch + 2) * sizeof(uint64_t));
		const unsigned char *c = p + 40 + nl * 8;
		for (size_t i = 0; r->jump && i < nch; i++, c += 16)
			if (gtfile_get32(c + 8) != GTFILE_CH_EVENTS &&
			    !(gtfile_get32(c + 8) == GTFILE_CH_SUMMARY && is_page(r, gtfile_get64(c))))
				r->jump[r->njump++] = gtfile_get64(c);
		if (r->jump) {
			r->jump[r->njump++] = at;
			r->jump[r->njump++] = pos;
		}
	}
	r->have_index = 1;
none:
	r->err[0] = '\0';
}

static int check_header(struct rd *r, struct gt_file_info *info)
{
	if (r->len == 0)
		return fail(r, -EINVAL, "empty file");
	size_t m = r->len < 8 ? r->len : 8;
	if (memcmp(r->p, GT_FILE_MAGIC, m))
		return fail(r, -EINVAL, "not a gtrace capture");
	if (r->len < GTFILE_HDR_BYTES)
		return fail(r, -EINVAL, "cut off inside the file header (%zu bytes)", r->len);
	info->version_major = gtfile_get16(r->p + 8);
	info->version_minor = gtfile_get16(r->p + 10);
	char *wv = info->writer_version;
	int odd = gtfile_hdr_writer(r->p, wv);
	/* a newer format is told before the checksum (its header may differ),
	 * unless the writer's name is not text and the checksum fails: bytes
	 * after the magic, not a newer gtrace */
	if (info->version_major > GT_FILE_VERSION_MAJOR && odd &&
	    gtfile_get32(r->p + 60) != (uint32_t)crc32(0, r->p, 60))
		return fail(r, -EINVAL, "damaged file header (checksum mismatch)");
	if (info->version_major > GT_FILE_VERSION_MAJOR)
		return fail(r, -ENOTSUP, "written by gtrace %s (format %u.%u), this is gtrace %s "
			    "(format %u.%u): upgrade gtrace", wv, info->version_major,
			    info->version_minor, GTRACE_VERSION, GT_FILE_VERSION_MAJOR,
			    GT_FILE_VERSION_MINOR);
	if (gtfile_get32(r->p + 60) != (uint32_t)crc32(0, r->p, 60))
		return fail(r, -EINVAL, "checksum mismatch in the file header");
	if (info->version_major < 1 || gtfile_get32(r->p + 12) != GTFILE_HDR_BYTES)
		return fail(r, -ENOTSUP, "unsupported format version %u.%u",
			    info->version_major, info->version_minor);
	return 0;
}

/* ask for transparent huge pages on a freshly reserved event array: the
 * page faults of a 4 KiB-page array cost about a third of an open (a hint;
 * where THP is off nothing changes) */
static void huge_hint(const struct gt_lane *l)
{
	uintptr_t pg = 2u << 20, a = ((uintptr_t)(l->ev + l->n) + pg - 1) & ~(pg - 1);
	uintptr_t b = (uintptr_t)(l->ev + l->cap) & ~(pg - 1);
	if (b > a)
		madvise((void *)a, b - a, MADV_HUGEPAGE);
}

/* exact reservations for lanes [from, to) from the index */
static int reserve_lanes(struct rd *r, size_t from, size_t to)
{
	for (size_t i = from; i < to && i < r->idx_nlanes; i++) {
		if (r->idx_lane[i] && gt_store_reserve(r->s, (uint32_t)i, r->idx_lane[i]))
			return fail(r, -ENOMEM, "out of memory");
		if (!gt_store_budget(r->s))
			huge_hint(gt_store_lane_at(r->s, (uint32_t)i));
	}
	return 0;
}

/* walk the chunks; *complete = 1 when the END chunk was reached */
/* a budgeted store: the file's pages already decoded leave the process
 * (every 4 MiB; the file was mapped without MAP_POPULATE) */
static void drop_behind(struct rd *r, size_t pos)
{
	size_t step = (size_t)4 << 20, pg = (size_t)sysconf(_SC_PAGESIZE);
	if (!r->mapped || pos < r->dropped + step)
		return;
	size_t upto = pos / pg * pg;
	madvise((void *)(uintptr_t)(r->p + r->dropped), upto - r->dropped, MADV_DONTNEED);
	r->dropped = upto;
}

static int walk(struct rd *r, struct gt_file_info *info, int *complete, size_t *last)
{
	size_t pos = GTFILE_HDR_BYTES;
	char why[200];
	*complete = 0;
	*last = pos;   /* the end of the last complete chunk (the header's at first) */
	while (pos < r->len) {
		uint32_t type, flags, raw, stored;
		int rc = chunk_at(r, pos, &type, &flags, &raw, &stored);
		if (rc <= 0)
			return rc;
		if (type == GTFILE_CH_SUMMARY && is_page(r, pos)) {
			/* a page: read when a row needs it (gtfile_sumpage.c) */
			info->chunks++;
			size_t nxt = pos + GTFILE_CHUNK_HDR + stored;
			while (r->head && r->jk < r->njump && r->jump[r->jk] < nxt)
				r->jk++;
			pos = r->head && r->jk < r->njump && r->jump[r->jk] < r->len ?
			      (size_t)r->jump[r->jk] : nxt;
			*last = pos;
			continue;
		}
		if (type == GTFILE_CH_SUMPAGES && !r->dir.n) {
			/* not taken at the start (a memory read, a file cut
			 * before its index, or bad): its pages were read as
			 * summary chunks; it must still be well formed */
			const unsigned char *p;
			struct gtfile_sumdir d;
			why[0] = '\0';
			rc = payload(r, pos, type, flags, raw, stored, &p);
			if (!rc)
				rc = gtfile_sumdir_parse(p, raw, &d, why, sizeof(why));
			if (rc)
				return why[0] && rc == -EINVAL ?
				       fail(r, rc, "summary pages chunk at byte %zu: %s", pos, why) : rc;
			gtfile_sumdir_free(&d);
		}
		if (type < GTFILE_CH_STRINGS || (type > GTFILE_CH_END && type != GTFILE_CH_SUMMARY)) {
			/* padding or a chunk of a later minor version: skipped
			 * unread (a zstd frame of it is never decompressed) */
			info->chunks++;
			pos += GTFILE_CHUNK_HDR + stored;
			*last = pos;
			continue;
		}
		if (r->head && type == GTFILE_CH_EVENTS) {
			info->chunks++;
			size_t nxt = pos + GTFILE_CHUNK_HDR + stored;
			while (r->jk < r->njump && r->jump[r->jk] < nxt)
				r->jk++;
			/* the next chunk that is not events, when the index says where */
			pos = r->jk < r->njump && r->jump[r->jk] < r->len ? (size_t)r->jump[r->jk] : nxt;
			*last = pos;
			continue;
		}
		const unsigned char *p;
		rc = payload(r, pos, type, flags, raw, stored, &p);
		if (rc)
			return rc;
		why[0] = '\0';
		if (type == GTFILE_CH_END) {
			if (raw != 16 || pos + GTFILE_END_BYTES != r->len)
				return fail(r, -EINVAL, "misplaced end marker at byte %zu", pos);
			if (r->head)
				info->events = gtfile_get64(p + 8);   /* not decoded */
			if (gtfile_get64(p + 8) != info->events ||
			    (r->have_index && r->idx_events != info->events))
				return fail(r, -EINVAL, "end marker says %llu events, file holds %llu",
					    (unsigned long long)gtfile_get64(p + 8),
					    (unsigned long long)info->events);
			*complete = 1;
		} else if (type == GTFILE_CH_EVENTS) {
			size_t n;
			rc = gtfile_events_decode(p, raw, r->s, r->max_events - info->events, &n,
						  why, sizeof(why));
			info->events += n;
		} else if (type == GTFILE_CH_LANES) {
			size_t before = gt_store_lane_count(r->s);
			rc = gtfile_tab_read(type, p, raw, r->s, why, sizeof(why));
			if (!rc && !r->head)
				rc = reserve_lanes(r, before, gt_store_lane_count(r->s));
		} else if (type == GTFILE_CH_SUMMARY) {
			rc = gtfile_summary_read(p, raw, r->s, &r->sum, why, sizeof(why));
		} else if (type != GTFILE_CH_INDEX) {
			rc = gtfile_tab_read(type, p, raw, r->s, why, sizeof(why));
		}
		if (rc == -ENOMEM && !why[0])
			return fail(r, rc, "out of memory");
		if (rc)
			return why[0] ? fail(r, rc, "%s chunk at byte %zu: %s", gtfile_chunk_name(type),
					     pos, why) : rc;
		info->chunks++;
		pos += GTFILE_CHUNK_HDR + stored;
		*last = pos;
		drop_behind(r, pos);
		if (r->progress)
			atomic_store_explicit(r->progress, pos, memory_order_relaxed);
	}
	return 0;
}

/* the summary's pages (the pages chunk taken at the start) into r->sum,
 * made from the pages chunk's geometry when every level is paged, read
 * from a dup of the file, at most an eighth of the store's budget
 * (64 KiB at least), 256 MiB without a budget */
static int attach_pages(struct rd *r)
{
	if (!r->sum) {
		r->sum = gt_lsum_new(r->dir.origin_ns, r->dir.base_ns, r->dir.nlev,
				     gt_store_lane_count(r->s));
		if (!r->sum)
			return fail(r, -EINVAL, "summary pages chunk: bad geometry");
	}
	char why[200] = "";
	int rc = gtfile_sumpage_attach(r->sum, &r->dir, r->fd, r->len, r->name,
				       gt_store_str_count(r->s), why, sizeof(why));
	if (rc)
		return why[0] ? fail(r, rc, "summary pages chunk: %s", why) :
		       fail(r, rc, "out of memory");
	size_t b = gt_store_budget(r->s), cap = b ? b / 8 : (size_t)256 << 20;
	gt_lsum_set_cap(r->sum, cap < ((size_t)64 << 10) ? (size_t)64 << 10 : cap);
	return 0;
}

/* without an index lanes grew geometrically: give back the slack */
static void trim_lanes(struct gt_store *s)
{
	for (size_t i = 0; i < gt_store_lane_count(s); i++)
		gt_store_lane_fit(s, (uint32_t)i);
}

static int read_mem(const void *buf, size_t len, const char *name, struct gt_store *s,
		    struct gt_file_info *info, _Atomic uint64_t *progress, int mapped, int head,
		    int fd, char *err, size_t errlen)
{
	struct gt_file_info dummy;
	if (!info)
		info = &dummy;
	memset(info, 0, sizeof(*info));
	struct rd r = { .p = buf, .len = len, .name = name, .s = s, .err = err, .errlen = errlen,
			.progress = progress, .mapped = mapped, .head = head, .fd = fd };
	err[0] = '\0';
	r.max_events = len * GTFILE_MAX_EVENTS_PER_BYTE + 4096;
	int rc = check_header(&r, info);
	if (rc)
		return rc;
	if (gt_store_str_count(s) != 1 || gt_store_lane_count(s) || gt_store_kconf_count(s) ||
	    gt_store_nccl_count(s))
		return fail(&r, -EINVAL, "the store to read into is not empty");
	r.dc = ZSTD_createDCtx();
	if (!r.dc)
		return fail(&r, -ENOMEM, "out of memory");
	peek_index(&r);
	int complete = 0;
	size_t last = 0;
	if (head && !r.have_index) {
		rc = fail(&r, -ENOENT, "no index (a cut-off file): read it whole");
		goto out;
	}
	rc = walk(&r, info, &complete, &last);
	if (!rc && !complete && info->chunks == 0)
		rc = fail(&r, -EINVAL, "cut off before the first complete chunk");
	if (!rc) {
		if (!r.have_index)
			trim_lanes(s);
		rc = gt_store_finish(s);
		if (rc)
			fail(&r, rc, "out of memory");
	}
	if (!rc && r.dir_missing)
		rc = fail(&r, -EINVAL, "summary pages chunk: %zu of its pages are not summary chunks "
			  "of the file", r.dir_missing);
	if (!rc && r.dir.n)
		rc = attach_pages(&r);
	if (!rc && head && !r.sum)
		rc = fail(&r, -ENOENT, "no summary (written by an older gtrace): read it whole");
	if (!rc) {
		gt_store_set_summary(s, r.sum);   /* the store owns it now */
		r.sum = NULL;
	}
	/* a live capture's allocated-bytes lanes (gtrace/mem_lane.h): made
	   from its records, not stored (they change as late records come) */
	if (!rc && !head && gt_store_meta_get(s, GT_MEM_LANE_META) && gt_mem_lane_build(s))
		rc = fail(&r, -ENOMEM, "out of memory");
	if (!rc && head) {
		gt_store_set_span(s, r.idx_t0, r.idx_t1, (size_t)r.idx_events);
		info->events = r.idx_events;
	}
out:
	if (!rc && !complete) {
		info->truncated = 1;
		/* as the stream reader says it (gtstream.c): where the data
		 * stops and where its last complete chunk ends */
		if (last < r.len)
			fail(&r, 0, "cut off after %llu events (file ends mid-chunk at byte %zu; last "
			     "complete chunk ends at byte %zu)", (unsigned long long)info->events, r.len,
			     last);
		else
			fail(&r, 0, "cut off after %llu events (file ends at byte %zu without its end "
			     "marker)", (unsigned long long)info->events, r.len);
		/* said beside the data too, not only once on stderr: the summary
		 * report's metadata and the viewer's status line show it (what
		 * lay past the cut is unknown: no count of it) */
		const char *m = strstr(r.err, "cut off after ");
		if (r.s && m && gt_store_meta_set(r.s, GT_META_CUT_OFF, m))
			rc = fail(&r, -ENOMEM, "out of memory");
	}
	ZSTD_freeDCtx(r.dc);
	gtfile_buf_free(&r.out);
	free(r.idx_lane);
	free(r.jump);
	gt_lsum_free(r.sum);
	gtfile_sumdir_free(&r.dir);
	return rc;
}

int gt_file_read_mem(const void *buf, size_t len, const char *name, struct gt_store *s,
		    struct gt_file_info *info, char *err, size_t errlen)
{
	return read_mem(buf, len, name, s, info, NULL, 0, 0, -1, err, errlen);
}

int gt_file_read(const char *path, struct gt_store *s, struct gt_file_info *info,
		char *err, size_t errlen)
{
	return gt_file_read_progress(path, s, info, NULL, err, errlen);
}

static int read_path(const char *path, struct gt_store *s, struct gt_file_info *info,
		     _Atomic uint64_t *progress, int head, char *err, size_t errlen);

int gt_file_read_progress(const char *path, struct gt_store *s, struct gt_file_info *info,
			 _Atomic uint64_t *progress, char *err, size_t errlen)
{
	return read_path(path, s, info, progress, 0, err, errlen);
}

int gt_file_read_head(const char *path, struct gt_store *s, struct gt_file_info *info, char *err,
		     size_t errlen)
{
	return read_path(path, s, info, NULL, 1, err, errlen);
}

static int read_path(const char *path, struct gt_store *s, struct gt_file_info *info,
		     _Atomic uint64_t *progress, int head, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int oe = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(oe));
		return -oe;
	}
	struct stat st;
	int e = fstat(fd, &st) != 0 ? errno : !S_ISREG(st.st_mode) ? EISDIR : 0;
	if (e) {
		snprintf(err, errlen, "%s: %s", path, e == EISDIR ? "not a regular file" : strerror(e));
		close(fd);
		return -e;
	}
	size_t len = (size_t)st.st_size;
	void *p = NULL;
	if (len) {
		/* a budgeted store reads the file as it goes and drops it behind */
		int fl = gt_store_budget(s) || head ? MAP_PRIVATE : MAP_PRIVATE | MAP_POPULATE;
		p = mmap(NULL, len, PROT_READ, fl, fd, 0);
		if (p == MAP_FAILED) {
			e = errno;
			snprintf(err, errlen, "%s: %s", path, strerror(e));
			close(fd);
			return -e;
		}
	}
	/* another process may truncate the file while it is read (mapguard.h) */
	int guard = len ? mapguard_begin(p, len) : -1;
	int rc = read_mem(len ? p : "", len, path, s, info, progress, len && gt_store_budget(s), head,
			  fd, err, errlen);
	close(fd);
	if (mapguard_end(guard)) {
		snprintf(err, errlen, "%s: the file shrank while it was read (truncated or rewritten by "
			 "another process); open it again when it is complete", path);
		rc = -EIO;
	}
	if (len)
		munmap(p, len);
	return rc;
}
