/*
 * test_convert.c - CUPTI records (CUDA 13 layouts, filled by hand from
 * cupti_activity.h) -> events.  Expected values follow from the fields set
 * here and the mapping rules in capture/convert.c's header comment.
 */
#include <criterion/criterion.h>
#include <string.h>
#include <cupti_activity.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include "../../capture/convert.h"

static struct convert cv;

static void setup(void)
{
	convert_init(&cv, 4242, 3);
	cv.clock_offset_ns = 1000;
}

static void teardown(void)
{
	convert_done(&cv);
}

static const char *name_of(uint32_t id)
{
	struct gt_publisher_dict d = convert_dict(&cv);
	size_t len;
	const char *s = d.str(d.ctx, id, &len);
	cr_assert_not_null(s);
	cr_assert_eq(strlen(s), len);
	return s;
}

static struct gt_ring_lane_def lane_of(uint32_t id)
{
	struct gt_publisher_dict d = convert_dict(&cv);
	struct gt_ring_lane_def l;
	cr_assert_eq(d.lane(d.ctx, id, &l), 0);
	return l;
}

TestSuite(convert, .init = setup, .fini = teardown);

Test(convert, kernel10)
{
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = 5000;
	k.end = 7500;
	k.deviceId = 1;
	k.streamId = 7;
	k.gridX = 128; k.gridY = 2; k.gridZ = 1;
	k.blockX = 256; k.blockY = 1; k.blockZ = 1;
	k.registersPerThread = 32;
	k.staticSharedMemory = 1024;
	k.dynamicSharedMemory = 4096;
	k.correlationId = 42;
	k.name = "ampere_sgemm_128x64_tn";
	struct gt_event e;
	cr_assert_eq(convert_record(&cv, &k, &e), 1);
	cr_assert_eq(e.kind, GT_EV_KERNEL);
	cr_assert_eq(e.start_ns, 6000);
	cr_assert_eq(e.dur_ns, 2500);
	cr_assert_eq(e.corr, 42);
	cr_assert_str_eq(name_of(e.name), "ampere_sgemm_128x64_tn");
	struct gt_ring_lane_def l = lane_of(e.lane);
	cr_assert_eq(l.type, 1);
	cr_assert_eq(l.device, 1);
	cr_assert_eq(l.tid, 7);
	cr_assert_eq(l.rank, 3);
	cr_assert_str_eq(name_of(l.name), "stream 7");
	struct gt_publisher_dict d = convert_dict(&cv);
	struct gt_kconf kc;
	cr_assert_eq(d.kconf(d.ctx, gt_event_kconf(&e), &kc), 0);
	cr_assert_eq(kc.grid[0], 128);
	cr_assert_eq(kc.grid[1], 2);
	cr_assert_eq(kc.block[0], 256);
	cr_assert_eq(kc.regs_per_thread, 32);
	cr_assert_eq(kc.smem_dynamic_bytes, 4096);
	cr_assert_eq(e.flags & GT_EVF_NCCL, 0);
	/* same name and configuration: same ids */
	struct gt_event e2;
	k.start = 8000;
	k.end = 9000;
	cr_assert_eq(convert_record(&cv, &k, &e2), 1);
	cr_assert_eq(e2.name, e.name);
	cr_assert_eq(e2.lane, e.lane);
	cr_assert_eq(e2.arg, e.arg);
	/* an NCCL kernel (NCCL 2.2x mangled name) */
	k.name = "_Z24ncclDevKernel_AllReduce_Sum_f32_RING_LLP14ncclDevKernelArgs";
	cr_assert_eq(convert_record(&cv, &k, &e2), 1);
	cr_assert(e2.flags & GT_EVF_NCCL);
	cr_assert_neq(e2.name, e.name);
}

Test(convert, zero_timestamps_counted_not_converted)
{
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.name = "x";
	struct gt_event e;
	cr_assert_eq(convert_record(&cv, &k, &e), 0);
	cr_assert_eq(convert_record(&cv, &k, &e), 0);
	cr_assert_eq(cv.zero_timestamps, 2);
}

