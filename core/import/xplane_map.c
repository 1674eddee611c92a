/*
 * xplane_map.c - one XSpace into the store (see xplane.h).
 *
 * Planes: /host:CPU -> host lanes, one per line (thread); /device:GPU:N ->
 * GPU N: its "Stream #S(...)" lines -> stream lanes (kernels, copies,
 * memsets), its other lines (TensorFlow Ops, TensorFlow Name Scope, XLA Ops,
 * XLA Modules, Steps, ...) -> annotation lanes of GPU N (pid -1, as Kineto's
 * gpu_user_annotation); any other plane -> host lanes named "PLANE LINE"
 * (pid -2 - plane index), events kept as CPU ops.  Times: line.timestamp_ns
 * plus offset_ps rounded to the nearest ns; an event's end is rounded the
 * same way so nesting survives.  Steps: the GPUs' "Steps" lines (one step
 * per group id, the union of its GPU windows), else host events with a
 * step_num / step_id stat, as GT_EV_STEP on a host lane "Steps" (pid -1).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "gtrace/evcheck.h"
#include "../util/mapguard.h"
#include "xplane.pb-c.h"
#include "xplane.h"
#include "xplane_priv.h"

typedef Tensorflow__Profiler__XSpacePacked XSpaceP;
typedef Tensorflow__Profiler__XPlanePacked XPlaneP;
typedef Tensorflow__Profiler__XLinePacked XLine;

enum { PL_HOST, PL_GPU, GT_PL_OTHER };

/* ps -> ns, rounded to nearest (v >= 0) */
static int64_t ps_ns(int64_t ps)
{
	return ps / 1000 + (ps % 1000 >= 500);
}

static uint8_t copy_kind(const char *a, const char *b)
{
	const char *v[2] = { a, b };
	for (int i = 0; i < 2; i++) {
		const char *s = v[i];
		if (!s)
			continue;
		if (strstr(s, "H2D") || strstr(s, "HtoD"))
			return GT_COPY_H2D;
		if (strstr(s, "D2H") || strstr(s, "DtoH"))
			return GT_COPY_D2H;
		if (strstr(s, "D2D") || strstr(s, "DtoD"))
			return GT_COPY_D2D;
		if (strstr(s, "P2P") || strstr(s, "PtoP"))
			return GT_COPY_P2P;
		if (strstr(s, "H2H") || strstr(s, "HtoH"))
			return GT_COPY_H2H;
	}
	return GT_COPY_UNKNOWN;
}

