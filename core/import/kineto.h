/*
 * kineto.h - private to core/import: one trace JSON file being imported.
 *
 * kineto_json.c scans the text and hands each event object to kineto_file.c as a
 * struct kev (raw spans into the text, numbers already fixed-point);
 * kineto_file.c maps it to a struct gt_event and stages it on a file-local lane
 * keyed by (class, Chrome pid, Chrome tid).  When the file ends (its rank,
 * base time and metadata are known only then), kineto_file_flush() creates the
 * store lanes, names them, copies the events and links flows.
 */
#ifndef GTRACE_KIMPORT_H
#define GTRACE_KIMPORT_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/store.h"
#include "kineto_open.h"

/* a pid / tid / id as written: number or string */
struct kval {
	int64_t num;
	const char *s;
	uint32_t len;
	uint8_t t;                 /* 0 absent, 1 number, 2 string */
};

struct kstr {
	const char *s;
	uint32_t len;
	uint32_t esc;              /* holds escapes: unescaped in place once the object is whole */
};

/* presence bits of struct kev's args */
enum {
	KA_DEVICE = 1u << 0, KA_STREAM = 1u << 1, KA_CORR = 1u << 2, KA_EXT = 1u << 3,
	KA_BYTES = 1u << 4, KA_GRID = 1u << 5, KA_BLOCK = 1u << 6, KA_REGS = 1u << 7,
	KA_SMEM = 1u << 8, KA_OCC = 1u << 9, KA_COLL = 1u << 10, KA_SORT = 1u << 11,
	KA_FROMDEV = 1u << 12, KA_TODEV = 1u << 13, KA_STEP = 1u << 14, KA_GLANE = 1u << 15,
};

#define KEV_MAX_NUM 8

/* one event object, fields as found */
struct kev {
	char ph;
	struct kstr cat, name;
	struct kval pid, tid, id;
	int64_t ts_ns, dur_ns;
	uint8_t has_ts, has_dur, bad_num;
	uint32_t have;             /* KA_* */
	int64_t device, stream, corr, ext, bytes, regs, smem, occ_milli, sort_index;
	int64_t from_dev, to_dev, step;
	uint32_t grid[3], block[3];
	/* NCCL */
	struct kstr coll, dtype, pg;
	int64_t in_nelems, out_nelems, group_size;
	/* metadata args */
	struct kstr aname, labels;
	/* CPU op args: Input Dims (its raw JSON array text), Call stack */
	struct kstr dims, stack;
	/* gtrace_lane metadata (our own export) */
	int64_t gl_type, gl_rank, gl_device, gl_pid, gl_id;
	/* other numeric args, raw (for counters) */
	uint32_t n_num;
	struct kstr num_key[KEV_MAX_NUM], num_val[KEV_MAX_NUM];
};

enum kskip {
	KSKIP_NOT_OBJECT, KSKIP_NO_TS, KSKIP_NO_DUR, KSKIP_BAD_NUMBER, KSKIP_PHASE,
	KSKIP_E_WITHOUT_B, KSKIP_OUT_OF_RANGE, KSKIP_COUNT
};

#define KTAG (1LL << 62)        /* tagged string id in a normalized pid/tid */
#define KTAGGED(v) (((uint64_t)(v) >> 62) == 1)

enum { KCLS_HOST, KCLS_GPU, KCLS_AUX, KCLS_COUNTER };

/* a file-local lane: events staged until the file's rank is known */
struct klane {
	uint8_t cls;
	int64_t cpid, ctid;        /* normalized Chrome pid / tid */
	int32_t device;
	int64_t stream;
	uint32_t name;             /* counters: the series name */
	int64_t gtid;              /* tid for the gtrace_lane lookup (counters: the real tid) */
	struct gt_event *ev;
	size_t n, cap;
};

enum { KM_PROC_NAME, KM_THREAD_NAME, KM_PROC_SORT, KM_THREAD_SORT, KM_PROC_LABELS };

struct kmeta {
	int64_t cpid, ctid;
	uint32_t what;
	uint32_t str;
	int64_t num;
};

/* our own export's exact lane key for a Chrome (pid, tid) */
struct kglane {
	int64_t cpid, ctid;
	struct gt_lane_key key;
};

struct kflow {
	uint64_t id;
	int64_t ts;
	int64_t cpid, ctid;
	char ph;
};


#define KINETO_FILE_MAX_DEVS 64

