/*
 * .gtrace streams (gtstream) and jobs of several nodes (gtjob), issue 17.
 * The reference for every stream read is the file reader (gt_file_read_mem)
 * on the same bytes; the clock tests plant an offset on one rank of a
 * simulated two-rank job (whose collectives end together) and recover it.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gtrace/gtjob.h"
#include "gtrace/gtstream.h"
#include "gtrace/sim.h"
#include "gtrace_config.h"
#include "test_gtfile_util.h"

static char err[512];

/* bytes of s written as a .gtrace file (malloc'd) */
static unsigned char *file_of(const struct gt_store *s, const char *tag, size_t *len)
{
	const char *p = tgf_tmp(tag);
	cr_assert_eq(gt_file_write_store(s, p, err, sizeof(err)), 0, "%s", err);
	unsigned char *b = tgf_slurp(p, len);
	unlink(p);
	return b;
}

/* feed b in pieces of `step` bytes (0: pseudo-random 1..9000) */
static long feed(struct gt_stream *st, const unsigned char *b, size_t n, size_t step)
{
	long got = 0;
	unsigned x = 12345;
	for (size_t off = 0; off < n;) {
		x = x * 1103515245u + 12345u;
		size_t k = step ? step : 1 + (x >> 8) % 9000;
		k = k > n - off ? n - off : k;
		long r = gt_stream_feed(st, b + off, k, err, sizeof(err));
		if (r < 0)
			return r;
		got += r;
		off += k;
	}
	return got;
}

Test(gtstream, any_split_equals_the_file_reader)
{
	struct gt_store *src = tgf_build(3, 1);
	size_t n;
	unsigned char *b = file_of(src, "whole", &n);
	struct gt_store *ref = gt_store_new();
	cr_assert_eq(gt_file_read_mem(b, n, "x", ref, NULL, err, sizeof(err)), 0, "%s", err);
	static const size_t steps[] = { 1, 7, 24, 64, 4096, 0, (size_t)-1 };
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		struct gt_store *s = gt_store_new();
		struct gt_stream *st = gt_stream_new("node", s);
		long got = feed(st, b, n, steps[i] == (size_t)-1 ? n : steps[i]);
		cr_assert_eq(got, (long)gt_store_event_count(ref), "step %zu: %ld (%s)", steps[i], got, err);
		struct gt_stream_info in;
		gt_stream_info(st, &in);
		cr_assert_eq(in.state, GT_STREAM_COMPLETE);
		cr_assert_eq(in.bytes, n);
		cr_assert_eq(gt_stream_close(st, err, sizeof(err)), 0);
		cr_assert_eq(gt_store_finish(s), 0);
		tgf_assert_same(ref, s);
		gt_stream_free(st);
		gt_store_free(s);
	}
	gt_store_free(ref);
	gt_store_free(src);
	free(b);
}

Test(gtstream, closed_mid_chunk_keeps_every_complete_chunk)
{
	struct gt_store *src = tgf_build(40, 1);
	size_t n;
	unsigned char *b = file_of(src, "cut", &n);
	for (size_t cut = 64; cut < n; cut += n / 23 + 1) {
		struct gt_store *ref = gt_store_new(), *s = gt_store_new();
		char rerr[512];
		int rrc = gt_file_read_mem(b, cut, "x", ref, NULL, rerr, sizeof(rerr));
		struct gt_stream *st = gt_stream_new("node7", s);
		long got = feed(st, b, cut, 0);
		cr_assert_geq(got, 0, "%s", err);
		int crc = gt_stream_close(st, err, sizeof(err));
		if (rrc == 0) {
			cr_assert_eq(crc, 1, "cut %zu", cut);
			cr_assert(strstr(err, "node7: cut off after ") == err, "%s", err);
			cr_assert_eq((size_t)got, gt_store_event_count(ref), "cut %zu", cut);
			/* both readers speak of the same bytes (the file said where
			 * its last complete chunk began, the stream where it ends) */
			const char *fe = strstr(rerr, "last complete chunk ends at byte "),
				   *se = strstr(err, "last complete chunk ends at byte ");
			char at[64];
			if (se) {
				cr_assert(fe, "file: %s | stream: %s", rerr, err);
				cr_assert_eq(atoll(fe + 33), atoll(se + 33), "file: %s | stream: %s", rerr,
					     err);
				snprintf(at, sizeof(at), "mid-chunk at byte %zu;", cut);
			} else {   /* cut between two chunks */
				cr_assert(!fe, "file: %s | stream: %s", rerr, err);
				snprintf(at, sizeof(at), "at byte %zu without its end marker", cut);
			}
			cr_assert(strstr(rerr, at) && strstr(err, at), "file: %s | stream: %s", rerr, err);
			cr_assert_eq(gt_store_finish(s), 0);
			tgf_assert_prefix(src, s);
		} else {
			cr_assert_eq(got, 0);   /* nothing complete: nothing decoded */
		}
		gt_stream_free(st);
		gt_store_free(s);
		gt_store_free(ref);
	}
	gt_store_free(src);
	free(b);
}

