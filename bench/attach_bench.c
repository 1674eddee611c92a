/*
 * attach_bench.c - how long `gtrace attach` takes on a process started
 * without gtrace, and how long the target is stopped.
 *
 * Each run forks a fresh target (a glibc process sleeping 10 ms at a time,
 * as a trainer's main thread waits), loads libgtrace-inject.so into it with
 * gt_pinj_inject and waits until its control socket accepts a connection.
 * Figures per run: injection (gt_pinj_inject), stopped (the borrowed thread's
 * interrupt to detach), ready (start to an accepted connection).
 *   attach_bench LIB RUNS
 * prints "key value" lines: medians and maxima in ms.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/ctl.h"
#include "gtrace/pinj.h"
#include "gtrace_config.h"
#include "bench.h"

#define MAX_RUNS 200

static void target(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;) {
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: attach_bench LIB RUNS\n");
		return 2;
	}
	int runs = atoi(argv[2]);
	if (runs < 1 || runs > MAX_RUNS)
		runs = 20;
	double inj[MAX_RUNS], stop[MAX_RUNS], ready[MAX_RUNS];
	for (int r = 0; r < runs; r++) {
		pid_t t = fork();
		if (t == 0)
			target();
		struct timespec ts = { 0, 50000000 };
		nanosleep(&ts, NULL);           /* asleep in nanosleep */
		struct gt_pinj_opts o = { .lib_path = argv[1], .version = GTRACE_VERSION };
		struct gt_pinj_result res;
		char err[512];
		double t0 = bench_ms(CLOCK_MONOTONIC);
		if (gt_pinj_inject(t, &o, &res, err, sizeof(err)) < 0) {
			fprintf(stderr, "attach_bench: %s\n", err);
			kill(t, SIGKILL);
			return 1;
		}
		int fd = -1;
		for (int i = 0; i < 20000 && fd < 0; i++) {
			fd = gt_ctl_connect(t, err, sizeof(err));
			if (fd < 0) {
				struct timespec w = { 0, 100000 };
				nanosleep(&w, NULL);
			}
		}
		double t1 = bench_ms(CLOCK_MONOTONIC);
		if (fd < 0) {
			fprintf(stderr, "attach_bench: no socket: %s\n", err);
			kill(t, SIGKILL);
			return 1;
		}
		close(fd);
		inj[r] = (double)res.total_ns / 1e6;
		stop[r] = (double)res.stopped_ns / 1e6;
		ready[r] = t1 - t0;
		kill(t, SIGKILL);
		waitpid(t, NULL, 0);
	}
	bench_sort(inj, runs);
	bench_sort(stop, runs);
	bench_sort(ready, runs);
	printf("runs %d\n", runs);
	printf("inject_ms_median %.2f\ninject_ms_max %.2f\n", inj[runs / 2], inj[runs - 1]);
	printf("stopped_ms_median %.2f\nstopped_ms_max %.2f\n", stop[runs / 2], stop[runs - 1]);
	printf("ready_ms_median %.2f\nready_ms_max %.2f\n", ready[runs / 2], ready[runs - 1]);
	return 0;
}
