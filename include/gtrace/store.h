/*
 * gtrace/store.h - the event store: every source (native file, Kineto JSON,
 * live ring, simulator) fills one, every analysis and view reads it.
 *
 * Life cycle: gt_store_new(); any number of gt_store_intern/gt_store_lane/gt_store_add
 * (build phase, any order of events); gt_store_finish() sorts each lane by
 * start and builds the indexes; from then on the store is read-only and the
 * query functions may be used.  A live capture appends with gt_store_add and
 * calls gt_store_finish again: finish is incremental for lanes whose new events
 * all start at or after their last event.
 *
 * Lanes: one per (rank, GPU, stream) and one per (rank, pid, host thread).
 *
 * Ranks: a source that does not know its rank passes -1 (any negative);
 * gt_store_lane, gt_store_device, gt_store_rank and gt_store_corr_find store and look
 * it up as rank 0, so every rank read back from the store (lane keys,
 * devices, ranks) is >= 0 and readers never test for -1.
 * Events of a lane are sorted by start; overlapping events are kept.
 *
 * Memory: 48 bytes per event plus about 2.3 bytes per event of index.
 */
#ifndef GTRACE_STORE_H
#define GTRACE_STORE_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/event.h"

enum gt_lane_type {
	GT_LANE_GPU = 1,     /* device stream: id = stream id */
	GT_LANE_HOST = 2,    /* host thread: id = OS tid */
	GT_LANE_COUNTER = 3  /* counter track: id = counter id */
};

struct gt_lane_key {
	uint8_t type;        /* enum gt_lane_type */
	int32_t rank;        /* >= 0 in the store; -1 (unknown) is stored as 0 */
	int32_t device;      /* GPU lanes: device ordinal; host: -1 */
	int64_t pid;         /* process id (host lanes; GPU lanes may leave 0) */
	int64_t id;          /* stream id or thread id */
};

/* one block of GT_LOD_BLOCK events: summary for zoomed-out queries */
#define GT_LOD_BLOCK 16

struct gt_lane {
	struct gt_lane_key key;
	uint32_t id;           /* index in the store's lane array */
	uint32_t name;         /* display name string id (0 = none yet) */
	uint32_t sort_index;   /* display order hint from the source, 0 = none */
	uint32_t kinds_mask;   /* bit (1 << kind) for each kind present */
	struct gt_event *ev;   /* events sorted by start (after finish) */
	size_t n, cap;
	size_t n_indexed;      /* events covered by the index */
	/* index, one entry per block of GT_LOD_BLOCK events */
	int64_t *blk_start;    /* start of the block's first event (compact search key) */
	int64_t *blk_maxend;   /* running max of end up to the block's last event */
	int64_t *blk_busy;     /* union busy time of events before the block */
	uint32_t **lvl_max;    /* lvl_max[l][b]: index of longest event in block b of level l */
	int64_t **lvl_dur;     /* lvl_dur[l][b]: its duration (kept beside it: no event fetch) */
	size_t *lvl_n;
	int n_lvl;
	int64_t busy_total_ns; /* union of all events of the lane */
	/* coarse index, one entry per GT_LOD_TOP blocks, always on the heap
	 * (16 bytes per 4096 events): a query under a memory budget starts its
	 * searches here, so it touches only cache-file pages near its window */
	int64_t *top_start;    /* start of the superblock's first event */
	int64_t *top_maxend;   /* running max of end up to its last event */
	size_t n_top, cap_top;
	/* per coarse-index entry, the last events open at its first start
	 * (64 bytes per 4096 events, heap): the innermost event without a
	 * long walk back (core/store/lod_open.c) */
	struct lod_open *top_open;
	size_t n_open, cap_open;
	/* events gt_store_drop_before took from the lane's front since it was
	 * made: event i now was event i + dropped before any drop (a holder of
	 * refs moves them by the difference) */
	uint64_t dropped;
};

/* blocks per coarse index entry (GT_LOD_TOP x GT_LOD_BLOCK = 4096 events) */
#define GT_LOD_TOP 256

