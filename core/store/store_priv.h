/*
 * store_priv.h - the store's private layout, shared by the files of
 * core/store/ only.
 */
#ifndef GTRACE_STORE_PRIV_H
#define GTRACE_STORE_PRIV_H

#include "gtrace/store.h"

#define STRTAB_BLOCK_BYTES (256u * 1024u)

struct strtab {
	char **blocks;            /* arena blocks, never moved */
	size_t n_blocks, blk_used, blk_cap;
	const char **str;         /* id -> text */
	uint32_t *len;            /* id -> length */
	size_t n, cap;
	uint32_t *hash;           /* open addressing: id+1, 0 = empty */
	size_t hcap;
};

/* fixed-size records interned by content (kconf, nccl) */
struct rectab {
	size_t rec_size;
	unsigned char *rec;       /* record i at rec + (i-1) * rec_size, ids from 1 */
	size_t n, cap;
	uint32_t *hash;
	size_t hcap;
};

struct corr_ent {
	uint64_t key;             /* rank << 32 | corr */
	struct gt_ref ref;
};

struct meta_kv {
	char *key, *value;
};

struct gt_store {
	struct strtab strs;
	struct gt_lane **lanes;
	size_t n_lanes, cap_lanes;
	uint32_t *lane_hash;
	size_t lane_hcap;
	struct rectab kconf, nccl;
	struct gt_device *devs;
	size_t n_devs, cap_devs;
	struct gt_rank *ranks;
	size_t n_ranks, cap_ranks;
	struct gt_drops drops;
	uint32_t *str_short;      /* string id -> short name id (0 = none), n_str_short ids */
	size_t n_str_short;
	struct meta_kv *meta;
	size_t n_meta, cap_meta;
	struct corr_ent *corr_launch, *corr_gpu;
	size_t n_corr_launch, n_corr_gpu;
	size_t n_events;
	int64_t t_min, t_max;
	/* an import's limits (gt_store_limits_set); 0 = none */
	size_t lim_lanes;
	uint64_t lim_events, n_added;
	uint64_t uid;             /* unique in the process (gt_store_change_id) */
	uint64_t n_finish;        /* gt_store_finish calls */
	int64_t pend_lanes, pend_events;   /* held by importers, not added yet (atomic) */
	int lim_hit;              /* STORE_LIM_* of the first refusal (atomic) */
	size_t budget;            /* bytes, 0 = unbounded (store_budget.c) */
	size_t heap_bytes;        /* bytes of store_mem blocks on the heap */
	struct store_arena *arena;/* the cache file, once engaged */
	int arena_err;            /* engaging failed: -errno, not retried */
	unsigned adds_unchecked;  /* gt_store_add calls since the last budget check */
	struct gt_lsum *summary;  /* per-lane summary read from the file (lsum.c), or NULL */
	uint64_t n_dropped;       /* events gt_store_drop_before dropped */
	int64_t drop_last_start;  /* the latest start of one (INT64_MIN: none) */
	int64_t drop_origin;      /* t_min before the first cut (INT64_MAX: no cut) */
};

int strtab_init(struct strtab *t);
void strtab_done(struct strtab *t);
uint32_t strtab_intern(struct strtab *t, const char *s, size_t len);
uint32_t strtab_find(const struct strtab *t, const char *s, size_t len);
uint64_t strtab_hash(const void *p, size_t len);

void rectab_init(struct rectab *t, size_t rec_size);
void rectab_done(struct rectab *t);
uint32_t rectab_intern(struct rectab *t, const void *rec);
const void *rectab_at(const struct rectab *t, uint32_t id);

int lod_build(struct gt_store *s, struct gt_lane *l);
/* forget a lane's index (the next lod_build builds it whole) but keep its
 * arrays for the rebuild: a lane cut often does not take new cache-file room
 * each time */
void lod_reset(struct gt_lane *l);
/* from the lane's coarse index (lod.c): the first event a search for
 * start >= t may begin at, and the first block a search for running max
 * end >= t may begin at (0 without a coarse index) */
size_t lod_top_from_start(const struct gt_lane *l, int64_t t);
size_t lod_top_from_maxend(const struct gt_lane *l, int64_t t);
void lod_free(struct gt_store *s, struct gt_lane *l);

/* ---- per coarse-index entry, the events open at its start (lod_open.c) */
#define LOD_OPEN 4
struct lod_open {
	int64_t end[LOD_OPEN];   /* ends of the kept events, last event first */
	uint32_t idx[LOD_OPEN];  /* their indices, decreasing */
	uint32_t n;              /* kept */
	int64_t lost_end;        /* bound of the ends of open events not kept (INT64_MIN: none) */
};
/* build the lists of superblocks n_open..n_top - 1 (after top_start and the
 * block index); -1 when out of memory */
int lod_open_build(struct gt_lane *l);
/* where an innermost-event walk back from k (first start > t) may stop and
 * ask lod_open_find instead: the first event of k - 1's superblock, or 0
 * where the lists do not answer (first superblock, t at its first start) */
size_t lod_open_floor(const struct gt_lane *l, int64_t t, size_t k);
/* the last event before S (from lod_open_floor) covering t, or SIZE_MAX
 * and *below: the walk must go on over events [0, *below) (0: none covers t) */
