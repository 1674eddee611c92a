/*
 * att_threads.c - a multi-threaded attach target busy in syscalls: T
 * threads run for MS milliseconds, each looping over getppid(), a write
 * and a read back through its own pipe and a 200 us nanosleep, checking
 * every result.  Progress is counted in 250 ms windows.  The main thread
 * waits in pthread_join.  At the end it prints "errors E" (syscalls that
 * failed or returned wrong values, EINTR included) and "stalled S" (thread
 * windows without progress), then exits 0 when both are 0, else 1.
 *   att_threads T MS
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAXW 64
static int ms;
static atomic_long errors;
static long progress[16][MAXW];
static struct timespec t0;

static long elapsed_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
}

static void *worker(void *arg)
{
	long k = (long)arg;
	int p[2];
	if (pipe(p) < 0) {
		atomic_fetch_add(&errors, 1);
		return NULL;
	}
	pid_t pp = getppid();
	for (long e; (e = elapsed_ms()) < ms;) {
		char c = (char)k, d = 0;
		if (getppid() != pp || write(p[1], &c, 1) != 1 || read(p[0], &d, 1) != 1 || d != c)
			atomic_fetch_add(&errors, 1);
		struct timespec ts = { 0, 200000 }, rem;
		if (nanosleep(&ts, &rem) != 0)
			atomic_fetch_add(&errors, 1);
		if (e / 250 < MAXW)
			progress[k][e / 250]++;
	}
	close(p[0]);
	close(p[1]);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	ms = argc > 2 ? atoi(argv[2]) : 2000;
	if (n < 1 || n > 16 || ms / 250 > MAXW)
		return 100;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_t thr[16];
	for (long k = 0; k < n; k++)
		pthread_create(&thr[k], NULL, worker, (void *)k);
	printf("started %d\n", n);
	fflush(stdout);
	for (int k = 0; k < n; k++)
		pthread_join(thr[k], NULL);
	long stalled = 0;
	for (int k = 0; k < n; k++)
		for (int w = 0; w < ms / 250; w++)
			stalled += progress[k][w] == 0;
	printf("errors %ld\nstalled %ld\n", (long)atomic_load(&errors), stalled);
	return errors || stalled ? 1 : 0;
}