struct gt_device {
	int32_t rank;            /* >= 0 in the store (-1 in is stored as 0) */
	int32_t id;              /* device ordinal within the rank */
	uint32_t name;           /* string id, e.g. "NVIDIA H100 80GB HBM3" */
	uint32_t sm_count;
	uint64_t mem_bytes;
	uint32_t cc_major, cc_minor;
};

struct gt_rank {
	int32_t rank;            /* >= 0 in the store (-1 in is stored as 0) */
	int64_t pid;
	uint32_t host;           /* string id of hostname, 0 = unknown */
	uint32_t source;         /* string id: file it came from */
	int64_t clock_offset_ns; /* device -> host clock offset the source applied (information only: events are already on the host axis) */
	int32_t world_size;      /* -1 = unknown */
	int32_t local_rank1;     /* LOCAL_RANK + 1 of the process; 0 = unknown */
};

/* losses a capture reports; all counts since capture start */
struct gt_drops {
	uint64_t cupti_dropped;     /* CUPTI's cuptiActivityGetNumDroppedRecords */
	uint64_t buffers_declined;  /* buffer requests we could not serve */
	uint64_t zero_timestamps;   /* records without usable timestamps (start == end == 0, or end < start) */
	uint64_t ring_overflow;     /* events lost because the ring was full */
	uint64_t import_skipped;    /* events an importer skipped (malformed) */
	uint64_t read_errors;       /* records the capture could not read or publish
				     * (CUPTI record walks that failed, ring records
				     * the receiver could not use) */
	uint64_t client_buffers;    /* activity buffers another CUPTI client in the
				     * process took (their records are lost; not
				     * a record count) */
};

struct gt_store;

struct gt_store *gt_store_new(void);
void gt_store_free(struct gt_store *s);

/* string table: id 0 is the empty string; same text -> same id */
uint32_t gt_store_intern(struct gt_store *s, const char *str, size_t len);
uint32_t gt_store_intern_cstr(struct gt_store *s, const char *str);
const char *gt_store_str(const struct gt_store *s, uint32_t id);
size_t gt_store_str_count(const struct gt_store *s);
/* returns id or UINT32_MAX when the string was never interned */
uint32_t gt_store_str_find(const struct gt_store *s, const char *str, size_t len);
/* the short name a source gives a name (nsys's shortName of a kernel:
 * "par_reduce_kernel" for "void clover::par_reduce_kernel<...>(T1)");
 * 0 or -ENOMEM.  Not kept in .gtrace files. */
int gt_store_str_set_short(struct gt_store *s, uint32_t name, uint32_t short_name);
/* the short name's string id, or 0 when the source gave none */
uint32_t gt_store_str_short(const struct gt_store *s, uint32_t name);

/* find or create a lane (a negative key rank is stored as 0); returns its
 * id, UINT32_MAX on allocation failure */
uint32_t gt_store_lane(struct gt_store *s, const struct gt_lane_key *key);
size_t gt_store_lane_count(const struct gt_store *s);
/* changes whenever the store's events can have changed (an event added,
 * gt_store_finish: a load, a live batch, a time shift), and differs
 * between two stores of the process, also one made at a freed one's
 * address: a key for caches of results over the store (O(1)) */
uint64_t gt_store_change_id(const struct gt_store *s);
struct gt_lane *gt_store_lane_at(const struct gt_store *s, uint32_t id);
void gt_store_lane_set_name(struct gt_store *s, uint32_t lane, const char *name);

/* side tables; ids start at 1 (0 = none) */
uint32_t gt_store_kconf(struct gt_store *s, const struct gt_kconf *k);
const struct gt_kconf *gt_store_kconf_at(const struct gt_store *s, uint32_t id);
size_t gt_store_kconf_count(const struct gt_store *s);
uint32_t gt_store_nccl(struct gt_store *s, const struct gt_nccl *n);
const struct gt_nccl *gt_store_nccl_at(const struct gt_store *s, uint32_t id);
size_t gt_store_nccl_count(const struct gt_store *s);

/* devices and ranks: add or update by (rank, id) / rank; a negative rank
 * is stored as 0 */
int gt_store_device(struct gt_store *s, const struct gt_device *d);
size_t gt_store_device_count(const struct gt_store *s);
const struct gt_device *gt_store_device_at(const struct gt_store *s, size_t i);
int gt_store_rank(struct gt_store *s, const struct gt_rank *r);
size_t gt_store_rank_count(const struct gt_store *s);
const struct gt_rank *gt_store_rank_at(const struct gt_store *s, size_t i);

