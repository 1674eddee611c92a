/*
 * att_sleeper.c - an attach target: prints "tick I" every SLEEP_US for N
 * ticks, optionally after dlopen()ing LIB (a stand-in libcuda.so.1 or an
 * old libgtrace-inject.so), then exits with STATUS.  It knows nothing of
 * gtrace; the test compares its output and status with what they must be.
 *   att_sleeper N SLEEP_US STATUS [LIB]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	if (argc < 4)
		return 100;
	int n = atoi(argv[1]), status = atoi(argv[3]);
	long us = atol(argv[2]);
	if (argc > 4 && !dlopen(argv[4], RTLD_NOW)) {
		fprintf(stderr, "att_sleeper: %s\n", dlerror());
		return 101;
	}
	for (int i = 0; i < n; i++) {
		printf("tick %d\n", i);
		fflush(stdout);
		struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
		/* a sleep cut short by anything would show as a remaining time */
		struct timespec rem = { 0, 0 };
		if (nanosleep(&ts, &rem) != 0) {
			printf("nanosleep interrupted\n");
			return 102;
		}
	}
	return status;
}
