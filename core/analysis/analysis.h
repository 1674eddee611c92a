/*
 * analysis.h - helpers shared by the step analyses: lanes of a rank/GPU, event
 * classes by name (NCCL kernels, DataLoader ranges, ProfilerStep spans)
 * cached per string id, and small statistics.
 */
#ifndef GTRACE_ANALYSIS_ANL_H
#define GTRACE_ANALYSIS_ANL_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/report.h"
#include "gtrace/steps.h"
#include "gtrace/store.h"
#include "interval.h"
#include "../util/spill.h"

/* lanes of `type` on rank (-1 = any rank) and device (-1 = any; GPU lanes
 * only); returns count, *out malloc'ed; negative errno */
long analysis_lanes(const struct gt_store *s, int32_t rank, int type, int32_t device,
	       uint32_t **out);

/* name classes */
#define ANALYSIS_NCCL        0x01u  /* ^nccl|ncclKernel|ncclDevKernel */
#define ANALYSIS_DATALOADER  0x02u  /* enumerate(DataLoader)#...__next__ */
#define ANALYSIS_PROFSTEP    0x04u  /* ProfilerStep#N */
#define ANALYSIS_LAUNCH      0x08u  /* a kernel/graph launch call: cudaLaunchKernel, cuLaunchKernel,
				  cudaGraphLaunch, ... (the name has "Launch") */

struct analysis_names {
	const struct gt_store *s;
	uint8_t *cls;          /* per string id: class bits | 0x80 when known */
	size_t n;
};

int analysis_names_init(struct analysis_names *nm, const struct gt_store *s);
void analysis_names_done(struct analysis_names *nm);
unsigned analysis_name_class(struct analysis_names *nm, uint32_t name);

/* communication kernel: NCCL flag or NCCL name */
int analysis_is_comm(struct analysis_names *nm, const struct gt_event *e);
/* host input range: DataLoader flag or DataLoader name */
int analysis_is_input(struct analysis_names *nm, const struct gt_event *e);

/* sort int64 ascending */
void analysis_sort_i64(int64_t *v, size_t n);
/* median of a sorted array (0 when empty) */
double analysis_median_sorted(const int64_t *v, size_t n);

/* ranks of the scope (all, or sc->rank when present); count, *out malloc'ed */
long analysis_scope_ranks(const struct gt_store *s, const struct gt_scope *sc, int32_t **out);
/* *sc = *in, or the whole trace (gt_scope_all) when in is NULL */
void analysis_scope_or_all(struct gt_scope *sc, const struct gt_scope *in);


/* a step window inside a scope */
struct analysis_win {
	int64_t step;          /* number, -1 = whole scope */
	int64_t t0, t1;
	size_t idx;            /* index in the steps list (SIZE_MAX for none) */
};

/* windows of the rank's steps that overlap the scope (and match sc->step),
 * clipped to it; with no steps, one window over the rank's events in the
 * scope.  Returns count (0 = nothing), *out malloc'ed; negative errno */
long analysis_windows(const struct gt_store *s, int32_t rank, const struct gt_steps_list *steps,
		 const struct gt_scope *sc, struct analysis_win **out);

/* launch calls of a rank by correlation id (own map: works for any rank id) */
struct analysis_launch {
	int64_t t0, t1;
};
struct analysis_corrmap {
	int dense;                /* val indexed by corr - base (mask = slots) */
	uint32_t base;
	uint64_t *present;        /* dense mode: bit per slot, set = val holds a launch */
	uint32_t *key;            /* hashed mode: open addressing, 0 = empty */
	struct analysis_launch *val;
	size_t val_bytes;         /* its block (analysis_mem_get) */
	size_t mask, n;
	struct spill *sp;         /* dense under a memory budget: val and present live in it */
	uint64_t pg;              /* ... the page of val touched last, + 1 (0: none yet) */
};
/* map corr -> launch call for the runtime/driver calls on the host lanes */
int analysis_corrmap_build(const struct gt_store *s, const uint32_t *hl, size_t nh,
		      struct analysis_corrmap *m);
/* the same for correlation ids in [lo, hi] only */
int analysis_corrmap_build_range(const struct gt_store *s, const uint32_t *hl, size_t nh,
			    uint32_t lo, uint32_t hi, struct analysis_corrmap *m);
/* the same for GPU work of a scope ending at t1 whose ids lie in [lo, hi]
 * (hint = how many): scans each host lane backwards from t1 and stops at the
 * first launch with an id below lo (ids grow with time on a thread) */
