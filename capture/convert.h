/*
 * convert.h - CUPTI activity records (CUDA 13 layouts, or CUDA 12's when
 * cupti_major is 12) -> gt_events with
 * the converter's own string/lane/kconf ids, as a pure function of the
 * record and the converter's tables (no CUPTI calls; the API-name lookup
 * is a callback).  One converter per drain thread; it is also the publisher_dict
 * that resolves those ids for the publisher.
 */
#ifndef GTRACE_CAPTURE_CONVERT_H
#define GTRACE_CAPTURE_CONVERT_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/publisher.h"
#include "convmark.h"

struct convert_str {
	char *text;
	uint32_t len;
	uint32_t hash;
};

struct convert_corr {
	uint32_t corr;
	uint32_t ext;
};

#define CONVERT_CTX 256
#define CONVERT_CORR 4096
#define CONVERT_DEVICES 64

struct convert {
	int64_t clock_offset_ns;   /* added to CUPTI timestamps */
	int clock_set;             /* a calibration was taken */
	int32_t rank;
	int64_t pid;
	int cupti_major;           /* 12: records are CUDA 12's (convert12.h); else 13 */
	/* API name: driver = 1 for the driver API; NULL when unknown */
	const char *(*api_name)(void *ctx, int driver, uint32_t cbid);
	void *api_ctx;
	/* strings: id 1.. ; open-addressing hash of ids */
	struct convert_str *str;
	size_t n_str, cap_str;
	uint32_t *str_hash;
	size_t str_hash_cap;
	/* lanes: id 0.. */
	struct gt_ring_lane_def *lane;
	size_t n_lane, cap_lane;
	/* kernel configurations: id 1.. (kconf[0] unused) */
	struct gt_kconf *kconf;
	size_t n_kconf, cap_kconf;
	uint32_t *kconf_hash;    /* open addressing: kconf ids, 0 = empty */
	size_t kconf_hash_cap;
	struct convmark markers;               /* open NVTX ranges, any depth */
	int32_t ctx_dev[CONVERT_CTX];           /* contextId -> device, -1 unknown */
	struct convert_corr corr_ext[CONVERT_CORR];  /* correlation -> external id */
	struct gt_ring_device_def dev[CONVERT_DEVICES];
	size_t n_dev, n_dev_taken;
	/* counters */
	uint64_t zero_timestamps;
	uint64_t unknown_records;
	uint64_t markers_lost;
};

void convert_init(struct convert *c, int64_t pid, int32_t rank);
void convert_done(struct convert *c);
/* convert one record (a CUpti_Activity*); returns 1 with *out filled when
 * the record is an event, 0 when it only updated the tables (device,
 * context, marker start, external correlation) or was skipped (counted),
 * -ENOMEM */
int convert_record(struct convert *c, const void *record, struct gt_event *out);
/* intern text; returns its id (>= 1) or 0 on allocation failure */
uint32_t convert_intern(struct convert *c, const char *s, size_t len);
/* devices seen since the last call (for gt_publisher_device) */
size_t convert_take_devices(struct convert *c, const struct gt_ring_device_def **out);
/* take a clock calibration m (host/CUPTI pair with its bracket).  The
 * offset applied to CUPTI times is 0 while CUPTI's clock is the host's
 * CLOCK_REALTIME (|offset| within the bracket), and otherwise changes only
 * when a measurement disagrees with it by more than bracket + 1 us: jitter
 * between calibrations would shift records of different buffers (a launch
 * and its kernel) against each other.  m->offset_ns becomes the applied
 * offset; 0, or -EINVAL for an unusable measurement (offset unchanged). */
int convert_clock(struct convert *c, struct gt_ring_clock_def *m);
/* the dictionary that resolves this converter's ids */
struct gt_publisher_dict convert_dict(struct convert *c);

/* The chatty API calls a capture leaves out (they would flood the ring:
 * PyTorch asks whether a graph is being captured before every launch).
 * gcupti turns their records off right after turning the API kinds on;
 * CUPTI's per-call switch cannot be set first (enabling the kind
 * overrides it), so records of calls made in between still come, and the
 * converter drops them.  Lists of callback ids, runtime and driver. */
extern const uint32_t convert_chatty_rt[];
extern const size_t convert_chatty_rt_n;
extern const uint32_t convert_chatty_drv[];
extern const size_t convert_chatty_drv_n;
/* 1 when the call (driver = 1: the driver API) is one of them */
int convert_chatty(int driver, uint32_t cbid);

#endif
