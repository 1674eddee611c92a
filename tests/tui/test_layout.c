/*
 * test_layout.c - the viewer's terminal-free parts: screen rectangles, the
 * time -> column map, ruler ticks and labels, cell fill, lane grouping and
 * the demangler.  Expected values are worked out by hand from the
 * definitions in tui/layout.h (or, for the demangler, from c++filt's output
 * with template arguments and parameters elided).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "gtrace/store.h"
#include "layout.h"
#include "lanes.h"
#include "demangle.h"

static void check_inside(struct lrect in, struct lrect out)
{
	if (in.w <= 0 || in.h <= 0)
		return;
	cr_expect(in.x >= out.x && in.y >= out.y, "rect starts inside");
	cr_expect(in.x + in.w <= out.x + out.w && in.y + in.h <= out.y + out.h, "rect ends inside");
}

Test(layout, screen_80x24)
{
	struct layout_screen s;
	layout_screen(80, 24, &s);
	cr_expect_eq(s.tabs.y, 0);
	cr_expect_eq(s.tabs.h, 1);
	cr_expect_eq(s.body.y, 1);
	cr_expect_eq(s.body.h, 22);
	cr_expect_eq(s.status.y, 23);
	cr_expect_eq(s.status.w, 80);
}

Test(layout, trace_areas_tile_the_body)
{
	static const int sizes[][2] = { { 80, 22 }, { 120, 38 }, { 400, 120 }, { 20, 3 }, { 12, 1 }, { 1, 1 } };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct lrect a = { 0, 1, sizes[i][0], sizes[i][1] };
		struct layout_trace t;
		layout_trace(a, &t);
		int h = t.ruler.h + t.steps.h + t.cells.h + t.legend.h + t.detail.h;
		if (a.w >= 2)
			cr_expect_eq(h, a.h, "rows add up at %dx%d", a.w, a.h);
		cr_expect(t.cells.h >= 0 && t.cells.w >= 0 && t.detail.h >= 0);
		check_inside(t.cells, a);
		check_inside(t.detail, a);
		check_inside(t.labels, a);
		if (t.cells.w > 0)
			cr_expect_eq(t.labels.w + t.cells.w, a.w);
	}
	struct layout_trace t;
	layout_trace((struct lrect){ 0, 1, 80, 22 }, &t);
	cr_expect_eq(t.ruler.y, 1);
	cr_expect_eq(t.steps.y, 2);
	cr_expect_eq(t.cells.y, 3);
	cr_expect_eq(t.detail.h, 5);
	cr_expect_eq(t.cells.h, 22 - 1 - 1 - 1 - 5);
	cr_expect_eq(t.labels.w, 16);   /* 80 / 5 */
}

Test(layout, tmap_fit_and_map)
{
	struct layout_tmap m;
	layout_tmap_fit(&m, 1000, 2000, 100);
	cr_expect_eq(m.ns_per_col, 10);
	cr_expect_eq(layout_t2col(&m, 1000), 0);
	cr_expect_eq(layout_t2col(&m, 1009), 0);
	cr_expect_eq(layout_t2col(&m, 1010), 1);
	cr_expect_eq(layout_t2col(&m, 1999), 99);
	cr_expect_eq(layout_t2col(&m, 999), -1);
	cr_expect_eq(layout_t2col(&m, 990), -1);
	cr_expect_eq(layout_t2col(&m, 989), -2);
	cr_expect_eq(layout_col2t(&m, 5), 1050);
	/* a range shorter than the columns still maps 1 ns per column */
	layout_tmap_fit(&m, 0, 10, 100);
	cr_expect_eq(m.ns_per_col, 1);
	/* uneven: rounds up so the whole range fits */
	layout_tmap_fit(&m, 0, 1001, 100);
	cr_expect_eq(m.ns_per_col, 11);
	cr_expect(layout_t2col(&m, 1000) < 100);
}

