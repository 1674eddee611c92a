/*
 * gtrace/ring.h - the capture ring: a single-producer/single-consumer ring
 * of fixed-size 64-byte records in shared memory (a memfd the traced process
 * creates and hands to the viewer).
 *
 * Layout: struct gt_ring_hdr (one page), then `capacity` records (a power of
 * two).  head (written by the producer) and tail (written by the consumer)
 * count records since the start and only grow; slot = pos & (capacity - 1).
 * The producer never blocks: when a message does not fit it is dropped and
 * counted in ring_overflow.  Loss counters live in the header as atomics.
 *
 * Messages: most are one record.  A string definition is one GT_RING_REC_STR
 * record (56 bytes of text) followed by raw 64-byte records holding the rest
 * of the text; the producer writes the whole message or nothing.
 *
 * Ids in records (string, lane, kconf, nccl) are the producer's own: the
 * consumer maps them to its store's ids.  A definition always precedes the
 * first record that uses its id.
 */
#ifndef GTRACE_RING_H
#define GTRACE_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "gtrace/event.h"

#define GT_RING_MAGIC 0x52544754u    /* "GTTR" little-endian */
#define GT_RING_VERSION 1u
#define GT_RING_REC_BYTES 64u
#define GT_RING_HDR_BYTES 4096u
#define GT_RING_PAYLOAD_BYTES 56u

enum gt_ring_rec_type {
	GT_RING_REC_NONE = 0,
	GT_RING_REC_EVENT,      /* ev: a struct gt_event, producer ids */
	GT_RING_REC_STR,        /* str: id, text follows (len bytes over 1+ records) */
	GT_RING_REC_LANE,       /* lane: id, key, name string id */
	GT_RING_REC_DEVICE,     /* dev: a device (name = producer string id) */
	GT_RING_REC_KCONF,      /* kconf: id + struct gt_kconf */
	GT_RING_REC_NCCL,       /* nccl: id + struct gt_nccl (string ids of producer) */
	GT_RING_REC_CLOCK,      /* clock: calibration pair and offset */
	GT_RING_REC_RANK,       /* rank: rank, pid, world size, host string id */
	GT_RING_REC_TYPE_COUNT
};

/* producer state, in the header */
enum gt_ring_state {
	GT_RING_ST_INIT = 0,
	GT_RING_ST_RUNNING,     /* producer is writing */
	GT_RING_ST_STOPPED,     /* capture stopped (stop/detach): no more records */
	GT_RING_ST_ENDED        /* source finished (simulator done) */
};

struct gt_ring_lane_def {
	uint32_t id;
	uint32_t name;       /* producer string id, 0 = none */
	uint8_t type;        /* enum gt_lane_type */
	uint8_t pad[3];
	int32_t rank;
	int32_t device;
	int32_t pad2;
	int64_t pid;
	int64_t tid;         /* stream or thread id */
};

struct gt_ring_clock_def {
	int64_t host_ns;     /* host CLOCK_REALTIME at calibration */
	int64_t dev_ns;      /* device/CUPTI timestamp at calibration */
	int64_t offset_ns;   /* added to device timestamps to reach host time */
	int64_t bracket_ns;  /* uncertainty of the pair */
	int32_t rank;
	int32_t pad;
};

struct gt_ring_device_def {
	int32_t rank;
	int32_t id;          /* device ordinal within the rank */
	uint32_t name;       /* producer string id */
	uint32_t sm_count;
	uint64_t mem_bytes;
	uint32_t cc_major, cc_minor;
};

struct gt_ring_rank_def {
	int64_t pid;
	int32_t rank;
	int32_t world_size;
	uint32_t host;       /* producer string id */
	int32_t local_rank1; /* LOCAL_RANK + 1; 0 = unknown (was padding: older
			      * producers wrote 0) */
};

struct gt_ring_rec {
	uint16_t type;       /* enum gt_ring_rec_type */
	uint16_t nrec;       /* records this message spans (>= 1) */
	uint32_t len;        /* GT_RING_REC_STR: text bytes; others 0 */
	union {
		struct gt_event ev;
		struct {
			uint32_t id;
			char text[52];
		} str;
		struct gt_ring_lane_def lane;
		struct gt_ring_device_def dev;
		struct {
			uint32_t id;
			uint32_t pad;
			struct gt_kconf k;
		} kconf;
		struct {
			uint32_t id;
			uint32_t pad;
			struct gt_nccl n;
		} nccl;
		struct gt_ring_clock_def clock;
		struct gt_ring_rank_def rank;
		unsigned char raw[GT_RING_PAYLOAD_BYTES];
	} u;
};

_Static_assert(sizeof(struct gt_ring_rec) == GT_RING_REC_BYTES, "ring record must be 64 bytes");

/* text bytes held by the first record of a string message */
#define GT_RING_STR_FIRST_BYTES 52u