Test(gtstream, bad_streams_one_line_each)
{
	struct gt_store *s = gt_store_new();
	struct gt_stream *st = gt_stream_new("h1", s);
	cr_assert_lt(gt_stream_feed(st, "ssh: connect to host h1 port 22: Connection refused\n", 52,
				   err, sizeof(err)), 0);
	/* what came instead is named (trial 4: `open --live 'gtrace sim --live'`
	   said only "no GTRACE header" of the trainer's own chatter) */
	cr_assert_str_eq(err, "h1: not a gtrace stream (no GTRACE header; it begins 'ssh: connect "
			 "to host h1 port 22: Connect...')");
	cr_assert_lt(gt_stream_feed(st, "x", 1, err, sizeof(err)), 0);   /* nothing more taken */
	gt_stream_free(st);
	gt_store_free(s);

	unsigned char h[64];
	tgf_header(h, 2, 0, "9.0.0");
	s = gt_store_new();
	st = gt_stream_new("h2", s);
	cr_assert_lt(gt_stream_feed(st, h, 30, err, sizeof(err)), 0 + 1);   /* too short to tell */
	cr_assert_lt(gt_stream_feed(st, h + 30, 34, err, sizeof(err)), 0);
	char want[256];
	snprintf(want, sizeof(want), "h2: written by gtrace 9.0.0 (format 2.0), this is gtrace %s "
		 "(format %d.%d): upgrade gtrace", GTRACE_VERSION, GT_FILE_VERSION_MAJOR,
		 GT_FILE_VERSION_MINOR);
	cr_assert_str_eq(err, want);
	gt_stream_free(st);
	gt_store_free(s);

	/* nothing at all, a header cut short */
	s = gt_store_new();
	st = gt_stream_new("h3", s);
	cr_assert_lt(gt_stream_close(st, err, sizeof(err)), 0);
	cr_assert_str_eq(err, "h3: empty stream (nothing received)");
	gt_stream_free(st);
	gt_store_free(s);

	/* data after the end marker; a flipped bit */
	struct gt_store *src = tgf_build(1, 1);
	size_t n;
	unsigned char *b = file_of(src, "bad", &n);
	unsigned char *b2 = malloc(2 * n);
	memcpy(b2, b, n);
	memcpy(b2 + n, b + 64, n - 64);
	s = gt_store_new();
	st = gt_stream_new("h4", s);
	cr_assert_lt(feed(st, b2, 2 * n - 64, 0), 0);
	cr_assert(strstr(err, "h4: data after the end marker at byte"), "%s", err);
	gt_stream_free(st);
	gt_store_free(s);
	/* a few stray bytes after the end (less than a chunk header) */
	s = gt_store_new();
	st = gt_stream_new("h6", s);
	cr_assert_lt(feed(st, b2, n + 10, 0), 0);
	cr_assert(strstr(err, "h6: data after the end marker at byte"), "%s", err);
	gt_stream_free(st);
	gt_store_free(s);
	b[n / 2] ^= 4;
	s = gt_store_new();
	st = gt_stream_new("h5", s);
	cr_assert_lt(feed(st, b, n, 0), 0);
	cr_assert(strstr(err, "h5: checksum mismatch"), "%s", err);
	gt_stream_free(st);
	gt_store_free(s);
	free(b2);
	free(b);
	gt_store_free(src);
}

