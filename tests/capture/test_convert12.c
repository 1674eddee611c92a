/*
 * test_convert12.c - CUDA 12 CUPTI records (Kernel9, Memcpy5,
 * MemcpyPtoP3, Device4, Context2, Synchronization, Overhead2, and the
 * unchanged Memset4 and API records, filled by hand from
 * cupti_activity_deprecated.h / cupti_activity.h) decoded by a converter
 * set to CUPTI 12.  Expected values follow from the fields set here and
 * the mapping rules of capture/convert.c, as in test_convert.c.
 */
#include <criterion/criterion.h>
#include <string.h>
#include <cupti_activity.h>
#include "../../capture/convert.h"
#include "../../capture/convert12.h"

static struct convert cv;

static void setup(void)
{
	convert_init(&cv, 77, 1);
	cv.cupti_major = 12;
	cv.clock_offset_ns = 10;
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
	return s;
}

static struct gt_ring_lane_def lane_of(uint32_t id)
{
	struct gt_publisher_dict d = convert_dict(&cv);
	struct gt_ring_lane_def l;
	cr_assert_eq(d.lane(d.ctx, id, &l), 0);
	return l;
}

TestSuite(convert12, .init = setup, .fini = teardown);

Test(convert12, kernel9)
{
	CUpti_ActivityKernel9 k;
	memset(&k, 0xa5, sizeof(k));     /* fields we do not set hold garbage */
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = 1000;
	k.end = 1700;
	k.deviceId = 3;
	k.contextId = 1;
	k.streamId = 14;
	k.gridX = 64; k.gridY = 1; k.gridZ = 2;
	k.blockX = 128; k.blockY = 2; k.blockZ = 1;
	k.registersPerThread = 40;
	k.staticSharedMemory = 512;
	k.dynamicSharedMemory = 2048;
	k.correlationId = 77;
	k.graphId = 9;
	k.name = "void gemv2T_kernel<float>";
	struct gt_event e;
	cr_assert_eq(convert_record(&cv, &k, &e), 1);
	cr_assert_eq(e.kind, GT_EV_KERNEL);
	cr_assert_eq(e.start_ns, 1010);
	cr_assert_eq(e.dur_ns, 700);
	cr_assert_eq(e.corr, 77);
	cr_assert_eq(e.aux, 9);
	cr_assert_str_eq(name_of(e.name), "void gemv2T_kernel<float>");
	struct gt_ring_lane_def l = lane_of(e.lane);
	cr_assert_eq(l.type, 1);
	cr_assert_eq(l.device, 3);
	cr_assert_eq(l.tid, 14);
	cr_assert_eq(l.pid, 77);
	struct gt_publisher_dict d = convert_dict(&cv);
	struct gt_kconf kc;
	cr_assert_eq(d.kconf(d.ctx, gt_event_kconf(&e), &kc), 0);
	cr_assert_eq(kc.grid[0], 64);
	cr_assert_eq(kc.grid[2], 2);
	cr_assert_eq(kc.block[1], 2);
	cr_assert_eq(kc.regs_per_thread, 40);
	cr_assert_eq(kc.smem_static_bytes, 512);
	cr_assert_eq(kc.smem_dynamic_bytes, 2048);
}

Test(convert12, lift_is_by_field_and_leaves_same_records_alone)
{
	CUpti_ActivityKernel9 k;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_KERNEL;
	k.end = 5;
	k.graphNodeId = 0x100000002ull;
	union convert12_rec tmp;
	const CUpti_ActivityKernel10 *o = convert12_up(&k, &tmp);
	cr_assert_eq((const void *)o, (const void *)&tmp);
	cr_assert_eq(o->end, 5);
	cr_assert_eq(o->graphNodeId, 0x100000002ull);
	CUpti_ActivityMemset4 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	cr_assert_eq(convert12_up(&m, &tmp), (const void *)&m);
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof(a));
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	cr_assert_eq(convert12_up(&a, &tmp), (const void *)&a);
}

Test(convert12, zero_and_reversed_timestamps_counted)
{
	CUpti_ActivityKernel9 k;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.name = "x";
	struct gt_event e;
	cr_assert_eq(convert_record(&cv, &k, &e), 0);
	k.start = 50;
	k.end = 40;
	cr_assert_eq(convert_record(&cv, &k, &e), 0);
	cr_assert_eq(cv.zero_timestamps, 2);
}

