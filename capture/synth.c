/*
 * synth.c - a built-in synthetic source for libgtrace-inject.so, selected
 * with GTRACE_SYNTH=EVENTS_PER_S: a producer thread publishes kernels
 * "synth_kernel_0".."synth_kernel_9" on 4 streams of device 0 (1 us each,
 * back to back per stream) through the same agent, ring and control socket
 * as CUPTI data.  It lets `gtrace run`/`record` be tried on any program and
 * tests the injected library's own path on machines without a GPU.  (The
 * realistic simulator is `gtrace sim --live`, which needs core.)
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "synth.h"

static struct {
	double rate;
	pthread_t thr;
	char names[10][24];
} sy;

static const char *d_str(void *ctx, uint32_t id, size_t *len)
{
	(void)ctx;
	if (id < 1 || id > 10)
		return NULL;
	*len = strlen(sy.names[id - 1]);
	return sy.names[id - 1];
}

static int d_lane(void *ctx, uint32_t id, struct gt_ring_lane_def *o)
{
	(void)ctx;
	if (id > 3)
		return -1;
	o->type = 1;
	o->rank = -1;
	o->device = 0;
	o->tid = 7 + id;
	return 0;
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *synth_main(void *arg)
{
	(void)arg;
	struct gt_publisher_dict d = { NULL, d_str, d_lane, NULL, NULL };
	uint64_t i = 0;
	int64_t t0 = now_ns(), stream_end[4] = { t0, t0, t0, t0 };
	for (;;) {
		struct gt_publisher *p = gt_agent_pub();
		/* one batch per millisecond at the asked rate */
		uint64_t batch = (uint64_t)(sy.rate / 1000.0);
		if (batch == 0)
			batch = 1;
		for (uint64_t k = 0; p && k < batch; k++, i++) {
			struct gt_event e;
			memset(&e, 0, sizeof(e));
			e.kind = GT_EV_KERNEL;
			e.lane = (uint32_t)(i % 4);
			e.name = (uint32_t)(i % 10) + 1;
			e.start_ns = stream_end[e.lane];
			e.dur_ns = 1000;
			e.corr = (uint32_t)i + 1;
			stream_end[e.lane] += 1000;
			gt_publisher_event(p, &e, &d);
		}
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
		int64_t now = now_ns();
		for (int s = 0; s < 4; s++)
			if (stream_end[s] < now)
				stream_end[s] = now;
	}
	return NULL;
}

static void synth_status(void *ctx, char *buf, size_t len)
{
	(void)ctx;
	snprintf(buf, len, " gpus=1 synth_rate=%.0f", sy.rate);
}

static const struct gt_agent_source synth_source = { .name = "synth", .status = synth_status };

int synth_start(double rate, char *err, size_t errlen)
{
	sy.rate = rate > 0 ? rate : 10000;
	for (int i = 0; i < 10; i++)
		snprintf(sy.names[i], sizeof(sy.names[i]), "synth_kernel_%d", i);
	int rc = gt_agent_init(&synth_source, err, errlen);
	if (rc < 0)
		return rc;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&sy.thr, &at, synth_main, NULL);
	pthread_attr_destroy(&at);
	if (rc) {
		snprintf(err, errlen, "cannot start the synthetic source thread");
		return -rc;
	}
	return 0;
}