struct gt_drops *gt_store_drops(struct gt_store *s);
/* events lost of d: CUPTI's dropped records, records without timestamps,
 * ring overflow, import skips, read errors (buffers_declined is a cause of
 * CUPTI's drops, already in cupti_dropped, and not added; client_buffers
 * counts buffers, not records, and is shown on its own) */
uint64_t gt_store_drops_lost(const struct gt_drops *d);

/* free-form metadata (source path, format, environment): key -> value */
int gt_store_meta_set(struct gt_store *s, const char *key, const char *value);
const char *gt_store_meta_get(const struct gt_store *s, const char *key);
size_t gt_store_meta_count(const struct gt_store *s);
int gt_store_meta_at(const struct gt_store *s, size_t i, const char **key, const char **value);

/* append an event (its lane field must name an existing lane); 0 or -ENOMEM */
int gt_store_add(struct gt_store *s, const struct gt_event *e);
/* reserve room for n more events on a lane (optional, speeds bulk loads) */
int gt_store_reserve(struct gt_store *s, uint32_t lane, size_t n);

/* sort lanes, build indexes and the correlation index; 0 or -ENOMEM */
int gt_store_finish(struct gt_store *s);

/* add delta_ns to the start of every event of rank `rank` (rank -1 and 0
 * are one) and finish the store again (after gt_store_finish; a caller that
 * cached query results recomputes them); 0 or -ENOMEM */
int gt_store_shift_rank(struct gt_store *s, int32_t rank, int64_t delta_ns);

/* ---- a live store with a ring window (--ring, core/store/store_drop.c) ----
 * Drop from the front of each lane the events that start before t (a
 * counter lane keeps its last sample before t, moved to t: its value from
 * t on), then finish the store again (indexes rebuilt, the correlation
 * index anew).
 * A lane is cut only when what it drops is at least 1/keep_div of what it
 * keeps (keep_div 2: a lane holds at most about 1.5 times the window and
 * each event is moved at most twice; 0 = always cut: every event then
 * starts at or after t).  Lane ids stay;
 * event indexes move down by what the lane dropped (gt_lane.dropped).
 * Call after gt_store_finish.  *dropped (may be NULL) gets the events
 * dropped now; 0 or -ENOMEM (the store is then unusable) */
int gt_store_drop_before(struct gt_store *s, int64_t t, unsigned keep_div, uint64_t *dropped);
/* events dropped by gt_store_drop_before in all, and the latest start of
 * one (INT64_MIN when none) */
uint64_t gt_store_dropped(const struct gt_store *s, int64_t *last_start_ns);

/* totals (valid after finish) */
size_t gt_store_event_count(const struct gt_store *s);

/* limits for a store being filled from untrusted input (gt_load sets them,
 * core/import/loadlim.c): at most max_lanes lanes and max_events events added
 * (0 = no limit).  Past one, gt_store_lane returns UINT32_MAX and gt_store_add /
 * gt_store_reserve -E2BIG, and gt_store_limit_hit says which limit refused first */
enum { GT_STORE_LIM_LANES = 1, GT_STORE_LIM_EVENTS = 2 };
void gt_store_limits_set(struct gt_store *s, size_t max_lanes, uint64_t max_events);
int gt_store_limit_hit(const struct gt_store *s);
/* an importer that holds lanes and events before it adds them (the JSON
 * importer's per-file buffers, parsed by several threads at once) counts
 * them here as it makes them, so the limits bound its memory too, and gives
 * them back (negative counts) just before adding them; -E2BIG (the limit
 * marked as refused) once held plus added passes a limit, else 0 */
int gt_store_limit_take(struct gt_store *s, int64_t lanes, int64_t events);
int64_t gt_store_t_min(const struct gt_store *s);   /* earliest start */
/* time zero of the times shown relative to the capture ("+1.5s"): the
 * earliest start, kept across ring cuts (gt_store_drop_before), so a label
 * names the same instant while a live ring drops the past (0 when empty) */
int64_t gt_store_t_origin(const struct gt_store *s);
int64_t gt_store_t_max(const struct gt_store *s);   /* latest end */

