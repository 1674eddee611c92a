/*
 * test_xplane.c - the XPlane importer.  Facts of the real TensorFlow
 * profile (tf/tf_bert_multiworker.xplane.pb) as printed by an independent
 * decode with python3-protobuf (xplane_facts.py beside this file: run it to
 * see every number used here); files written by protobuf-c (xpwrite.c) with
 * planted truths: nesting, ps rounding, unknown and TPU-like planes, XLA
 * lanes, correlation, steps, several hosts in a TensorBoard run directory,
 * gzip; and bad files.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "gtrace/import.h"
#include "gtrace/load.h"
#include "impcheck.h"
#include "xpwrite.h"

#define REAL "tf/tf_bert_multiworker.xplane.pb"

/* the lane of (type, device, pid, id) in rank r, or NULL */
static const struct gt_lane *lane_of(const struct gt_store *s, int32_t r, int type, int32_t dev,
				     int64_t pid, int64_t id)
{
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.rank == r && l->key.type == type && l->key.device == dev &&
		    l->key.pid == pid && l->key.id == id)
			return l;
	}
	return NULL;
}

static size_t count_on(const struct gt_lane *l, int kind, int64_t *dur, uint64_t *arg)
{
	size_t n = 0;
	for (size_t i = 0; l && i < l->n; i++)
		if (l->ev[i].kind == kind) {
			n++;
			if (dur)
				*dur += l->ev[i].dur_ns;
			if (arg)
				*arg += l->ev[i].arg;
		}
	return n;
}

Test(xplane_real, planes_streams_kernels)
{
	struct gt_store *s = tload(REAL);
	cr_expect_str_eq(gt_store_meta_get(s, "format"), "xplane");
	/* 23,128 events in the file (15,354 host + 19 + 3,875 + 3,880 GPU) and one step */
	cr_expect_eq(gt_store_event_count(s), 23129);
	/* GPU 4 stream 134 (Compute): 665 kernels, 14,825,385,000 ps; GPU 6 stream 142: 665,
	 * 14,865,363,000 ps */
	int64_t d4 = 0, d6 = 0;
	cr_expect_eq(count_on(lane_of(s, 0, GT_LANE_GPU, 4, 0, 134), GT_EV_KERNEL, &d4, NULL), 665);
	cr_expect_eq(count_on(lane_of(s, 0, GT_LANE_GPU, 6, 0, 142), GT_EV_KERNEL, &d6, NULL), 665);
	cr_expect_eq(d4, 14825385);
	cr_expect_eq(d6, 14865363);
	struct kfacts f;
	kfacts_of(s, &f);
	cr_expect_eq(f.kernels, 1330);
	cr_expect_eq(f.names, 11);
	cr_expect_eq(f.gpu_lanes, 2);
	/* copies: H2D GPU 1 19 (3,112 B), GPU 4 2 + 80 (37,447 B), GPU 6 99 + 2 (40,559 B); D2H 12 each */
	uint64_t b = 0;
	cr_expect_eq(count_on(lane_of(s, 0, GT_LANE_GPU, 1, 0, 123), GT_EV_MEMCPY, NULL, &b), 19);
	cr_expect_eq(b, 3112);
	b = 0;
	count_on(lane_of(s, 0, GT_LANE_GPU, 4, 0, 63), GT_EV_MEMCPY, NULL, &b);
	cr_expect_eq(count_on(lane_of(s, 0, GT_LANE_GPU, 4, 0, 135), GT_EV_MEMCPY, NULL, &b), 80);
	cr_expect_eq(b, 37447);
	b = 0;
	cr_expect_eq(count_on(lane_of(s, 0, GT_LANE_GPU, 6, 0, 144), GT_EV_MEMCPY, NULL, &b), 12);
	cr_expect_eq(b, 36944);
	size_t h2d = 0, d2h = 0;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		for (size_t j = 0; j < l->n; j++)
			if (l->ev[j].kind == GT_EV_MEMCPY) {
				h2d += l->ev[j].sub == GT_COPY_H2D;
				d2h += l->ev[j].sub == GT_COPY_D2H;
			}
	}
	cr_expect_eq(h2d, 202);
	cr_expect_eq(d2h, 24);
	/* kernel_details of stream 134's first kernel: regs:38 shm:0 grid:160,1,1 block:1024,1,1 */
	const struct gt_lane *k4 = lane_of(s, 0, GT_LANE_GPU, 4, 0, 134);
	const struct gt_kconf *kc = gt_store_kconf_at(s, gt_event_kconf(&k4->ev[0]));
	cr_assert(kc);
	cr_expect_eq(kc->regs_per_thread, 38);
	cr_expect_eq(kc->grid[0], 160);
	cr_expect_eq(kc->block[0], 1024);
	/* line timestamp 245,747 ns + first offset 1,921,054,081,000 ps */
	cr_expect_eq(k4->ev[0].start_ns, 245747 + 1921054081LL);
	gt_store_free(s);
}