static int add_step(struct xpmap *m, int from_gpu, int64_t num, int64_t t0, int64_t t1)
{
	struct xpstep **v = from_gpu ? &m->gsteps : &m->hsteps;
	size_t *n = from_gpu ? &m->n_gsteps : &m->n_hsteps, *cap = from_gpu ? &m->cap_gsteps : &m->cap_hsteps;
	/* a GPU step's windows are merged per number in emit_steps (sorted),
	 * not looked up here: 200k distinct numbers made that quadratic */
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		struct xpstep *nv = realloc(*v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = (struct xpstep){ num, t0, t1 };
	return 0;
}

/* the lane of one line; UINT32_MAX on allocation failure */
static uint32_t line_lane(struct xpmap *m, int pk, int32_t dev, int stream, const XLine *ln,
			  const char *pname, size_t pidx)
{
	struct gt_lane_key k = { .rank = m->rank, .id = ln->id };
	const char *lname = ln->display_name && *ln->display_name ? ln->display_name : ln->name;
	char nm[256];
	if (pk == PL_GPU) {
		k.type = GT_LANE_GPU;
		k.device = dev;
		k.pid = stream ? 0 : -1;
		snprintf(nm, sizeof(nm), "GPU %" PRId32 " %s", dev, lname);
	} else {
		k.type = GT_LANE_HOST;
		k.device = -1;
		k.pid = pk == PL_HOST ? 0 : -2 - (int64_t)pidx;
		if (pk == PL_HOST)
			snprintf(nm, sizeof(nm), "%s", *lname ? lname : "thread");
		else
			snprintf(nm, sizeof(nm), "%s %s", pname, lname);
	}
	uint32_t l = gt_store_lane(m->s, &k);
	struct gt_lane *sl = l == UINT32_MAX ? NULL : gt_store_lane_at(m->s, l);
	if (sl && !sl->name)
		gt_store_lane_set_name(m->s, l, nm);
	return l;
}

/* one event of a line into the store */
static int map_event(struct xpmap *m, int pk, int stream, int steps_line, const XLine *ln,
		     const ProtobufCBinaryData *raw, uint32_t lane)
{
	xplane_arena_reset(&m->earena);   /* the previous event's memory */
	/* the stats stay packed bytes: read through the memo, or not at all */
	Tensorflow__Profiler__XEventBare *xe =
		tensorflow__profiler__xevent_bare__unpack(&m->earena.pa, raw->len, raw->data);
	if (!xe)
		return -EINVAL;
	if (xe->data_case == TENSORFLOW__PROFILER__XEVENT_BARE__DATA_NUM_OCCURRENCES) {
		m->st->aggregated++;
		return 0;
	}
	int64_t off = xe->data_case == TENSORFLOW__PROFILER__XEVENT_BARE__DATA_OFFSET_PS ? xe->offset_ps : 0;
	int64_t dur = xe->duration_ps;
	if (off < 0 || dur < 0 || off > INT64_MAX - dur || ln->timestamp_ns < 0 ||
	    ln->timestamp_ns > XP_MAX_NS - (off + dur) / 1000 - 1) {
		m->st->skipped++;
		return 0;
	}
	struct gt_event e;
	memset(&e, 0, sizeof(e));
	e.start_ns = ln->timestamp_ns + ps_ns(off);
	e.dur_ns = ln->timestamp_ns + ps_ns(off + dur) - e.start_ns;
	e.lane = lane;
	const struct xpev *md = xplane_meta_event(m, xe->metadata_id);
	e.name = md ? md->name : 0;
	unsigned nf = md ? md->flags : 0;
	struct xpstats sv;
	int rc = xplane_memo_stats(m, m->bare ? 0 : xe->n_stats, xe->stats, &sv);
	if (rc)
		return rc;
	e.corr = sv.corr;
	if (sv.ctx && stream)
		m->line_ctx = !m->line_ctx || m->line_ctx == sv.ctx ? sv.ctx : UINT32_MAX;
	if (pk == PL_GPU && stream) {
		const char *lname = ln->name;
		if (sv.have_memcpy || (!sv.have_kernel && strstr(lname, "Memcpy"))) {
			e.kind = GT_EV_MEMCPY;
			e.sub = m->line_copy ? m->line_copy : copy_kind(gt_store_str(m->s, e.name), NULL);
			e.arg = sv.bytes;
			e.flags |= sv.copy_flags;
		} else if (sv.have_memset || (!sv.have_kernel && strstr(lname, "Memset"))) {
			e.kind = GT_EV_MEMSET;
			e.arg = sv.bytes;
		} else {
			e.kind = GT_EV_KERNEL;
			e.arg = sv.kconf_id;
			if (nf & XN_NCCL)
				e.flags |= GT_EVF_NCCL;
		}
	} else if (pk == PL_GPU) {
		e.kind = GT_EV_GPU_ANNOT;
		if (steps_line) {
			int64_t num = sv.have_group ? sv.group : sv.have_stepnum ? sv.stepnum :
				      strtoll(gt_store_str(m->s, e.name), NULL, 10);
			if (add_step(m, 1, num, e.start_ns, gt_event_end(&e)))
				return -ENOMEM;
		}
	} else if (pk == PL_HOST && sv.have_corr) {
		e.kind = nf & XN_DRIVER ? GT_EV_DRIVER : GT_EV_RUNTIME;
		/* TensorFlow names its launch events after the kernel they launch */
		if (nf & XN_LAUNCH)
			e.flags |= GT_EVF_LAUNCH;
	} else {
		e.kind = GT_EV_CPU_OP;
		if (pk == PL_HOST && (nf & XN_INPUT))
			e.flags |= GT_EVF_DATALOADER;
		if (pk == PL_HOST && sv.have_stepnum && add_step(m, 0, sv.stepnum, e.start_ns, gt_event_end(&e)))
			return -ENOMEM;
	}
	if (gt_evcheck_event(&e)) {        /* the one check of every store entry */
		m->st->skipped++;
		return 0;
	}
	m->st->events++;
	return gt_store_add(m->s, &e);
}

/* the stream's CUDA context (context_id of its events) as metadata
 * xplane.rankR.gpuN.streamS.context_id ("several" when they differ) */
static int stream_ctx(struct xpmap *m, int32_t dev, int64_t id)
{
	char k[96];
	snprintf(k, sizeof(k), "xplane.rank%" PRId32 ".gpu%" PRId32 ".stream%" PRId64 ".context_id",
		 m->rank < 0 ? 0 : m->rank, dev, id);
	return gt_store_meta_set(m->s, k, m->line_ctx == UINT32_MAX ? "several" :
				       gt_store_str(m->s, m->line_ctx)) ? -ENOMEM : 0;
}

/* one packed line (from the space's arena sa, given back here):
 * unpacked into the arena (its events still packed), each event unpacked
 * into a second arena and mapped, the arenas reset */
static int map_line(struct xpmap *m, int pk, int32_t dev, ProtobufCBinaryData *packed,
		    struct xparena *sa, const char *pname, size_t pidx)
{
	XLine *ln = tensorflow__profiler__xline_packed__unpack(&m->arena.pa, packed->len, packed->data);
	/* the events are copies in the line arena now: the packed line goes
	 * back before they are mapped (the peak held it beside them) */
	xplane_arena_release(sa, packed->data, packed->len);
	packed->data = NULL;
	if (!ln)
		return -EINVAL;
	int rc = 0;
	m->st->lines++;
	if (ln->n_events) {
		int stream = pk == PL_GPU && !strncmp(ln->name, "Stream #", 8);
		int steps_line = pk == PL_GPU && !strcmp(ln->name, "Steps");
		uint32_t lane = line_lane(m, pk, dev, stream, ln, pname, pidx);
		m->line_copy = copy_kind(ln->name, NULL);
		/* annotation lines (but Steps) and other planes' lines: stats unused */
		m->bare = (pk == PL_GPU && !stream && !steps_line) || pk == GT_PL_OTHER;
		if (lane == UINT32_MAX || gt_store_reserve(m->s, lane, ln->n_events))
			rc = -ENOMEM;
		m->line_ctx = 0;
		for (size_t i = 0; i < ln->n_events && !rc; i++)
			rc = map_event(m, pk, stream, steps_line, ln, &ln->events[i], lane);
		if (!rc && stream && m->line_ctx)
			rc = stream_ctx(m, dev, ln->id);
	}
	xplane_arena_reset(&m->arena);
	return rc;
}

static int plane_kind(const char *name, int32_t *dev)
{
	if (!strcmp(name, "/host:CPU"))
		return PL_HOST;
	if (!strncmp(name, "/device:GPU:", 12)) {
		char *end;
		long v = strtol(name + 12, &end, 10);
		if (end != name + 12 && v >= 0 && v < 65536) {
			*dev = (int32_t)v;
			return PL_GPU;
		}
	}
	return GT_PL_OTHER;
}

static int step_cmp(const void *a, const void *b)
{
	const struct xpstep *x = a, *y = b;
	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

/* the GPU steps sorted by number, the windows of one number merged into
 * their union (the GPUs of the host ran the step at different times) */
static void merge_gsteps(struct xpmap *m)
{
	if (!m->n_gsteps)
		return;
	qsort(m->gsteps, m->n_gsteps, sizeof(*m->gsteps), step_cmp);
	size_t w = 0;
	for (size_t i = 1; i < m->n_gsteps; i++) {
		struct xpstep *d = &m->gsteps[w], *x = &m->gsteps[i];
		if (x->num == d->num) {
			d->t0 = x->t0 < d->t0 ? x->t0 : d->t0;
			d->t1 = x->t1 > d->t1 ? x->t1 : d->t1;
		} else {
			m->gsteps[++w] = *x;
		}
	}
	m->n_gsteps = w + 1;
}

/* the steps found, as GT_EV_STEP on the rank's "Steps" host lane */
static int emit_steps(struct xpmap *m)
{
	merge_gsteps(m);
	struct xpstep *v = m->n_gsteps ? m->gsteps : m->hsteps;
	size_t n = m->n_gsteps ? m->n_gsteps : m->n_hsteps;
	if (!n)
		return 0;
	struct gt_lane_key k = { .type = GT_LANE_HOST, .rank = m->rank, .device = -1, .pid = -1, .id = 0 };
	uint32_t lane = gt_store_lane(m->s, &k);
	if (lane == UINT32_MAX)
		return -ENOMEM;
	/* short: the viewer's lane labels are narrow */
	gt_store_lane_set_name(m->s, lane, m->n_gsteps ? "Steps" : "Steps (step_num)");
	for (size_t i = 0; i < n; i++) {
		char nm[48];
		snprintf(nm, sizeof(nm), "step %" PRId64, v[i].num);
		struct gt_event e = { .start_ns = v[i].t0, .dur_ns = v[i].t1 - v[i].t0, .lane = lane,
				      .name = gt_store_intern_cstr(m->s, nm), .kind = GT_EV_STEP,
				      .arg = v[i].num > 0 ? (uint64_t)v[i].num : 0 };
		if (!e.name || gt_store_add(m->s, &e))
			return -ENOMEM;
		m->st->events++;
	}
	return 0;
}

int xplane_map_space(void *buf, size_t len, int mapped, const char *name, int32_t rank,
		     int32_t world, struct gt_store *s, struct xplane_stats *st,
		     char *err, size_t errlen)
{
	struct xplane_stats dummy;
	struct xpmap m = { .s = s, .rank = rank, .st = st ? st : &dummy };
	memset(m.st, 0, sizeof(*m.st));
	int rc = 0;
	xplane_arena_init(&m.arena);
	xplane_arena_init(&m.earena);
	/* another process may truncate a mapped file while it is read (mapguard.h) */
	int guard = mapped ? mapguard_begin(buf, len) : -1;
	/* the space's many small objects (metadata) in one more arena: no
	 * malloc/free per object; its large packed lines freed one by one
	 * once mapped */
	struct xparena sa;
	xplane_arena_init(&sa);
	XSpaceP *sp = tensorflow__profiler__xspace_packed__unpack(&sa.pa, len, buf);
	int shrank = mapguard_end(guard);
	/* the lines are copies now: lower the peak */
	if (mapped)
		munmap(buf, len);
	else
		free(buf);
	if (shrank) {
		snprintf(err, errlen, "%s: the file shrank while it was read (truncated or rewritten by "
			 "another process); open it again when it is complete", name);
		rc = -EIO;
		goto out;
	}
	if (!sp) {
		snprintf(err, errlen, "%s: not an XPlane profile (damaged, truncated or not a protobuf XSpace)",
			 name);
		rc = -EINVAL;
		goto out;
	}
	if (!sp->n_planes) {
		snprintf(err, errlen, "%s: no planes in this XSpace (not a TensorFlow/JAX profile?)", name);
		rc = -EINVAL;
		goto out;
	}
	for (size_t p = 0; p < sp->n_planes && !rc; p++) {
		XPlaneP *pl = sp->planes[p];
		m.st->planes++;
		int32_t dev = -1;
		int pk = plane_kind(pl->name ? pl->name : "", &dev);
		xplane_memo_clear(&m);
		if ((rc = xplane_meta_plane(&m, pl, pk == PL_GPU ? dev : -1)))
			goto plane_oom;
		for (size_t l = 0; l < pl->n_lines && !rc; l++) {
			rc = map_line(&m, pk, dev, &pl->lines[l], &sa, pl->name, p);
			if (rc == -EINVAL)
				snprintf(err, errlen, "%s: plane %s: line %zu is damaged (not a protobuf XLine "
					 "of XEvents)", name, pl->name, l);
		}
plane_oom:
		xplane_meta_done(&m);
	}
	if (!rc)
		rc = emit_steps(&m);
	if (!rc) {
		const char *host = sp->n_hostnames ? sp->hostnames[0] : NULL;
		struct gt_rank r = { .rank = rank, .pid = -1, .source = gt_store_intern_cstr(s, name),
				     .host = host ? gt_store_intern_cstr(s, host) : 0, .world_size = world };
		rc = gt_store_rank(s, &r);
	}
	if (rc == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", name);
out:
	xplane_arena_done(&sa);
	xplane_arena_done(&m.arena);
	xplane_arena_done(&m.earena);
	xplane_memo_free(&m);
	free(m.gsteps);
	free(m.hsteps);
	return rc;
}