/* the lanes of `rank` of s (and what they need) as a store of their own */
static struct gt_store *one_rank(const struct gt_store *s, int32_t rank, const char *host)
{
	struct gt_store *o = gt_store_new();
	for (size_t i = 1; i < gt_store_str_count(s); i++)
		gt_store_intern_cstr(o, gt_store_str(s, (uint32_t)i));
	for (size_t i = 1; i <= gt_store_kconf_count(s); i++)
		gt_store_kconf(o, gt_store_kconf_at(s, (uint32_t)i));
	for (size_t i = 1; i <= gt_store_nccl_count(s); i++)
		gt_store_nccl(o, gt_store_nccl_at(s, (uint32_t)i));
	for (size_t i = 0; i < gt_store_rank_count(s); i++)
		if (gt_store_rank_at(s, i)->rank == rank) {
			struct gt_rank r = *gt_store_rank_at(s, i);
			r.host = 0;   /* the node's host is said by its metadata */
			gt_store_rank(o, &r);
		}
	for (size_t li = 0; li < gt_store_lane_count(s); li++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)li);
		if (l->key.rank != rank)
			continue;
		uint32_t id = gt_store_lane(o, &l->key);
		gt_store_lane_set_name(o, id, gt_store_str(s, l->name));
		for (size_t k = 0; k < l->n; k++) {
			struct gt_event e = l->ev[k];
			e.lane = id;
			cr_assert_eq(gt_store_add(o, &e), 0);
		}
	}
	gt_store_meta_set(o, "node.host", host);
	gt_store_meta_set(o, "node.clock.synced", "1");
	gt_store_meta_set(o, "node.clock.maxerror_us", "1500");
	gt_store_meta_set(o, "node.clock.esterror_us", "200");
	cr_assert_eq(gt_store_finish(o), 0);
	return o;
}

struct two {
	struct gt_store *all;      /* the simulated job, rank 1 shifted by the plant */
	unsigned char *a, *b;
	size_t na, nb;
	int64_t coll_ns;           /* median NCCL kernel duration */
};

static int cmp64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return a < b ? -1 : a > b;
}