int analysis_corrmap_build_scope(const struct gt_store *s, const uint32_t *hl, size_t nh,
			    uint32_t lo, uint32_t hi, size_t hint, int64_t t1,
			    struct analysis_corrmap *m);
/* the launch of `corr` in a hashed map, or NULL */
const struct analysis_launch *analysis_corrmap_get_hashed(const struct analysis_corrmap *m, uint32_t corr);
/* the launch of `corr`, or NULL */
static inline const struct analysis_launch *analysis_corrmap_get(struct analysis_corrmap *m,
						       uint32_t corr)
{
	if (!m->val || !corr)
		return NULL;
	if (!m->dense)
		return analysis_corrmap_get_hashed(m, corr);
	size_t i = corr - m->base;
	if (corr < m->base || i >= m->mask)
		return NULL;
	if (m->sp)   /* the callers go through ids mostly in order */
		spill_touch_walk(m->sp, &m->pg, i * sizeof(*m->val));
	if (!((m->present[i >> 6] >> (i & 63)) & 1))
		return NULL;
	return &m->val[i];
}
void analysis_corrmap_done(struct analysis_corrmap *m);

/* k-th smallest (0-based) of v, reordering v; v non-empty */
int64_t analysis_select_i64(int64_t *v, size_t n, size_t k);
/* exact median of v (reorders v); 0 when empty */
int64_t analysis_median_i64(int64_t *v, size_t n);
/* the same for v in the spill sp (its passes announced to it; NULL sp:
 * on the heap), by radix selection (kernel_stats_sel.c) */
int64_t analysis_median_i64_spill(struct spill *sp, int64_t *v, size_t n);

/* large scratch blocks kept between reports (analysis_mem.c): get returns a
 * block of at least `bytes` (*got = its size, NULL = ENOMEM); put takes it
 * back with that size; release frees the cached ones */
#define ANALYSIS_MEM_MIN ((size_t)256 << 10)
void *analysis_mem_get(size_t bytes, size_t *got);
void analysis_mem_put(void *p, size_t bytes);
void analysis_mem_release(void);

/* fine event classes of the shared pass (analysis_pass.c) */
enum analysis_fc {
	ANALYSIS_FC_KCOMP = 0,  /* kernel, not NCCL */
	ANALYSIS_FC_KCOMM,      /* NCCL kernel */
	ANALYSIS_FC_H2D, ANALYSIS_FC_D2H, ANALYSIS_FC_H2H,
	ANALYSIS_FC_COPY,       /* other copies: D2D, P2P, unknown */
	ANALYSIS_FC_MEMSET,
	ANALYSIS_FC_RUNTIME, ANALYSIS_FC_DRIVER,   /* kernel/graph launch calls (ANALYSIS_LAUNCH) */
	ANALYSIS_FC_INPUT,      /* DataLoader / input ranges (CPU op, Python, NVTX) */
	ANALYSIS_FC_CPU,        /* other CPU ops and Python functions (not ProfilerStep) */
	ANALYSIS_FC_RT_OTHER,   /* other runtime calls: malloc, synchronize, memcpy, ... */
	ANALYSIS_FC_DRV_OTHER,  /* other driver calls */
	ANALYSIS_FC_N
};
#define ANALYSIS_FC_BIT(c) (1u << (c))
#define ANALYSIS_FC_MEMCPY (ANALYSIS_FC_BIT(ANALYSIS_FC_H2D) | ANALYSIS_FC_BIT(ANALYSIS_FC_D2H) | \
		       ANALYSIS_FC_BIT(ANALYSIS_FC_H2H) | ANALYSIS_FC_BIT(ANALYSIS_FC_COPY))

/* per lane group, the union of each fine class over [t0, t1) */
struct analysis_pass {
	int32_t rank, gpu;            /* gpu: -1 = all GPUs of the rank */
	int64_t t0, t1;
	int has_host;                 /* host lanes collected */
	struct interval_list host[ANALYSIS_FC_N];  /* the rank's host lanes */
	size_t ndev;
	int32_t *devs;                /* devices, ascending */
	struct interval_list (*dev)[ANALYSIS_FC_N];   /* per device: its GPU lanes */
	uint32_t corr_lo, corr_hi;    /* non-zero correlation ids of the GPU events */
	size_t corr_n;                /* read (gt_store_lane_range of each GPU lane) */
};
/* one pass over the rank's host lanes (when host) and GPU lanes (device
 * gpu, -1 = any) */
int analysis_pass_build(const struct gt_store *s, int32_t rank, int32_t gpu, int64_t t0, int64_t t1,
		   int host, struct analysis_names *nm, struct analysis_pass *p);
