/*
 * xplane_meta.c - a plane's metadata for the XPlane mapper: event metadata
 * (id -> interned name: display_name, else name) and stat metadata (id ->
 * role) as arrays sorted by id; an event's stats read into a struct
 * xpstats (correlation_id, kernel_details, memcpy/memset_details,
 * group_id, step_num); GPU plane stats into the store's device table.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xplane_priv.h"

/* ---- metadata ---- */

static int cmp_ev(const void *a, const void *b)
{
	int64_t x = ((const struct xpev *)a)->id, y = ((const struct xpev *)b)->id;
	return (x > y) - (x < y);
}

static int cmp_st(const void *a, const void *b)
{
	int64_t x = ((const struct xpst *)a)->id, y = ((const struct xpst *)b)->id;
	return (x > y) - (x < y);
}

static uint8_t stat_role(const char *n)
{
	static const struct { const char *n; uint8_t r; } t[] = {
		{ "correlation_id", XS_CORR }, { "kernel_details", XS_KDET },
		{ "memcpy_details", XS_MCPY }, { "memset_details", XS_MSET },
		{ "group_id", XS_GROUP }, { "step_num", XS_STEPNUM }, { "step_id", XS_STEPNUM },
		{ "clock_rate", XS_CLOCK }, { "core_count", XS_CORES },
		{ "memory_bandwidth", XS_MBW }, { "memory_size", XS_MSIZE },
		{ "compute_cap_major", XS_CCMAJ }, { "compute_cap_minor", XS_CCMIN },
		{ "context_id", XS_CTX },
	};
	/* the first letter first: a GPU plane has a stat metadata entry per
	 * kernel_details text, 14 strcmp each were 1 % of the import */
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (n[0] == t[i].n[0] && !strcmp(n, t[i].n))
			return t[i].r;
	return XS_OTHER;
}

