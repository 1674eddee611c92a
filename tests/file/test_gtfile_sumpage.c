/*
 * The summary's pages (issue 16): levels of the per-lane summary written as
 * pages (one slab of time x a run of lanes, listed by the pages chunk) and
 * loaded when a row needs them draw every row exactly as the same summary
 * held whole; the loaded pages stay under their cap (least recently used
 * out, reloaded on demand) and a store's resident bytes, the summary's
 * included, stay under its budget on a capture whose whole summary would
 * not fit it; a page that fails its checks later draws nothing and says so
 * (no crash); a pages chunk naming a byte that is no summary chunk is one
 * error line.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/file/gtfile_priv.h"
#include "gtrace/lsum.h"
#include "test_gtfile_util.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

/* nl GPU lanes of kernels (each lane its own density; with gaps of 3 ms
 * every 1,000 kernels when gaps), up to per events each; finished */
static struct gt_store *make(uint32_t nl, size_t per, int gaps)
{
	struct gt_store *s = gt_store_new();
	uint32_t nm[3] = { gt_store_intern_cstr(s, "gemm"), gt_store_intern_cstr(s, "allreduce"),
			   gt_store_intern_cstr(s, "copy") };
	for (uint32_t l = 0; l < nl; l++) {
		uint32_t lane = gt_store_lane(s, &(struct gt_lane_key){ GT_LANE_GPU, (int32_t)(l / 8), (int32_t)(l % 8), 0, 7 });
		int64_t t = 1000000 + (int64_t)rnd(100000), gap = 200 + 300 * (int64_t)(l % 5);
		size_t n = per / (1 + l % 3);
		for (size_t i = 0; i < n; i++) {
			int64_t d = 1 + (int64_t)rnd(4000);
			struct gt_event e = { .start_ns = t, .dur_ns = d, .name = nm[rnd(3)], .lane = lane,
					      .kind = GT_EV_KERNEL };
			cr_assert_eq(gt_store_add(s, &e), 0);
			t += d + (int64_t)rnd((uint64_t)gap) + (gaps && i % 1000 == 999 ? 3000000 : 0);
		}
	}
	cr_assert_eq(gt_store_finish(s), 0);
	return s;
}

static void write_file(const struct gt_store *s, const char *path, const char *page_min)
{
	char err[256];
	if (page_min)
		setenv("GTRACE_SUMMARY_PAGE_MIN", page_min, 1);
	else
		unsetenv("GTRACE_SUMMARY_PAGE_MIN");
	setenv("GTRACE_SUMMARY_SLAB", "24", 1);   /* many slabs (512 by default) */
	setenv("GTRACE_SUMMARY_PAGE_ENTRIES", "512", 1);   /* small pages (32,768) */
	cr_assert_eq(gt_file_write_store(s, path, err, sizeof(err)), 0, "%s", err);
	unsetenv("GTRACE_SUMMARY_PAGE_MIN");
	unsetenv("GTRACE_SUMMARY_SLAB");
	unsetenv("GTRACE_SUMMARY_PAGE_ENTRIES");
}

static struct gt_store *head(const char *path, size_t budget)
{
	struct gt_store *h = gt_store_new();
	if (budget)
		cr_assert_eq(gt_store_set_budget(h, budget), 0);
	char err[256];
	struct gt_file_info info;
	cr_assert_eq(gt_file_read_head(path, h, &info, err, sizeof(err)), 0, "%s", err);
	return h;
}

/* a random window of the summary's range: widths log-uniform from 200
 * columns of two finest buckets to the whole span */
static void window(const struct gt_lsum *m, int64_t t0, int64_t span, int64_t *a, int64_t *dt)
{
	double lo = (double)(gt_lsum_width(m, 0) * 2 * 200), hi = (double)span;
	double w = lo * (1 + (double)rnd(1000) / 1000 * (hi / lo - 1));
	if (rnd(3) == 0 || hi < lo)
		w = hi;
	*dt = (int64_t)(w / 200) + 1;
	*a = t0 + (int64_t)rnd((uint64_t)(span - (int64_t)w + 2)) - (int64_t)rnd(2) * *dt;
}

