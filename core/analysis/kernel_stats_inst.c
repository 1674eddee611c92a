/*
 * kernel_stats_inst.c - the rest of the kernel_stats API: the instance list of one name
 * (for the viewer's kernel page), Tensor Core detection by kernel name and
 * the GPU list text of a row.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/kernel_stats.h"

struct inst_sort {
	const struct gt_store *s;
	enum gt_kernel_stats_order order;
};

static int inst_cmp(const void *pa, const void *pb, void *arg)
{
	const struct inst_sort *is = arg;
	const struct gt_event *a = gt_store_ev(is->s, *(const struct gt_ref *)pa);
	const struct gt_event *b = gt_store_ev(is->s, *(const struct gt_ref *)pb);
	if (is->order == GT_KERNEL_STATS_ORDER_DUR_DESC && a->dur_ns != b->dur_ns)
		return a->dur_ns > b->dur_ns ? -1 : 1;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	const struct gt_ref *x = pa, *y = pb;
	if (x->lane != y->lane)
		return x->lane < y->lane ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

int gt_kernel_stats_instances(const struct gt_store *s, const struct gt_scope *sc,
		     uint32_t name, uint32_t kinds_mask, enum gt_kernel_stats_order order,
		     struct gt_ref **out, size_t *n)
{
	struct gt_scope all;
	if (!sc) {
		gt_scope_all(&all);
		sc = &all;
	}
	if (!kinds_mask)
		kinds_mask = 1u << GT_EV_KERNEL;
	*out = NULL;
	*n = 0;
	struct gt_ref *v = NULL;
	size_t nv = 0, cap = 0;
	size_t nl = gt_store_lane_count(s);
	for (uint32_t li = 0; li < nl; li++) {
		const struct gt_lane *l = gt_store_lane_at(s, li);
		if (!(l->kinds_mask & kinds_mask) || !gt_kernel_stats_lane_in_scope(l, sc))
			continue;
		size_t first, last;
		gt_kernel_stats_lane_starts(l, sc->t0_ns, sc->t1_ns, &first, &last);
		gt_store_read_tick(s, l, first, last);
		for (size_t i = first; i < last; i++) {
			const struct gt_event *e = &l->ev[i];
			if (e->name != name || !(kinds_mask & (1u << e->kind)))
				continue;
			if (nv == cap) {
				cap = cap ? cap * 2 : 64;
				struct gt_ref *nr = realloc(v, cap * sizeof(*nr));
				if (!nr) {
					free(v);
					return -ENOMEM;
				}
				v = nr;
			}
			v[nv].lane = li;
			v[nv].idx = (uint32_t)i;
			nv++;
		}
	}
	struct inst_sort is = { s, order };
	if (nv > 1)
		qsort_r(v, nv, sizeof(*v), inst_cmp, &is);
	*out = v;
	*n = nv;
	return 0;
}

/* 1 when needle occurs in hay with no digit right before or after it */
static int has_digit_token(const char *hay, const char *needle)
{
	size_t nl = strlen(needle);
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) {
		int before = p > hay && isdigit((unsigned char)p[-1]);
		int after = isdigit((unsigned char)p[nl]);
		if (!before && !after)
			return 1;
	}
	return 0;
}

int gt_kernel_stats_is_tensor_core(const char *name)
{
	static const char *const words[] = {
		"hmma", "gmma", "xmma", "imma", "wmma", "tensorop", "tensorcore",
		"tensor_core",
	};
	static const char *const shapes[] = { "16816", "16832", "1688", "884", "8816" };
	char low[512];
	size_t n = 0;
	for (; name[n] && n + 1 < sizeof(low); n++)
		low[n] = (char)tolower((unsigned char)name[n]);
	low[n] = 0;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(low, words[i]))
			return 1;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		if (has_digit_token(low, shapes[i]))
			return 1;
	return 0;
}

/* append text to buf at *o, never past len */
static void put(char *buf, size_t len, size_t *o, const char *text)
{
	size_t n = strlen(text);
	if (*o + n >= len)
		n = *o + 1 < len ? len - 1 - *o : 0;
	memcpy(buf + *o, text, n);
	*o += n;
	buf[*o] = 0;
}

void gt_kernel_stats_gpus_str(const struct gt_kernel_stats_result *r, uint64_t mask, char *buf, size_t len)
{
	size_t o = 0, ord[GT_KERNEL_STATS_MAX_GPUS];
	if (!len)
		return;
	buf[0] = 0;
	int multi_rank = 0;
	for (size_t i = 0; i < r->ngpus; i++) {
		if (r->gpus[i].rank != r->gpus[0].rank)
			multi_rank = 1;
		/* insertion sort of the GPU indices by (rank, device) */
		size_t j = i;
		for (; j > 0; j--) {
			const struct gt_kernel_stats_gpu *p = &r->gpus[ord[j - 1]], *q = &r->gpus[i];
			if (p->rank < q->rank || (p->rank == q->rank && p->device <= q->device))
				break;
			ord[j] = ord[j - 1];
		}
		ord[j] = i;
	}
	for (size_t k = 0; k < r->ngpus; k++) {
		size_t i = ord[k];
		if (!(mask & (1ull << i)))
			continue;
		char t[32];
		if (multi_rank)
			snprintf(t, sizeof(t), "%s%d:%d", o ? "," : "", (int)r->gpus[i].rank,
				 (int)r->gpus[i].device);
		else
			snprintf(t, sizeof(t), "%s%d", o ? "," : "", (int)r->gpus[i].device);
		/* keep room for ",..." rather than cut a number or end on a comma */
		if (o + strlen(t) + 4 >= len) {
			put(buf, len, &o, o ? ",..." : "...");
			return;
		}
		put(buf, len, &o, t);
	}
	if (r->gpus_overflow)
		put(buf, len, &o, o ? ",..." : "...");
}