static const struct xpst *stat_meta(const struct xpmap *m, int64_t id)
{
	if (m->stm_dense) {
		if (id < 0 || (uint64_t)id >= m->n_stm_dense || !m->stm_dense[id])
			return NULL;
		return &m->stm[m->stm_dense[id] - 1];
	}
	size_t lo = 0, hi = m->n_stm;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->stm[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->n_stm && m->stm[lo].id == id ? &m->stm[lo] : NULL;
}

const struct xpev *xplane_meta_event(struct xpmap *m, int64_t id)
{
	if (m->ev_dense) {
		if (id < 0 || (uint64_t)id >= m->n_dense || !m->ev_dense[id])
			return NULL;
		return &m->ev[m->ev_dense[id] - 1];
	}
	size_t lo = 0, hi = m->n_ev;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->ev[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->n_ev && m->ev[lo].id == id ? &m->ev[lo] : NULL;
}

/* a stat's value as an integer (double truncated), 0 if it has none */
static int64_t stat_int(const Tensorflow__Profiler__XStat *x)
{
	switch (x->value_case) {
	case TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE:
		return x->int64_value;
	case TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE:
		return x->uint64_value > INT64_MAX ? INT64_MAX : (int64_t)x->uint64_value;
	case TENSORFLOW__PROFILER__XSTAT__VALUE_DOUBLE_VALUE:
		return x->double_value > -9e18 && x->double_value < 9e18 ? (int64_t)x->double_value : 0;
	case TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE:
		return x->str_value ? strtoll(x->str_value, NULL, 10) : 0;
	default:
		return 0;
	}
}

/* a stat's value as text: str_value, or the name a ref_value points at */
static const char *stat_str(const struct xpmap *m, const Tensorflow__Profiler__XStat *x)
{
	if (x->value_case == TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE)
		return x->str_value ? x->str_value : "";
	if (x->value_case == TENSORFLOW__PROFILER__XSTAT__VALUE_REF_VALUE) {
		const struct xpst *r = stat_meta(m, x->ref_value > INT64_MAX ? -1 : (int64_t)x->ref_value);
		return r && r->name ? r->name : "";
	}
	return "";
}

/* XN_* flags of an event name */
static uint16_t name_flags(const char *n)
{
	uint16_t f = 0;
	/* one scan for "nccl" instead of two strstr per name */
	for (const char *q = n; (q = strstr(q, "nccl")) != NULL; q += 4)
		if (q == n || !strncmp(q + 4, "Kernel", 6) || !strncmp(q + 4, "DevKernel", 9)) {
			f |= XN_NCCL;
			break;
		}
	if (n[0] != 'c' || n[1] != 'u') {
		/* not an API name: TensorFlow names launch events after their kernel */
		f |= XN_LAUNCH;
	} else if (strncmp(n, "cuda", 4)) {
		f |= XN_DRIVER | XN_LAUNCH;   /* cu* but not cuda*: a driver call */
	} else if (!strncmp(n, "cudaLaunch", 10) || !strncmp(n, "cudaMemcpy", 10) ||
		   !strncmp(n, "cudaMemset", 10) || !strncmp(n, "cudaGraphLaunch", 15)) {
		f |= XN_LAUNCH;
	}
	if (n[0] == 'I' && !strncmp(n, "Iterator::", 10))
		f |= XN_INPUT;
	return f;
}

int xplane_meta_plane(struct xpmap *m, const Tensorflow__Profiler__XPlanePacked *pl, int32_t dev)
{
	m->ev = calloc(pl->n_event_metadata + 1, sizeof(*m->ev));
	m->stm = calloc(pl->n_stat_metadata + 1, sizeof(*m->stm));
	if (!m->ev || !m->stm)
		return -ENOMEM;
	for (size_t i = 0; i < pl->n_event_metadata; i++) {
		const Tensorflow__Profiler__XEventMetadata *v = pl->event_metadata[i]->value;
		const char *n = !v ? "" : v->display_name && *v->display_name ? v->display_name :
			        v->name ? v->name : "";
		struct xpev *e = &m->ev[m->n_ev++];
		e->id = pl->event_metadata[i]->key;
		if (!(e->name = gt_store_intern_cstr(m->s, n)) && *n)
			return -ENOMEM;
		e->flags = name_flags(n);
	}
	for (size_t i = 0; i < pl->n_stat_metadata; i++) {
		const Tensorflow__Profiler__XStatMetadata *v = pl->stat_metadata[i]->value;
		const char *n = v && v->name ? v->name : "";
		m->stm[m->n_stm++] = (struct xpst){ pl->stat_metadata[i]->key, stat_role(n), n, 0, 0, 0 };
	}
	/* written in id order by some profilers: then there is nothing to sort */
	size_t k = 1;
	while (k < m->n_ev && m->ev[k - 1].id <= m->ev[k].id)
		k++;
	if (k < m->n_ev)
		qsort(m->ev, m->n_ev, sizeof(*m->ev), cmp_ev);
	for (k = 1; k < m->n_stm && m->stm[k - 1].id <= m->stm[k].id;)
		k++;
	if (k < m->n_stm)
		qsort(m->stm, m->n_stm, sizeof(*m->stm), cmp_st);
	/* ids are small and dense in what TensorFlow writes: index them directly */
	if (m->n_ev && m->ev[0].id >= 0 && m->ev[m->n_ev - 1].id < 4 * (int64_t)m->n_ev + 1024) {
		m->n_dense = (size_t)m->ev[m->n_ev - 1].id + 1;
		if (!(m->ev_dense = calloc(m->n_dense, sizeof(*m->ev_dense))))
			return -ENOMEM;
		for (size_t i = 0; i < m->n_ev; i++)
			m->ev_dense[m->ev[i].id] = (uint32_t)i + 1;
	}
	if (m->n_stm && m->stm[0].id >= 0 && m->stm[m->n_stm - 1].id < 4 * (int64_t)m->n_stm + 1024) {
		m->n_stm_dense = (size_t)m->stm[m->n_stm - 1].id + 1;
		if (!(m->stm_dense = calloc(m->n_stm_dense, sizeof(*m->stm_dense))))
			return -ENOMEM;
		/* backwards: of equal ids the first wins, as in the binary search */
		for (size_t i = m->n_stm; i-- > 0;)
			m->stm_dense[m->stm[i].id] = (uint32_t)i + 1;
	}
	if (dev < 0)
		return 0;
	/* GPU plane stats: the device's properties */
	struct gt_device d = { .rank = m->rank, .id = dev };
	int64_t clock_khz = 0, bw = 0;
	for (size_t i = 0; i < pl->n_stats; i++) {
		const struct xpst *sm = stat_meta(m, pl->stats[i]->metadata_id);
		int64_t v = stat_int(pl->stats[i]);
		if (!sm || v < 0)
			continue;
		switch (sm->role) {
		case XS_CORES: d.sm_count = v > UINT32_MAX ? 0 : (uint32_t)v; break;
		case XS_MSIZE: d.mem_bytes = (uint64_t)v; break;
		case XS_CCMAJ: d.cc_major = v > 1000 ? 0 : (uint32_t)v; break;
		case XS_CCMIN: d.cc_minor = v > 1000 ? 0 : (uint32_t)v; break;
		case XS_CLOCK: clock_khz = v; break;
		case XS_MBW: bw = v; break;
		}
	}
	if (!pl->n_stats)
		return 0;
	char key[96], val[32];
	int rc = gt_store_device(m->s, &d);
	if (!rc && clock_khz) {
		snprintf(key, sizeof(key), "xplane.rank%" PRId32 ".gpu%" PRId32 ".clock_rate_khz", m->rank, dev);
		snprintf(val, sizeof(val), "%" PRId64, clock_khz);
		rc = gt_store_meta_set(m->s, key, val);
	}
	if (!rc && bw) {
		snprintf(key, sizeof(key), "xplane.rank%" PRId32 ".gpu%" PRId32 ".memory_bandwidth_bytes_per_s",
			 m->rank, dev);
		snprintf(val, sizeof(val), "%" PRId64, bw);
		rc = gt_store_meta_set(m->s, key, val);
	}
	return rc ? -ENOMEM : 0;
}

void xplane_meta_done(struct xpmap *m)
{
	free(m->ev);
	free(m->stm);
	free(m->ev_dense);
	m->ev_dense = NULL;
	m->n_dense = 0;
	free(m->stm_dense);
	m->stm_dense = NULL;
	m->n_stm_dense = 0;
	m->ev = NULL;
	m->stm = NULL;
	m->n_ev = m->n_stm = 0;
}

/* up to n comma-separated values of a details text ("regs:38 shm:0
 * grid:160,1,1") after "key:" (q is just past the colon) into v; the
 * count found */
static int detail_vals(const char *q, uint32_t *v, int n)
{
	int k = 0;
	while (k < n) {
		char *end;
		unsigned long long x = strtoull(q, &end, 10);
		if (end == q)
			break;
		v[k++] = x > UINT32_MAX ? UINT32_MAX : (uint32_t)x;
		if (*end != ',')
			break;
		q = end + 1;
	}
	return k;
}

static uint64_t detail_u64(const char *t, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = t; (p = strstr(p, key)) != NULL; p += kl)
		if ((p == t || p[-1] == ' ') && p[kl] == ':')
			return strtoull(p + kl + 1, NULL, 10);
	return 0;
}

/* kernel_details' keys, in the order of the positions kernel_details finds */
enum { KD_REGS, KD_SSH, KD_SHM, KD_DSH, KD_GRID, KD_BLOCK, KD_OCC, KD_N };

/* where each key's value starts (just past "key:"), NULL if absent: the
 * first "key:" at the text's start or after a space, in one pass over the text instead of a strstr per key (each kernel
 * of a TensorFlow profile has its own kernel_details text) */
static void kd_find(const char *t, const char *at[KD_N])
{
	static const char *const key[KD_N] = { "regs", "static_shared", "shm", "dynamic_shared",
					       "grid", "block", "occ_pct" };
	static const uint8_t len[KD_N] = { 4, 13, 3, 14, 4, 5, 7 };
	for (int i = 0; i < KD_N; i++)
		at[i] = NULL;
	for (const char *p = t; *p; p++) {
		if (p != t && p[-1] != ' ')
			continue;
		for (int i = 0; i < KD_N; i++)
			if (!at[i] && p[0] == key[i][0] && !strncmp(p, key[i], len[i]) && p[len[i]] == ':')
				at[i] = p + len[i] + 1;
	}
}

static void kernel_details(const char *t, struct gt_kconf *k)
{
	const char *at[KD_N];
	kd_find(t, at);
	memset(k, 0, sizeof(*k));
	k->occupancy_pct = -1.0f;
	if (at[KD_REGS])
		detail_vals(at[KD_REGS], &k->regs_per_thread, 1);
	if (!(at[KD_SSH] && detail_vals(at[KD_SSH], &k->smem_static_bytes, 1)) && at[KD_SHM])
		detail_vals(at[KD_SHM], &k->smem_static_bytes, 1);
	if (at[KD_DSH])
		detail_vals(at[KD_DSH], &k->smem_dynamic_bytes, 1);
	for (int i = 0; i < 3; i++)
		k->grid[i] = k->block[i] = 1;
	if (at[KD_GRID])
		detail_vals(at[KD_GRID], k->grid, 3);
	if (at[KD_BLOCK])
		detail_vals(at[KD_BLOCK], k->block, 3);
	uint32_t occ;
	if (at[KD_OCC] && detail_vals(at[KD_OCC], &occ, 1) && occ <= 100)
		k->occupancy_pct = (float)occ;
}

int xplane_meta_stat1(struct xpmap *m, const Tensorflow__Profiler__XStat *x, struct xpstat1 *r)
{
	memset(r, 0, sizeof(*r));
	const struct xpst *sm = stat_meta(m, x->metadata_id);
	r->stm = sm ? (uint32_t)(sm - m->stm) : UINT32_MAX;
	r->role = sm ? sm->role : XS_OTHER;
	switch (r->role) {
	case XS_CORR:
	case XS_GROUP:
	case XS_STEPNUM:
		r->ival = stat_int(x);
		break;
	case XS_KDET: {
		/* a ref_value names a stat metadata entry: parse it once */
		struct xpst *ref = x->value_case == TENSORFLOW__PROFILER__XSTAT__VALUE_REF_VALUE ?
				   (struct xpst *)stat_meta(m, x->ref_value > INT64_MAX ? -1 :
							    (int64_t)x->ref_value) : NULL;
		if (ref && ref->kconf) {
			r->kconf_id = ref->kconf;
			break;
		}
		struct gt_kconf k;
		kernel_details(stat_str(m, x), &k);
		if (!(r->kconf_id = gt_store_kconf(m->s, &k)))
			return -ENOMEM;
		if (ref)
			ref->kconf = r->kconf_id;
		break;
	}
	case XS_CTX: {
		/* TensorFlow writes "$$5"; kept as written (a number as decimal) */
		char num[24];
		const char *t = x->value_case == TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE ||
				x->value_case == TENSORFLOW__PROFILER__XSTAT__VALUE_REF_VALUE ? stat_str(m, x) : num;
		if (t == num)
			snprintf(num, sizeof(num), "%lld", (long long)stat_int(x));
		if (!(r->sval = gt_store_intern_cstr(m->s, t)))
			return -ENOMEM;
		break;
	}
	case XS_MCPY:
	case XS_MSET: {
		const char *t = stat_str(m, x);
		r->bytes = detail_u64(t, "size");
		if (strstr(t, ":pinned"))
			r->copy_flags |= GT_EVF_PINNED;
		if (strstr(t, ":pageable"))
			r->copy_flags |= GT_EVF_PAGEABLE;
		break;
	}
	}
	return 0;
}
