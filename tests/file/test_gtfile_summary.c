/*
 * The per-lane summary chunk (format 1.1, issue 16): written by
 * gt_file_write_store and the incremental writer, read back into the store,
 * and every bucket of every level equal to a brute-force count over the
 * events (a separate implementation below: per bucket, every event);
 * gt_lsum_buckets over a planted lane gives the planted busy time, counts and
 * dominant; a file without summary (format 1.0, or cut before it) opens
 * without one; a corrupt summary is one error line.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/file/gtfile_priv.h"
#include "gtrace/lsum.h"
#include "test_gtfile_util.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

/* three lanes: disjoint kernels, nested host ranges, instants; plus an
 * empty lane.  Events added in a shuffled order per lane when shuffled */
static struct gt_store *make(size_t n, struct gt_event **evs, size_t *nev)
{
	struct gt_store *s = gt_store_new();
	uint32_t la = gt_store_lane(s, &(struct gt_lane_key){ GT_LANE_GPU, 0, 0, 0, 7 });
	uint32_t lb = gt_store_lane(s, &(struct gt_lane_key){ GT_LANE_HOST, 0, -1, 1, 1 });
	uint32_t lc = gt_store_lane(s, &(struct gt_lane_key){ GT_LANE_HOST, 0, -1, 1, 2 });
	gt_store_lane(s, &(struct gt_lane_key){ GT_LANE_GPU, 0, 0, 0, 9 });
	uint32_t nm[4] = { gt_store_intern_cstr(s, "k0"), gt_store_intern_cstr(s, "k1"),
			   gt_store_intern_cstr(s, "range"), gt_store_intern_cstr(s, "mark") };
	struct gt_event *ev = calloc(3 * n + 1, sizeof(*ev));
	size_t k = 0;
	int64_t t = 1000000;
	for (size_t i = 0; i < n; i++) {   /* kernels with gaps */
		int64_t d = 1 + (int64_t)rnd(5000);
		ev[k++] = (struct gt_event){ .start_ns = t, .dur_ns = d, .name = nm[i % 2], .lane = la,
					     .kind = GT_EV_KERNEL, .flags = (uint16_t)(i % 3 ? 0 : GT_EVF_NCCL) };
		t += d + (int64_t)rnd(3000);
	}
	int64_t end = t;
	t = 1000000;
	for (size_t i = 0; i < n / 4; i++) {   /* a range with two nested children */
		int64_t d = 100 + (int64_t)rnd(40000);
		ev[k++] = (struct gt_event){ .start_ns = t, .dur_ns = d, .name = nm[2], .lane = lb,
					     .kind = GT_EV_NVTX };
		ev[k++] = (struct gt_event){ .start_ns = t + 10, .dur_ns = d / 3, .name = nm[0],
					     .lane = lb, .kind = GT_EV_RUNTIME };
		ev[k++] = (struct gt_event){ .start_ns = t + d / 2, .dur_ns = d / 3, .name = nm[1],
					     .lane = lb, .kind = GT_EV_CPU_OP };
		t += d + (int64_t)rnd(20000);
	}
	for (size_t i = 0; i < n / 4; i++)   /* instants */
		ev[k++] = (struct gt_event){ .start_ns = 1000000 + (int64_t)rnd((uint64_t)(end - 1000000)),
					     .name = nm[3], .lane = lc, .kind = GT_EV_INSTANT };
	for (size_t i = 0; i < k; i++)
		cr_assert_eq(gt_store_add(s, &ev[i]), 0);
	*evs = ev;
	*nev = k;
	return s;
}