Test(layout, zoom_keeps_the_cursor_time)
{
	struct layout_tmap m;
	layout_tmap_fit(&m, 0, 1000000, 100);   /* 10000 ns per column */
	int64_t before = layout_col2t(&m, 30);
	layout_tmap_zoom(&m, 30, 1, 2, 1000000);
	cr_expect_eq(m.ns_per_col, 5000);
	cr_expect_eq(layout_col2t(&m, 30), before, "the cursor's time moved by %lld",
		     (long long)(layout_col2t(&m, 30) - before));
	/* `g 2s` puts column 1's start on 2 s at 1.1 s a column; eight zooms in
	 * keep it there (around the column's middle it drifted half a column,
	 * 2 s off the screen) */
	struct layout_tmap g;
	layout_tmap_fit(&g, 0, 176000000000LL, 160);
	g.ns_per_col = 1100000000;
	g.t0_ns = 2000000000 - g.ns_per_col;
	for (int i = 0; i < 8; i++)
		layout_tmap_zoom(&g, 1, 1, 2, 1100000000);
	cr_expect_eq(layout_col2t(&g, 1), 2000000000, "cursor at %lld", (long long)layout_col2t(&g, 1));
	/* zoom out is capped */
	for (int i = 0; i < 40; i++)
		layout_tmap_zoom(&m, 30, 2, 1, 50000);
	cr_expect_eq(m.ns_per_col, 50000);
	/* zoom in stops at 1 ns per column and always makes progress before */
	for (int i = 0; i < 80; i++)
		layout_tmap_zoom(&m, 30, 1, 2, 50000);
	cr_expect_eq(m.ns_per_col, 1);
	layout_tmap_fit(&m, 0, 300, 100);   /* 3 ns per column: 3 * 1/2 must still shrink */
	layout_tmap_zoom(&m, 0, 1, 2, 1000);
	cr_expect_eq(m.ns_per_col, 1);
	layout_tmap_zoom(&m, 0, 3, 2, 1000);   /* 1 * 3/2 = 1 must still grow */
	cr_expect_eq(m.ns_per_col, 2);
}

Test(layout, pan_and_clamp)
{
	struct layout_tmap m;
	layout_tmap_fit(&m, 0, 1000, 100);
	layout_tmap_pan(&m, 25);
	cr_expect_eq(m.t0_ns, 250);
	layout_tmap_pan(&m, -50);
	cr_expect_eq(m.t0_ns, -250);
	/* far right of the data: a quarter screen of data stays visible */
	m.t0_ns = 5000;
	layout_tmap_clamp(&m, 0, 1000);
	cr_expect_eq(m.t0_ns, 1000 - 250);
	m.t0_ns = -5000;
	layout_tmap_clamp(&m, 0, 1000);
	cr_expect_eq(m.t0_ns, 250 - 1000);
}

