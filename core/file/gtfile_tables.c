/*
 * gtfile_tables.c - table chunk payloads, both directions.
 *
 * Writer side: each sync writes what the store gained since the previous one
 * (strings, lanes, kconf, nccl by id; lanes whose name or sort index changed
 * again as updates; devices, ranks, drops, metadata as a whole table when
 * they differ from the last written payload).  Reader side: the entries are
 * applied to an empty store in order, and every id must come out as the
 * writer's id (a duplicate would shift them: that is an error).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "gtfile_tables.h"

int gtfile_tab_init(struct gtfile_tabstate *t)
{
	memset(t, 0, sizeof(*t));
	t->n_str = 1;   /* id 0, "", is in every store */
	return 0;
}

void gtfile_tab_done(struct gtfile_tabstate *t)
{
	free(t->lane_name);
	free(t->lane_sort);
	gtfile_buf_free(&t->devs);
	gtfile_buf_free(&t->ranks);
	gtfile_buf_free(&t->drops);
	gtfile_buf_free(&t->meta);
}

static int put_strings(struct gt_file_writer *w, struct gtfile_tabstate *t,
		       const struct gt_store *s)
{
	struct gtfile_buf *b = gtfile_writer_raw(w);
	size_t n = gt_store_str_count(s);
	while (t->n_str < n) {
		b->n = 0;
		unsigned char *h = gtfile_buf_add(b, NULL, 8);
		if (!h)
			return -ENOMEM;
		size_t first = t->n_str, k = 0;
		while (t->n_str < n && b->n < GTFILE_TABLE_SPLIT_BYTES) {
			const char *str = gt_store_str(s, (uint32_t)t->n_str);
			size_t len = strlen(str);
			if (len > GTFILE_TABLE_SPLIT_BYTES)
				return -E2BIG;
			unsigned char *p = gtfile_buf_add(b, NULL, 4 + len);
			if (!p)
				return -ENOMEM;
			gtfile_put32(p, (uint32_t)len);
			memcpy(p + 4, str, len);
			t->n_str++;
			k++;
		}
		gtfile_put32(b->p, (uint32_t)first);
		gtfile_put32(b->p + 4, (uint32_t)k);
		int rc = gtfile_writer_chunk(w, GTFILE_CH_STRINGS, 0);
		if (rc)
			return rc;
	}
	return 0;
}

static void put_lane(unsigned char *p, const struct gt_lane *l)
{
	gtfile_put32(p, l->id);
	p[4] = l->key.type;
	gtfile_put32(p + 8, (uint32_t)l->key.rank);
	gtfile_put32(p + 12, (uint32_t)l->key.device);
	gtfile_put64(p + 16, (uint64_t)l->key.pid);
	gtfile_put64(p + 24, (uint64_t)l->key.id);
	gtfile_put32(p + 32, l->name);
	gtfile_put32(p + 36, l->sort_index);
}

static int lanes_out(struct gt_file_writer *w, struct gtfile_buf *b, size_t *k)
{
	gtfile_put32(b->p, (uint32_t)*k);
	gtfile_put32(b->p + 4, GTFILE_LANE_BYTES);
	*k = 0;
	return gtfile_writer_chunk(w, GTFILE_CH_LANES, 0);
}

static int put_lanes(struct gt_file_writer *w, struct gtfile_tabstate *t,
		     const struct gt_store *s)
{
	size_t n = gt_store_lane_count(s);
	if (n > t->cap_lanes) {
		uint32_t *a = realloc(t->lane_name, n * sizeof(*a));
		if (a)
			t->lane_name = a;
		uint32_t *b = realloc(t->lane_sort, n * sizeof(*b));
		if (b)
			t->lane_sort = b;
		if (!a || !b)
			return -ENOMEM;
		t->cap_lanes = n;
	}
	struct gtfile_buf *b = gtfile_writer_raw(w);
	size_t k = 0;
	b->n = 0;
	for (size_t i = 0; i < n; i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (i < t->n_lanes && t->lane_name[i] == l->name && t->lane_sort[i] == l->sort_index)
			continue;
		if (!b->n && !gtfile_buf_add(b, NULL, 8))
			return -ENOMEM;
		unsigned char *p = gtfile_buf_add(b, NULL, GTFILE_LANE_BYTES);
		if (!p)
			return -ENOMEM;
		put_lane(p, l);
		t->lane_name[i] = l->name;
		t->lane_sort[i] = l->sort_index;
		k++;
		if (b->n >= GTFILE_TABLE_SPLIT_BYTES) {
			int rc = lanes_out(w, b, &k);
			if (rc)
				return rc;
		}
	}
	t->n_lanes = n;
	return k ? lanes_out(w, b, &k) : 0;
}