/* ---- queries (after gt_store_finish) ---- */

/* indices [*first, *last) of events on the lane that may overlap [t0, t1):
 * every event overlapping the range is inside; events inside it that do not
 * overlap can occur only on lanes with nested/overlapping events. */
void gt_store_lane_range(const struct gt_lane *l, int64_t t0, int64_t t1,
		      size_t *first, size_t *last);

/* one screen column: union busy time of the lane within [t0, t1) and the
 * longest event overlapping it (index, or SIZE_MAX when none) */
struct gt_bucket {
	int64_t busy_ns;
	size_t dominant;
	uint32_t count;        /* events starting in the column, saturating */
};
void gt_store_lane_bucket(const struct gt_lane *l, int64_t t0, int64_t t1,
		       struct gt_bucket *out);
/* fill ncols buckets covering [t0, t0 + ncols * dt) */
void gt_store_lane_buckets(const struct gt_lane *l, int64_t t0, int64_t dt,
			int ncols, struct gt_bucket *out);

/* ask the kernel to read ahead, in the background, the pages of the events
 * and index that queries over [t0, t1) of the n lanes (indices) touch
 * (gt_store_lane_range, _buckets, _bucket, _busy, _lower_start): the blocks
 * that overlap the window, one either side.  A no-op for a store without a
 * cache file (no budget, or under half of it).  A frame calls it with every
 * lane it is about to draw, so a cold cache file is read with all the
 * requests queued at once instead of one synchronous page fault at a time.
 * Reads the lanes' block keys (it waits for those).  Returns the bytes
 * advised. */
size_t gt_store_prefetch(const struct gt_store *s, const uint32_t *lanes, size_t n, int64_t t0,
			 int64_t t1);

/* index of the first event on the lane whose start is >= t (l->n if none),
 * O(log n) */
size_t gt_store_lane_lower_start(const struct gt_lane *l, int64_t t);

/* union busy time of the lane within [t0, t1), O(log n) */
int64_t gt_store_lane_busy(const struct gt_lane *l, int64_t t0, int64_t t1);

/* the innermost (latest-starting) event covering t, or SIZE_MAX */
size_t gt_store_lane_event_at(const struct gt_lane *l, int64_t t);

/* next / previous event on the lane after / before index i whose name is
 * `name` (SIZE_MAX for i means "from the start/end"); SIZE_MAX if none */
size_t gt_store_lane_next_name(const struct gt_lane *l, size_t i, uint32_t name);
size_t gt_store_lane_prev_name(const struct gt_lane *l, size_t i, uint32_t name);

/* event reference: lane and index */
struct gt_ref {
	uint32_t lane;
	uint32_t idx;
};

/* correlation within a rank (negative = rank 0): the host launch call of GPU work
 * (want_gpu = 0) or the first GPU work of a launch call (want_gpu = 1);
 * 0 on success, -ENOENT when not found */
int gt_store_corr_find(const struct gt_store *s, int32_t rank, uint32_t corr,
		    int want_gpu, struct gt_ref *out);
/* the other end of an event's correlation: launch <-> GPU work */
int gt_store_corr_peer(const struct gt_store *s, struct gt_ref r, struct gt_ref *out);

static inline const struct gt_event *gt_store_ev(const struct gt_store *s, struct gt_ref r)
{
	return &gt_store_lane_at(s, r.lane)->ev[r.idx];
}

/* resident bytes of events and indexes (for the memory benchmark) */
size_t gt_store_bytes(const struct gt_store *s);

/* ---- memory budget (core/store/store_budget.c, docs/store.md) ----
 * With a budget, lane event arrays and their indexes (and the correlation
 * index) larger than a page live in a shared mapping of an unlinked cache
 * file in $TMPDIR (default /var/tmp); a trimmer drops their pages from the
 * process (MADV_DONTNEED) whenever the resident share passes the budget, and
 * the kernel reads them back from the page cache or the file on the next
 * touch.  Readers index lane->ev[i] as before: results are exact. */

/* keep at most `bytes` of decoded events (+ their indexes) resident;
 * 0 = unbounded (the default).  May be called at any time: arrays already
 * allocated move into the cache file.  0, -ENOMEM, or -errno of the cache
 * file (the store then stays unbounded) */