Test(layout, ruler_ticks_and_labels)
{
	struct layout_tmap m = { .t0_ns = 0, .ns_per_col = 10, .cols = 100 };
	cr_expect_eq(layout_tick_ns(&m, 12), 200);   /* >= 120 ns -> 200 */
	m.ns_per_col = 1000;
	cr_expect_eq(layout_tick_ns(&m, 12), 20000);
	m.ns_per_col = 41000;
	cr_expect_eq(layout_tick_ns(&m, 12), 500000);
	char b[32];
	cr_expect_str_eq(layout_fmt_time(1500000, 500000, b, sizeof(b)), "1.5ms");
	cr_expect_str_eq(layout_fmt_time(200000000, 100000000, b, sizeof(b)), "200ms");
	cr_expect_str_eq(layout_fmt_time(40000, 20000, b, sizeof(b)), "40us");
	cr_expect_str_eq(layout_fmt_time(400, 200, b, sizeof(b)), "400ns");
	cr_expect_str_eq(layout_fmt_time(3000000000, 1000000000, b, sizeof(b)), "3s");
	/* five integer digits move up a unit: 499400us -> 499.4ms, 499402us -> 499.402ms */
	cr_expect_str_eq(layout_fmt_time(499400000, 200000, b, sizeof(b)), "499.4ms");
	cr_expect_str_eq(layout_fmt_time(499402000, 2000, b, sizeof(b)), "499.402ms");
	cr_expect_str_eq(layout_fmt_time(9800000, 200000, b, sizeof(b)), "9800us");
	cr_expect_str_eq(layout_fmt_dur(812, b, sizeof(b)), "812ns");
	cr_expect_str_eq(layout_fmt_dur(4070, b, sizeof(b)), "4.07us");
	cr_expect_str_eq(layout_fmt_dur(12345678, b, sizeof(b)), "12.3ms");
	cr_expect_str_eq(layout_fmt_dur(1500000000, b, sizeof(b)), "1.50s");
	cr_expect_str_eq(layout_fmt_dur(-2500, b, sizeof(b)), "-2.50us");
	/* offsets from the capture start: one sign, never "+-" (status line bug) */
	cr_expect_str_eq(layout_fmt_rel(2200000, b, sizeof(b)), "+2.20ms");
	cr_expect_str_eq(layout_fmt_rel(-2200000, b, sizeof(b)), "-2.20ms");
	cr_expect_str_eq(layout_fmt_rel(0, b, sizeof(b)), "+0ns");
	cr_expect_str_eq(layout_fmt_ts(173412345, b, sizeof(b)), "173.412ms");
	cr_expect_str_eq(layout_fmt_ts(2500000000, b, sizeof(b)), "2.500000s");
}

Test(layout, parse_time)
{
	int64_t v;
	cr_expect_eq(layout_parse_time("1.5s", &v), 0);
	cr_expect_eq(v, 1500000000);
	cr_expect_eq(layout_parse_time("300ms", &v), 0);
	cr_expect_eq(v, 300000000);
	cr_expect_eq(layout_parse_time("20us", &v), 0);
	cr_expect_eq(v, 20000);
	cr_expect_eq(layout_parse_time("100ns", &v), 0);
	cr_expect_eq(v, 100);
	/* a number without a unit is refused (it used to mean ns), but for 0 */
	cr_expect_eq(layout_parse_time("1.5", &v), -EINVAL);
	cr_expect_eq(layout_parse_time("100", &v), -EINVAL);
	cr_expect_eq(layout_parse_time("0", &v), 0);
	cr_expect_eq(v, 0);
	cr_expect_eq(layout_parse_time("x", &v), -EINVAL);
	cr_expect_eq(layout_parse_time("5min", &v), -EINVAL);
	cr_expect_eq(layout_parse_time("1e30s", &v), -EINVAL);
}

Test(layout, tiny_things_stay_visible)
{
	cr_expect_eq(layout_eighths(0, 1000, 0), 0);
	cr_expect_eq(layout_eighths(0, 1000, 1), 1, "an instant in the column shows");
	cr_expect_eq(layout_eighths(1, 1000000, 1), 1, "1 ns in a 1 ms column shows");
	cr_expect_eq(layout_eighths(500, 1000, 1), 4);
	cr_expect_eq(layout_eighths(1000, 1000, 1), 8);
	cr_expect_eq(layout_eighths(5000, 1000, 3), 8);
}

static uint32_t lane(struct gt_store *s, int type, int rank, int dev, int64_t pid, int64_t id)
{
	struct gt_lane_key k = { .type = (uint8_t)type, .rank = rank, .device = dev, .pid = pid, .id = id };
	return gt_store_lane(s, &k);
}

static void ev(struct gt_store *s, uint32_t l, int kind, uint16_t flags, int64_t t)
{
	struct gt_event e = { .start_ns = t, .dur_ns = 10, .lane = l, .kind = (uint8_t)kind,
			      .flags = flags, .name = gt_store_intern_cstr(s, "k") };
	cr_assert_eq(gt_store_add(s, &e), 0);
}

