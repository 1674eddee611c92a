/*
 * gtstream.c - the .gtrace reader for bytes that arrive over time
 * (include/gtrace/gtstream.h).  Same checks as gtfile_read.c (header,
 * version, both CRCs of every chunk, lengths, zstd content size, the table
 * and event decoders), applied chunk by chunk: bytes are taken straight
 * from the caller's buffer, and only the tail of an incomplete chunk is
 * kept (`pend`, at most one chunk: 24 + 64 MiB).
 *
 * Allocation guard: a file may hold at most 32 events per byte; a stream
 * is checked against the bytes received so far plus one chunk of events
 * (the padding that keeps a file within the ratio follows its chunk).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>
#include <zstd.h>
#include "gtrace/gtstream.h"
#include "gtfile_tables.h"
#include "gtrace_config.h"

struct gt_stream {
	char *name;
	struct gt_store *s;
	ZSTD_DCtx *dc;
	struct gtfile_buf pend;   /* bytes of the incomplete header/chunk */
	struct gtfile_buf out;    /* decompressed payload */
	int have_hdr;
	struct gt_stream_info in;
	char err[256];
};

struct gt_stream *gt_stream_new(const char *name, struct gt_store *s)
{
	struct gt_stream *st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->name = strdup(name ? name : "stream");
	st->dc = ZSTD_createDCtx();
	st->s = s;
	if (!st->name || !st->dc) {
		gt_stream_free(st);
		return NULL;
	}
	return st;
}

void gt_stream_free(struct gt_stream *st)
{
	if (!st)
		return;
	free(st->name);
	ZSTD_freeDCtx(st->dc);
	gtfile_buf_free(&st->pend);
	gtfile_buf_free(&st->out);
	free(st);
}