static int cmp_iv(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* brute force: bucket [a, b) of lane from every event */
static void brute(const struct gt_event *ev, size_t n, uint32_t lane, int64_t a, int64_t b,
		  struct gt_lsum_ent *out)
{
	memset(out, 0, sizeof(*out));
	out->dom_name = UINT32_MAX;
	/* busy: clip each event to [a, b), union by marking sub-intervals */
	int64_t *iv = malloc(2 * n * sizeof(*iv) + 16);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		const struct gt_event *e = &ev[i];
		if (e->lane != lane)
			continue;
		int64_t s = e->start_ns, en = s + e->dur_ns;
		if (s >= a && s < b)
			out->count++;
		int ov = e->dur_ns ? (s < b && en > a) : (s >= a && s < b);
		if (ov && (out->dom_name == UINT32_MAX || e->dur_ns > out->dom_dur)) {
			out->dom_dur = e->dur_ns;
			out->dom_name = e->name;
			out->dom_kfs = (uint32_t)e->kind | (uint32_t)e->sub << 8 | (uint32_t)e->flags << 16;
		}
		int64_t x = s > a ? s : a, y = en < b ? en : b;
		if (y > x) {
			iv[m++] = x;
			iv[m++] = y;
		}
	}
	/* union: sort the clipped intervals by start, merge */
	qsort(iv, m / 2, 2 * sizeof(*iv), cmp_iv);
	int64_t cur = INT64_MIN;
	for (size_t i = 0; i < m; i += 2) {
		int64_t x = iv[i] > cur ? iv[i] : cur;
		if (iv[i + 1] > x)
			out->busy_ns += iv[i + 1] - x;
		if (iv[i + 1] > cur)
			cur = iv[i + 1];
	}
	free(iv);
}

/* every bucket of every level of m (and every non-listed bucket is empty) */
static void check_all(const struct gt_lsum *m, const struct gt_event *ev, size_t n, size_t nlanes)
{
	cr_assert_not_null(m);
	cr_assert_eq(m->nlanes, nlanes);
	cr_assert_gt(m->nlev, 1);
	int64_t t_max = 0;
	for (size_t i = 0; i < n; i++)
		t_max = gt_event_end(&ev[i]) > t_max ? gt_event_end(&ev[i]) : t_max;
	size_t checked = 0;
	for (uint32_t l = 0; l < nlanes; l++)
		for (int k = 0; k < m->nlev; k++) {
			int64_t W = gt_lsum_width(m, k);
			size_t nb = (size_t)((t_max - m->origin_ns) / W) + 1, p = 0;
			for (size_t b = 0; b < nb; b++) {
				struct gt_lsum_ent want;
				int64_t a = m->origin_ns + (int64_t)b * W;
				brute(ev, n, l, a, a + W, &want);
				const struct gt_lsum_ent *got = p < m->lane[l].n[k] &&
					m->lane[l].e[k][p].idx == b ? &m->lane[l].e[k][p++] : NULL;
				if (!got) {
					cr_assert(want.count == 0 && want.busy_ns == 0 &&
						  want.dom_name == UINT32_MAX,
						  "lane %u level %d bucket %zu missing", l, k, b);
					continue;
				}
				cr_assert_eq(got->count, want.count, "lane %u lvl %d b %zu", l, k, b);
				cr_assert_eq(got->busy_ns, want.busy_ns, "lane %u lvl %d b %zu", l, k, b);
				cr_assert_eq(got->dom_dur, want.dom_dur, "lane %u lvl %d b %zu", l, k, b);
				cr_assert_eq(got->dom_kfs, want.dom_kfs);
				checked++;
			}
			cr_assert_eq(p, m->lane[l].n[k], "entries past the span");
		}
	cr_assert_gt(checked, 100);
}

static struct gt_store *read_back(const char *path)
{
	char err[256];
	struct gt_store *r = gt_store_new();
	struct gt_file_info info;
	cr_assert_eq(gt_file_read(path, r, &info, err, sizeof(err)), 0, "%s", err);
	return r;
}

Test(gtfile_summary, write_store_equals_brute_force)
{
	struct gt_event *ev;
	size_t n;
	struct gt_store *s = make(3000, &ev, &n);
	cr_assert_eq(gt_store_finish(s), 0);
	char err[256];
	const char *path = tgf_tmp("sum");
	cr_assert_eq(gt_file_write_store(s, path, err, sizeof(err)), 0, "%s", err);
	struct gt_store *r = read_back(path);
	check_all(gt_store_summary(r), ev, n, 4);
	/* the reader's store equals the writer's; its summary is dropped by an add */
	tgf_assert_same(s, r);
	cr_assert_eq(gt_store_add(r, &ev[0]), 0);
	cr_assert_null(gt_store_summary(r));
	gt_store_free(r);
	gt_store_free(s);
	free(ev);
	remove(path);
}

/* a lane longer than the builder's run of 65,536 events (it feeds a lane
 * in order in runs, never copying it whole), every event overlapping the
 * next so every seam between runs falls inside busy time: the busy time
 * over all buckets is the union's, n * 10 + 15 ns, and the count n */