Test(lanes, grouping_fold_and_roles)
{
	struct gt_store *s = gt_store_new();
	/* created out of order on purpose */
	uint32_t h1 = lane(s, GT_LANE_HOST, 1, -1, 200, 201);
	uint32_t g1s7 = lane(s, GT_LANE_GPU, 1, 0, 200, 7);
	uint32_t g0s9 = lane(s, GT_LANE_GPU, 0, 1, 100, 9);
	uint32_t g0s7 = lane(s, GT_LANE_GPU, 0, 0, 100, 7);
	uint32_t g0s3 = lane(s, GT_LANE_GPU, 0, 0, 100, 3);
	uint32_t h0 = lane(s, GT_LANE_HOST, 0, -1, 100, 101);
	ev(s, g0s7, GT_EV_KERNEL, 0, 0);
	ev(s, g0s3, GT_EV_KERNEL, GT_EVF_NCCL, 0);
	ev(s, g0s9, GT_EV_MEMCPY, 0, 0);
	ev(s, g1s7, GT_EV_KERNEL, 0, 0);
	ev(s, g1s7, GT_EV_MEMCPY, 0, 20);
	ev(s, h0, GT_EV_RUNTIME, 0, 0);
	ev(s, h1, GT_EV_RUNTIME, 0, 0);
	cr_assert_eq(gt_store_finish(s), 0);
	struct lanes L = { 0 };
	cr_assert_eq(lanes_build(&L, s), 0);
	/* rank 0: GPU 0 (streams 3, 7), GPU 1 (stream 9), host 100; rank 1: GPU 0, host 200 */
	static const int kinds[] = { LROW_RANK, LROW_GPU, LROW_LANE, LROW_LANE, LROW_GPU, LROW_LANE,
				     LROW_HOST, LROW_LANE, LROW_RANK, LROW_GPU, LROW_LANE, LROW_HOST,
				     LROW_LANE };
	cr_assert_eq(L.nall, sizeof(kinds) / sizeof(kinds[0]));
	for (size_t i = 0; i < L.nall; i++)
		cr_expect_eq(L.all[i].kind, kinds[i], "row %zu", i);
	cr_expect_eq(L.all[2].lane, g0s3);
	cr_expect_eq(L.all[3].lane, g0s7);
	cr_expect_eq(L.all[5].lane, g0s9);
	cr_expect_eq(L.all[7].lane, h0);
	cr_expect_eq(L.all[10].lane, g1s7);
	cr_expect_eq(L.all[12].lane, h1);
	cr_expect_eq(L.all[2].role, LROLE_NCCL);
	cr_expect_eq(L.all[3].role, LROLE_COMPUTE);
	cr_expect_eq(L.all[5].role, LROLE_COPY);
	cr_expect_eq(L.all[10].role, LROLE_MIXED);
	cr_expect(strstr(L.all[2].label, "NCCL") != NULL, "label '%s'", L.all[2].label);
	cr_expect(strstr(L.all[5].label, "copy") != NULL, "label '%s'", L.all[5].label);
	cr_expect_eq(L.all[0].end, 8);
	cr_expect_eq(L.all[1].end, 4);
	cr_expect_eq(L.nvis, 13);
	/* fold GPU 0 of rank 0: its two streams disappear */
	lanes_toggle(&L, 1);
	cr_expect_eq(L.nvis, 11);
	cr_expect_eq(L.vis[2], 4);
	/* fold rank 0: everything up to rank 1 disappears */
	lanes_toggle(&L, 0);
	cr_expect_eq(L.nvis, 6);
	cr_expect_eq(L.vis[1], 8);
	/* a lane row does not fold */
	lanes_toggle(&L, 3);
	cr_expect_eq(L.nvis, 6);
	/* finding a hidden lane unfolds its ancestors */
	size_t v = lanes_find(&L, g0s7);
	cr_assert_neq(v, SIZE_MAX);
	cr_expect_eq(L.all[L.vis[v]].lane, g0s7);
	cr_expect_eq(L.nvis, 13);
	/* fold state survives a rebuild */
	lanes_toggle(&L, 4);
	size_t nv = L.nvis;
	cr_assert_eq(lanes_build(&L, s), 0);
	cr_expect_eq(L.nvis, nv);
	lanes_fold_all(&L, 1);
	cr_expect_eq(L.nvis, 7);   /* 2 ranks, 3 GPUs, 2 hosts */
	lanes_done(&L);
	gt_store_free(s);
}