int    gt_store_set_budget(struct gt_store *s, size_t bytes);
/* the budget set, 0 when unbounded */
size_t gt_store_budget(const struct gt_store *s);
/* errno of the last disk space the budget's cache file was refused
 * (ENOSPC: $TMPDIR full), 0 if none: an allocation that failed for it
 * reports -ENOMEM, and readers name this instead */
int    gt_store_cache_disk_error(const struct gt_store *s);
/* disk space the cache file takes now (its blocks; holes of freed arrays
 * not counted), 0 without one */
uint64_t gt_store_cache_disk_bytes(const struct gt_store *s);
/* bytes of events and indexes resident now (what the status line shows):
 * the heap part plus the cache file's pages mapped into the process */
size_t gt_store_resident_bytes(const struct gt_store *s);
/* calls on the budget's cache file done on its own thread, off the appending
 * one: released blocks' holes punched plus ranges mapped ahead of lanes being
 * appended to (0 before the budget engages; tests and benchmarks) */
uint64_t gt_store_cache_offloaded(const struct gt_store *s);
/* copy n bytes to dst, memory of s's arrays (a lane's events past its
 * count, within its capacity): written to the cache file with pwrite when
 * dst lies in it (no page of the mapping is touched, so what is written is
 * not the process's RSS until read), memcpy otherwise.  0 or -errno */
int    gt_store_copy_in(struct gt_store *s, void *dst, const void *src, size_t n);
/* a reader of s is about to read events [first, last) of lane l (a scan
 * over many lanes calls it per lane, or per run of a long lane): every
 * eighth of the cache file's allowance (4 MiB at least) read by the
 * calling thread, the budget is checked here, on the reading thread, and
 * when over it the pages of what this thread read since its last check
 * are dropped: a scan cannot map pages faster than the trimmer thread
 * drops them (that thread's turn can be late on a loaded machine).  Free
 * without a budget and for lanes small enough to stay on the heap. */
void   gt_store_read_tick(const struct gt_store *s, const struct gt_lane *l, size_t first,
			  size_t last);
/* gt_store_read_tick for a reader going through events [first, last) of
 * lane l in order, one run of GT_READ_RUN events at a time (a tick over a
 * lane whole maps all of it before the next check): call it with each i
 * before reading event i */
#define GT_READ_RUN ((size_t)65536)
static inline void gt_store_read_walk(const struct gt_store *s, const struct gt_lane *l, size_t first,
				      size_t i, size_t last)
{
	if ((i - first) % GT_READ_RUN == 0)
		gt_store_read_tick(s, l, i, last - i > GT_READ_RUN ? i + GT_READ_RUN : last);
}
/* the same for a query of lane l over [t0, t1) (a frame's row of columns:
 * the events the range covers, though a query touches only some of them) */
void   gt_store_read_tick_span(const struct gt_store *s, const struct gt_lane *l, int64_t t0,
			       int64_t t1);
/* min(1 GiB, physical RAM / 4) */
size_t gt_default_memory_budget(void);
/* "256M", "1G", "512MiB", "64k", "1048576" (K/M/G/T, optional "iB"/"B",
 * powers of 1024) -> bytes; 0 or -EINVAL */
int    gt_parse_size(const char *text, size_t *out);
/* give back a lane's unused array capacity (after a bulk load) */
void   gt_store_lane_fit(struct gt_store *s, uint32_t lane);

/* ---- nesting depth index of one lane (core/store/depth.c) ----
 * Built on demand (the viewer's expanded host threads): each event gets a
 * depth by the stack rule (start order, longer first on equal starts; pop
 * entries whose end <= start; depth = stack height, from GT_DEPTH_ROWS - 1
 * on all in the last row).  Events of one depth are disjoint (the last row
 * may overlap: it then answers for the union).  Queries take the lane the
 * index was built from; extend (or rebuild) it when the lane gains events.
 * Memory: about 18 bytes per event of the lane. */
#define GT_DEPTH_ROWS 32
#define GT_DEPTH_LVL_MAX 40
#define GT_DEPTH_BLK 16      /* positions per block of the compact search keys */

