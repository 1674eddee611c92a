/*
 * test_gtfile_util.c - see test_gtfile_util.h.  The built store's content is
 * written out by hand here (planted), so the comparisons check real values.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "test_gtfile_util.h"

static struct gt_event *evs;
static size_t n_evs, cap_evs;

static void add(struct gt_store *s, struct gt_event e)
{
	cr_assert_eq(gt_store_add(s, &e), 0);
	if (n_evs == cap_evs) {
		cap_evs = cap_evs ? cap_evs * 2 : 256;
		evs = realloc(evs, cap_evs * sizeof(*evs));
	}
	evs[n_evs++] = e;
}

const struct gt_event *tgf_events(size_t *n)
{
	*n = n_evs;
	return evs;
}

struct gt_store *tgf_build(int scale, int finish)
{
	struct gt_store *s = gt_store_new();
	n_evs = 0;
	struct gt_lane_key gk = { .type = GT_LANE_GPU, .rank = 0, .device = 0, .pid = 4242, .id = 7 };
	struct gt_lane_key gk2 = { .type = GT_LANE_GPU, .rank = 1, .device = 3, .pid = 4243, .id = 13 };
	struct gt_lane_key hk = { .type = GT_LANE_HOST, .rank = 0, .device = -1, .pid = 4242,
				  .id = 4242 };
	struct gt_lane_key ck = { .type = GT_LANE_COUNTER, .rank = 0, .device = 0, .pid = 4242,
				  .id = 1 };
	uint32_t g = gt_store_lane(s, &gk), g2 = gt_store_lane(s, &gk2), h = gt_store_lane(s, &hk);
	uint32_t c = gt_store_lane(s, &ck);
	gt_store_lane_set_name(s, g, "stream 7");
	gt_store_lane_set_name(s, h, "python 4242");
	gt_store_lane_at(s, g2)->sort_index = 5;
	struct gt_kconf kc = { { 128, 1, 1 }, { 256, 1, 1 }, 64, 1024, 49152, 37.5f };
	struct gt_kconf kc2 = { { 1, 2, 3 }, { 32, 4, 2 }, 255, 0, 7, -1.0f };
	uint32_t k1 = gt_store_kconf(s, &kc), k2 = gt_store_kconf(s, &kc2);
	struct gt_nccl nc = { gt_store_intern_cstr(s, "allreduce"), gt_store_intern_cstr(s, "Float"),
			      1u << 20, 1u << 20, 8, 4, gt_store_intern_cstr(s, "default_pg"), 0 };
	uint32_t n1 = gt_store_nccl(s, &nc);
	uint32_t gemm = gt_store_intern_cstr(s, "sm90_xmma_gemm_f16f16_f32");
	uint32_t nk = gt_store_intern_cstr(s, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
	uint32_t launch = gt_store_intern_cstr(s, "cudaLaunchKernel");
	uint32_t cpy = gt_store_intern_cstr(s, "Memcpy HtoD (Pinned -> Device)");
	struct gt_device d0 = { 0, 0, gt_store_intern_cstr(s, "NVIDIA H100 80GB HBM3"), 132,
				85520809984ull, 9, 0 };
	struct gt_device d1 = { 1, 3, d0.name, 108, 42949672960ull, 8, 0 };
	gt_store_device(s, &d0);
	gt_store_device(s, &d1);
	struct gt_rank r0 = { 0, 4242, gt_store_intern_cstr(s, "node-a"), gt_store_intern_cstr(s, "r0.json"),
			      -1234, 2, 3 };
	struct gt_rank r1 = { 1, 4243, r0.host, gt_store_intern_cstr(s, "r1.json"), 987654321, 2, 0 };
	gt_store_rank(s, &r0);
	gt_store_rank(s, &r1);
	struct gt_drops *dr = gt_store_drops(s);
	dr->cupti_dropped = 3;
	dr->buffers_declined = 1;
	dr->zero_timestamps = 2;
	dr->ring_overflow = 1ull << 40;
	dr->import_skipped = 9;
	dr->read_errors = 11;
	dr->client_buffers = 4;
	gt_store_meta_set(s, "source", "/data/trace.json");
	gt_store_meta_set(s, "format", "kineto");
	gt_store_meta_set(s, "empty", "");
	int64_t t0 = 1700000000000000000ll;
	for (int r = 0; r < scale; r++) {
		int64_t base = t0 + (int64_t)(scale - 1 - r) * 1000000; /* reverse order: finish sorts */
		uint32_t corr = 100 + (uint32_t)r * 10;
		for (int kind = 1; kind < GT_EV_KIND_COUNT; kind++) {
			struct gt_event e = { .start_ns = base + kind * 1000, .dur_ns = kind * 37,
					      .name = kind % 3 ? gemm : launch, .kind = (uint8_t)kind,
					      .ext = (uint32_t)(kind * 11 + r) };
			if (gt_event_is_gpu(&e) || kind == GT_EV_SYNC || kind == GT_EV_GPU_ANNOT) {
				e.lane = kind == GT_EV_MEMCPY ? g2 : g;
				e.corr = corr + (uint32_t)kind;
			} else if (kind == GT_EV_COUNTER) {
				double v = 12.5 * kind + r;
				memcpy(&e.arg, &v, 8);
				e.lane = c;
			} else {
				e.lane = h;
			}
			if (kind == GT_EV_KERNEL)
				e.arg = (r % 2 ? k2 : k1) | ((uint64_t)(r % 3 == 0) * n1 << 32);
			if (kind == GT_EV_KERNEL && r % 3 == 0) {
				e.name = nk;
				e.flags = GT_EVF_NCCL;
			}
			if (kind == GT_EV_MEMCPY) {
				e.sub = GT_COPY_P2P;
				e.aux = 1u | 3u << 16;
				e.arg = 1ull << 33;
				e.name = cpy;
				e.flags = GT_EVF_PINNED;
			}
			if (kind == GT_EV_SYNC)
				e.sub = GT_SYNC_STREAM_WAIT;
			if (kind == GT_EV_RUNTIME) {
				e.name = launch;
				e.flags = GT_EVF_LAUNCH;
				e.corr = corr + GT_EV_KERNEL;
			}
			if (kind == GT_EV_STEP)
				e.arg = (uint64_t)r;
			if (kind == GT_EV_INSTANT)
				e.dur_ns = 0;
			add(s, e);
		}
		/* a range enclosing the others on the host lane */
		add(s, (struct gt_event){ .start_ns = base + 1000, .dur_ns = 50000, .lane = h,
					  .name = launch, .kind = GT_EV_NVTX, .flags = GT_EVF_TRUNCATED });
	}
	if (finish)
		cr_assert_eq(gt_store_finish(s), 0);
	return s;
}