struct kineto_file {
	struct gt_store *s;        /* the store the file goes into */
	struct gt_store *ls;       /* where strings, kconf, NCCL records are interned while
				    * parsing: s, or a private store when files are parsed in
				    * parallel (ids remapped into s at flush) */
	uint32_t *map_str, *map_kconf, *map_nccl;   /* ls id -> s id, 0 = not yet */
	const char *path;
	char damage[160];          /* damaged gzip input: kineto_read's words for it, "" none */
	int64_t held_lanes, held_events;   /* counted in s's limits (gt_store_limit_take) */
	int32_t rank;              /* final rank (set before flush) */
	int32_t world;             /* -1 unknown */
	int have_dist;             /* distributedInfo seen */
	int32_t dist_rank, dist_world;
	int64_t base_ns;           /* baseTimeNanoseconds */
	int64_t span_start_ns, span_dur_ns;
	int have_span;
	uint32_t host;             /* host name string id */
	struct gt_device devs[KINETO_FILE_MAX_DEVS];
	size_t n_devs;
	/* file-local lanes */
	struct klane *lanes;
	size_t n_lanes, cap_lanes;
	uint32_t *lhash;
	size_t lhcap;
	struct kmeta *meta;
	size_t n_meta, cap_meta;
	struct kflush_ix *ix;      /* kineto_file_flush's lookup indexes of meta and gl (its own) */
	struct kglane *gl;
	size_t n_gl, cap_gl;
	struct kflow *flows;
	size_t n_flows, cap_flows;
	uint64_t skipped[KSKIP_COUNT];
	uint64_t n_events, n_nocorr, neg_dur;
	uint64_t flows_unmatched, flows_linked;
	int oom;
	struct kineto_opens open_b;      /* B events waiting for their E */
	long last_lane;            /* local lane of the last staged event */
	struct kic *ic;            /* intern cache (KIC_SIZE slots), may be NULL */
};

#define KIC_SIZE 4096

struct kic {
	const char *str;           /* the store's copy (never moves) */
	uint32_t len, id;
};

/* gt_store_intern through a small direct-mapped cache of recent strings */
uint32_t kineto_file_intern(struct kineto_file *kf, const char *s, size_t len);

void kineto_file_init(struct kineto_file *kf, struct gt_store *s, const char *path);
/* parse into a private store (for a parser thread); 0 or -ENOMEM */
int kineto_file_private(struct kineto_file *kf);
void kineto_file_done(struct kineto_file *kf);
/* give back what the file holds in the store's limits (gt_store_limit_take):
 * before its flush adds it for real, or when it is dropped */
void kineto_file_release(struct kineto_file *kf);
/* take one event object; 0 or -ENOMEM */
int kineto_file_event(struct kineto_file *kf, const struct kev *ev);
/* a top-level key's value (deviceProperties, distributedInfo, ...) as raw JSON text */
int kineto_file_toplevel(struct kineto_file *kf, const char *key, size_t klen, const char *val, size_t vlen);
/* an M metadata event / an s or f flow end; 0 or -ENOMEM */
int kineto_file_meta(struct kineto_file *kf, const struct kev *ev);
int kineto_file_flow(struct kineto_file *kf, const struct kev *ev);
/* an instant named [memory] with a Bytes arg becomes an allocator record
 * (GT_EVF_MEMORY, kineto_file_mem.c); other events are left as they are */
void kineto_file_mem(const struct kev *ev, struct gt_event *g);
/* an allocator record's "Total Allocated" (which 0) or "Total Reserved"
 * (1) arg; 1 when present (a whole number >= 0) */
int kineto_file_mem_total(const struct kev *ev, int which, int64_t *out);
/* a counter event of our own export's category gtrace_memory_total, named
 * "Total Allocated (GPU n)" / "Total Reserved (CPU)"...: flagged as the
 * importer flags the totals it makes of [memory] args; others untouched */
void kineto_file_mem_counter(const struct kev *ev, struct gt_event *g);
/* a CPU op's Input Dims and Call stack interned: arg bits 0-31 and aux
 * (kineto_file_op.c) */
void kineto_file_op(struct kineto_file *kf, const struct kev *ev, struct gt_event *g);
/* a Chrome pid / tid as a number (numeric strings as numbers, others KTAG | string id) */
int64_t kineto_file_norm(struct kineto_file *kf, const struct kval *v);
/* grow an array to hold n + 1 items; 0 or -ENOMEM */
int kineto_file_grow(void **p, size_t *cap, size_t n, size_t size);
/* the local lane (cls, Chrome pid, Chrome tid), or -1 */
long kineto_file_find_lane(struct kineto_file *kf, uint8_t cls, int64_t cpid, int64_t ctid);
/* move the staged events into the store under kf->rank; 0 or -ENOMEM */
int kineto_file_flush(struct kineto_file *kf);

/* parse the whole stream of one file into kf; 0, or negative errno with
 * "FILE: problem" in err; a truncated file keeps its events and sets
 * *truncated */
struct kineto_read;
int kineto_json_parse(struct kineto_file *kf, struct kineto_read *r, unsigned flags, char *err, size_t errlen,
		int *truncated);

#endif