/* row by row, paged (p) and resident (r) summaries draw the same */
static size_t same_rows(const struct gt_lsum *p, const struct gt_lsum *r, int64_t t0, int64_t span,
			int frames)
{
	struct gt_bucket bp[200], br[200];
	uint32_t kp[200], kr[200], np[200], nr[200];
	size_t rows = 0;
	for (int f = 0; f < frames; f++) {
		int64_t a, dt;
		window(r, t0, span, &a, &dt);
		for (uint32_t l = 0; l < r->nlanes; l++) {
			int x = gt_lsum_buckets(p, l, a, dt, 200, bp, kp, np);
			int y = gt_lsum_buckets(r, l, a, dt, 200, br, kr, nr);
			cr_assert_eq(x, y, "frame %d lane %u", f, l);
			if (!y)
				continue;
			rows++;
			for (int c = 0; c < 200; c++) {
				cr_assert_eq(bp[c].busy_ns, br[c].busy_ns, "frame %d lane %u col %d", f, l, c);
				cr_assert_eq(bp[c].count, br[c].count, "frame %d lane %u col %d", f, l, c);
				cr_assert_eq(kp[c], kr[c]);
				cr_assert_eq(np[c], nr[c]);
			}
		}
	}
	return rows;
}

Test(gtfile_sumpage, paged_rows_equal_resident)
{
	struct gt_store *s = make(24, 40000, 1);
	char pp[512], pr[512];   /* tgf_tmp's buffer is its own */
	snprintf(pp, sizeof(pp), "%s", tgf_tmp("sp_paged"));
	snprintf(pr, sizeof(pr), "%s", tgf_tmp("sp_res"));
	write_file(s, pp, "1");
	write_file(s, pr, NULL);
	char err[256];
	struct gt_store *r = gt_store_new();
	cr_assert_eq(gt_file_read(pr, r, NULL, err, sizeof(err)), 0, "%s", err);
	const struct gt_lsum *mr = gt_store_summary(r);
	size_t loads, loaded, pages;
	int perr;
	gt_lsum_page_stats(mr, &loads, &loaded, &pages, &perr);
	cr_assert_eq(pages, 0, "small levels stay resident by default");
	/* every level paged: the head and the whole read page; a memory read
	 * takes the pages as summary chunks (resident) */
	struct gt_store *h = head(pp, 0), *f = gt_store_new(), *mem = gt_store_new();
	cr_assert_eq(gt_file_read(pp, f, NULL, err, sizeof(err)), 0, "%s", err);
	size_t len;
	unsigned char *buf = tgf_slurp(pp, &len);
	cr_assert_eq(gt_file_read_mem(buf, len, "mem", mem, NULL, err, sizeof(err)), 0, "%s", err);
	tgf_assert_same(r, f);
	int64_t t0 = gt_store_t_min(r), span = gt_store_t_max(r) - t0;
	const struct gt_lsum *mh = gt_store_summary(h);
	gt_lsum_page_stats(mh, &loads, &loaded, &pages, &perr);
	cr_assert_gt(pages, 4, "%zu pages, %d levels", pages, mh->nlev);
	cr_assert_eq(loads, 0, "the head loads no page");
	for (uint32_t l = 0; l < mh->nlanes; l++)
		for (int k = 0; k < mh->nlev; k++)
			cr_assert_eq(mh->lane[l].n[k], 0);
	cr_assert_gt(same_rows(mh, mr, t0, span, 60), 0);
	cr_assert_gt(same_rows(gt_store_summary(f), mr, t0, span, 30), 0);
	cr_assert_gt(same_rows(gt_store_summary(mem), mr, t0, span, 30), 0);
	gt_lsum_page_stats(gt_store_summary(mem), &loads, &loaded, &pages, &perr);
	cr_assert_eq(pages, 0);
	gt_lsum_page_stats(mh, &loads, &loaded, &pages, &perr);
	cr_assert_gt(loads, 0);
	cr_assert_eq(perr, 0);
	/* a cap smaller than the level: pages go and come back, rows the same */
	struct gt_store *h2 = head(pp, 0);
	struct gt_lsum *m2 = (struct gt_lsum *)(uintptr_t)gt_store_summary(h2);
	size_t base = gt_lsum_resident(m2), cap = 16 << 10;
	gt_lsum_set_cap(m2, cap);
	struct gt_bucket b[200];
	for (int f2 = 0; f2 < 40; f2++) {
		int64_t a, dt;
		window(mr, t0, span, &a, &dt);
		for (uint32_t l = 0; l < m2->nlanes; l++) {
			gt_lsum_buckets(m2, l, a, dt, 200, b, NULL, NULL);
			/* the cap, plus the page a row holds and its scratch */
			cr_assert_leq(gt_lsum_resident(m2), base + cap + (64 << 10), "%zu",
				      gt_lsum_resident(m2) - base);
		}
	}
	cr_assert_gt(same_rows(m2, mr, t0, span, 20), 0);
	gt_lsum_page_stats(m2, &loads, &loaded, &pages, &perr);
	cr_assert_gt(loads, pages, "evicted pages were loaded again (%zu loads, %zu pages)", loads,
		     pages);
	free(buf);
	gt_store_free(h2);
	gt_store_free(h);
	gt_store_free(f);
	gt_store_free(mem);
	gt_store_free(r);
	gt_store_free(s);
	remove(pp);
	remove(pr);
}