Test(xplane_real, host_devices_links_steps)
{
	struct gt_store *s = tload(REAL);
	cr_assert_eq(gt_store_rank_count(s), 1);
	cr_expect_str_eq(gt_store_str(s, gt_store_rank_at(s, 0)->host), "34.83.195.179:6003");
	/* 8 GPU planes, each with core_count 80, memory_size 16945512448, cc 7.0 */
	cr_expect_eq(gt_store_device_count(s), 8);
	for (size_t i = 0; i < gt_store_device_count(s); i++) {
		const struct gt_device *d = gt_store_device_at(s, i);
		cr_expect_eq(d->sm_count, 80);
		cr_expect_eq(d->mem_bytes, 16945512448ULL);
		cr_expect_eq(d->cc_major, 7);
		cr_expect_eq(d->cc_minor, 0);
	}
	cr_expect_str_eq(gt_store_meta_get(s, "xplane.rank0.gpu4.clock_rate_khz"), "1530000");
	/* context_id per stream, as xplane_facts.py prints it ("$$5": TensorFlow's text) */
	static const struct { int gpu, stream; const char *ctx; } cx[] = {
		{ 1, 123, "$$2" }, { 4, 63, "$$5" }, { 4, 134, "$$5" }, { 4, 135, "$$5" },
		{ 4, 136, "$$5" }, { 6, 91, "$$7" }, { 6, 142, "$$7" }, { 6, 143, "$$7" },
		{ 6, 144, "$$7" },
	};
	for (size_t i = 0; i < sizeof(cx) / sizeof(cx[0]); i++) {
		char k[96];
		snprintf(k, sizeof(k), "xplane.rank0.gpu%d.stream%d.context_id", cx[i].gpu, cx[i].stream);
		const char *v = gt_store_meta_get(s, k);
		cr_expect(v && !strcmp(v, cx[i].ctx), "%s = %s, want %s", k, v ? v : "(none)", cx[i].ctx);
	}
	cr_expect_str_eq(gt_store_meta_get(s, "xplane.rank0.gpu4.memory_bandwidth_bytes_per_s"),
			 "898048000000");
	/* 22 host lines -> 22 host lanes (pid 0); 1,556 host events with correlation_id; 4 Iterator:: */
	size_t hl = 0, launches = 0, input = 0;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type != GT_LANE_HOST || l->key.pid != 0)
			continue;
		hl++;
		for (size_t j = 0; j < l->n; j++) {
			launches += l->ev[j].corr && (l->ev[j].flags & GT_EVF_LAUNCH);
			input += (l->ev[j].flags & GT_EVF_DATALOADER) != 0;
		}
	}
	cr_expect_eq(hl, 22);
	cr_expect_eq(launches, 1556);
	cr_expect_eq(input, 4);
	/* every one of the 1,556 GPU events with a correlation_id finds its host launch */
	size_t linked = 0;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		for (size_t j = 0; j < l->n; j++) {
			struct gt_ref peer;
			if (gt_event_is_gpu(&l->ev[j]) && l->ev[j].corr &&
			    !gt_store_corr_peer(s, (struct gt_ref){ (uint32_t)i, (uint32_t)j }, &peer))
				linked++;
		}
	}
	cr_expect_eq(linked, 1556);
	/* derived lines: GPU 4 TensorFlow Ops 665, Name Scope 2,450, Steps 1 (annotation lanes) */
	size_t ops = 0, scopes = 0;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type == GT_LANE_GPU && l->key.device == 4 && l->key.pid == -1) {
			const char *nm = gt_store_str(s, l->name);
			if (strstr(nm, "TensorFlow Ops"))
				ops = count_on(l, GT_EV_GPU_ANNOT, NULL, NULL);
			if (strstr(nm, "TensorFlow Name Scope"))
				scopes = count_on(l, GT_EV_GPU_ANNOT, NULL, NULL);
		}
	}
	cr_expect_eq(ops, 665);
	cr_expect_eq(scopes, 2450);
	/* step 0 (group 0): GPU 4 [1,921,054,081,000, +19,865,491,000 ps], GPU 6
	 * [2,568,609,854,000, +21,310,352,000 ps] on line time 245,747 ns: the union */
	const struct gt_lane *st = lane_of(s, 0, GT_LANE_HOST, -1, -1, 0);
	cr_assert(st);
	cr_assert_eq(st->n, 1);
	cr_expect_eq(st->ev[0].kind, GT_EV_STEP);
	cr_expect_eq(st->ev[0].start_ns, 245747 + 1921054081LL);
	cr_expect_eq(gt_event_end(&st->ev[0]), 245747 + 2568609854LL + 21310352LL);
	gt_store_free(s);
}