void tgf_assert_same(const struct gt_store *a, const struct gt_store *b)
{
	tgf_assert_prefix(a, b);
	cr_assert_eq(gt_store_str_count(a), gt_store_str_count(b));
	cr_assert_eq(gt_store_lane_count(a), gt_store_lane_count(b));
	cr_assert_eq(gt_store_kconf_count(a), gt_store_kconf_count(b));
	cr_assert_eq(gt_store_nccl_count(a), gt_store_nccl_count(b));
	cr_assert_eq(gt_store_event_count(a), gt_store_event_count(b));
	cr_assert_eq(gt_store_t_min(a), gt_store_t_min(b));
	cr_assert_eq(gt_store_t_max(a), gt_store_t_max(b));
	for (size_t i = 0; i < gt_store_lane_count(a); i++) {
		cr_assert_eq(gt_store_lane_at(a, (uint32_t)i)->n, gt_store_lane_at(b, (uint32_t)i)->n);
		cr_assert_eq(gt_store_lane_at(a, (uint32_t)i)->busy_total_ns,
			     gt_store_lane_at(b, (uint32_t)i)->busy_total_ns);
		cr_assert_eq(gt_store_lane_at(a, (uint32_t)i)->kinds_mask,
			     gt_store_lane_at(b, (uint32_t)i)->kinds_mask);
	}
	struct gt_store *ma = (struct gt_store *)a, *mb = (struct gt_store *)b;
	cr_assert_eq(memcmp(gt_store_drops(ma), gt_store_drops(mb), sizeof(struct gt_drops)), 0);
	cr_assert_eq(gt_store_device_count(a), gt_store_device_count(b));
	cr_assert_eq(gt_store_rank_count(a), gt_store_rank_count(b));
	cr_assert_eq(gt_store_meta_count(a), gt_store_meta_count(b));
	for (size_t i = 0; i < gt_store_meta_count(a); i++) {
		const char *ka, *va, *kb, *vb;
		gt_store_meta_at(a, i, &ka, &va);
		gt_store_meta_at(b, i, &kb, &vb);
		cr_assert_str_eq(ka, kb);
		cr_assert_str_eq(va, vb);
	}
}