/* a capture whose summary (eager) is bigger than the budget: the head
 * store's resident bytes, the summary's pages included, stay under it */
Test(gtfile_sumpage, resident_within_budget, .timeout = 120)
{
	struct gt_store *s = make(32, 45000, 0);
	const char *pp = tgf_tmp("sp_budget");
	write_file(s, pp, "512");
	char err[256];
	struct gt_store *r = gt_store_new();
	size_t len;
	unsigned char *buf = tgf_slurp(pp, &len);
	cr_assert_eq(gt_file_read_mem(buf, len, "x", r, NULL, err, sizeof(err)), 0, "%s", err);
	size_t whole = gt_lsum_resident(gt_store_summary(r));
	const size_t budget = 512 << 10;
	cr_assert_gt(whole, budget, "the summary held whole (%zu bytes) must not fit the budget",
		     whole);
	struct gt_store *h = head(pp, budget);
	const struct gt_lsum *m = gt_store_summary(h);
	int64_t t0 = gt_store_t_min(h), span = gt_store_t_max(h) - t0;
	struct gt_bucket b[200];
	size_t peak = 0;
	for (int f = 0; f < 60; f++) {
		int64_t a = t0, dt = span / 200 + 1;
		if (f)
			window(m, t0, span, &a, &dt);
		for (uint32_t l = 0; l < m->nlanes; l++) {
			gt_lsum_buckets(m, l, a, dt, 200, b, NULL, NULL);
			size_t res = gt_store_resident_bytes(h);
			peak = res > peak ? res : peak;
			cr_assert_leq(res, budget, "frame %d lane %u: %zu resident (summary %zu, store %zu)", f, l, res, gt_lsum_resident(m), gt_store_bytes(h));
		}
	}
	size_t loads, loaded, pages;
	int perr;
	gt_lsum_page_stats(m, &loads, &loaded, &pages, &perr);
	cr_assert_gt(loads, 0);
	cr_assert_eq(perr, 0);
	cr_assert_gt(same_rows(m, gt_store_summary(r), t0, span, 10), 0);
	cr_log_info("summary whole %zu bytes; paged under a %zu budget: peak resident %zu, %zu "
		    "loads of %zu pages", whole, budget, peak, loads, pages);
	free(buf);
	gt_store_free(h);
	gt_store_free(r);
	gt_store_free(s);
	remove(pp);
}

