/*
 * gtfile_tabread.c - the reader's side of the table chunks: applies strings,
 * lanes, kconf, nccl, devices, ranks, drops and metadata to the store being
 * read.  Every entry is checked: counts against the payload length, string
 * ids against the strings read so far, and the ids the store hands out
 * against the writer's ids.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "gtfile_tables.h"

#define BAD(...) do { snprintf(why, whylen, __VA_ARGS__); return -EINVAL; } while (0)

static int read_strings(const unsigned char *p, size_t len, struct gt_store *s,
			char *why, size_t whylen)
{
	if (len < 8)
		BAD("string table too short");
	uint32_t first = gtfile_get32(p), n = gtfile_get32(p + 4);
	if (first != gt_store_str_count(s))
		BAD("string table starts at id %u, expected %zu", first, gt_store_str_count(s));
	size_t pos = 8;
	for (uint32_t i = 0; i < n; i++) {
		if (len - pos < 4)
			BAD("string table cut short");
		size_t sl = gtfile_get32(p + pos);
		pos += 4;
		if (len - pos < sl)
			BAD("string %u longer than its table", first + i);
		uint32_t id = gt_store_intern(s, (const char *)p + pos, sl);
		if (id == UINT32_MAX)
			return -ENOMEM;
		if (id != first + i)
			BAD("string %u is a duplicate of string %u", first + i, id);
		pos += sl;
	}
	return 0;
}

/* entry count and size of a table chunk {u32 count, u32 entry bytes} */
static int table_dims(const unsigned char *p, size_t len, size_t hdr, size_t min_entry,
		      size_t *n, size_t *esz)
{
	if (len < hdr)
		return -EINVAL;
	*n = gtfile_get32(p + hdr - 8);
	*esz = gtfile_get32(p + hdr - 4);
	if (*esz < min_entry || *esz > 4096 || (len - hdr) / *esz < *n)
		return -EINVAL;
	return 0;
}

static int read_lanes(const unsigned char *p, size_t len, struct gt_store *s,
		      char *why, size_t whylen)
{
	size_t n, esz, nstr = gt_store_str_count(s);
	if (table_dims(p, len, 8, GTFILE_LANE_BYTES, &n, &esz))
		BAD("lane table has a bad size");
	for (size_t i = 0; i < n; i++) {
		const unsigned char *e = p + 8 + i * esz;
		uint32_t id = gtfile_get32(e), name = gtfile_get32(e + 32);
		struct gt_lane_key k = {
			.type = e[4], .rank = (int32_t)gtfile_get32(e + 8),
			.device = (int32_t)gtfile_get32(e + 12),
			.pid = (int64_t)gtfile_get64(e + 16), .id = (int64_t)gtfile_get64(e + 24),
		};
		size_t nl = gt_store_lane_count(s);
		if (id > nl)
			BAD("lane %u defined before lane %zu", id, nl);
		if (name >= nstr)
			BAD("lane %u names string %u, file has %zu strings", id, name, nstr);
		if (id == nl && gt_store_lane(s, &k) != id) {
			if (gt_store_lane_count(s) == nl)
				return -ENOMEM;
			BAD("lane %u duplicates an earlier lane", id);
		}
		struct gt_lane *l = gt_store_lane_at(s, id);
		if (l->key.type != k.type || l->key.rank != k.rank || l->key.device != k.device ||
		    l->key.pid != k.pid || l->key.id != k.id)
			BAD("lane %u redefined with another key", id);
		l->name = name;
		l->sort_index = gtfile_get32(e + 36);
	}
	return 0;
}

static int read_records(const unsigned char *p, size_t len, struct gt_store *s, int nccl,
			char *why, size_t whylen)
{
	size_t n, esz, nstr = gt_store_str_count(s);
	const char *what = nccl ? "NCCL" : "launch configuration";
	if (table_dims(p, len, 16, nccl ? GTFILE_NCCL_BYTES : GTFILE_KCONF_BYTES, &n, &esz))
		BAD("%s table has a bad size", what);
	size_t have = nccl ? gt_store_nccl_count(s) : gt_store_kconf_count(s);
	if (gtfile_get32(p) != have + 1)
		BAD("%s table starts at id %u, expected %zu", what, gtfile_get32(p), have + 1);
	for (size_t i = 0; i < n; i++) {
		const unsigned char *e = p + 16 + i * esz;
		uint32_t id;
		if (nccl) {
			struct gt_nccl c = {
				.collective = gtfile_get32(e), .dtype = gtfile_get32(e + 4),
				.in_nelems = gtfile_get64(e + 8), .out_nelems = gtfile_get64(e + 16),
				.group_size = gtfile_get32(e + 24), .dtype_bytes = gtfile_get32(e + 28),
				.pg_name = gtfile_get32(e + 32), .pad = gtfile_get32(e + 36),
			};
			if (c.collective >= nstr || c.dtype >= nstr || c.pg_name >= nstr)
				BAD("NCCL record %zu names a string the file lacks", have + 1 + i);
			id = gt_store_nccl(s, &c);
		} else {
			struct gt_kconf k;
			uint32_t v[10];
			for (int j = 0; j < 10; j++)
				v[j] = gtfile_get32(e + 4 * j);
			memcpy(k.grid, v, 12);
			memcpy(k.block, v + 3, 12);
			k.regs_per_thread = v[6];
			k.smem_static_bytes = v[7];
			k.smem_dynamic_bytes = v[8];
			memcpy(&k.occupancy_pct, &v[9], 4);
			id = gt_store_kconf(s, &k);
		}
		if (id == 0)
			return -ENOMEM;
		if (id != have + 1 + i)
			BAD("%s record %zu duplicates record %u", what, have + 1 + i, id);
	}
	return 0;
}