Test(convert, memcpy6_and_ptop4_and_memset4)
{
	CUpti_ActivityMemcpy6 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.bytes = 1 << 20;
	m.start = 100;
	m.end = 300;
	m.deviceId = 0;
	m.streamId = 13;
	m.correlationId = 9;
	struct gt_event e;
	cr_assert_eq(convert_record(&cv, &m, &e), 1);
	cr_assert_eq(e.kind, GT_EV_MEMCPY);
	cr_assert_eq(e.sub, GT_COPY_H2D);
	cr_assert_eq(e.arg, 1 << 20);
	cr_assert(e.flags & GT_EVF_PINNED);
	cr_assert_str_eq(name_of(e.name), "Memcpy HtoD (Pinned -> Device)");
	cr_assert_eq(e.dur_ns, 200);
	cr_assert_eq(e.aux, 0, "copyCount 0 (CUDA 12 records lifted): one copy");
	m.copyCount = 1;
	cr_assert_eq(convert_record(&cv, &m, &e), 1);
	cr_assert_eq(e.aux, 0, "one copy");
	m.copyCount = 3;              /* a batch's run of 3 copies in one record */
	cr_assert_eq(convert_record(&cv, &m, &e), 1);
	cr_assert_eq(e.aux, 3);
	cr_assert_eq(e.arg, 1 << 20, "the bytes of the 3 copies, as CUPTI summed them");
	m.copyCount = 0;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	cr_assert_eq(convert_record(&cv, &m, &e), 1);
	cr_assert_eq(e.sub, GT_COPY_D2H);
	cr_assert(e.flags & GT_EVF_PAGEABLE);

	CUpti_ActivityMemcpyPtoP4 p;
	memset(&p, 0, sizeof(p));
	p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	p.srcKind = p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	p.bytes = 4096;
	p.start = 10;
	p.end = 20;
	p.deviceId = 2;
	p.srcDeviceId = 2;
	p.dstDeviceId = 5;
	p.streamId = 3;
	cr_assert_eq(convert_record(&cv, &p, &e), 1);
	cr_assert_eq(e.sub, GT_COPY_P2P);
	cr_assert_eq(e.aux, 2 | (5u << 16));
	cr_assert_eq(lane_of(e.lane).device, 2);

	CUpti_ActivityMemset4 s;
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	s.bytes = 512;
	s.start = 1;
	s.end = 2;
	s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	cr_assert_eq(convert_record(&cv, &s, &e), 1);
	cr_assert_eq(e.kind, GT_EV_MEMSET);
	cr_assert_eq(e.arg, 512);
	cr_assert_str_eq(name_of(e.name), "Memset (Device)");
}

static const char *api_name(void *ctx, int driver, uint32_t cbid)
{
	return !driver && cbid == 211 ? "cudaLaunchKernel" : NULL;
}

Test(convert, api_with_external_correlation)
{
	cv.api_name = api_name;
	CUpti_ActivityExternalCorrelation x;
	memset(&x, 0, sizeof(x));
	x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	x.externalId = 777;
	x.correlationId = 55;
	struct gt_event e;
	cr_assert_eq(convert_record(&cv, &x, &e), 0);
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof(a));
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = 211;
	a.start = 50;
	a.end = 80;
	a.processId = 4242;
	a.threadId = 4243;
	a.correlationId = 55;
	cr_assert_eq(convert_record(&cv, &a, &e), 1);
	cr_assert_eq(e.kind, GT_EV_RUNTIME);
	cr_assert_str_eq(name_of(e.name), "cudaLaunchKernel");
	cr_assert(e.flags & GT_EVF_LAUNCH);
	cr_assert_eq(e.ext, 777);
	cr_assert_eq(e.corr, 55);
	struct gt_ring_lane_def l = lane_of(e.lane);
	cr_assert_eq(l.type, 2);
	cr_assert_eq(l.tid, 4243);
	cr_assert_eq(l.pid, 4242);
	a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
	a.cbid = 7;
	cr_assert_eq(convert_record(&cv, &a, &e), 1);
	cr_assert_eq(e.kind, GT_EV_DRIVER);
	cr_assert_str_eq(name_of(e.name), "driver cbid 7");
}

/* the chatty calls' records that come before gcupti turns them off (the
 * API kind on first: CUPTI lets it override the per-call switches) are
 * left out, every one of both lists; a launch beside them is kept */