static void two_nodes(struct two *t, int64_t plant_ns)
{
	struct gt_sim_opts o = { .ranks = 2, .gpus = 2, .steps = 30, .seed = 7,
			      .t0_ns = 1700000000000000000LL };
	t->all = gt_store_new();
	cr_assert_eq(gt_sim_generate(&o, t->all, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(gt_store_shift_rank(t->all, 1, plant_ns), 0);
	int64_t d[4096];
	size_t nd = 0;
	for (size_t li = 0; li < gt_store_lane_count(t->all); li++) {
		const struct gt_lane *l = gt_store_lane_at(t->all, (uint32_t)li);
		for (size_t k = 0; k < l->n && nd < 4096; k++)
			if (l->ev[k].flags & GT_EVF_NCCL)
				d[nd++] = l->ev[k].dur_ns;
	}
	cr_assert_gt(nd, 10, "the simulated job has collectives");
	qsort(d, nd, sizeof(*d), cmp64);
	t->coll_ns = d[nd / 2];
	struct gt_store *a = one_rank(t->all, 0, "alpha"), *b = one_rank(t->all, 1, "beta");
	t->a = file_of(a, "a", &t->na);
	t->b = file_of(b, "b", &t->nb);
	gt_store_free(a);
	gt_store_free(b);
}

static void two_free(struct two *t)
{
	gt_store_free(t->all);
	free(t->a);
	free(t->b);
}

Test(gtjob, two_nodes_merge_ranks_hosts_and_the_planted_offset)
{
	const int64_t plant = 3300000;   /* node beta's clock is 3.3 ms ahead */
	struct two t;
	two_nodes(&t, plant);
	struct gt_store *s = gt_store_new();
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_job *j = gt_job_new(s);
	cr_assert_eq(gt_job_add_node(j, "ssh alpha gtrace record --all -o -"), 0);
	cr_assert_eq(gt_job_add_node(j, "ssh beta gtrace record --all -o -"), 1);
	/* interleaved pieces, as two pipes deliver them */
	size_t oa = 0, ob = 0;
	long total = 0;
	while (oa < t.na || ob < t.nb) {
		size_t ka = t.na - oa < 5000 ? t.na - oa : 5000, kb = t.nb - ob < 3000 ? t.nb - ob : 3000;
		long r1 = gt_job_feed(j, 0, t.a + oa, ka, NULL, NULL);
		long r2 = gt_job_feed(j, 1, t.b + ob, kb, NULL, NULL);
		cr_assert(r1 >= 0 && r2 >= 0);
		total += r1 + r2;
		oa += ka;
		ob += kb;
	}
	gt_job_close(j, 0);
	gt_job_close(j, 1);
	cr_assert_eq(gt_store_finish(s), 0);
	cr_assert_eq((size_t)total, gt_store_event_count(t.all));
	cr_assert_eq(gt_store_event_count(s), gt_store_event_count(t.all));
	/* every event once: per lane, the same count and the same sum of starts */
	for (size_t li = 0; li < gt_store_lane_count(t.all); li++) {
		const struct gt_lane *l = gt_store_lane_at(t.all, (uint32_t)li);
		int found = 0;
		for (size_t m = 0; m < gt_store_lane_count(s); m++) {
			const struct gt_lane *x = gt_store_lane_at(s, (uint32_t)m);
			if (memcmp(&x->key.type, &l->key.type, 1) || x->key.rank != l->key.rank ||
			    x->key.device != l->key.device || x->key.pid != l->key.pid ||
			    x->key.id != l->key.id)
				continue;
			found = 1;
			cr_assert_eq(x->n, l->n);
			uint64_t sa = 0, sb = 0;   /* modulo 2^64: a checksum */
			for (size_t k = 0; k < l->n; k++) {
				sa += (uint64_t)l->ev[k].start_ns;
				sb += (uint64_t)x->ev[k].start_ns;
				cr_assert_str_eq(gt_store_str(s, x->ev[k].name), gt_store_str(t.all, l->ev[k].name));
			}
			cr_assert_eq(sa, sb);
		}
		cr_assert(found, "lane %zu of the job is in the merge", li);
	}
	/* ranks kept, hosts per rank from each node */
	cr_assert_eq(gt_store_rank_count(s), 2);
	for (size_t i = 0; i < 2; i++) {
		const struct gt_rank *r = gt_store_rank_at(s, i);
		cr_assert_str_eq(gt_store_str(s, r->host), r->rank == 0 ? "alpha" : "beta");
	}
	/* the clock: reported, not applied */
	cr_assert_eq(gt_job_align(j), 1);
	struct gt_job_node_info in;
	gt_job_node(j, 1, &in);
	cr_assert(in.have_residual);
	cr_assert_leq(llabs(in.residual_ns - plant), t.coll_ns, "residual %lld, planted %lld, "
		      "collective %lld ns", (long long)in.residual_ns, (long long)plant,
		      (long long)t.coll_ns);
	cr_assert_eq(in.clock_synced, 1);
	cr_assert_eq(in.clock_maxerror_us, 1500);
	gt_job_node(j, 0, &in);
	cr_assert(in.reference);
	int64_t before = gt_store_t_min(s);
	char line[512];
	gt_job_clock_line(j, line, sizeof(line));
	cr_assert(strstr(line, "clock: beta +3.3") == line && strstr(line, "vs alpha") &&
		  strstr(line, "not applied"), "%s", line);
	cr_assert_eq(gt_store_t_min(s), before);
	/* applied on request: rank 1 back on rank 0's clock */
	cr_assert_eq(gt_job_apply(j), 1);   /* one node moved */
	cr_assert_eq(gt_job_apply(j), 0);   /* already there */
	gt_job_node(j, 1, &in);
	cr_assert_eq(in.applied_ns, -in.residual_ns);
	gt_job_meta(j);
	cr_assert_str_eq(gt_store_meta_get(s, "clock.applied"), "yes");
	cr_assert_str_eq(gt_store_meta_get(s, "node.1.host"), "beta");
	cr_assert_str_eq(gt_store_meta_get(s, "node.1.state"), "complete");
	/* a second estimate on the shifted events says the same residual */
	cr_assert_eq(gt_job_align(j), 1);
	struct gt_job_node_info in2;
	gt_job_node(j, 1, &in2);
	cr_assert_leq(llabs(in2.residual_ns - in.residual_ns), 1000);
	gt_job_free(j);
	gt_store_free(s);
	two_free(&t);
}

/* a node of `n` NCCL all-reduces of 100 us ending on the grid instants
 * first..first+n-1 of `period_ns`, read on a clock `clock_ns` ahead, as
 * a .gtrace file of rank `rank` */
static unsigned char *grid_node(int32_t rank, const char *host, int first, int n,
				int64_t period_ns, int64_t clock_ns, size_t *len)
{
	struct gt_store *o = gt_store_new();
	struct gt_rank r = { .rank = rank, .pid = 100 + rank, .world_size = 2 };
	gt_store_rank(o, &r);
	struct gt_lane_key key = { .type = GT_LANE_GPU, .rank = rank, .device = 0, .id = 63 };
	uint32_t lane = gt_store_lane(o, &key);
	uint32_t name = gt_store_intern_cstr(o, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
	for (int k = first; k < first + n; k++) {
		int64_t end = 1700000000000000000LL + k * period_ns + clock_ns;
		struct gt_event e = { .start_ns = end - 100000, .dur_ns = 100000, .name = name,
				      .lane = lane, .kind = GT_EV_KERNEL, .flags = GT_EVF_NCCL };
		cr_assert_eq(gt_store_add(o, &e), 0);
	}
	gt_store_meta_set(o, "node.host", host);
	cr_assert_eq(gt_store_finish(o), 0);
	unsigned char *b = file_of(o, host, len);
	gt_store_free(o);
	return b;
}

/* cli_multinode's flake at load 15 (planted 3 ms read as -117 ms): two
 * nodes whose collectives share a 20 ms grid, one capture beginning
 * hundreds of ms before the other (a node started later, its first
 * collectives missed).  The shift by whole periods that pairs the most
 * collectives is not the offset: the estimate is the planted one, within
 * the collective's duration, whichever node began first.  cli_multinode
 * also read it as -37 ms when a node under load began 1.4 s late: 11
 * collectives overlapped, and the shift by 12 periods paired 23 */
Test(gtjob, periodic_collectives_of_captures_begun_apart)
{
	const int64_t plant = 3000000, period = 20000000;
	static const int shifts[][3] = { /* node b's first instant, a's count, b's count */
		{ -14, 80, 70 }, { -13, 80, 80 }, { -9, 80, 80 }, { 9, 80, 80 }, { 14, 70, 80 },
		{ 0, 80, 80 }, { -30, 80, 80 }, { 25, 60, 80 },
		/* a node started over a second late: 11, 6 and 4 collectives
		 * overlap, fewer than half the shifts within reach pair */
		{ -69, 80, 80 }, { 69, 80, 80 }, { -74, 80, 80 }, { 76, 80, 80 } };
	for (size_t t = 0; t < sizeof(shifts) / sizeof(shifts[0]); t++) {
		size_t na, nb;
		unsigned char *a = grid_node(0, "alpha", 0, shifts[t][1], period, 0, &na);
		unsigned char *b = grid_node(1, "beta", shifts[t][0], shifts[t][2], period, plant, &nb);
		struct gt_store *s = gt_store_new();
		cr_assert_eq(gt_store_finish(s), 0);
		struct gt_job *j = gt_job_new(s);
		cr_assert_eq(gt_job_add_node(j, "alpha"), 0);
		cr_assert_eq(gt_job_add_node(j, "beta"), 1);
		cr_assert_geq(gt_job_feed(j, 0, a, na, NULL, NULL), 0);
		cr_assert_geq(gt_job_feed(j, 1, b, nb, NULL, NULL), 0);
		gt_job_close(j, 0);
		gt_job_close(j, 1);
		cr_assert_eq(gt_store_finish(s), 0);
		cr_assert_eq(gt_job_align(j), 1);
		struct gt_job_node_info in;
		gt_job_node(j, 1, &in);
		cr_assert(in.have_residual);
		cr_assert_leq(llabs(in.residual_ns - plant), 100000, "b begins %d periods off: "
			      "residual %lld ns, planted %lld", shifts[t][0],
			      (long long)in.residual_ns, (long long)plant);
		gt_job_free(j);
		gt_store_free(s);
		free(a);
		free(b);
	}
}

Test(gtjob, a_node_cut_mid_chunk_and_a_bad_node_leave_the_rest)
{
	struct two t;
	two_nodes(&t, 0);
	struct gt_store *s = gt_store_new(), *ref = gt_store_new();
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_job *j = gt_job_new(s);
	gt_job_add_node(j, "alpha");
	gt_job_add_node(j, "beta");
	gt_job_add_node(j, "gamma");
	size_t cut = t.nb * 2 / 3 + 11;
	char rerr[512];
	cr_assert_eq(gt_file_read_mem(t.b, cut, "b", ref, NULL, rerr, sizeof(rerr)), 0, "%s", rerr);
	cr_assert_eq(gt_job_feed(j, 2, "garbage\n", 8, NULL, NULL), -EINVAL);
	cr_assert_geq(gt_job_feed(j, 1, t.b, cut, NULL, NULL), 0);
	gt_job_close(j, 1);
	cr_assert_geq(gt_job_feed(j, 0, t.a, t.na, NULL, NULL), 0);
	gt_job_close(j, 0);
	gt_job_close(j, 2);
	struct gt_job_node_info in;
	gt_job_node(j, 1, &in);
	cr_assert_eq(in.state, GT_STREAM_CUT);
	cr_assert_eq(in.events, gt_store_event_count(ref));
	cr_assert(strstr(in.msg, "beta: cut off after ") && strstr(in.msg, "mid-chunk"), "%s", in.msg);
	gt_job_node(j, 2, &in);
	cr_assert_eq(in.state, GT_STREAM_ERROR);
	cr_assert_str_eq(in.msg, "gamma: not a gtrace stream (no GTRACE header; it begins 'garbage')");
	gt_job_node(j, 0, &in);
	cr_assert_eq(in.state, GT_STREAM_COMPLETE);
	cr_assert_eq(gt_store_finish(s), 0);
	cr_assert_eq(gt_store_event_count(s), in.events + gt_store_event_count(ref));
	gt_job_free(j);
	gt_store_free(ref);
	gt_store_free(s);
	two_free(&t);
}

Test(gtjob, same_rank_on_two_nodes_is_moved_and_said)
{
	struct two t;
	two_nodes(&t, 0);
	struct gt_store *s = gt_store_new();
	cr_assert_eq(gt_store_finish(s), 0);
	struct gt_job *j = gt_job_new(s);
	gt_job_add_node(j, "n1");
	gt_job_add_node(j, "n2");
	cr_assert_geq(gt_job_feed(j, 0, t.a, t.na, NULL, NULL), 0);
	cr_assert_geq(gt_job_feed(j, 1, t.a, t.na, NULL, NULL), 0);   /* rank 0 again */
	struct gt_job_node_info in;
	gt_job_node(j, 1, &in);
	cr_assert(strstr(in.msg, "rank 0 is also on alpha: shown as rank"), "%s", in.msg);
	cr_assert_eq(gt_store_rank_count(s), 2);
	cr_assert_neq(gt_store_rank_at(s, 0)->rank, gt_store_rank_at(s, 1)->rank);
	gt_job_free(j);
	gt_store_free(s);
	two_free(&t);
}

Test(gtjob, files_of_one_job_load_as_one)
{
	struct two t;
	two_nodes(&t, 2000000);
	const char *pa = "/tmp/gtjob-a.gtrace", *pb = "/tmp/gtjob-b.gtrace";
	char a[256], b[256];
	snprintf(a, sizeof(a), "%s.%d", pa, (int)getpid());
	snprintf(b, sizeof(b), "%s.%d", pb, (int)getpid());
	FILE *f = fopen(a, "wb");
	fwrite(t.a, 1, t.na, f);
	fclose(f);
	f = fopen(b, "wb");
	fwrite(t.b, 1, t.nb / 2, f);   /* the second node's file was cut off */
	fclose(f);
	const char *paths[] = { a, b };
	struct gt_store *s = gt_store_new();
	char warn[512];
	cr_assert_eq(gt_job_load_files(paths, 2, s, 0, warn, sizeof(warn), err, sizeof(err)), 0, "%s",
		     err);
	cr_assert(strstr(warn, b) == warn && strstr(warn, "cut off after"), "%s", warn);
	cr_assert_eq(gt_store_rank_count(s), 2);
	cr_assert_str_eq(gt_store_meta_get(s, "job.nodes"), "2");
	cr_assert_str_eq(gt_store_meta_get(s, "clock.applied"), "no");
	cr_assert_null(gt_store_meta_get(s, "import.mixed_runs"), "overlapping nodes are one job");
	gt_store_free(s);
	/* a bad file is an error naming it */
	f = fopen(b, "wb");
	fputs("not a capture", f);
	fclose(f);
	s = gt_store_new();
	cr_assert_lt(gt_job_load_files(paths, 2, s, 0, warn, sizeof(warn), err, sizeof(err)), 0);
	char want[512];
	snprintf(want, sizeof(want), "%s: not a gtrace stream (no GTRACE header; it begins "
		 "'not a capture')", b);
	cr_assert_str_eq(err, want);
	gt_store_free(s);
	unlink(a);
	unlink(b);
	two_free(&t);
}

/* two captures taken an hour apart (planted: beta's rank shifted 3600 s past
 * alpha's 30 steps) are separate runs, not nodes of one job: the store says
 * so (import.mixed_runs, as for trace JSON files) and the warning names it */
Test(gtjob, captures_apart_are_separate_runs)
{
	struct two t;
	two_nodes(&t, 3600000000000LL);
	char a[256], b[256];
	snprintf(a, sizeof(a), "/tmp/gtjob-apart-a.gtrace.%d", (int)getpid());
	snprintf(b, sizeof(b), "/tmp/gtjob-apart-b.gtrace.%d", (int)getpid());
	FILE *f = fopen(a, "wb");
	fwrite(t.a, 1, t.na, f);
	fclose(f);
	f = fopen(b, "wb");
	fwrite(t.b, 1, t.nb, f);
	fclose(f);
	const char *paths[] = { a, b };
	struct gt_store *s = gt_store_new();
	char warn[512];
	cr_assert_eq(gt_job_load_files(paths, 2, s, 0, warn, sizeof(warn), err, sizeof(err)), 0, "%s",
		     err);
	cr_expect_str_eq(gt_store_meta_get(s, "import.mixed_runs"), "no overlap");
	cr_expect(strstr(warn, "do not overlap in time") && strstr(warn, "separate runs"), "%s", warn);
	gt_store_free(s);
	unlink(a);
	unlink(b);
	two_free(&t);
}