size_t lod_open_find(const struct gt_lane *l, int64_t t, size_t S, size_t *below);

/* ---- memory: every per-event array of the store (lane events, lane
 * index, correlation index, sort buffers) comes from here (store_budget.c).
 * A heap block carries a 16-byte size header; with a budget engaged, blocks
 * of STORE_ARENA_MIN bytes or more live in the cache file (store_arena.c). */
#define STORE_ARENA_MIN 4096u
/* realloc (p NULL: malloc); NULL on failure, p then unchanged */
void *store_mem_realloc(struct gt_store *s, void *p, size_t n);
void store_mem_free(struct gt_store *s, void *p);
/* a safe point (no array pointer held), before allocating an array of
 * `more` bytes: engage the cache file when the heap share with it would pass
 * half the budget (a lane reserved whole, the first of a one-rank capture of
 * 50 M events: 1.5 GB, then goes to the file, not the heap) */
void store_budget_poll(struct gt_store *s, size_t more);
/* recompute the arena's share of the budget and trim when over it (gt_store_finish
 * lane by lane, gt_store_add every 65536 events) */
void store_budget_finished(struct gt_store *s);
/* gt_store_add's appends come in windows of STORE_AHEAD_EVENTS (1.5 MiB of
 * events): at the start of one, the next is mapped ahead on the arena's
 * thread (store_arena_ahead) */
#define STORE_AHEAD_EVENTS 32768u
/* a reader checks the budget itself every eighth of the cache file's
 * allowance it reads, at least this often (gt_store_read_tick) */
#define STORE_READ_CHECK_MIN ((size_t)4 << 20)
/* ranges a reader remembers between two checks (more: it checks now) */
#define STORE_READ_RANGES 64
void store_budget_ahead(struct gt_store *s, struct gt_lane *l);

struct store_arena;
/* 0 when a cache file can be made in $TMPDIR (or /var/tmp), else -errno */
int store_arena_probe(void);
int store_arena_new(size_t allow, struct store_arena **out);
void store_arena_free(struct store_arena *a);
int store_arena_owns(const struct store_arena *a, const void *p);
/* pwrite n bytes of src to the cache file where dst (owned) is mapped; 0 or -errno */
int store_arena_write(struct store_arena *a, void *dst, const void *src, size_t n);
void *store_arena_alloc(struct store_arena *a, size_t n);
/* a block for an array that grows (its contents come from a smaller one):
 * with more address room behind it (store_arena.c, room_for) */
void *store_arena_alloc_grown(struct store_arena *a, size_t n);
/* a hint: a writer is about to store into [p, p + n) of a block; the
 * trimmer thread maps it writable ahead of it (MADV_POPULATE_WRITE), so the
 * writer does not take a page fault (and its file-system work) per page.
 * Never blocks: a full queue or an old kernel drops the hint */
void store_arena_ahead(struct store_arena *a, void *p, size_t n);
/* bytes mapped ahead so far (tests, benchmarks) */
uint64_t store_arena_populated(const struct store_arena *a);
/* ranges mapped ahead so far */
uint64_t store_arena_populated_calls(const struct store_arena *a);
/* released blocks whose hole the trimmer thread punched (tests) */
uint64_t store_arena_deferred(const struct store_arena *a);
void *store_arena_realloc(struct store_arena *a, void *p, size_t n);
void store_arena_release(struct store_arena *a, void *p);
size_t store_arena_size(const struct store_arena *a, void *p);
/* pages of the cache file in the page cache now (mincore; SIZE_MAX on error):
 * the benchmark checks that its eviction evicted */
size_t store_arena_incore(struct store_arena *a);
/* user bytes of live blocks */
size_t store_arena_live(const struct store_arena *a);
/* bytes of the arena mapped into the process now (sampled, an upper bound) */
size_t store_arena_resident(struct store_arena *a);
void store_arena_set_allow(struct store_arena *a, size_t allow);
/* the arena's share of the budget now */
size_t store_arena_allow(const struct store_arena *a);
/* drop the arena from the page tables; check: only when over the allowance
 * (returns 1 when it trimmed) */
void store_arena_trim(struct store_arena *a);
int store_arena_check(struct store_arena *a);
/* address ranges a reader read (gt_store_read_tick) */
struct store_range {
	uintptr_t from, to;
};
/* the same check for a reader: over the allowance, drop the n ranges it
 * read, then the whole arena if that was not enough; 1 when it trimmed */
int store_arena_check_read(struct store_arena *a, const struct store_range *r, int n);
uint64_t store_arena_trims(const struct store_arena *a);
/* benchmarks: out of the process and out of the page cache (written to the
 * file first), so the next touch reads the disk */
void store_arena_cold(struct store_arena *a);
/* the cache file's descriptor (benchmarks probe the disk under it) */
int store_arena_fd(const struct store_arena *a);
/* errno of the last disk space the cache file was refused (ENOSPC...), 0 */
int store_arena_disk_err(const struct store_arena *a);
int corr_build(struct gt_store *s);

/* the store's edge for ranks: an unknown rank (-1, any negative) is rank 0.
 * Applied once where a lane, device, rank or correlation query comes in, so
 * every rank a reader gets back from the store is >= 0. */
static inline int32_t store_rank_norm(int32_t rank)
{
	return rank < 0 ? 0 : rank;
}

#endif