Test(convert, chatty_calls_left_out)
{
	cv.api_name = api_name;
	CUpti_ActivityAPI a;
	struct gt_event e;
	memset(&a, 0, sizeof(a));
	a.start = 50;
	a.end = 80;
	a.processId = 4242;
	a.threadId = 4243;
	a.correlationId = 9;
	cr_assert_geq(convert_chatty_rt_n, 9);
	cr_assert_geq(convert_chatty_drv_n, 9);
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000;
	cr_assert_eq(convert_record(&cv, &a, &e), 0);
	for (size_t i = 0; i < convert_chatty_rt_n; i++) {
		a.cbid = convert_chatty_rt[i];
		cr_assert_eq(convert_record(&cv, &a, &e), 0, "runtime cbid %u", a.cbid);
	}
	a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
	a.cbid = CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttribute;
	cr_assert_eq(convert_record(&cv, &a, &e), 0);
	for (size_t i = 0; i < convert_chatty_drv_n; i++) {
		a.cbid = convert_chatty_drv[i];
		cr_assert_eq(convert_record(&cv, &a, &e), 0, "driver cbid %u", a.cbid);
	}
	cr_assert_eq(cv.unknown_records, 0);
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
	cr_assert_eq(convert_record(&cv, &a, &e), 1);
	cr_assert_str_eq(name_of(e.name), "cudaLaunchKernel");
}

Test(convert, marker2_ranges_pair_by_id)
{
	CUpti_ActivityMarker2 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MARKER;
	m.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
	m.timestamp = 1000;
	m.id = 17;
	m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	m.objectId.pt.processId = 4242;
	m.objectId.pt.threadId = 99;
	m.name = "forward";
	struct gt_event e;
	cr_assert_eq(convert_record(&cv, &m, &e), 0);
	m.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
	m.timestamp = 4000;
	m.name = NULL;          /* NULL on end records */
	cr_assert_eq(convert_record(&cv, &m, &e), 1);
	cr_assert_eq(e.kind, GT_EV_NVTX);
	cr_assert_str_eq(name_of(e.name), "forward");
	cr_assert_eq(e.start_ns, 2000);
	cr_assert_eq(e.dur_ns, 3000);
	cr_assert_eq(lane_of(e.lane).tid, 99);
	/* an end without its start is counted, not invented */
	cr_assert_eq(convert_record(&cv, &m, &e), 0);
	cr_assert_eq(cv.markers_lost, 1);
}

Test(convert, sync2_context3_device5)
{
	CUpti_ActivityContext3 c;
	memset(&c, 0, sizeof(c));
	c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
	c.contextId = 4;
	c.deviceId = 6;
	struct gt_event e;
	cr_assert_eq(convert_record(&cv, &c, &e), 0);
	CUpti_ActivitySynchronization2 s;
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	s.start = 10;
	s.end = 90;
	s.contextId = 4;
	s.streamId = 21;
	cr_assert_eq(convert_record(&cv, &s, &e), 1);
	cr_assert_eq(e.kind, GT_EV_SYNC);
	cr_assert_eq(e.sub, GT_SYNC_STREAM);
	cr_assert_str_eq(name_of(e.name), "cudaStreamSynchronize");
	cr_assert_eq(lane_of(e.lane).device, 6);
	cr_assert_eq(lane_of(e.lane).tid, 21);
	cr_assert_eq(lane_of(e.lane).pid, -1, "a sync lane, not stream 21's lane");
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
	cr_assert_eq(convert_record(&cv, &s, &e), 1);
	cr_assert_eq(e.sub, GT_SYNC_CONTEXT);
	/* device-wide: no stream (the header's invalid value), never "stream 0" */
	s.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	cr_assert_eq(convert_record(&cv, &s, &e), 1);
	cr_assert_eq(lane_of(e.lane).type, 1);
	cr_assert_eq(lane_of(e.lane).device, 6);
	cr_assert_eq(lane_of(e.lane).pid, -1);
	cr_assert_eq(lane_of(e.lane).tid, -1);
	cr_assert_str_eq(name_of(lane_of(e.lane).name), "device synchronizations");

	CUpti_ActivityDevice5 d;
	memset(&d, 0, sizeof(d));
	d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d.id = 6;
	d.name = "NVIDIA H100 80GB HBM3";
	d.numMultiprocessors = 132;
	d.globalMemorySize = 85520809984ull;
	d.computeCapabilityMajor = 9;
	cr_assert_eq(convert_record(&cv, &d, &e), 0);
	const struct gt_ring_device_def *dv;
	cr_assert_eq(convert_take_devices(&cv, &dv), 1);
	cr_assert_eq(dv[0].id, 6);
	cr_assert_eq(dv[0].sm_count, 132);
	cr_assert_eq(dv[0].rank, 3);
	cr_assert_str_eq(name_of(dv[0].name), "NVIDIA H100 80GB HBM3");
	cr_assert_eq(convert_take_devices(&cv, &dv), 0);
}

Test(convert, unknown_kind_is_counted)
{
	CUpti_Activity a;
	memset(&a, 0, sizeof(a));
	a.kind = CUPTI_ACTIVITY_KIND_PC_SAMPLING;
	struct gt_event e;
	cr_assert_eq(convert_record(&cv, &a, &e), 0);
	cr_assert_eq(cv.unknown_records, 1);
}

