/*
 * cudaemu_holder.c - a process on the emulated driver whose CUPTI is held
 * by another client (a profiler such as torch.profiler), for the attach
 * refusal test: it subscribes to CUPTI, prints "held", submits a kernel
 * every 500 us for SECONDS, then checks that its subscription is still its
 * own (unsubscribe succeeds), prints "done N" and exits 0.
 *   cudaemu_holder SECONDS
 */
#include <cuda.h>
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "cudaemu.h"

static void CUPTIAPI on_cb(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
	(void)ud;
	(void)d;
	(void)id;
	(void)data;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	if (cuInit(0) != CUDA_SUCCESS)
		return 1;
	CUpti_SubscriberHandle sub;
	if (cuptiSubscribe(&sub, (CUpti_CallbackFunc)on_cb, NULL) != CUPTI_SUCCESS)
		return 2;
	printf("held\n");
	fflush(stdout);
	uint64_t end = cudaemu_now_ns() + (uint64_t)(secs * 1e9);
	long n = 0;
	while (cudaemu_now_ns() < end) {
		struct cudaemu_work w = { .kind = CUDAEMU_KERNEL, .device = 0, .stream = 1,
					  .name = "holder_kernel", .grid = { 1, 1, 1 },
					  .block = { 32, 1, 1 }, .dur_ns = 2000 };
		if (cudaemu_submit(&w) != 0)
			return 3;
		n++;
		struct timespec ts = { 0, 500000 };
		nanosleep(&ts, NULL);
	}
	cudaemu_sync();
	if (cuptiUnsubscribe(sub) != CUPTI_SUCCESS)
		return 4;
	printf("done %s\n", n > 0 ? "ok" : "none");
	return 0;
}