Test(convert12, memcpy5_ptop3_memset4)
{
	CUpti_ActivityMemcpy5 m;
	memset(&m, 0x5a, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	m.bytes = 4096;
	m.start = 200;
	m.end = 260;
	m.deviceId = 1;
	m.streamId = 7;
	m.correlationId = 5;
	struct gt_event e;
	cr_assert_eq(convert_record(&cv, &m, &e), 1);
	cr_assert_eq(e.kind, GT_EV_MEMCPY);
	cr_assert_eq(e.sub, GT_COPY_D2H);
	cr_assert_eq(e.arg, 4096);
	cr_assert_eq(e.corr, 5);
	cr_assert_eq(e.start_ns, 210);
	cr_assert_eq(e.dur_ns, 60);
	cr_assert(e.flags & GT_EVF_PINNED);
	cr_assert_str_eq(name_of(e.name), "Memcpy DtoH (Device -> Pinned)");
	cr_assert_eq(lane_of(e.lane).device, 1);
	cr_assert_eq(lane_of(e.lane).tid, 7);

	CUpti_ActivityMemcpyPtoP3 p;
	memset(&p, 0, sizeof(p));
	p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	p.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	p.bytes = 1 << 16;
	p.start = 300;
	p.end = 400;
	p.deviceId = 2;
	p.streamId = 3;
	p.srcDeviceId = 2;
	p.dstDeviceId = 4;
	p.correlationId = 6;
	cr_assert_eq(convert_record(&cv, &p, &e), 1);
	cr_assert_eq(e.sub, GT_COPY_P2P);
	cr_assert_eq(e.arg, 1 << 16);
	cr_assert_eq(e.aux, 2 | (4u << 16));
	cr_assert_eq(e.dur_ns, 100);
	cr_assert_eq(lane_of(e.lane).device, 2);

	CUpti_ActivityMemset4 s;
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	s.bytes = 128;
	s.start = 500;
	s.end = 520;
	s.deviceId = 0;
	s.streamId = 9;
	s.correlationId = 8;
	s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	cr_assert_eq(convert_record(&cv, &s, &e), 1);
	cr_assert_eq(e.kind, GT_EV_MEMSET);
	cr_assert_eq(e.arg, 128);
	cr_assert_str_eq(name_of(e.name), "Memset (Device)");
}

Test(convert12, sync1_context2_device4_overhead2)
{
	CUpti_ActivityContext2 c;
	memset(&c, 0, sizeof(c));
	c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
	c.contextId = 5;
	c.deviceId = 2;
	struct gt_event e;
	cr_assert_eq(convert_record(&cv, &c, &e), 0);
	CUpti_ActivitySynchronization s;
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	s.start = 10;
	s.end = 30;
	s.contextId = 5;
	s.streamId = 11;
	s.correlationId = 3;
	cr_assert_eq(convert_record(&cv, &s, &e), 1);
	cr_assert_eq(e.kind, GT_EV_SYNC);
	cr_assert_eq(e.sub, GT_SYNC_STREAM);
	cr_assert_eq(e.corr, 3);
	cr_assert_eq(lane_of(e.lane).device, 2);   /* through context 5 */
	cr_assert_eq(lane_of(e.lane).tid, 11);

	CUpti_ActivityDevice4 d;
	memset(&d, 0, sizeof(d));
	d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d.id = 2;
	d.name = "NVIDIA A100-SXM4-80GB";
	d.numMultiprocessors = 108;
	d.globalMemorySize = 85899345920ull;
	d.computeCapabilityMajor = 8;
	d.computeCapabilityMinor = 0;
	cr_assert_eq(convert_record(&cv, &d, &e), 0);
	const struct gt_ring_device_def *dv;
	cr_assert_eq(convert_take_devices(&cv, &dv), 1);
	cr_assert_eq(dv[0].id, 2);
	cr_assert_eq(dv[0].sm_count, 108);
	cr_assert_eq(dv[0].mem_bytes, 85899345920ull);
	cr_assert_eq(dv[0].cc_major, 8);
	cr_assert_str_eq(name_of(dv[0].name), "NVIDIA A100-SXM4-80GB");

	CUpti_ActivityOverhead2 o;
	memset(&o, 0, sizeof(o));
	o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	o.objectId.pt.threadId = 4321;
	o.start = 40;
	o.end = 45;
	cr_assert_eq(convert_record(&cv, &o, &e), 1);
	cr_assert_eq(e.kind, GT_EV_OVERHEAD);
	cr_assert_eq(e.dur_ns, 5);
	cr_assert_eq(lane_of(e.lane).tid, 4321);
}