/* XPlane's GPU annotation lines ("TensorFlow Ops", "TensorFlow Name
 * Scope") have made-up negative ids: in a narrow label column they read
 * as their name's last words, not "s-5590" (trial 5, a 40x12 terminal) */
Test(lanes, annotation_lines_short_labels_read)
{
	struct gt_store *s = gt_store_new();
	uint32_t ops = lane(s, GT_LANE_GPU, 0, 0, 100, -5590);
	uint32_t scope = lane(s, GT_LANE_GPU, 0, 0, 100, -5591);
	uint32_t st = lane(s, GT_LANE_GPU, 0, 0, 100, 7);
	gt_store_lane_set_name(s, ops, "TensorFlow Ops");
	gt_store_lane_set_name(s, scope, "TensorFlow Name Scope");
	ev(s, ops, GT_EV_KERNEL, 0, 0);
	ev(s, scope, GT_EV_KERNEL, 0, 0);
	ev(s, st, GT_EV_KERNEL, 0, 0);
	cr_assert_eq(gt_store_finish(s), 0);
	struct lanes L = { 0 };
	cr_assert_eq(lanes_build(&L, s), 0);
	int seen = 0;
	for (size_t i = 0; i < L.nall; i++) {
		const struct lanes_row *r = &L.all[i];
		if (r->kind != LROW_LANE)
			continue;
		cr_expect(!strstr(r->short_label, "s-"), "short label '%s'", r->short_label);
		if (r->lane == ops)
			cr_expect_str_eq(r->short_label, "Ops");
		else if (r->lane == scope)
			cr_expect_str_eq(r->short_label, "Scope");
		else if (r->lane == st)
			cr_expect(!strncmp(r->short_label, "s7", 2), "'%s'", r->short_label);
		seen += r->lane == ops || r->lane == scope || r->lane == st;
	}
	cr_expect_eq(seen, 3);
	lanes_done(&L);
	gt_store_free(s);
}

/* Kineto's "Traces" track and its pid-less instants get negative pids from the
 * importer: one "other tracks" group for both, not two groups of that name */
Test(lanes, pidless_tracks_share_one_group)
{
	struct gt_store *s = gt_store_new();
	uint32_t a = lane(s, GT_LANE_HOST, 0, -1, -65717, 1);
	uint32_t b = lane(s, GT_LANE_HOST, 0, -1, -65536, 2);
	uint32_t h = lane(s, GT_LANE_HOST, 0, -1, 25738, 25738);
	ev(s, a, GT_EV_RUNTIME, 0, 0);
	ev(s, b, GT_EV_RUNTIME, 0, 0);
	ev(s, h, GT_EV_RUNTIME, 0, 0);
	cr_assert_eq(gt_store_finish(s), 0);
	struct lanes L = { 0 };
	cr_assert_eq(lanes_build(&L, s), 0);
	size_t groups = 0, other = 0;
	for (size_t i = 0; i < L.nall; i++) {
		if (L.all[i].kind == LROW_HOST)
			groups++;
		if (L.all[i].kind == LROW_HOST && !strcmp(L.all[i].label, "other tracks"))
			other++;
	}
	cr_expect_eq(groups, 2);
	cr_expect_eq(other, 1);
	cr_expect_eq(L.nall, 5);   /* other tracks (2 lanes), host pid 25738 (1 lane) */
	lanes_done(&L);
	gt_store_free(s);
}