static void put_kconf(unsigned char *p, const struct gt_kconf *k)
{
	uint32_t v[11] = { k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1],
			   k->block[2], k->regs_per_thread, k->smem_static_bytes,
			   k->smem_dynamic_bytes, 0 };
	memcpy(&v[9], &k->occupancy_pct, 4);
	for (int i = 0; i < 10; i++)
		gtfile_put32(p + 4 * i, v[i]);
	gtfile_put32(p + 40, 0);
}

static void put_nccl(unsigned char *p, const struct gt_nccl *c)
{
	gtfile_put32(p, c->collective);
	gtfile_put32(p + 4, c->dtype);
	gtfile_put64(p + 8, c->in_nelems);
	gtfile_put64(p + 16, c->out_nelems);
	gtfile_put32(p + 24, c->group_size);
	gtfile_put32(p + 28, c->dtype_bytes);
	gtfile_put32(p + 32, c->pg_name);
	gtfile_put32(p + 36, c->pad);
}

/* kconf (nccl = 0) or nccl (nccl = 1) records past *done */
static int put_records(struct gt_file_writer *w, size_t *done, const struct gt_store *s, int nccl)
{
	size_t n = nccl ? gt_store_nccl_count(s) : gt_store_kconf_count(s);
	size_t esz = nccl ? GTFILE_NCCL_BYTES : GTFILE_KCONF_BYTES;
	struct gtfile_buf *b = gtfile_writer_raw(w);
	while (*done < n) {
		size_t k = n - *done;
		if (k > GTFILE_TABLE_SPLIT_BYTES / esz)
			k = GTFILE_TABLE_SPLIT_BYTES / esz;
		b->n = 0;
		unsigned char *p = gtfile_buf_add(b, NULL, 16 + k * esz);
		if (!p)
			return -ENOMEM;
		gtfile_put32(p, (uint32_t)(*done + 1));
		gtfile_put32(p + 8, (uint32_t)k);
		gtfile_put32(p + 12, (uint32_t)esz);
		p += 16;
		for (size_t i = 0; i < k; i++, p += esz) {
			uint32_t id = (uint32_t)(*done + 1 + i);
			if (nccl)
				put_nccl(p, gt_store_nccl_at(s, id));
			else
				put_kconf(p, gt_store_kconf_at(s, id));
		}
		int rc = gtfile_writer_chunk(w, nccl ? GTFILE_CH_NCCL : GTFILE_CH_KCONF, 0);
		if (rc)
			return rc;
		*done += k;
	}
	return 0;
}

/* write b's payload as a chunk unless it equals the last one in last */
static int put_if_changed(struct gt_file_writer *w, struct gtfile_buf *last, uint32_t type)
{
	struct gtfile_buf *b = gtfile_writer_raw(w);
	if (last->p && last->n == b->n && !memcmp(last->p, b->p, b->n)) {
		b->n = 0;
		return 0;
	}
	last->n = 0;
	if (!gtfile_buf_add(last, b->p, b->n))
		return -ENOMEM;
	return gtfile_writer_chunk(w, type, 0);
}

static int put_devs_ranks(struct gt_file_writer *w, struct gtfile_tabstate *t,
			  const struct gt_store *s)
{
	struct gtfile_buf *b = gtfile_writer_raw(w);
	size_t n = gt_store_device_count(s);
	b->n = 0;
	unsigned char *p = gtfile_buf_add(b, NULL, 8 + n * GTFILE_DEVICE_BYTES);
	if (!p)
		return -ENOMEM;
	gtfile_put32(p, (uint32_t)n);
	gtfile_put32(p + 4, GTFILE_DEVICE_BYTES);
	p += 8;
	for (size_t i = 0; i < n; i++, p += GTFILE_DEVICE_BYTES) {
		const struct gt_device *d = gt_store_device_at(s, i);
		gtfile_put32(p, (uint32_t)d->rank);
		gtfile_put32(p + 4, (uint32_t)d->id);
		gtfile_put32(p + 8, d->name);
		gtfile_put32(p + 12, d->sm_count);
		gtfile_put64(p + 16, d->mem_bytes);
		gtfile_put32(p + 24, d->cc_major);
		gtfile_put32(p + 28, d->cc_minor);
	}
	int rc = n ? put_if_changed(w, &t->devs, GTFILE_CH_DEVICES) : 0;
	if (rc)
		return rc;
	n = gt_store_rank_count(s);
	b->n = 0;
	p = gtfile_buf_add(b, NULL, 8 + n * GTFILE_RANK_BYTES_LOCAL);
	if (!p)
		return -ENOMEM;
	gtfile_put32(p, (uint32_t)n);
	gtfile_put32(p + 4, GTFILE_RANK_BYTES_LOCAL);
	p += 8;
	for (size_t i = 0; i < n; i++, p += GTFILE_RANK_BYTES_LOCAL) {
		const struct gt_rank *r = gt_store_rank_at(s, i);
		gtfile_put32(p, (uint32_t)r->rank);
		gtfile_put32(p + 4, (uint32_t)r->world_size);
		gtfile_put64(p + 8, (uint64_t)r->pid);
		gtfile_put32(p + 16, r->host);
		gtfile_put32(p + 20, r->source);
		gtfile_put64(p + 24, (uint64_t)r->clock_offset_ns);
		gtfile_put32(p + 32, (uint32_t)r->local_rank1);
	}
	return n ? put_if_changed(w, &t->ranks, GTFILE_CH_RANKS) : 0;
}