static int fail(struct gt_stream *st, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* record the error (the stream takes nothing more); returns rc */
static int fail(struct gt_stream *st, int rc, const char *fmt, ...)
{
	char msg[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(st->err, sizeof(st->err), "%s: %s", st->name, msg);
	st->in.state = GT_STREAM_ERROR;
	return rc;
}

/* the 64-byte header at p (len bytes available, at least 8 or all there
 * is): 1 accepted, 0 needs more bytes, negative errno */
static int header(struct gt_stream *st, const unsigned char *p, size_t len)
{
	size_t m = len < 8 ? len : 8;
	if (memcmp(p, GT_FILE_MAGIC, m)) {
		/* text where the header should be (a banner, an error, the wrong
		   command's output): its first line's head says what came */
		char seen[48];
		size_t k = 0, i = 0;
		for (; i < len && k < 40 && p[i] != '\n' && p[i] != '\r'; i++)
			seen[k++] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
		seen[k] = 0;
		if (p[0] < 0x20 || p[0] >= 0x7f)
			return fail(st, -EINVAL, "not a gtrace stream (no GTRACE header)");
		return fail(st, -EINVAL, "not a gtrace stream (no GTRACE header; it begins '%s%s')",
			    seen, i < len && k == 40 && p[i] != '\n' && p[i] != '\r' ? "..." : "");
	}
	if (len < GTFILE_HDR_BYTES)
		return 0;
	struct gt_stream_info *in = &st->in;
	in->version_major = gtfile_get16(p + 8);
	in->version_minor = gtfile_get16(p + 10);
	int odd = gtfile_hdr_writer(p, in->writer_version);
	if (in->version_major > GT_FILE_VERSION_MAJOR && odd &&
	    gtfile_get32(p + 60) != (uint32_t)crc32(0, p, 60))
		return fail(st, -EINVAL, "damaged stream header (checksum mismatch)");
	if (in->version_major > GT_FILE_VERSION_MAJOR)
		return fail(st, -ENOTSUP, "written by gtrace %s (format %u.%u), this is gtrace %s "
			    "(format %u.%u): upgrade gtrace", in->writer_version, in->version_major,
			    in->version_minor, GTRACE_VERSION, GT_FILE_VERSION_MAJOR, GT_FILE_VERSION_MINOR);
	if (gtfile_get32(p + 60) != (uint32_t)crc32(0, p, 60))
		return fail(st, -EINVAL, "checksum mismatch in the stream header");
	if (in->version_major < 1 || gtfile_get32(p + 12) != GTFILE_HDR_BYTES)
		return fail(st, -ENOTSUP, "unsupported format version %u.%u", in->version_major,
			    in->version_minor);
	st->have_hdr = 1;
	return 1;
}

/* the chunk at p (stream offset pos): its total size when complete, 0 when
 * more bytes are needed, negative errno */
static long chunk_size(struct gt_stream *st, const unsigned char *h, size_t len, uint64_t pos)
{
	if (len < GTFILE_CHUNK_HDR)
		return 0;
	if (gtfile_get32(h + 20) != (uint32_t)crc32(0, h, 20))
		return fail(st, -EINVAL, "checksum mismatch in the chunk header at byte %llu",
			    (unsigned long long)pos);
	uint32_t type = gtfile_get32(h), flags = gtfile_get32(h + 4);
	uint32_t raw = gtfile_get32(h + 8), stored = gtfile_get32(h + 12);
	if (raw > GTFILE_MAX_CHUNK_BYTES || stored > GTFILE_MAX_CHUNK_BYTES)
		return fail(st, -EINVAL, "%s chunk at byte %llu claims %u bytes (limit %u)",
			    gtfile_chunk_name(type), (unsigned long long)pos,
			    raw > stored ? raw : stored, GTFILE_MAX_CHUNK_BYTES);
	if ((flags & ~GTFILE_CHUNK_ZSTD) || (!(flags & GTFILE_CHUNK_ZSTD) && raw != stored))
		return fail(st, -EINVAL, "%s chunk at byte %llu has bad flags or lengths",
			    gtfile_chunk_name(type), (unsigned long long)pos);
	if (len - GTFILE_CHUNK_HDR < stored)
		return 0;
	uLong crc = crc32(0, h, 16);
	crc = crc32(crc, h + GTFILE_CHUNK_HDR, stored);
	if (gtfile_get32(h + 16) != (uint32_t)crc)
		return fail(st, -EINVAL, "checksum mismatch in %s chunk at byte %llu",
			    gtfile_chunk_name(type), (unsigned long long)pos);
	return (long)(GTFILE_CHUNK_HDR + stored);
}

/* decode the complete chunk h at stream offset pos; events decoded or
 * negative errno */
static long decode(struct gt_stream *st, const unsigned char *h, uint64_t pos)
{
	uint32_t type = gtfile_get32(h), flags = gtfile_get32(h + 4);
	uint32_t raw = gtfile_get32(h + 8), stored = gtfile_get32(h + 12);
	unsigned long long at = (unsigned long long)pos;
	if (st->in.state == GT_STREAM_COMPLETE)
		return fail(st, -EINVAL, "data after the end marker at byte %llu", at);
	st->in.chunks++;
	if (type < GTFILE_CH_STRINGS || type > GTFILE_CH_END || type == GTFILE_CH_INDEX)
		return 0;   /* padding, a later minor version's chunk, the index */
	const unsigned char *p = h + GTFILE_CHUNK_HDR;
	if (flags & GTFILE_CHUNK_ZSTD) {
		if (ZSTD_getFrameContentSize(p, stored) != raw)
			return fail(st, -EINVAL, "%s chunk at byte %llu: decompressed size mismatch",
				    gtfile_chunk_name(type), at);
		st->out.n = 0;
		if (gtfile_buf_reserve(&st->out, raw ? raw : 1))
			return fail(st, -ENOMEM, "out of memory");
		size_t n = ZSTD_decompressDCtx(st->dc, st->out.p, raw, p, stored);
		if (ZSTD_isError(n) || n != raw)
			return fail(st, -EINVAL, "%s chunk at byte %llu: bad compressed data",
				    gtfile_chunk_name(type), at);
		p = st->out.p;
	}
	char why[200] = "";
	int rc = 0;
	long got = 0;
	if (type == GTFILE_CH_END) {
		if (raw != 16 || gtfile_get64(p + 8) != st->in.events)
			return fail(st, -EINVAL, "end marker at byte %llu says %llu events, stream "
				    "held %llu", at, raw == 16 ? (unsigned long long)gtfile_get64(p + 8) : 0ull,
				    (unsigned long long)st->in.events);
		st->in.state = GT_STREAM_COMPLETE;
	} else if (type == GTFILE_CH_EVENTS) {
		uint64_t limit = st->in.bytes * GTFILE_MAX_EVENTS_PER_BYTE + 4096 + GTFILE_MAX_CHUNK_EVENTS;
		size_t n = 0;
		rc = gtfile_events_decode(p, raw, st->s, (size_t)(limit - st->in.events), &n, why,
					  sizeof(why));
		st->in.events += n;
		got = (long)n;
	} else {
		rc = gtfile_tab_read(type, p, raw, st->s, why, sizeof(why));
	}
	if (rc == -ENOMEM && !why[0])
		return fail(st, rc, "out of memory");
	if (rc)
		return fail(st, rc, "%s chunk at byte %llu: %s", gtfile_chunk_name(type), at,
			    why[0] ? why : "bad chunk");
	return got;
}

/* walk whole chunks of p[0..len) starting at stream offset pos; sets *used
 * to the bytes consumed; events decoded or negative errno */
static long walk(struct gt_stream *st, const unsigned char *p, size_t len, size_t *used)
{
	long total = 0;
	size_t off = 0;
	if (!st->have_hdr) {
		int rc = header(st, p, len);
		if (rc <= 0) {
			*used = 0;
			return rc;
		}
		off = GTFILE_HDR_BYTES;
		st->in.done_bytes = GTFILE_HDR_BYTES;
	}
	for (;;) {
		if (st->in.state == GT_STREAM_COMPLETE && off < len)
			return fail(st, -EINVAL, "data after the end marker at byte %llu",
				    (unsigned long long)st->in.done_bytes);
		long sz = chunk_size(st, p + off, len - off, st->in.done_bytes);
		if (sz < 0)
			return sz;
		if (sz == 0)
			break;
		long n = decode(st, p + off, st->in.done_bytes);
		if (n < 0)
			return n;
		total += n;
		off += (size_t)sz;
		st->in.done_bytes += (uint64_t)sz;
	}
	*used = off;
	return total;
}

long gt_stream_feed(struct gt_stream *st, const void *buf, size_t n, char *err, size_t errlen)
{
	if (st->in.state == GT_STREAM_ERROR || st->in.state == GT_STREAM_CUT) {
		snprintf(err, errlen, "%s", st->err[0] ? st->err : "stream closed");
		return -EIO;
	}
	const unsigned char *b = buf;
	st->in.bytes += n;
	long total = 0;
	size_t used = 0;
	/* finish the pending chunk first: complete its header, then its payload */
	while (st->pend.n && n) {
		size_t need;
		if (!st->have_hdr)
			need = GTFILE_HDR_BYTES - st->pend.n;
		else if (st->pend.n < GTFILE_CHUNK_HDR)
			need = GTFILE_CHUNK_HDR - st->pend.n;
		else
			need = GTFILE_CHUNK_HDR + gtfile_get32(st->pend.p + 12) - st->pend.n;
		size_t take = need < n ? need : n;
		if (!gtfile_buf_add(&st->pend, b, take)) {
			long rc = fail(st, -ENOMEM, "out of memory");
			snprintf(err, errlen, "%s", st->err);
			return rc;
		}
		b += take;
		n -= take;
		long r = walk(st, st->pend.p, st->pend.n, &used);
		if (r < 0) {
			snprintf(err, errlen, "%s", st->err);
			return r;
		}
		total += r;
		if (used == st->pend.n)
			st->pend.n = 0;
		else if (used) {
			snprintf(err, errlen, "%s: internal: partial pending chunk", st->name);
			return fail(st, -EPROTO, "internal: partial pending chunk");
		}
	}
	if (n) {
		long r = walk(st, b, n, &used);
		if (r < 0) {
			snprintf(err, errlen, "%s", st->err);
			return r;
		}
		total += r;
		if (used < n && !gtfile_buf_add(&st->pend, b + used, n - used)) {
			long rc = fail(st, -ENOMEM, "out of memory");
			snprintf(err, errlen, "%s", st->err);
			return rc;
		}
	}
	return total;
}

int gt_stream_close(struct gt_stream *st, char *err, size_t errlen)
{
	if (st->in.state == GT_STREAM_ERROR) {
		snprintf(err, errlen, "%s", st->err);
		return -EINVAL;
	}
	if (st->in.state == GT_STREAM_COMPLETE)
		return 0;
	if (!st->have_hdr) {
		snprintf(err, errlen, "%s: %s", st->name, st->in.bytes ?
			 "closed inside the stream header" : "empty stream (nothing received)");
		st->in.state = GT_STREAM_ERROR;
		return st->in.bytes ? -EINVAL : -ENODATA;
	}
	st->in.state = GT_STREAM_CUT;
	if (st->pend.n)
		snprintf(err, errlen, "%s: cut off after %llu events (stream closed mid-chunk at "
			 "byte %llu; last complete chunk ends at byte %llu)", st->name,
			 (unsigned long long)st->in.events, (unsigned long long)st->in.bytes,
			 (unsigned long long)st->in.done_bytes);
	else
		snprintf(err, errlen, "%s: cut off after %llu events (stream closed at byte %llu "
			 "without its end marker)", st->name, (unsigned long long)st->in.events,
			 (unsigned long long)st->in.bytes);
	return 1;
}

void gt_stream_info(const struct gt_stream *st, struct gt_stream_info *out)
{
	*out = st->in;
}