/* a name longer than any fixed buffer keeps its short form (a name cut at
 * 512 bytes read "doub", the fragment of "double &" at the cut); the
 * source's own short name wins where the store has one */
Test(demangle, long_names_and_source_short_names)
{
	char name[4096], b[256];
	size_t w = (size_t)snprintf(name, sizeof(name), "void clover::par_reduce_kernel<calc_dt(");
	for (int i = 0; i < 150; i++)
		w += (size_t)snprintf(name + w, sizeof(name) - w, "double &, ");
	snprintf(name + w, sizeof(name) - w, "int &)::[lambda(int) (instance 1)]>(T1)");
	cr_expect_str_eq(demangle_short(name, b, sizeof(b)), "par_reduce_kernel<calc_dt>");
	struct gt_store *s = gt_store_new();
	uint32_t id = gt_store_intern_cstr(s, name);
	cr_expect_str_eq(demangle_short_of(s, name, b, sizeof(b)), "par_reduce_kernel<calc_dt>");
	cr_assert_eq(gt_store_str_set_short(s, id, gt_store_intern_cstr(s, "par_reduce_kernel")), 0);
	cr_expect_str_eq(demangle_short_of(s, name, b, sizeof(b)), "par_reduce_kernel");
	cr_expect_str_eq(demangle_short_of(s, "other_kernel", b, sizeof(b)), "other_kernel");
	cr_expect_str_eq(demangle_short_of(NULL, name, b, sizeof(b)), "par_reduce_kernel<calc_dt>");
	gt_store_free(s);
}