Test(gtfile_summary, lane_longer_than_a_run)
{
	enum { N = 200000 };
	struct gt_store *s = gt_store_new();
	uint32_t la = gt_store_lane(s, &(struct gt_lane_key){ GT_LANE_GPU, 0, 0, 0, 7 });
	uint32_t nm = gt_store_intern_cstr(s, "k");
	for (int64_t i = 0; i < N; i++)
		cr_assert_eq(gt_store_add(s, &(struct gt_event){ .start_ns = 1000000 + i * 10,
				.dur_ns = 25, .name = nm, .lane = la, .kind = GT_EV_KERNEL }), 0);
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_lsum *m = NULL;
	cr_assert_eq(gt_lsum_build(s, &m), 0);
	cr_assert_not_null(m);
	for (int k = 0; k < m->nlev; k++) {
		int64_t busy = 0;
		uint64_t count = 0;
		for (size_t q = 0; q < m->lane[0].n[k]; q++) {
			busy += m->lane[0].e[k][q].busy_ns;
			count += m->lane[0].e[k][q].count;
		}
		cr_assert_eq(busy, (int64_t)N * 10 + 15, "level %d: busy %lld", k, (long long)busy);
		cr_assert_eq(count, N, "level %d: count %llu", k, (unsigned long long)count);
	}
	gt_lsum_free(m);
	gt_store_free(s);
}

Test(gtfile_summary, incremental_writer_unsorted)
{
	struct gt_event *ev;
	size_t n;
	struct gt_store *s = make(2000, &ev, &n);   /* not finished: lanes in arrival order */
	/* arrival order: interleave lanes by writing events in a shuffled order */
	char err[256];
	const char *path = tgf_tmp("suminc");
	struct gt_file_writer *w = gt_file_writer_open(path, NULL, err, sizeof(err));
	cr_assert_not_null(w, "%s", err);
	for (size_t i = 0; i < n; i += 100)
		cr_assert_eq(gt_file_writer_add(w, s, ev + i, n - i < 100 ? n - i : 100), 0);
	cr_assert_eq(gt_file_writer_close(w, s, err, sizeof(err)), 0, "%s", err);
	struct gt_store *r = read_back(path);
	check_all(gt_store_summary(r), ev, n, 4);
	gt_store_free(r);
	gt_store_free(s);
	free(ev);
	remove(path);
}

Test(gtfile_summary, planted_buckets)
{
	struct gt_store *s = gt_store_new();
	uint32_t l = gt_store_lane(s, &(struct gt_lane_key){ GT_LANE_GPU, 0, 0, 0, 1 });
	uint32_t a = gt_store_intern_cstr(s, "a"), b = gt_store_intern_cstr(s, "b");
	/* 4000 kernels of 100 ns every 1000 ns, and one of 50,000 ns "b" */
	for (int i = 0; i < 4000; i++)
		gt_store_add(s, &(struct gt_event){ .start_ns = (int64_t)i * 1000, .dur_ns = 100,
						 .name = a, .lane = l, .kind = GT_EV_KERNEL });
	gt_store_add(s, &(struct gt_event){ .start_ns = 1000500, .dur_ns = 50000, .name = b, .lane = l,
					 .kind = GT_EV_MEMCPY, .sub = GT_COPY_H2D });
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_lsum *m;
	cr_assert_eq(gt_lsum_build(s, &m), 0);
	cr_assert_eq(m->origin_ns, 0);
	/* 4,001 events over 4 ms on one lane: a base of 16 us, 16 events a bucket */
	cr_assert_eq(m->base_ns, 16384);
	/* the whole span in 4 columns of 4 x 262,144 ns (aligned with the
	 * level used, 262,144 ns: exact): planted busy and counts */
	struct gt_bucket bk[4];
	uint32_t kfs[4], nm[4];
	cr_assert_eq(gt_lsum_buckets(m, l, 0, 1048576, 4, bk, kfs, nm), 1);
	uint64_t busy = 0, cnt = 0;
	for (int c = 0; c < 4; c++) {
		busy += (uint64_t)bk[c].busy_ns;
		cnt += bk[c].count;
		cr_assert_eq(bk[c].dominant, SIZE_MAX);
	}
	/* kernels 400,000 ns + the copy 50,000 less its overlap with kernels
	 * (51 kernels start inside [1000500, 1050500), overlapping 50 x 100 ns
	 * fully and the one at 1000000 by 0): 450,000 - 5,000 */
	cr_assert_eq(busy, 445000, "busy %llu", (unsigned long long)busy);
	cr_assert_eq(cnt, 4001, "count %llu", (unsigned long long)cnt);
	/* the copy [1000500, 1050500) is the longest in columns 0 and 1 */
	cr_assert_eq(nm[0], b);
	cr_assert_eq(nm[1], b);
	cr_assert_eq(kfs[1], GT_EV_MEMCPY | GT_COPY_H2D << 8);
	cr_assert_eq(nm[2], a);
	cr_assert_eq(kfs[2], GT_EV_KERNEL);
	cr_assert_eq(nm[3], a);
	/* column 2 = [2097152, 3145728): the 1,048 kernels starting at 2,098,000
	 * .. 3,145,000 lie inside it: busy 1,048 x 100 */
	cr_assert_eq(bk[2].count, 1048);
	cr_assert_eq(bk[2].busy_ns, 104800);
	/* too fine for the summary: not applicable */
	cr_assert_eq(gt_lsum_applies(m, l, 16384), 0);
	cr_assert_eq(gt_lsum_buckets(m, l, 0, 20000, 4, bk, NULL, NULL), 0);
	cr_assert_eq(gt_lsum_applies(m, l, 2 * 16384), 1);
	cr_assert_eq(gt_lsum_applies(m, 5, 1000000), 0);
	gt_lsum_free(m);
	gt_store_free(s);
}