/* clock calibrations (planted pairs): an offset within the bracket is
 * CUPTI on CLOCK_REALTIME (0 applied); jitter within bracket + 1 us keeps
 * the applied offset (records of different buffers are not shifted
 * against each other); a real step is taken; a bad measurement changes
 * nothing */
Test(convert, clock_offset_is_stable_against_jitter)
{
	struct convert c;
	convert_init(&c, 1, 0);
	struct gt_ring_clock_def m = { .host_ns = 1000000000, .dev_ns = 1000000030,
				    .offset_ns = -30, .bracket_ns = 80 };
	cr_assert_eq(convert_clock(&c, &m), 0);
	cr_assert_eq(m.offset_ns, 0);
	cr_assert_eq(c.clock_offset_ns, 0);
	/* a timestamp callback on another clock: 5 s behind */
	m = (struct gt_ring_clock_def){ .host_ns = 6000000000, .dev_ns = 1000000000,
				     .offset_ns = 5000000000, .bracket_ns = 100 };
	cr_assert_eq(convert_clock(&c, &m), 0);
	cr_assert_eq(c.clock_offset_ns, 5000000000);
	/* next second: the same clock, measured 700 ns differently */
	m.offset_ns = 5000000700;
	cr_assert_eq(convert_clock(&c, &m), 0);
	cr_assert_eq(c.clock_offset_ns, 5000000000);
	cr_assert_eq(m.offset_ns, 5000000000);
	/* a drift of 50 us is followed */
	m.offset_ns = 5000050000;
	cr_assert_eq(convert_clock(&c, &m), 0);
	cr_assert_eq(c.clock_offset_ns, 5000050000);
	/* a preempted calibration (bracket 5 ms, or none) changes nothing */
	struct gt_ring_clock_def bad = { .host_ns = 1, .offset_ns = 7, .bracket_ns = 5000000 };
	cr_assert_lt(convert_clock(&c, &bad), 0);
	cr_assert_eq(c.clock_offset_ns, 5000050000);
	struct gt_ring_clock_def none = { .offset_ns = 0, .bracket_ns = INT64_MAX };
	cr_assert_lt(convert_clock(&c, &none), 0);
	cr_assert_eq(c.clock_offset_ns, 5000050000);
	convert_done(&c);
}

/* MEMORY2 (Memory4): allocation +bytes on its device, release -bytes,
 * pinned host memory on the host, on the main thread's lane; a record of
 * another operation type is counted, not converted */
Test(convert, memory4_allocations_and_releases)
{
	CUpti_ActivityMemory4 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.correlationId = 77;
	m.address = 0x7f0000000000ull;
	m.bytes = 1 << 20;
	m.timestamp = 5000;
	m.processId = 4242;
	m.deviceId = 2;
	struct gt_event e;
	cr_assert_eq(convert_record(&cv, &m, &e), 1);
	cr_expect_eq(e.kind, GT_EV_INSTANT);
	cr_expect(e.flags & GT_EVF_MEMORY);
	cr_expect_str_eq(name_of(e.name), "[memory]");
	cr_expect_eq(e.start_ns, 6000);
	cr_expect_eq(e.dur_ns, 0);
	cr_expect_eq(e.corr, 77);
	cr_expect_eq(e.aux, 2);
	int64_t b;
	memcpy(&b, &e.arg, sizeof(b));
	cr_expect_eq(b, 1 << 20);
	struct gt_ring_lane_def l = lane_of(e.lane);
	cr_expect_eq(l.type, 2);
	cr_expect_eq(l.pid, 4242);
	cr_expect_eq(l.tid, 4242);
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
	m.timestamp = 7000;
	cr_assert_eq(convert_record(&cv, &m, &e), 1);
	memcpy(&b, &e.arg, sizeof(b));
	cr_expect_eq(b, -(1 << 20));
	cr_expect_eq(e.aux, 2);
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	cr_assert_eq(convert_record(&cv, &m, &e), 1);
	cr_expect_eq(e.aux, GT_MEM_HOST);
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID;
	uint64_t unk = cv.unknown_records;
	cr_assert_eq(convert_record(&cv, &m, &e), 0);
	cr_expect_eq(cv.unknown_records, unk + 1);
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	m.timestamp = 0;
	uint64_t z = cv.zero_timestamps;
	cr_assert_eq(convert_record(&cv, &m, &e), 0);
	cr_expect_eq(cv.zero_timestamps, z + 1);
}