Test(demangle, itanium_names)
{
	char b[256];
	/* c++filt: void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>,
	 * at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>) */
	cr_expect_str_eq(demangle_name("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_", b, sizeof(b)),
			 "at::native::vectorized_elementwise_kernel<...>(...)");
	/* c++filt: myKernel(float*, int) */
	cr_expect_str_eq(demangle_name("_Z8myKernelPfi", b, sizeof(b)), "myKernel(...)");
	/* c++filt: cudnn::ops::impl::FooBar::FooBar() */
	cr_expect_str_eq(demangle_name("_ZN5cudnn3ops4impl6FooBarC2Ev", b, sizeof(b)),
			 "cudnn::ops::impl::FooBar::FooBar(...)");
	/* c++filt: (anonymous namespace)::kernel() */
	cr_expect_str_eq(demangle_name("_ZN12_GLOBAL__N_16kernelEv", b, sizeof(b)),
			 "(anonymous namespace)::kernel(...)");
	/* not mangled, or broken: unchanged */
	cr_expect_str_eq(demangle_name("ncclDevKernel_AllReduce_Sum_f32_RING_LL", b, sizeof(b)),
			 "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
	cr_expect_str_eq(demangle_name("_ZN3foo", b, sizeof(b)), "_ZN3foo");
	cr_expect_str_eq(demangle_name("_ZN99x", b, sizeof(b)), "_ZN99x");
	cr_expect_str_eq(demangle_name("_Z", b, sizeof(b)), "_Z");
	/* tiny output buffer: truncated, terminated */
	cr_expect_str_eq(demangle_name("_Z8myKernelPfi", b, 4), "myK");
}

Test(demangle, short_names)
{
	char b[128];
	cr_expect_str_eq(demangle_short("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::Half>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::Half>, at::detail::Array<char*, 3>)", b, sizeof(b)),
			 "vectorized_elementwise_kernel");
	cr_expect_str_eq(demangle_short("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::Half, float>(int, float)", b, sizeof(b)),
			 "vectorized_layer_norm_kernel");
	cr_expect_str_eq(demangle_short("_Z8myKernelPfi", b, sizeof(b)), "myKernel");
	cr_expect_str_eq(demangle_short("sm90_xmma_gemm_f16f16", b, sizeof(b)), "sm90_xmma_gemm_f16f16");
	cr_expect_str_eq(demangle_short("aten::mm", b, sizeof(b)), "mm");
	/* a return type with template arguments and "::type" (vLLM, b200 trace) */
	cr_expect_str_eq(demangle_short("std::enable_if<(bool)1, void>::type vllm::fused_add_rms_norm_kernel<c10::Half, 8>(c10::Half*, long)", b, sizeof(b)),
			 "fused_add_rms_norm_kernel");
	/* one kernel template per lambda (cloverleaf, nsys trace): the function
	 * holding the lambda tells them apart */
	cr_expect_str_eq(demangle_short("void clover::par_ranged2d_kernel<PdV_kernel(bool, int, clover::Buffer2D<double> &)::[lambda(int, int) (instance 1)]>(clover::Range2d, T1)", b, sizeof(b)),
			 "par_ranged2d_kernel<PdV_kernel>");
	cr_expect_str_eq(demangle_short("void clover::par_ranged2d_kernel<PdV_kernel(bool, int, clover::Buffer2D<double> &)::[lambda(int, int) (instance 2)]>(clover::Range2d, T1)", b, sizeof(b)),
			 "par_ranged2d_kernel<PdV_kernel#2>");
	cr_expect_str_eq(demangle_short("void clover::par_ranged2d_kernel<accelerate_kernel(int, int)::[lambda(int, int) (instance 1)]>(clover::Range2d, T1)", b, sizeof(b)),
			 "par_ranged2d_kernel<accelerate_kernel>");
}

Test(layout, ellipsize_keeps_both_ends)
{
	char b[128];
	/* 40 characters into 20: 7 of the start, the ellipsis, 12 of the end */
	const char *k = "sm90_xmma_gemm_f16f16_nt_n_tilesize128x128x64";
	cr_expect_str_eq(layout_ellipsize(k, 20, 0, b, sizeof(b)), "sm90_xm~ze128x128x64");
	cr_expect_eq(strlen(b), 20);
	/* as above with 20 cells: 7 + 1 + 12 */
	cr_expect_str_eq(layout_ellipsize(k, 20, 1, b, sizeof(b)), "sm90_xm\u2026ze128x128x64");
	/* fits: unchanged */
	cr_expect_str_eq(layout_ellipsize("gemm", 4, 1, b, sizeof(b)), "gemm");
	cr_expect_str_eq(layout_ellipsize("gemm", 0, 1, b, sizeof(b)), "");
	/* three names alike at the start stay apart */
	char x[64], y[64];
	layout_ellipsize("sm90_xmma_gemm_f16f16_f16f32_nt_n_tilesize128x128x64", 24, 1, x, sizeof(x));
	layout_ellipsize("sm90_xmma_gemm_f16f16_f16f32_nt_n_tilesize256x128x64", 24, 1, y, sizeof(y));
	cr_expect_str_neq(x, y);
	/* multi-byte characters count as one cell each and are never split */
	cr_expect_str_eq(layout_ellipsize("\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9abcdef", 6, 1, b, sizeof(b)),
			 "\u00e9\u00e9\u2026def");
}

Test(layout, rescale_keeps_the_span)
{
	/* 80 columns of 15.5 ms (1.24 s) onto 200 columns: 6.2 ms each, same span */
	struct layout_tmap m = { .t0_ns = 1000, .ns_per_col = 15500000, .cols = 80 };
	layout_tmap_rescale(&m, 200);
	cr_expect_eq(m.cols, 200);
	cr_expect_eq(m.t0_ns, 1000);
	cr_expect_eq(m.ns_per_col, 6200000);
	/* back to 80: the span again */
	layout_tmap_rescale(&m, 80);
	cr_expect_eq(m.ns_per_col, 15500000);
	/* a span not divisible by the width rounds the column up: 10 ns on 3 */
	struct layout_tmap n = { .t0_ns = 0, .ns_per_col = 1, .cols = 10 };
	layout_tmap_rescale(&n, 3);
	cr_expect_eq(n.ns_per_col, 4);
	layout_tmap_rescale(&n, 100);
	cr_expect_eq(n.ns_per_col, 1);
}