void analysis_pass_done(struct analysis_pass *p);
/* under a memory budget a rank of many events is analysed in time slabs
 * of about budget / ANALYSIS_SLAB_BYTES events each (at least
 * ANALYSIS_SLAB_MIN): one pass per slab, its unions clipped to the slab,
 * the results added up (lengths add over disjoint slabs; firsts and lasts
 * are the least and the greatest).  The cuts of [t0, t1) over the rank's
 * GPU lanes of gpu (-1 = any) and, when host, its host lanes: cuts[0] = t0,
 * cuts[n] = t1, ascending; n slabs (1 without a budget or when the events
 * fit), or -ENOMEM.  *cuts malloc'ed; cuts NULL: the number of slabs the
 * events want, nothing cut. */
#define ANALYSIS_SLAB_BYTES 512
#define ANALYSIS_SLAB_MIN 4096
long analysis_slabs(const struct gt_store *s, int32_t rank, int32_t gpu, int host, int64_t t0,
		    int64_t t1, int64_t **cuts);
/* index of device in p->devs, or -1 */
long analysis_pass_dev_index(const struct analysis_pass *p, int32_t device);
/* the devices of GPU lanes gl[0..ng), ascending, once each: count, *out
 * malloc'ed; -ENOMEM */
long analysis_lane_devices(const struct gt_store *s, const uint32_t *gl, size_t ng, int32_t **out);
/* window w clipped to [c0, c1) in [*a, *b); non-zero when that is not empty */
static inline int analysis_win_clip(const struct analysis_win *w, int64_t c0, int64_t c1, int64_t *a,
				    int64_t *b)
{
	*a = w->t0 > c0 ? w->t0 : c0;
	*b = w->t1 < c1 ? w->t1 : c1;
	return *a < *b;
}
/* union of the classes in mask over the host group (with_host) and the
 * device groups (dev = index, -1 = all) */
/* the same union without a copy: a list of the pass when one class of one
 * group has intervals, else *tmp (replaced) holding the union; NULL = ENOMEM */
const struct interval_list *analysis_pass_get(const struct analysis_pass *p, unsigned mask, int with_host,
				   long dev, struct interval_list *tmp);

/* priority attribution over a rank's step windows in a scope (analysis_attr.c):
 * mask[0..ncat-2] are the categories' fine classes in priority order, the
 * last category takes what none covers.  cat_ns[w * ncat + c] is the time of
 * category c in window w; the windows' times sum to their length. */
struct analysis_attr {
	long nw;                      /* windows; 0 = nothing in the scope */
	struct analysis_win *win;          /* analysis_windows' windows */
	int ncat;
	int64_t *cat_ns;
	int64_t *extra_ns;            /* per window: the time of the extra classes */
};
/* pass may be NULL or not fit (rank, GPU, range): then own passes are built
 * (in slabs under a budget, see analysis_slabs); extra: classes whose
 * union's time in each window is wanted too (0: none); 0 or -ENOMEM (out is
 * then empty) */
int analysis_attr_run(const struct gt_store *s, int32_t rank, const struct gt_steps_list *steps,
		 const struct gt_scope *sc, const struct analysis_pass *pass,
		 const unsigned *mask, int ncat, unsigned extra, struct analysis_attr *out);
void analysis_attr_done(struct analysis_attr *a);

/* the analyses on a pass built by the caller (pass may be NULL, or not fit
 * the rank/GPU/range: then they build their own) */
struct gt_breakdown_result;
struct gt_pipeline_result;
struct gt_gputime_result;
int breakdown_compute_pass(const struct gt_store *s, int32_t rank,
			   const struct gt_steps_list *steps, const struct gt_scope *sc,
			   struct gt_breakdown_result *out, const struct analysis_pass *pass,
			   char *err, size_t errlen);
int pipeline_compute_pass(const struct gt_store *s, int32_t rank,
			  const struct gt_steps_list *steps, const struct gt_scope *sc,
			  struct gt_pipeline_result *out, const struct analysis_pass *pass,
			  char *err, size_t errlen);
int gputime_compute_pass(const struct gt_store *s, const struct gt_scope *sc,
			 struct gt_gputime_result *out, const struct analysis_pass *pass,
			 char *err, size_t errlen);
struct gt_multigpu_result;
int multigpu_compute_pass(const struct gt_store *s, const struct gt_scope *sc,
			  struct gt_multigpu_result *out, const struct analysis_pass *pass,
			  char *err, size_t errlen);

#endif