struct gt_depth_row {
	size_t n;
	uint32_t *idx;       /* lane event indexes of this depth, by start */
	int64_t *cum_ns;     /* n + 1 prefix sums of durations */
	int64_t *cs, *ce;    /* overlapping row only: clipped union intervals */
	int64_t *blk_s;      /* per block of GT_DEPTH_BLK positions: start of its first */
	int64_t *blk_e;      /* ... and end of its last (both ascend) */
	size_t nb;
	uint32_t *pyr[GT_DEPTH_LVL_MAX]; /* pyr[j][k]: position of the longest event of
					   positions [k << (j + 1), (k + 1) << (j + 1)) */
	size_t pyr_n[GT_DEPTH_LVL_MAX];
	int n_lvl;
	size_t cap;          /* positions allocated (a live lane grows the row) */
	uint8_t *tdep;       /* last row only: true depth per position (255 = 255 or more) */
};

struct gt_depth {
	uint32_t lane;       /* lane id it was built from */
	uint64_t lane_dropped; /* the lane's dropped count then (a cut lane: build again) */
	size_t n;            /* lane events covered */
	int nrows;           /* rows in use: deepest depth + 1 (0 for an empty lane) */
	uint8_t *depth;      /* per lane event: its row */
	struct gt_depth_row row[GT_DEPTH_ROWS];
	/* the stack rule's state after the last indexed event (gt_store_depth_extend) */
	size_t ncap;         /* depth entries allocated */
	uint32_t *stack;     /* open ranges, outermost first */
	size_t sh, scap;
	uint32_t last_ord;   /* last event taken, in the rule's order */
	struct gt_event last_ev; /* copy of lane event n - 1: detects a re-sorted lane */
};

/* build the index of lane l; 0, -ENOMEM or -EOVERFLOW (>= 4G events) */
int gt_store_depth_build(const struct gt_lane *l, struct gt_depth **out);
void gt_store_depth_free(struct gt_depth *d);
size_t gt_store_depth_bytes(const struct gt_depth *d);
/* a grown lane: take its new events when they come after the indexed ones
 * in the rule's order and the indexed ones did not move (O(new events));
 * 0 (also when nothing is new), -EAGAIN: the lane changed otherwise or was
 * cut (gt_store_drop_before; build it again), -ENOMEM (the index is then unusable: free it) */
int gt_store_depth_extend(struct gt_depth *d, const struct gt_lane *l);
/* true depth of lane event i (number of open ranges when it starts; the
 * row is min(depth, GT_DEPTH_ROWS - 1)); 255 means 255 or more; -1 if absent */
int gt_store_depth_of(const struct gt_depth *d, const struct gt_lane *l, size_t i);
/* the innermost event that contains lane event i (starts before it in the
 * rule's order, ends at or after its end): *inside = 1; else the innermost
 * one open when i starts (it only partly overlaps i): *inside = 0;
 * SIZE_MAX for an outermost event */
size_t gt_store_depth_parent(const struct gt_depth *d, const struct gt_lane *l, size_t i, int *inside);
/* positions [*first, *last) of row `depth` overlapping [t0, t1), O(log n) */
void gt_store_depth_range(const struct gt_depth *d, const struct gt_lane *l, int depth, int64_t t0,
		       int64_t t1, size_t *first, size_t *last);
/* busy time of row `depth` within [t0, t1), O(log n) */
int64_t gt_store_depth_busy(const struct gt_depth *d, const struct gt_lane *l, int depth, int64_t t0,
			 int64_t t1);
/* ncols buckets of row `depth` over [t0, t0 + ncols * dt): busy, events
 * starting in the column, longest overlapping event (lane event index) */
void gt_store_depth_buckets(const struct gt_depth *d, const struct gt_lane *l, int depth,
			 int64_t t0, int64_t dt, int ncols, struct gt_bucket *out);
/* lane index of the event of row `depth` covering t (a zero-length one at
 * t counts), SIZE_MAX if none */
size_t gt_store_depth_event_at(const struct gt_depth *d, const struct gt_lane *l, int depth, int64_t t);
/* position of lane event i within its row (d->depth[i]), SIZE_MAX if absent */
size_t gt_store_depth_pos(const struct gt_depth *d, const struct gt_lane *l, size_t i);

#endif