/* `gtrace stats ARGS` with stderr; its exit status */
static int stats_cli(const char *args, char *out, size_t outlen)
{
	return impcheck_cli(out, outlen, "stats %s", args);
}

/* ---- files of our own writer ---- */

static struct gt_store *load_space(const XSpace *sp)
{
	size_t len;
	uint8_t *b = xpw_pack(sp, &len);
	struct gt_store *s = gt_store_new();
	char err[256];
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
	int rc = gt_xplane_import_mem("mem.xplane.pb", b, len, &o, s, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s", err);
	return s;
}

Test(xplane_own, nesting_rounding_correlation)
{
	XSpace *sp = xpw_space("hostA");
	XPlane *h = xpw_plane(sp, "/host:CPU");
	int64_t outer = xpw_evmeta(h, "train_function", NULL), inner = xpw_evmeta(h, "long_name:Op", "Op");
	int64_t launch = xpw_evmeta(h, "cudaLaunchKernel", NULL), it = xpw_evmeta(h, "Iterator::Map", NULL);
	int64_t base = 1700000000123456789LL;    /* epoch ns: exact integer arithmetic needed */
	XLine *t = xpw_line(h, 77, "python3", base);
	xpw_event(t, outer, 0, 10000000);                  /* [0, 10 us] */
	xpw_event(t, inner, 2000499, 3000002);             /* 2000.499 ns -> 2000, end 5000.501 -> 5001 */
	XEvent *le = xpw_event(t, launch, 2500500, 1000);  /* 2500.5 -> 2501 (half up), end 2501.5 -> 2502 */
	xpw_stat_int(h, le, "correlation_id", 42);
	xpw_event(t, it, 6000000, 1000000);
	XPlane *g = xpw_plane(sp, "/device:GPU:0");
	int64_t k = xpw_evmeta(g, "my_kernel", NULL);
	XLine *gs = xpw_line(g, 7, "Stream #7(Compute)", base);
	XEvent *ke = xpw_event(gs, k, 3000000, 1499);      /* 1.499 ns -> end 3001.499 -> 3001 */
	xpw_stat_int(g, ke, "correlation_id", 42);
	xpw_stat_str(g, ke, "kernel_details",
		     "regs:32 static_shared:16 dynamic_shared:8 grid:2,3,4 block:128,1,1 occ_pct:50");
	struct gt_store *s = load_space(sp);
	const struct gt_lane *l = lane_of(s, 0, GT_LANE_HOST, -1, 0, 77);
	cr_assert(l);
	cr_expect_str_eq(gt_store_str(s, l->name), "python3");
	cr_assert_eq(l->n, 4);
	cr_expect_eq(l->ev[0].start_ns, base);
	cr_expect_eq(l->ev[0].dur_ns, 10000);
	cr_expect_str_eq(gt_store_str(s, l->ev[1].name), "Op");    /* display_name wins */
	cr_expect_eq(l->ev[1].start_ns, base + 2000);
	cr_expect_eq(gt_event_end(&l->ev[1]), base + 5001);
	cr_expect_eq(l->ev[2].start_ns, base + 2501);
	cr_expect_eq(l->ev[2].dur_ns, 1);
	cr_expect_eq(l->ev[2].kind, GT_EV_RUNTIME);
	cr_expect(l->ev[2].flags & GT_EVF_LAUNCH);
	cr_expect(l->ev[3].flags & GT_EVF_DATALOADER);
	/* nesting: the op inside train_function is depth 1, the launch inside the op depth 2 */
	struct gt_depth *d;
	cr_assert_eq(gt_store_depth_build(l, &d), 0);
	cr_expect_eq(gt_store_depth_of(d, l, 0), 0);
	cr_expect_eq(gt_store_depth_of(d, l, 1), 1);
	cr_expect_eq(gt_store_depth_of(d, l, 2), 2);
	cr_expect_eq(gt_store_depth_of(d, l, 3), 1);
	gt_store_depth_free(d);
	const struct gt_lane *gl = lane_of(s, 0, GT_LANE_GPU, 0, 0, 7);
	cr_assert(gl);
	cr_expect_eq(gl->ev[0].kind, GT_EV_KERNEL);
	cr_expect_eq(gl->ev[0].start_ns, base + 3000);
	cr_expect_eq(gl->ev[0].dur_ns, 1);
	const struct gt_kconf *kc = gt_store_kconf_at(s, gt_event_kconf(&gl->ev[0]));
	cr_assert(kc);
	cr_expect_eq(kc->regs_per_thread, 32);
	cr_expect_eq(kc->smem_static_bytes, 16);
	cr_expect_eq(kc->smem_dynamic_bytes, 8);
	cr_expect(kc->grid[0] == 2 && kc->grid[1] == 3 && kc->grid[2] == 4);
	cr_expect(kc->block[0] == 128 && kc->block[1] == 1);
	cr_expect_float_eq(kc->occupancy_pct, 50.0f, 1e-6);
	struct gt_ref peer;
	cr_assert_eq(gt_store_corr_peer(s, (struct gt_ref){ gl->id, 0 }, &peer), 0);
	cr_expect_eq(peer.lane, l->id);
	cr_expect_eq(peer.idx, 2);
	gt_store_free(s);
	xpw_reset();
}

Test(xplane_own, xla_lanes_tpu_plane_steps_from_stats)
{
	XSpace *sp = xpw_space("tpu-host");
	XPlane *g = xpw_plane(sp, "/device:GPU:3");
	int64_t mod = xpw_evmeta(g, "jit_train_step", NULL), op = xpw_evmeta(g, "fusion.12", NULL);
	int64_t cp = xpw_evmeta(g, "MemcpyD2H", NULL);
	xpw_stat_int(g, NULL, "core_count", 132);
	xpw_stat_int(g, NULL, "memory_size", 85000000000LL);
	xpw_stat_int(g, NULL, "compute_cap_major", 9);
	xpw_stat_int(g, NULL, "compute_cap_minor", 0);
	XLine *m = xpw_line(g, 1, "XLA Modules", 1000);
	xpw_event(m, mod, 0, 5000000);
	XLine *o = xpw_line(g, 2, "XLA Ops", 1000);
	xpw_event(o, op, 1000000, 1000000);
	xpw_event(o, op, 3000000, 1000000);
	XLine *c = xpw_line(g, 9, "Stream #9(MemcpyD2H)", 1000);
	XEvent *ce = xpw_event(c, cp, 0, 1000000);
	xpw_stat_str(g, ce, "memcpy_details", "kind_src:device kind_dst:pinned size:4096 dest:3 async:1");
	XPlane *t = xpw_plane(sp, "/device:TPU:0");
	int64_t tf = xpw_evmeta(t, "fusion.7", NULL);
	XLine *tl = xpw_line(t, 5, "XLA Ops", 1000);
	xpw_event(tl, tf, 0, 2000000);
	xpw_event(tl, tf, 4000000, 2000000);
	XPlane *h = xpw_plane(sp, "/host:CPU");
	int64_t step = xpw_evmeta(h, "train", NULL);
	XLine *hl = xpw_line(h, 11, "main", 1000);
	for (int i = 0; i < 3; i++)
		xpw_stat_int(h, xpw_event(hl, step, i * 10000000LL, 9000000), "step_num", 100 + i);
	struct gt_store *s = load_space(sp);
	cr_expect_eq(count_on(lane_of(s, 0, GT_LANE_GPU, 3, -1, 1), GT_EV_GPU_ANNOT, NULL, NULL), 1);
	const struct gt_lane *ol = lane_of(s, 0, GT_LANE_GPU, 3, -1, 2);
	cr_expect_eq(count_on(ol, GT_EV_GPU_ANNOT, NULL, NULL), 2);
	cr_expect_str_eq(gt_store_str(s, ol->name), "GPU 3 XLA Ops");
	const struct gt_lane *cl = lane_of(s, 0, GT_LANE_GPU, 3, 0, 9);
	cr_assert(cl && cl->n == 1);
	cr_expect_eq(cl->ev[0].kind, GT_EV_MEMCPY);
	cr_expect_eq(cl->ev[0].sub, GT_COPY_D2H);
	cr_expect_eq(cl->ev[0].arg, 4096);
	cr_expect(cl->ev[0].flags & GT_EVF_PINNED);
	/* the TPU plane (index 1) is kept: a host-type lane of its own, CPU ops */
	const struct gt_lane *tp = lane_of(s, 0, GT_LANE_HOST, -1, -3, 5);
	cr_assert(tp);
	cr_expect_eq(count_on(tp, GT_EV_CPU_OP, NULL, NULL), 2);
	cr_expect_str_eq(gt_store_str(s, tp->name), "/device:TPU:0 XLA Ops");
	/* no Steps line: the three step_num events are the steps */
	const struct gt_lane *st = lane_of(s, 0, GT_LANE_HOST, -1, -1, 0);
	cr_assert(st);
	cr_assert_eq(st->n, 3);
	cr_expect_eq(st->ev[1].arg, 101);
	cr_expect_eq(st->ev[1].start_ns, 1000 + 10000);
	cr_expect_eq(st->ev[1].dur_ns, 9000);
	cr_assert_eq(gt_store_device_count(s), 1);
	cr_expect_eq(gt_store_device_at(s, 0)->id, 3);
	cr_expect_eq(gt_store_device_at(s, 0)->sm_count, 132);
	cr_expect_eq(gt_store_device_at(s, 0)->cc_major, 9);
	gt_store_free(s);
	xpw_reset();
}

/* a host file of a run: one GPU kernel at ts */
static void host_file(const char *path, const char *host, int64_t ts)
{
	XSpace *sp = xpw_space(host);
	XPlane *g = xpw_plane(sp, "/device:GPU:0");
	XLine *l = xpw_line(g, 1, "Stream #1(Compute)", ts);
	xpw_event(l, xpw_evmeta(g, "k", NULL), 0, 5000000);
	cr_assert_eq(xpw_write(sp, path), 0);
	xpw_reset();
}

static void set_mtime(const char *p, time_t t)
{
	struct timeval tv[2] = { { t, 0 }, { t, 0 } };
	utimes(p, tv);
}

Test(xplane_own, run_directory_hosts_gzip)
{
	char root[] = "/tmp/gtrace_xplane_XXXXXX", p[256], q[512];
	cr_assert(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/plugins", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/plugins/profile", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/plugins/profile/2024_01_01_10_00_00", root);
	mkdir(p, 0755);
	snprintf(q, sizeof(q), "%s/hostA.xplane.pb", p);
	host_file(q, "hostA", 1000);
	set_mtime(p, 1000000);
	snprintf(p, sizeof(p), "%s/plugins/profile/2024_01_02_10_00_00", root);
	mkdir(p, 0755);
	snprintf(q, sizeof(q), "%s/worker1.xplane.pb.gz", p);
	host_file(q, "worker1", 2000);
	snprintf(q, sizeof(q), "%s/worker0.xplane.pb", p);
	host_file(q, "worker0", 3000);
	set_mtime(p, 2000000);
	/* LOGDIR: the newest run, its two hosts as ranks 0 and 1 in name order */
	const char *in = root;
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
	struct gt_store *s;
	char err[512];
	cr_expect_eq(gt_load_detect(root, err, sizeof(err)), GT_FMT_XPLANE);
	cr_assert_eq(gt_load(&in, 1, &o, &s, err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(gt_store_meta_get(s, "xplane.run"), "2024_01_02_10_00_00");
	cr_assert_eq(gt_store_rank_count(s), 2);
	cr_expect_str_eq(gt_store_str(s, gt_store_rank_at(s, 0)->host), "worker0");
	cr_expect_str_eq(gt_store_str(s, gt_store_rank_at(s, 1)->host), "worker1");
	cr_expect_eq(gt_store_rank_at(s, 1)->world_size, 2);
	cr_expect_eq(lane_of(s, 1, GT_LANE_GPU, 0, 0, 1)->ev[0].start_ns, 2000);   /* from the .gz */
	gt_store_free(s);
	/* --run picks the other; plugins/profile and the run folder itself work too */
	o.run = "2024_01_01_10_00_00";
	cr_assert_eq(gt_load(&in, 1, &o, &s, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(gt_store_rank_count(s), 1);
	cr_expect_str_eq(gt_store_str(s, gt_store_rank_at(s, 0)->host), "hostA");
	gt_store_free(s);
	o.run = "nope";
	cr_expect_neq(gt_load(&in, 1, &o, &s, err, sizeof(err)), 0);
	cr_expect(strstr(err, "no run 'nope'") && strstr(err, "2024_01_01_10_00_00"), "%s", err);
	o.run = NULL;
	snprintf(p, sizeof(p), "%s/plugins/profile/2024_01_01_10_00_00", root);
	in = p;
	cr_assert_eq(gt_load(&in, 1, &o, &s, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(gt_store_rank_count(s), 1);
	gt_store_free(s);
	/* the host files given one by one: ranks in the order given */
	char p0[600], p1[600];
	snprintf(p0, sizeof(p0), "%s/plugins/profile/2024_01_02_10_00_00/worker1.xplane.pb.gz", root);
	snprintf(p1, sizeof(p1), "%s/plugins/profile/2024_01_02_10_00_00/worker0.xplane.pb", root);
	const char *two[2] = { p0, p1 };
	cr_assert_eq(gt_load(two, 2, &o, &s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(gt_store_rank_count(s), 2);
	cr_expect_str_eq(gt_store_str(s, gt_store_rank_at(s, 0)->host), "worker1");
	cr_expect_str_eq(gt_store_str(s, gt_store_rank_at(s, 1)->host), "worker0");
	gt_store_free(s);
	/* an XPlane file and a JSON file do not merge: one line says so */
	const char *mixed[2] = { p1, tpath("hta/nccl_data.json.gz") };
	cr_expect_neq(gt_load(mixed, 2, &o, &s, err, sizeof(err)), 0);
	cr_expect(strstr(err, "is an XPlane profile; only trace JSON files can be merged"), "%s", err);
	/* the CLI says which run it opened, and --run opens another */
	char args[600], out[8192];
	snprintf(args, sizeof(args), "'%s' --report summary", root);
	cr_expect_eq(stats_cli(args, out, sizeof(out)), 0, "%s", out);
	cr_expect(strstr(out, "run 2024_01_02_10_00_00 (the newest of 2 runs; --run NAME opens another)"),
		  "%s", out);
	snprintf(args, sizeof(args), "'%s' --run 2024_01_01_10_00_00 --report summary", root);
	cr_expect_eq(stats_cli(args, out, sizeof(out)), 0, "%s", out);
	cr_expect(strstr(out, "run 2024_01_01_10_00_00 (one of 2 runs, chosen with --run)"), "%s", out);
	snprintf(args, sizeof(args), "'%s' --run nope", root);
	cr_expect_eq(stats_cli(args, out, sizeof(out)), 1, "%s", out);
	cr_expect(strstr(out, "no run 'nope'"), "%s", out);
	char cmd[1100];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_expect_eq(system(cmd), 0);
}

/* ---- bad files ---- */

static int cli(const char *path, char *out, size_t outlen)
{
	return impcheck_cli(out, outlen, "stats '%s'", path);
}

static void bad_file(const char *what, const void *buf, size_t len, const char *expect)
{
	char path[] = "/tmp/gtrace_bad_XXXXXX.xplane.pb", out[4096];
	int fd = mkstemps(path, 10);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
	int rc = cli(path, out, sizeof(out));
	cr_expect_neq(rc, 0, "%s: exit %d", what, rc);
	cr_expect(rc > 0 && rc < 128, "%s: crashed (%d)", what, rc);
	cr_expect(strstr(out, path), "%s: %s", what, out);
	cr_expect(strstr(out, expect), "%s: %s", what, out);
	cr_expect_eq(strchr(out, '\n'), strrchr(out, '\n'), "%s: one line: %s", what, out);
	unlink(path);
}

Test(xplane_bad, files)
{
	FILE *f = fopen(tpath(REAL), "rb");
	cr_assert(f);
	static unsigned char real[1 << 16];
	size_t n = fread(real, 1, sizeof(real), f);
	fclose(f);
	cr_assert_eq(n, sizeof(real));
	bad_file("truncated", real, 1000, "not an XPlane profile");
	bad_file("not protobuf", "{\"traceEvents\": []}", 19, "not an XPlane profile");
	/* field 1 (planes) claiming 2 GB in a 1 KB file */
	static unsigned char huge[1024] = { 0x0a, 0x80, 0x80, 0x80, 0x80, 0x08 };
	bad_file("2 GB claim", huge, sizeof(huge), "not an XPlane profile");
	/* a varint that never ends */
	static unsigned char ff[64];
	memset(ff, 0xff, sizeof(ff));
	ff[0] = 0x08;
	bad_file("endless varint", ff, sizeof(ff), "not an XPlane profile");
	/* a valid protobuf of another message: only field 5 (a number) */
	static const unsigned char other[] = { 0x28, 0x01, 0x30, 0x02 };
	bad_file("wrong message", other, sizeof(other), "no planes");
	/* a plane whose bytes are not an XPlane: field 1 (planes) holding 0xff 0xff */
	static const unsigned char badplane[] = { 0x0a, 0x02, 0xff, 0xff };
	bad_file("damaged plane", badplane, sizeof(badplane), "not an XPlane profile");
	/* a plane whose line is not an XLine: plane { lines (field 3): 0xff 0xff } */
	static const unsigned char badline[] = { 0x0a, 0x04, 0x1a, 0x02, 0xff, 0xff };
	bad_file("damaged line", badline, sizeof(badline), "line 0 is damaged");
	bad_file("empty", "", 0, "empty file");
}

Test(xplane_bad, memory_and_name)
{
	struct gt_store *s = gt_store_new();
	char err[256];
	static const unsigned char trunc_gz[] = { 0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 3, 0x01 };
	cr_expect_neq(gt_xplane_import_mem("x.xplane.pb.gz", trunc_gz, sizeof(trunc_gz), NULL, s, err,
					sizeof(err)), 0);
	cr_expect(strstr(err, "x.xplane.pb.gz:"), "%s", err);
	gt_store_free(s);
	char out[4096];
	cr_expect_neq(cli("/nonexistent/h.xplane.pb", out, sizeof(out)), 0);
	cr_expect(strstr(out, "/nonexistent/h.xplane.pb:"), "%s", out);
}

/* gtrace export of the real file: the Chrome JSON imports back with the same kernels */
Test(xplane_real, export_roundtrip)
{
	const char *b = getenv("GTRACE_BUILD");
	char cmd[2048], out[] = "/tmp/gtrace_xpexp_XXXXXX.json";
	int fd = mkstemps(out, 5);
	cr_assert(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s/tui/gtrace export '%s' -o '%s' --force 2>&1", b ? b : "build",
		 tpath(REAL), out);
	cr_assert_eq(system(cmd), 0);
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
	struct gt_store *s;
	char err[512];
	const char *in = out;
	cr_assert_eq(gt_load(&in, 1, &o, &s, err, sizeof(err)), 0, "%s", err);
	struct kfacts f;
	kfacts_of(s, &f);
	cr_expect_eq(f.kernels, 1330);
	cr_expect_eq(f.dur_ns, 14825385 + 14865363);
	cr_expect_eq(f.names, 11);
	gt_store_free(s);
	unlink(out);
}

/* stats that repeat byte for byte are read once per plane (xplane_memo.c):
 * the same bytes mean another stat in another plane (ids are per plane),
 * repeated and unique stats mixed on many events all read right */
Test(xplane_own, repeated_stats_per_plane)
{
	XSpace *sp = xpw_space("hostA");
	int64_t base = 1700000000000000000LL;
	XPlane *g0 = xpw_plane(sp, "/device:GPU:0"), *g1 = xpw_plane(sp, "/device:GPU:1");
	/* stat id 1000 is group_id on GPU 0, correlation_id on GPU 1 */
	cr_assert_eq(xpw_statmeta(g0, "group_id"), 1000);
	cr_assert_eq(xpw_statmeta(g1, "correlation_id"), 1000);
	int64_t k0 = xpw_evmeta(g0, "k0", NULL), c0 = xpw_evmeta(g0, "copy", NULL);
	int64_t k1 = xpw_evmeta(g1, "k1", NULL);
	XLine *s7 = xpw_line(g0, 7, "Stream #7(Compute)", base);
	XLine *s8 = xpw_line(g0, 8, "Stream #8(MemcpyH2D)", base);
	XLine *t7 = xpw_line(g1, 7, "Stream #7(Compute)", base);
	for (int i = 0; i < 300; i++) {
		XEvent *e = xpw_event(s7, k0, (int64_t)i * 10000000, 5000000);
		xpw_stat_int(g0, e, "group_id", 42);                 /* the same bytes 300 times */
		xpw_stat_str(g0, e, "kernel_details", i % 2 ? "regs:32 grid:2,1,1 block:64,1,1" :
			     "regs:16 grid:1,1,1 block:32,1,1");
		xpw_stat_int(g0, e, "context_id", 7919 * (int64_t)i);  /* unique: not kept after a while */
		e = xpw_event(s8, c0, (int64_t)i * 10000000, 1000000);
		xpw_stat_str(g0, e, "memcpy_details", i < 100 ? "size:1000 dest:0" : "size:7 dest:0");
		xpw_stat_int(g0, e, "id", 100000 + i);
		e = xpw_event(t7, k1, (int64_t)i * 10000000, 5000000);
		xpw_stat_int(g1, e, "correlation_id", i ? 1000 + i : 42);   /* i = 0: GPU 0's group bytes */
	}
	struct gt_store *s = load_space(sp);
	const struct gt_lane *a = lane_of(s, 0, GT_LANE_GPU, 0, 0, 7), *b = lane_of(s, 0, GT_LANE_GPU, 0, 0, 8);
	const struct gt_lane *c = lane_of(s, 0, GT_LANE_GPU, 1, 0, 7);
	cr_assert(a && b && c);
	cr_assert_eq(count_on(a, GT_EV_KERNEL, NULL, NULL), 300);
	uint64_t bytes = 0;
	cr_assert_eq(count_on(b, GT_EV_MEMCPY, NULL, &bytes), 300);
	cr_expect_eq(bytes, 100 * 1000 + 200 * 7);
	size_t no_corr = 0, regs32 = 0;
	for (size_t i = 0; i < a->n; i++) {
		no_corr += a->ev[i].corr == 0;
		const struct gt_kconf *kc = gt_store_kconf_at(s, gt_event_kconf(&a->ev[i]));
		cr_assert(kc);
		regs32 += kc->regs_per_thread == (i % 2 ? 32u : 16u) && kc->grid[0] == (i % 2 ? 2u : 1u);
	}
	cr_expect_eq(no_corr, 300);    /* a group_id is no correlation id */
	cr_expect_eq(regs32, 300);
	cr_assert_eq(c->n, 300);
	cr_expect_eq(c->ev[0].corr, 42);
	size_t ok = 0;
	for (size_t i = 1; i < c->n; i++)
		ok += c->ev[i].corr == 1000 + i;
	cr_expect_eq(ok, 299);
	gt_store_free(s);
	xpw_reset();
}