struct gt_ring_hdr {
	uint32_t magic;
	uint32_t version;
	uint32_t hdr_bytes;
	uint32_t rec_bytes;
	uint64_t capacity;             /* records, power of two */
	int64_t pid;                   /* producer process */
	_Atomic uint32_t state;        /* enum gt_ring_state */
	uint32_t pad0;
	char reason[96];               /* why the producer stopped or is passive */
	_Alignas(64) _Atomic uint64_t head;   /* producer: records written */
	_Alignas(64) _Atomic uint64_t tail;   /* consumer: records consumed */
	_Alignas(64) _Atomic uint64_t ring_overflow;    /* events lost: ring full */
	_Atomic uint64_t msgs_overflow;                 /* definitions lost: ring full */
	_Atomic uint64_t cupti_dropped;
	_Atomic uint64_t buffers_declined;
	_Atomic uint64_t zero_timestamps;
	_Atomic uint64_t events_published;              /* events written */
	/* appended (a reader of an older producer reads 0: the header page
	 * starts zeroed) */
	_Atomic uint64_t client_buffers;   /* activity buffers of ours another CUPTI
					    * client holds (completed to its callbacks,
					    * never returned) */
	_Atomic uint64_t read_errors;      /* producer: record walks CUPTI ended with an
					    * error, records it could not publish */
};

/* a mapping of a ring, producer or consumer side (not in shared memory) */
struct gt_ring {
	struct gt_ring_hdr *hdr;
	struct gt_ring_rec *rec;
	uint64_t mask;
	size_t map_bytes;
	/* producer side */
	uint64_t p_head;               /* next position to write */
	uint64_t p_tail_cache;         /* last tail seen */
	/* consumer side */
	uint64_t c_tail;
	uint64_t c_head_cache;         /* last head seen, validated: c_tail + capacity at most */
	int corrupt;                   /* the producer's head made no sense: read nothing more */
	uint64_t bad_head;             /* the head value that did not */
};

/* seals every ring memfd carries (checked by gt_ring_map): its size is fixed */
#define GT_RING_SEALS 0x7u   /* F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW (Linux values) */

/* bytes of shared memory for a ring of capacity records */
size_t gt_ring_bytes(uint64_t capacity);

/* create a memfd holding a fresh ring of capacity records (rounded up to a
 * power of two, >= 64), map it for producing; returns the fd (caller owns)
 * or negative errno */
int gt_ring_create(struct gt_ring *r, uint64_t capacity, int64_t pid);
/* initialise a ring in caller-provided memory of gt_ring_bytes(capacity)
 * (capacity a power of two); for tests and benchmarks */
void gt_ring_init_mem(struct gt_ring *r, void *mem, uint64_t capacity, int64_t pid);
/* map a ring from its memfd for consuming; the memfd must carry GT_RING_SEALS
 * (-EPERM otherwise); 0 or negative errno with err */
int gt_ring_map(struct gt_ring *r, int fd, char *err, size_t errlen);
/* unmap (for rings from gt_ring_create/gt_ring_map) */
void gt_ring_unmap(struct gt_ring *r);

/* producer: reserve n contiguous-in-sequence records; returns a pointer to
 * the record at offset i via gt_ring_slot, or -ENOSPC (and counts nothing) */
int gt_ring_reserve(struct gt_ring *r, uint32_t n);
static inline struct gt_ring_rec *gt_ring_slot(struct gt_ring *r, uint32_t i)
{
	return &r->rec[(r->p_head + i) & r->mask];
}
/* producer: make n reserved records visible to the consumer */
static inline void gt_ring_commit(struct gt_ring *r, uint32_t n)
{
	r->p_head += n;
	atomic_store_explicit(&r->hdr->head, r->p_head, memory_order_release);
}
/* producer: write one event record; 0, or -ENOSPC after counting the loss */
int gt_ring_push_event(struct gt_ring *r, const struct gt_event *e);
/* producer: write a string definition (spans records); 0 or -ENOSPC (counted) */
int gt_ring_push_str(struct gt_ring *r, uint32_t id, const char *text, size_t len);
/* producer: write one prepared single-record message; 0 or -ENOSPC (counted) */
int gt_ring_push_rec(struct gt_ring *r, const struct gt_ring_rec *m);
/* producer: set the state (and reason, may be NULL) */
void gt_ring_set_state(struct gt_ring *r, enum gt_ring_state st, const char *reason);

/* consumer: records readable now; a head more than capacity records past
 * the tail (or behind it) marks the ring corrupt (r->corrupt) and reads 0
 * from then on */
uint64_t gt_ring_readable(struct gt_ring *r);
/* consumer: the next message or NULL when none is complete; *nrec gets the
 * records to release after use.  A malformed message (bad type or length)
 * is returned with type GT_RING_REC_NONE so the caller counts and releases it. */
const struct gt_ring_rec *gt_ring_peek(struct gt_ring *r, uint32_t *nrec);
/* consumer: copy the text of the GT_RING_REC_STR message at the read position
 * into buf of cap bytes (at most cap - 1 text bytes), NUL-terminated;
 * returns the bytes copied */
size_t gt_ring_str_text(const struct gt_ring *r, char *buf, size_t cap);
/* consumer: release n records */
void gt_ring_release(struct gt_ring *r, uint32_t n);

#endif
