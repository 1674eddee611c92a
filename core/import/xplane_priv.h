/*
 * xplane_priv.h - private to the XPlane importer's files: the state of one
 * XSpace being mapped (xplane_map.c), a plane's metadata tables and an
 * event's stats (xplane_meta.c, xplane_memo.c), and the arenas a line and
 * an event are unpacked into.
 */
#ifndef GTRACE_XPLANE_PRIV_H
#define GTRACE_XPLANE_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>
#include "gtrace/store.h"
#include "xplane.h"
#include "xplane.pb-c.h"

#define XP_MAX_NS 4000000000000000000LL   /* latest time accepted (year 2096) */

/* bump allocator for protobuf-c (xplane_arena.c): free is a no-op, reset
 * rewinds it (its chunks kept for the next user), large blocks apart */
struct xpchunk;
struct xpbig;
#define XP_CACHE 8
struct xparena {
	ProtobufCAllocator pa;
	struct xpchunk *first, *cur;
	unsigned char *p, *end;    /* free room in cur */
	struct xpbig *big;         /* large blocks, freed by reset */
	struct xpbig *cache[XP_CACHE];   /* mapped large blocks freed, for reuse */
	size_t n_chunks;
};

void xplane_arena_init(struct xparena *a);
/* rewind: the large blocks freed, the chunks kept for reuse */
void xplane_arena_reset(struct xparena *a);
/* free one block of n bytes from this arena now (a packed line once
 * mapped); only blocks larger than a chunk's quarter are freed, smaller
 * ones stay until done */
void xplane_arena_release(struct xparena *a, void *p, size_t n);
void xplane_arena_done(struct xparena *a);

/* an event metadata entry: its id and the store string of its name */
struct xpev {
	int64_t id;
	uint32_t name;
	uint16_t flags;            /* XN_* of the name, computed once */
};

/* what an event name says (xpev.flags) */
enum { XN_NCCL = 1, XN_LAUNCH = 2, XN_DRIVER = 4, XN_INPUT = 8 };

/* roles of the stats gtrace reads */
enum {
	XS_OTHER, XS_CORR, XS_KDET, XS_MCPY, XS_MSET, XS_GROUP, XS_STEPNUM, XS_CLOCK, XS_CORES,
	XS_MBW, XS_MSIZE, XS_CCMAJ, XS_CCMIN, XS_CTX
};

struct xpst {
	int64_t id;
	uint8_t role;
	const char *name;          /* the plane's copy (valid while the plane is) */
	uint32_t kconf;            /* kernel_details parsed from this name (ref_value), 0 = not yet */
	uint32_t stored, hits;     /* values of this stat put in the memo, memo hits */
};

/* what one stat says: its role and the values that role reads */
struct xpstat1 {
	uint8_t role;              /* XS_* */
	uint16_t copy_flags;       /* XS_MCPY / XS_MSET: GT_EVF_PINNED / GT_EVF_PAGEABLE */
	uint32_t stm;              /* index in xpmap.stm, UINT32_MAX = unknown metadata id */
	uint32_t kconf_id;         /* XS_KDET: the store's kconf id */
	uint32_t sval;             /* XS_CTX: the store string of the value */
	int64_t ival;              /* XS_CORR, XS_GROUP, XS_STEPNUM: the value */
	uint64_t bytes;            /* XS_MCPY / XS_MSET: size */
};

#define XPM_KEY 31                 /* longest stat (packed bytes) the memo keeps */
struct xpmemo_ent;

struct xpstep {
	int64_t num, t0, t1;
};

struct xpmap {
	struct gt_store *s;
	int32_t rank;
	struct xplane_stats *st;
	struct xparena arena;      /* the current line (events packed) */
	struct xparena earena;     /* the current event */
	uint8_t line_copy;         /* copy direction the current line's name gives */
	uint32_t line_ctx;         /* the current stream's context_id (store string), 0 = none,
				    * UINT32_MAX = several */
	uint8_t bare;              /* the current line's event stats are not read */
	struct xpmemo_ent *memo;   /* the current plane's stats by packed bytes (xplane_memo.c) */
	/* the current plane's metadata, sorted by id */
	struct xpev *ev;
	size_t n_ev;
	uint32_t *ev_dense;        /* id -> index + 1 in ev when ids are dense, else NULL */
	size_t n_dense;
	struct xpst *stm;
	size_t n_stm;
	uint32_t *stm_dense;       /* id -> index + 1 in stm when ids are dense, else NULL */
	size_t n_stm_dense;
	/* steps: from the GPUs' Steps lines / from host step_num stats */
	struct xpstep *gsteps, *hsteps;
	size_t n_gsteps, cap_gsteps, n_hsteps, cap_hsteps;
};

/* what an event's stats say */
struct xpstats {
	uint32_t corr;
	int have_corr, have_kernel, have_memcpy, have_memset, have_group, have_stepnum;
	int64_t group, stepnum;
	uint64_t bytes;
	uint16_t copy_flags;       /* GT_EVF_PINNED / GT_EVF_PAGEABLE */
	uint32_t kconf_id;         /* the store's id of kconf (have_kernel) */
	uint32_t ctx;              /* context_id as a store string, 0 = none */
};

/* index the plane's metadata (names interned) and, for GPU dev >= 0, set
 * its device properties from the plane stats; 0 or -ENOMEM */
int xplane_meta_plane(struct xpmap *m, const Tensorflow__Profiler__XPlanePacked *pl, int32_t dev);
void xplane_meta_done(struct xpmap *m);
/* the event metadata of id, or NULL */
const struct xpev *xplane_meta_event(struct xpmap *m, int64_t id);
/* what one unpacked stat says (kernel_details interned); 0 or -ENOMEM */
int xplane_meta_stat1(struct xpmap *m, const Tensorflow__Profiler__XStat *x, struct xpstat1 *r);

/* read an event's packed stats (xplane_memo.c), in order, a later stat of
 * a role overriding an earlier one; 0, -EINVAL (a damaged stat) or -ENOMEM */
int xplane_memo_stats(struct xpmap *m, size_t n, const ProtobufCBinaryData *stats,
		      struct xpstats *out);
/* forget the memo (a new plane: new stat ids) / free it */
void xplane_memo_clear(struct xpmap *m);
void xplane_memo_free(struct xpmap *m);

#endif
