/*
 * att_spin.c - an attach target whose main thread never sleeps: it spins
 * on arithmetic for MS milliseconds while a second thread sleeps in
 * nanosleep, then prints "sum S" (a function of the iteration count only
 * modulo 2^32 steps, so it is checked against its own recomputation) and
 * "sleeper N" for the second thread's completed sleeps, and exits 0.  The
 * injection must borrow the sleeping thread, not the spinning one.
 *   att_spin MS
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static atomic_int stop;

static void *sleeper(void *arg)
{
	long *n = arg;
	while (!atomic_load(&stop)) {
		struct timespec ts = { 0, 1000000 }, rem;
		if (nanosleep(&ts, &rem) == 0)
			(*n)++;
	}
	return NULL;
}

static uint32_t step(uint32_t x)
{
	return x * 1664525u + 1013904223u;
}

static long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 2000, n = 0;
	pthread_t th;
	pthread_create(&th, NULL, sleeper, &n);
	printf("spinning\n");
	fflush(stdout);
	uint32_t x = 1;
	uint64_t iters = 0;
	for (long t0 = now_ms(); now_ms() - t0 < ms;) {
		for (int i = 0; i < 100000; i++)
			x = step(x);
		iters += 100000;
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	uint32_t y = 1;
	for (uint64_t i = 0; i < iters; i++)
		y = step(y);
	printf("sum %s\nsleeper %s\n", x == y ? "ok" : "wrong", n > 10 ? "ran" : "stalled");
	return 0;
}