void tgf_assert_prefix(const struct gt_store *full, const struct gt_store *cut)
{
	cr_assert_leq(gt_store_str_count(cut), gt_store_str_count(full));
	for (uint32_t i = 0; i < gt_store_str_count(cut); i++)
		cr_assert_str_eq(gt_store_str(cut, i), gt_store_str(full, i));
	cr_assert_leq(gt_store_lane_count(cut), gt_store_lane_count(full));
	for (uint32_t i = 0; i < gt_store_lane_count(cut); i++) {
		const struct gt_lane *x = gt_store_lane_at(full, i), *y = gt_store_lane_at(cut, i);
		cr_assert_eq(x->key.type, y->key.type);
		cr_assert_eq(x->key.rank, y->key.rank);
		cr_assert_eq(x->key.device, y->key.device);
		cr_assert_eq(x->key.pid, y->key.pid);
		cr_assert_eq(x->key.id, y->key.id);
		cr_assert_eq(x->name, y->name);
		cr_assert_eq(x->sort_index, y->sort_index);
		cr_assert_leq(y->n, x->n);
		if (y->n)
			cr_assert_eq(memcmp(x->ev, y->ev, y->n * sizeof(*y->ev)), 0, "lane %u events", i);
		cr_assert_eq(y->kinds_mask & ~x->kinds_mask, 0);
	}
	cr_assert_leq(gt_store_kconf_count(cut), gt_store_kconf_count(full));
	for (uint32_t i = 1; i <= gt_store_kconf_count(cut); i++)
		cr_assert_eq(memcmp(gt_store_kconf_at(cut, i), gt_store_kconf_at(full, i),
				    sizeof(struct gt_kconf)), 0);
	cr_assert_leq(gt_store_nccl_count(cut), gt_store_nccl_count(full));
	for (uint32_t i = 1; i <= gt_store_nccl_count(cut); i++)
		cr_assert_eq(memcmp(gt_store_nccl_at(cut, i), gt_store_nccl_at(full, i),
				    sizeof(struct gt_nccl)), 0);
	cr_assert_leq(gt_store_device_count(cut), gt_store_device_count(full));
	for (size_t i = 0; i < gt_store_device_count(cut); i++)
		cr_assert_eq(memcmp(gt_store_device_at(cut, i), gt_store_device_at(full, i),
				    sizeof(struct gt_device)), 0);
	for (size_t i = 0; i < gt_store_rank_count(cut); i++) {
		const struct gt_rank *x = gt_store_rank_at(full, i), *y = gt_store_rank_at(cut, i);
		cr_assert(x->rank == y->rank && x->pid == y->pid && x->host == y->host &&
			  x->source == y->source && x->clock_offset_ns == y->clock_offset_ns &&
			  x->world_size == y->world_size);
	}
}

unsigned char *tgf_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc((size_t)n + 1);
	cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

const char *tgf_tmp(const char *tag)
{
	static char p[256];
	const char *d = getenv("TMPDIR");
	snprintf(p, sizeof(p), "%s/gtf-%d-%s.gtrace", d ? d : "/tmp", (int)getpid(), tag);
	return p;
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

size_t tgf_header(unsigned char *buf, unsigned major, unsigned minor, const char *ver)
{
	memset(buf, 0, 64);
	memcpy(buf, "GTRACE\r\n", 8);
	buf[8] = (unsigned char)major;
	buf[9] = (unsigned char)(major >> 8);
	buf[10] = (unsigned char)minor;
	buf[11] = (unsigned char)(minor >> 8);
	put32(buf + 12, 64);
	snprintf((char *)buf + 24, 32, "%s", ver);
	put32(buf + 60, (uint32_t)crc32(0, buf, 60));
	return 64;
}

void tgf_fix_chunk(unsigned char *buf, size_t at)
{
	unsigned char *h = buf + at;
	uint32_t stored = (uint32_t)(h[12] | h[13] << 8 | h[14] << 16 | (uint32_t)h[15] << 24);
	uLong c = crc32(0, h, 16);
	c = crc32(c, h + 24, stored);
	put32(h + 16, (uint32_t)c);
	put32(h + 20, (uint32_t)crc32(0, h, 20));
}

size_t tgf_chunk(unsigned char *buf, size_t at, uint32_t type, const void *pay, size_t n)
{
	unsigned char *h = buf + at;
	put32(h, type);
	put32(h + 4, 0);
	put32(h + 8, (uint32_t)n);
	put32(h + 12, (uint32_t)n);
	memcpy(h + 24, pay, n);
	tgf_fix_chunk(buf, at);
	return at + 24 + n;
}
