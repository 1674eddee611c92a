/*
 * gtfile_priv.h - the .gtrace layout constants and helpers shared by the
 * files of core/file/ (writer, reader, event codec).
 *
 * All integers are little-endian.  File header (GTFILE_HDR_BYTES = 64):
 *   0 magic[8] "GTRACE\r\n"   8 u16 major   10 u16 minor   12 u32 header bytes
 *   16 u32 flags   20 u32 reserved   24 char writer_version[32]
 *   56 u32 reserved   60 u32 crc32 of bytes 0..59
 * Chunk header (GTFILE_CHUNK_HDR = 24), then `stored_len` payload bytes:
 *   0 u32 type   4 u32 flags (bit 0: zstd)   8 u32 raw_len   12 u32 stored_len
 *   16 u32 crc32 of header bytes 0..15 and the stored payload
 *   20 u32 crc32 of header bytes 0..19
 * docs/file-format.md describes each chunk's payload.
 */
#ifndef GTRACE_GTFILE_PRIV_H
#define GTRACE_GTFILE_PRIV_H

#include <stdint.h>
#include <string.h>
#include "gtrace/gtfile.h"

#define GTFILE_HDR_BYTES 64u
#define GTFILE_CHUNK_HDR 24u
#define GTFILE_CHUNK_ZSTD 1u
/* no chunk's payload is larger than this, raw or stored (writer splits) */
#define GTFILE_MAX_CHUNK_BYTES (64u << 20)
/* table chunks are cut at about this many raw bytes */
#define GTFILE_TABLE_SPLIT_BYTES (8u << 20)
#define GTFILE_DEF_CHUNK_EVENTS 16384u
#define GTFILE_MAX_CHUNK_EVENTS 262144u
/* a file holds at most this many events per byte of file (guards allocations) */
#define GTFILE_MAX_EVENTS_PER_BYTE 32u
/* END chunk: header plus u64 index offset, u64 events */
#define GTFILE_END_BYTES (GTFILE_CHUNK_HDR + 16u)

enum gtfile_chunk_type {
	GTFILE_CH_STRINGS = 1,
	GTFILE_CH_LANES = 2,
	GTFILE_CH_DEVICES = 3,
	GTFILE_CH_RANKS = 4,
	GTFILE_CH_KCONF = 5,
	GTFILE_CH_NCCL = 6,
	GTFILE_CH_EVENTS = 7,
	GTFILE_CH_DROPS = 8,
	GTFILE_CH_META = 9,
	GTFILE_CH_INDEX = 10,
	GTFILE_CH_END = 11,
	/* padding, stored raw, never read: the writer adds it after an event
	 * chunk that compressed so well that the file would hold more than
	 * GTFILE_MAX_EVENTS_PER_BYTE events per byte (constant columns) */
	GTFILE_CH_PAD = 12,
	/* per-lane summary (format 1.1, gtfile_summary.c) */
	GTFILE_CH_SUMMARY = 13,
	/* where the pages of the summary's big levels are (gtfile_sumpage.c) */
	GTFILE_CH_SUMPAGES = 14,
};

/* table entry sizes (each table chunk states its entry size; readers skip
 * bytes past the fields they know, so minor versions may append fields) */
#define GTFILE_LANE_BYTES 40u
#define GTFILE_KCONF_BYTES 44u
#define GTFILE_NCCL_BYTES 40u
#define GTFILE_DEVICE_BYTES 32u
#define GTFILE_RANK_BYTES 32u        /* the least a reader takes */
#define GTFILE_RANK_BYTES_LOCAL 36u  /* written: local_rank1 appended */
#define GTFILE_DROPS_BYTES 56u      /* 5 counters, then read_errors, client_buffers */
#define GTFILE_DROPS_BYTES_MIN 40u  /* files before those two */

/* event columns */
enum gtfile_col {
	GTFILE_COL_START = 1,   /* start_ns */
	GTFILE_COL_DUR = 2,     /* dur_ns */
	GTFILE_COL_ARG_LO = 3,  /* arg & 0xffffffff */
	GTFILE_COL_NAME = 4,
	GTFILE_COL_CORR = 5,
	GTFILE_COL_EXT = 6,
	GTFILE_COL_KFS = 7,     /* kind | sub << 8 | flags << 16 */
	GTFILE_COL_AUX = 8,
	GTFILE_COL_ARG_HI = 9,  /* arg >> 32 */
	GTFILE_COL_COUNT = 10   /* one past the last id */
};
#define GTFILE_COL_FOR 0u     /* value = base + x */
#define GTFILE_COL_DELTA 1u   /* value = previous + base + x; group's first given */

static inline void gtfile_put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static inline void gtfile_put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline void gtfile_put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint16_t gtfile_get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t gtfile_get32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);   /* little-endian hosts only (x86-64, aarch64) */
	return v;
}

static inline uint64_t gtfile_get64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* a file or stream header's writer name (bytes 24..54) into wv[32], a
 * character that is not printable ASCII shown as '?'; 1 when there was one
 * (with a failing checksum and a "newer" major: bytes after the magic, not
 * a newer gtrace) */
static inline int gtfile_hdr_writer(const unsigned char *p, char wv[32])
{
	int odd = 0;
	memcpy(wv, p + 24, 31);
	wv[31] = '\0';
	for (char *c = wv; *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			*c = '?', odd = 1;
	return odd;
}

/* growable byte buffer */
struct gtfile_buf {
	unsigned char *p;
	size_t n, cap;
};

int gtfile_buf_reserve(struct gtfile_buf *b, size_t more);
/* append n bytes (p may be NULL: zeros); returns where they went or NULL */
unsigned char *gtfile_buf_add(struct gtfile_buf *b, const void *p, size_t n);
void gtfile_buf_free(struct gtfile_buf *b);

/* one run of events of a lane inside an event chunk */
struct gtfile_group {
	uint32_t lane;
	uint32_t n;
	const struct gt_event *ev;
};

/* encode an event chunk payload from groups (total n events) into out
 * (appended); 0 or -ENOMEM */
int gtfile_events_encode(const struct gtfile_group *g, size_t ng, size_t n,
			 struct gtfile_buf *out);

/* decode an event chunk payload into the store's lanes (appended after
 * their current events); *n_out = events decoded.  0, or -EINVAL with a
 * reason in why */
int gtfile_events_decode(const unsigned char *p, size_t len, struct gt_store *s,
			 size_t max_events, size_t *n_out, char *why, size_t whylen);

/* "strings", "events", ... for messages */
const char *gtfile_chunk_name(uint32_t type);

#endif