/* the byte offset of the first chunk of type t in buf at or after from */
static size_t find_chunk(const unsigned char *buf, size_t len, uint32_t t, size_t from)
{
	for (size_t pos = GTFILE_HDR_BYTES; pos + GTFILE_CHUNK_HDR <= len;
	     pos += GTFILE_CHUNK_HDR + gtfile_get32(buf + pos + 12))
		if (gtfile_get32(buf + pos) == t && pos >= from)
			return pos;
	return 0;
}

Test(gtfile_sumpage, bad_page_and_bad_directory)
{
	struct gt_store *s = make(8, 30000, 1);
	char pp[512], p2[512];
	snprintf(pp, sizeof(pp), "%s", tgf_tmp("sp_bad"));
	snprintf(p2, sizeof(p2), "%s", tgf_tmp("sp_bad2"));
	write_file(s, pp, "1");
	size_t len;
	unsigned char *buf = tgf_slurp(pp, &len);
	size_t dirat = find_chunk(buf, len, GTFILE_CH_SUMPAGES, 0);
	cr_assert_gt(dirat, 0);
	/* pages' payloads changed (their CRCs no longer match): the head
	 * (which does not read pages) opens; a row that needs such a page
	 * draws nothing, the others draw, and the error is kept */
	size_t pg = 0;   /* the last: level 0's last slab (levels go coarsest first) */
	for (size_t at = find_chunk(buf, len, GTFILE_CH_SUMMARY, 0); at;
	     at = find_chunk(buf, len, GTFILE_CH_SUMMARY, at + 1))
		pg = at;
	cr_assert_gt(pg, 0);
	buf[pg + GTFILE_CHUNK_HDR + 3] ^= 0x40;
	FILE *fp = fopen(p2, "wb");
	cr_assert_eq(fwrite(buf, 1, len, fp), len);
	fclose(fp);
	struct gt_store *h = head(p2, 0);
	const struct gt_lsum *m = gt_store_summary(h);
	int64_t t0 = gt_store_t_min(h), span = gt_store_t_max(h) - t0;
	struct gt_bucket b[200];
	int drawn = 0, failed = 0;
	cr_assert_gt(m->nlev, 1);
	int64_t dt0 = 2 * gt_lsum_width(m, 0);
	for (uint32_t l = 0; l < m->nlanes; l++) {
		/* from the coarsest level (not level 0): drawn */
		drawn += gt_lsum_buckets(m, l, t0, 2 * gt_lsum_width(m, m->nlev - 1), 200, b, NULL,
					 NULL);
		/* the end at level 0 (the damaged page): nothing */
		failed += !gt_lsum_buckets(m, l, t0 + span - 200 * dt0, dt0, 200, b, NULL, NULL);
	}
	size_t loads, loaded, pages;
	int perr;
	gt_lsum_page_stats(m, &loads, &loaded, &pages, &perr);
	cr_assert_gt(failed, 0);
	cr_assert_gt(drawn, 0, "failed %d, %zu loads of %zu pages, error %d", failed, loads, pages, perr);
	cr_assert_eq(perr, -EIO);
	gt_store_free(h);
	/* the whole read checks every chunk's CRC: one line */
	struct gt_store *f = gt_store_new();
	char err[256];
	cr_assert_eq(gt_file_read(p2, f, NULL, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "checksum mismatch in summary chunk") != NULL, "%s", err);
	gt_store_free(f);
	buf[pg + GTFILE_CHUNK_HDR + 3] ^= 0x40;
	/* a damaged pages chunk: one line, from the head and the whole read */
	buf[dirat + GTFILE_CHUNK_HDR + 5] ^= 0x01;
	fp = fopen(p2, "wb");
	cr_assert_eq(fwrite(buf, 1, len, fp), len);
	fclose(fp);
	f = gt_store_new();
	cr_assert_eq(gt_file_read(p2, f, NULL, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "checksum mismatch in summary pages chunk at byte") != NULL, "%s", err);
	gt_store_free(f);
	f = gt_store_new();
	cr_assert_eq(gt_file_read_head(p2, f, NULL, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "checksum mismatch in summary pages chunk at byte") != NULL, "%s", err);
	gt_store_free(f);
	free(buf);
	gt_store_free(s);
	remove(pp);
	remove(p2);
}