Test(gtfile_summary, cut_before_summary_and_old_files)
{
	struct gt_event *ev;
	size_t n;
	struct gt_store *s = make(500, &ev, &n);
	cr_assert_eq(gt_store_finish(s), 0);
	char err[256];
	const char *path = tgf_tmp("sumcut");
	cr_assert_eq(gt_file_write_store(s, path, err, sizeof(err)), 0, "%s", err);
	size_t len;
	unsigned char *buf = tgf_slurp(path, &len);
	/* find the first summary chunk by walking the chunks */
	size_t pos = GTFILE_HDR_BYTES, at = 0;
	while (pos + GTFILE_CHUNK_HDR <= len) {
		uint32_t type = gtfile_get32(buf + pos), stored = gtfile_get32(buf + pos + 12);
		if (type == GTFILE_CH_SUMMARY && !at)
			at = pos;
		pos += GTFILE_CHUNK_HDR + stored;
	}
	cr_assert_gt(at, 0, "no summary chunk");
	struct gt_store *r = gt_store_new();
	struct gt_file_info info;
	cr_assert_eq(gt_file_read_mem(buf, at, "x.gtrace", r, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(info.truncated, 1);
	cr_assert_eq(info.events, n);
	cr_assert_null(gt_store_summary(r));
	gt_store_free(r);
	/* a format 1.0 reader skips type 13 as unknown: so does a 1.1 file
	 * whose summary chunk is retyped to an unknown type (the same walk) */
	gtfile_put32(buf + at, 99);
	tgf_fix_chunk(buf, at);
	r = gt_store_new();
	cr_assert_eq(gt_file_read_mem(buf, len, "x.gtrace", r, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(info.truncated, 0);
	cr_assert_null(gt_store_summary(r));
	gt_store_free(r);
	/* a crafted summary chunk after the events (raw, valid CRCs): buckets
	 * out of order, then a lane past the table: one error line each */
	unsigned char pay[32 + 16 + 2 * 32];
	memset(pay, 0, sizeof(pay));
	gtfile_put64(pay + 8, 1024);          /* base */
	gtfile_put32(pay + 16, 2);            /* levels */
	gtfile_put32(pay + 20, 32);           /* entry size */
	gtfile_put32(pay + 24, 1);            /* records */
	gtfile_put32(pay + 32 + 8, 2);        /* lane 0 level 0, 2 entries */
	gtfile_put32(pay + 48, 5);            /* bucket 5, then bucket 5 again */
	gtfile_put32(pay + 80, 5);
	gtfile_put32(pay + 48 + 24, UINT32_MAX);
	gtfile_put32(pay + 80 + 24, UINT32_MAX);
	unsigned char *bad = malloc(at + sizeof(pay) + 64);
	memcpy(bad, buf, at);
	const char *want[2] = { "x.gtrace: summary chunk at byte", "lane 0 level 0 bucket 5" };
	for (int round = 0; round < 2; round++) {
		if (round)
			gtfile_put32(pay + 32, 4);   /* lane 4: the file has 4 lanes (0..3) */
		size_t blen = tgf_chunk(bad, at, GTFILE_CH_SUMMARY, pay, sizeof(pay));
		r = gt_store_new();
		int rc = gt_file_read_mem(bad, blen, "x.gtrace", r, &info, err, sizeof(err));
		gt_store_free(r);
		cr_assert_lt(rc, 0, "round %d read", round);
		cr_assert(strstr(err, want[0]) == err, "%s", err);
		cr_assert(round ? strstr(err, "lane 4") != NULL : strstr(err, want[1]) != NULL, "%s", err);
		cr_assert_null(strchr(err, '\n'));
	}
	/* a level wider than 2^62 ns (queries would overflow): bad geometry */
	gtfile_put32(pay + 32, 0);
	gtfile_put64(pay + 8, (uint64_t)1 << 61);
	size_t blen = tgf_chunk(bad, at, GTFILE_CH_SUMMARY, pay, sizeof(pay));
	r = gt_store_new();
	cr_assert_lt(gt_file_read_mem(bad, blen, "x.gtrace", r, &info, err, sizeof(err)), 0);
	gt_store_free(r);
	cr_assert(strstr(err, "bad geometry") != NULL, "%s", err);
	free(bad);
	free(buf);
	gt_store_free(s);
	free(ev);
	remove(path);
}

Test(gtfile_summary, head_then_swap)
{
	struct gt_event *ev;
	size_t n;
	struct gt_store *s = make(1500, &ev, &n);
	cr_assert_eq(gt_store_finish(s), 0);
	char err[256];
	const char *path = tgf_tmp("sumhead");
	cr_assert_eq(gt_file_write_store(s, path, err, sizeof(err)), 0, "%s", err);
	struct gt_store *h = gt_store_new();
	struct gt_file_info info;
	cr_assert_eq(gt_file_read_head(path, h, &info, err, sizeof(err)), 0, "%s", err);
	/* tables and span, no events, the summary */
	cr_assert_eq(info.events, n);
	cr_assert_eq(gt_store_event_count(h), n);   /* said, not held: */
	for (uint32_t l = 0; l < gt_store_lane_count(h); l++)
		cr_assert_eq(gt_store_lane_at(h, l)->n, 0);
	cr_assert_eq(gt_store_lane_count(h), gt_store_lane_count(s));
	cr_assert_eq(gt_store_str_count(h), gt_store_str_count(s));
	cr_assert_eq(gt_store_t_min(h), gt_store_t_min(s));
	cr_assert_eq(gt_store_t_max(h), gt_store_t_max(s));
	check_all(gt_store_summary(h), ev, n, 4);
	/* the full store, loaded apart, swapped in: the writer's store */
	struct gt_store *f = read_back(path);
	gt_store_swap(h, f);
	tgf_assert_same(s, h);
	check_all(gt_store_summary(h), ev, n, 4);
	gt_store_free(f);
	gt_store_free(h);
	/* no summary (an older writer: the chunk retyped unknown), or cut off:
	 * -ENOENT, read it whole */
	size_t len;
	unsigned char *buf = tgf_slurp(path, &len);
	size_t pos = GTFILE_HDR_BYTES;
	while (pos + GTFILE_CHUNK_HDR <= len) {
		uint32_t type = gtfile_get32(buf + pos), stored = gtfile_get32(buf + pos + 12);
		if (type == GTFILE_CH_SUMMARY) {
			gtfile_put32(buf + pos, 99);
			tgf_fix_chunk(buf, pos);
		}
		pos += GTFILE_CHUNK_HDR + stored;
	}
	const char *p2 = tgf_tmp("sumhead2");
	FILE *fp = fopen(p2, "wb");
	cr_assert_eq(fwrite(buf, 1, len, fp), len);
	fclose(fp);
	h = gt_store_new();
	cr_assert_eq(gt_file_read_head(p2, h, &info, err, sizeof(err)), -ENOENT);
	cr_assert(strstr(err, "no summary") != NULL, "%s", err);
	gt_store_free(h);
	fp = fopen(p2, "wb");
	cr_assert_eq(fwrite(buf, 1, len - 1, fp), len - 1);
	fclose(fp);
	h = gt_store_new();
	cr_assert_eq(gt_file_read_head(p2, h, &info, err, sizeof(err)), -ENOENT);
	cr_assert(strstr(err, "no index") != NULL, "%s", err);
	gt_store_free(h);
	free(buf);
	gt_store_free(s);
	free(ev);
	remove(path);
	remove(p2);
}