static int read_devs(const unsigned char *p, size_t len, struct gt_store *s,
		     char *why, size_t whylen)
{
	size_t n, esz, nstr = gt_store_str_count(s);
	if (table_dims(p, len, 8, GTFILE_DEVICE_BYTES, &n, &esz))
		BAD("device table has a bad size");
	for (size_t i = 0; i < n; i++) {
		const unsigned char *e = p + 8 + i * esz;
		struct gt_device d = {
			.rank = (int32_t)gtfile_get32(e), .id = (int32_t)gtfile_get32(e + 4),
			.name = gtfile_get32(e + 8), .sm_count = gtfile_get32(e + 12),
			.mem_bytes = gtfile_get64(e + 16), .cc_major = gtfile_get32(e + 24),
			.cc_minor = gtfile_get32(e + 28),
		};
		if (d.name >= nstr)
			BAD("device %zu names string %u, file has %zu strings", i, d.name, nstr);
		if (gt_store_device(s, &d))
			return -ENOMEM;
	}
	return 0;
}

static int read_ranks(const unsigned char *p, size_t len, struct gt_store *s,
		      char *why, size_t whylen)
{
	size_t n, esz, nstr = gt_store_str_count(s);
	if (table_dims(p, len, 8, GTFILE_RANK_BYTES, &n, &esz))
		BAD("rank table has a bad size");
	for (size_t i = 0; i < n; i++) {
		const unsigned char *e = p + 8 + i * esz;
		struct gt_rank r = {
			.rank = (int32_t)gtfile_get32(e), .world_size = (int32_t)gtfile_get32(e + 4),
			.pid = (int64_t)gtfile_get64(e + 8), .host = gtfile_get32(e + 16),
			.source = gtfile_get32(e + 20),
			.clock_offset_ns = (int64_t)gtfile_get64(e + 24),
			.local_rank1 = esz >= GTFILE_RANK_BYTES_LOCAL ? (int32_t)gtfile_get32(e + 32) : 0,
		};
		if (r.host >= nstr || r.source >= nstr)
			BAD("rank %d names a string the file lacks", r.rank);
		if (gt_store_rank(s, &r))
			return -ENOMEM;
	}
	return 0;
}

static int read_drops(const unsigned char *p, size_t len, struct gt_store *s,
		      char *why, size_t whylen)
{
	if (len < 8 || gtfile_get32(p) < GTFILE_DROPS_BYTES_MIN || len - 8 < gtfile_get32(p))
		BAD("drop counters have a bad size");
	struct gt_drops *d = gt_store_drops(s);
	d->cupti_dropped = gtfile_get64(p + 8);
	d->buffers_declined = gtfile_get64(p + 16);
	d->zero_timestamps = gtfile_get64(p + 24);
	d->ring_overflow = gtfile_get64(p + 32);
	d->import_skipped = gtfile_get64(p + 40);
	if (gtfile_get32(p) >= GTFILE_DROPS_BYTES) {
		d->read_errors = gtfile_get64(p + 48);
		d->client_buffers = gtfile_get64(p + 56);
	}
	return 0;
}

/* a NUL-terminated copy of len bytes at p, or NULL when they hold a NUL */
static char *cstr(const unsigned char *p, size_t len)
{
	if (memchr(p, 0, len))
		return NULL;
	char *c = malloc(len + 1);
	if (c) {
		memcpy(c, p, len);
		c[len] = '\0';
	}
	return c;
}

static int read_meta(const unsigned char *p, size_t len, struct gt_store *s,
		     char *why, size_t whylen)
{
	if (len < 8)
		BAD("metadata too short");
	size_t n = gtfile_get32(p), pos = 8;
	for (size_t i = 0; i < n; i++) {
		size_t kl, vl;
		if (len - pos < 4 || (kl = gtfile_get32(p + pos)) > len - pos - 4 ||
		    len - pos - 4 - kl < 4 || (vl = gtfile_get32(p + pos + 4 + kl)) > len - pos - 8 - kl)
			BAD("metadata entry %zu cut short", i);
		char *k = cstr(p + pos + 4, kl), *v = cstr(p + pos + 8 + kl, vl);
		int rc = k && v ? gt_store_meta_set(s, k, v) : -EINVAL;
		free(k);
		free(v);
		if (rc == -EINVAL)
			BAD("metadata entry %zu holds a NUL byte", i);
		if (rc)
			return rc;
		pos += 8 + kl + vl;
	}
	return 0;
}

int gtfile_tab_read(uint32_t type, const unsigned char *p, size_t len, struct gt_store *s,
		    char *why, size_t whylen)
{
	switch (type) {
	case GTFILE_CH_STRINGS: return read_strings(p, len, s, why, whylen);
	case GTFILE_CH_LANES: return read_lanes(p, len, s, why, whylen);
	case GTFILE_CH_KCONF: return read_records(p, len, s, 0, why, whylen);
	case GTFILE_CH_NCCL: return read_records(p, len, s, 1, why, whylen);
	case GTFILE_CH_DEVICES: return read_devs(p, len, s, why, whylen);
	case GTFILE_CH_RANKS: return read_ranks(p, len, s, why, whylen);
	case GTFILE_CH_DROPS: return read_drops(p, len, s, why, whylen);
	case GTFILE_CH_META: return read_meta(p, len, s, why, whylen);
	default: return 0;
	}
}