int gtfile_tab_sync(struct gt_file_writer *w, struct gtfile_tabstate *t, const struct gt_store *s)
{
	int rc = put_strings(w, t, s);
	if (!rc)
		rc = put_lanes(w, t, s);
	if (!rc)
		rc = put_records(w, &t->n_kconf, s, 0);
	if (!rc)
		rc = put_records(w, &t->n_nccl, s, 1);
	if (!rc)
		rc = put_devs_ranks(w, t, s);
	return rc;
}

int gtfile_tab_sync_tail(struct gt_file_writer *w, struct gtfile_tabstate *t,
			 const struct gt_store *s)
{
	struct gtfile_buf *b = gtfile_writer_raw(w);
	const struct gt_drops *d = gt_store_drops((struct gt_store *)s);
	uint64_t v[7] = { d->cupti_dropped, d->buffers_declined, d->zero_timestamps,
			  d->ring_overflow, d->import_skipped, d->read_errors, d->client_buffers };
	b->n = 0;
	unsigned char *p = gtfile_buf_add(b, NULL, 8 + GTFILE_DROPS_BYTES);
	if (!p)
		return -ENOMEM;
	gtfile_put32(p, GTFILE_DROPS_BYTES);
	for (int i = 0; i < 7; i++)
		gtfile_put64(p + 8 + 8 * i, v[i]);
	int rc = put_if_changed(w, &t->drops, GTFILE_CH_DROPS);
	if (rc)
		return rc;
	/* metadata: all pairs, when any changed, in chunks of about
	 * GTFILE_TABLE_SPLIT_BYTES */
	size_t n = gt_store_meta_count(s);
	struct gtfile_buf all = { 0 };
	for (size_t i = 0; i < n; i++) {
		const char *k, *val;
		gt_store_meta_at(s, i, &k, &val);
		size_t kl = strlen(k), vl = strlen(val);
		if (kl + vl > GTFILE_TABLE_SPLIT_BYTES) {
			gtfile_buf_free(&all);
			return -E2BIG;
		}
		p = gtfile_buf_add(&all, NULL, 8 + kl + vl);
		if (!p) {
			gtfile_buf_free(&all);
			return -ENOMEM;
		}
		gtfile_put32(p, (uint32_t)kl);
		memcpy(p + 4, k, kl);
		gtfile_put32(p + 4 + kl, (uint32_t)vl);
		memcpy(p + 8 + kl, val, vl);
	}
	if (!n || (t->meta.n == all.n && !memcmp(t->meta.p, all.p, all.n))) {
		gtfile_buf_free(&all);
		return 0;
	}
	gtfile_buf_free(&t->meta);
	t->meta = all;
	for (size_t pos = 0; pos < all.n;) {
		size_t end = pos, cnt = 0;
		while (end < all.n && end - pos < GTFILE_TABLE_SPLIT_BYTES) {
			size_t kl = gtfile_get32(all.p + end);
			end += 8 + kl + gtfile_get32(all.p + end + 4 + kl);
			cnt++;
		}
		b->n = 0;
		p = gtfile_buf_add(b, NULL, 8);
		if (!p || !gtfile_buf_add(b, all.p + pos, end - pos))
			return -ENOMEM;
		gtfile_put32(b->p, (uint32_t)cnt);
		rc = gtfile_writer_chunk(w, GTFILE_CH_META, 0);
		if (rc)
			return rc;
		pos = end;
	}
	return 0;
}
