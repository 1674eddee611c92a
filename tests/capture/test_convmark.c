/*
 * test_convmark.c - NVTX ranges of any depth: the open-range table against
 * a plain array as reference (random ids, random closing order), and the
 * converter pairing 10,000 nested START/END marker records (CUDA 13
 * Marker2, filled by hand), each range with its own name, start and end.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cupti_activity.h>
#include "../../capture/convert.h"
#include "../../capture/convmark.h"

Test(convmark, random_open_and_close_match_a_reference)
{
	enum { N = 50000 };
	static uint32_t ids[N];
	static uint8_t open_[N];
	struct convmark m = { 0 };
	srand(7);
	/* distinct (an odd multiplier is a bijection mod 2^32), nonzero */
	for (uint32_t i = 0; i < N; i++)
		ids[i] = (i + 1) * 0x9E3779B1u;
	size_t n_open = 0;
	for (int step = 0; step < 4 * N; step++) {
		uint32_t i = (uint32_t)rand() % N;
		struct convmark_ent e = { ids[i], i + 1, (int64_t)i * 10, i % 7, 0 };
		if (!open_[i]) {
			cr_assert_eq(convmark_put(&m, &e), 0);
			open_[i] = 1;
			n_open++;
		} else {
			struct convmark_ent o;
			cr_assert_eq(convmark_take(&m, ids[i], &o), 1, "id %u not found", ids[i]);
			cr_assert_eq(o.name, i + 1);
			cr_assert_eq(o.start_ns, (int64_t)i * 10);
			cr_assert_eq(convmark_take(&m, ids[i], &o), 0);
			open_[i] = 0;
			n_open--;
		}
		cr_assert_eq(m.n, n_open);
	}
	for (uint32_t i = 0; i < N; i++) {
		struct convmark_ent o;
		cr_assert_eq(convmark_take(&m, ids[i], &o), open_[i]);
	}
	cr_assert_eq(m.n, 0);
	convmark_done(&m);
}

Test(convmark, converter_pairs_ten_thousand_nested_ranges)
{
	enum { DEPTH = 10000 };
	static struct convert cv;
	convert_init(&cv, 1, 0);
	CUpti_ActivityMarker2 m;
	char name[32];
	struct gt_event e;
	for (uint32_t d = 0; d < DEPTH; d++) {
		memset(&m, 0, sizeof(m));
		m.kind = CUPTI_ACTIVITY_KIND_MARKER;
		m.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
		m.id = 100 + d;
		m.timestamp = 1000 + d;
		m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
		m.objectId.pt.threadId = 55;
		snprintf(name, sizeof(name), "range %u", d);
		m.name = name;
		cr_assert_eq(convert_record(&cv, &m, &e), 0);
	}
	struct gt_publisher_dict dict = convert_dict(&cv);
	for (uint32_t d = DEPTH; d-- > 0;) {
		memset(&m, 0, sizeof(m));
		m.kind = CUPTI_ACTIVITY_KIND_MARKER;
		m.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
		m.id = 100 + d;
		m.timestamp = 1000000 + (DEPTH - 1 - d);
		m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
		m.objectId.pt.threadId = 55;
		cr_assert_eq(convert_record(&cv, &m, &e), 1, "range %u", d);
		cr_assert_eq(e.kind, GT_EV_NVTX);
		cr_assert_eq(e.start_ns, 1000 + (int64_t)d);
		cr_assert_eq(e.dur_ns, 1000000 + (int64_t)(DEPTH - 1 - d) - 1000 - (int64_t)d);
		size_t len;
		const char *s = dict.str(dict.ctx, e.name, &len);
		snprintf(name, sizeof(name), "range %u", d);
		cr_assert_str_eq(s, name);
	}
	cr_assert_eq(cv.markers_lost, 0);
	cr_assert_eq(cv.markers.n, 0);
	convert_done(&cv);
}
