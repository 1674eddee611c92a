/*
 * net_bench.c - one receiver taking N node streams (issue 17): each node is
 * a child process writing a .gtrace stream (a simulated node's capture,
 * written by the real writer) into a pipe, paced at RATE events/s (0: as
 * fast as the pipe takes it); the parent reads every pipe without blocking
 * and merges them as one job (gtjob), finishing the store every 200 ms as
 * the viewer does.  Reported per run: events merged (must equal the sum
 * sent: nothing lost), wall time, the receiver's CPU time, and how far
 * behind the senders it ended (wall time after the last sender finished).
 *
 *   net_bench [NODES [RATE [SECONDS [RUNS [BUDGET]]]]]   (default 4 500000 5 3 0)
 *
 * BUDGET: the merged store's memory budget (gt_store_set_budget: 64M, 1G;
 * 0 none), the resident peak of the store then reported too.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"
#include "gtrace/gtfile.h"
#include "gtrace/gtjob.h"
#include "gtrace/sim.h"

#define MAXN 16

/* the bytes of a simulated node with about `events` events (malloc'd) */
static unsigned char *node_stream(uint64_t events, int node, size_t *len, uint64_t *ev_out)
{
	struct gt_sim_opts o = { .gpus = 2, .ranks = 1, .events = events, .seed = (uint64_t)node + 1,
			      .t0_ns = 1700000000000000000LL };
	struct gt_store *s = gt_store_new();
	char err[256], path[128];
	if (gt_sim_generate(&o, s, err, sizeof(err))) {
		fprintf(stderr, "net_bench: sim: %s\n", err);
		exit(1);
	}
	snprintf(path, sizeof(path), "/tmp/net_bench-%d-%d.gtrace", (int)getpid(), node);
	if (gt_file_write_store(s, path, err, sizeof(err))) {
		fprintf(stderr, "net_bench: %s\n", err);
		exit(1);
	}
	*ev_out = gt_store_event_count(s);
	gt_store_free(s);
	FILE *f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	unsigned char *b = malloc(*len);
	if (!b || fread(b, 1, *len, f) != *len)
		exit(1);
	fclose(f);
	unlink(path);
	return b;
}

/* child: write b to fd paced at bytes_per_s (0 = unpaced), then exit */
static void sender(int fd, const unsigned char *b, size_t len, double bytes_per_s)
{
	double t0 = bench_ms(CLOCK_MONOTONIC);
	size_t off = 0;
	while (off < len) {
		size_t due = bytes_per_s > 0 ? (size_t)((bench_ms(CLOCK_MONOTONIC) - t0) / 1e3 *
							bytes_per_s) : len;
		due = due > len ? len : due;
		if (due <= off) {
			struct timespec ts = { 0, 2000000 };
			nanosleep(&ts, NULL);
			continue;
		}
		ssize_t w = write(fd, b + off, due - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(2);
		off += (size_t)w;
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	int nodes = argc > 1 ? atoi(argv[1]) : 4;
	double rate = argc > 2 ? atof(argv[2]) : 500000;
	double secs = argc > 3 ? atof(argv[3]) : 5;
	int runs = argc > 4 ? atoi(argv[4]) : 3;
	size_t budget = 0;
	if (argc > 5 && gt_parse_size(argv[5], &budget)) {
		fprintf(stderr, "net_bench: BUDGET: '%s' is not a size\n", argv[5]);
		return 2;
	}
	if (nodes < 1 || nodes > MAXN || runs < 1 || secs <= 0) {
		fprintf(stderr, "usage: net_bench [NODES [RATE [SECONDS [RUNS [BUDGET]]]]]\n");
		return 2;
	}
	uint64_t per = (uint64_t)((rate > 0 ? rate : 500000) * secs);
	unsigned char *b[MAXN];
	size_t len[MAXN];
	uint64_t ev[MAXN], total = 0;
	for (int i = 0; i < nodes; i++) {
		b[i] = node_stream(per, i, &len[i], &ev[i]);
		total += ev[i];
	}
	printf("net_bench: %d nodes x %llu events (%.2f bytes/event), %s\n", nodes,
	       (unsigned long long)ev[0], (double)len[0] / (double)ev[0],
	       rate > 0 ? "paced" : "unpaced");
	double wall[16], cpu[16], lag[16];
	int bad = 0;
	for (int r = 0; r < runs && r < 16; r++) {
		int fd[MAXN];
		pid_t pid[MAXN];
		for (int i = 0; i < nodes; i++) {
			int p[2];
			if (pipe(p))
				return 1;
			pid[i] = fork();
			if (pid[i] == 0) {
				close(p[0]);
				double bps = rate > 0 ? rate * (double)len[i] / (double)ev[i] : 0;
				sender(p[1], b[i], len[i], bps);
			}
			close(p[1]);
			fd[i] = p[0];
			fcntl(fd[i], F_SETFL, O_NONBLOCK);
		}
		struct gt_store *s = gt_store_new();
		if (budget && gt_store_set_budget(s, budget)) {
			fprintf(stderr, "net_bench: no cache file for the budget\n");
			return 1;
		}
		gt_store_finish(s);
		size_t peak = 0;
		struct gt_job *j = gt_job_new(s);
		for (int i = 0; i < nodes; i++) {
			char nm[32];
			snprintf(nm, sizeof(nm), "node%d", i);
			gt_job_add_node(j, nm);
		}
		static unsigned char buf[1 << 20];
		double t0 = bench_ms(CLOCK_MONOTONIC), c0 = bench_cpu_s(), last_fin = t0;
		double senders_done = 0;
		int open_n = nodes, alive = nodes;
		uint64_t got = 0;
		while (open_n) {
			struct pollfd pf[MAXN];
			for (int i = 0; i < nodes; i++)
				pf[i] = (struct pollfd){ fd[i], POLLIN, 0 };
			poll(pf, (nfds_t)nodes, 20);
			for (int i = 0; i < nodes; i++) {
				while (fd[i] >= 0) {
					ssize_t n = read(fd[i], buf, sizeof(buf));
					if (n < 0 && errno == EAGAIN)
						break;
					if (n <= 0) {
						close(fd[i]);
						fd[i] = -1;
						gt_job_close(j, i);
						open_n--;
						break;
					}
					long a = gt_job_feed(j, i, buf, (size_t)n, NULL, NULL);
					if (a < 0) {
						fprintf(stderr, "net_bench: feed: %ld\n", a);
						return 1;
					}
					got += (uint64_t)a;
				}
			}
			int st;
			while (alive && waitpid(-1, &st, WNOHANG) > 0)
				if (--alive == 0)
					senders_done = bench_ms(CLOCK_MONOTONIC);
			if (bench_ms(CLOCK_MONOTONIC) - last_fin >= 200) {
				gt_store_finish(s);
				last_fin = bench_ms(CLOCK_MONOTONIC);
				size_t res = gt_store_resident_bytes(s);
				peak = res > peak ? res : peak;
			}
		}
		gt_store_finish(s);
		while (alive && waitpid(-1, NULL, 0) > 0)
			if (--alive == 0)
				senders_done = bench_ms(CLOCK_MONOTONIC);
		double t1 = bench_ms(CLOCK_MONOTONIC);
		wall[r] = (t1 - t0) / 1e3;
		cpu[r] = bench_cpu_s() - c0;
		lag[r] = senders_done > 0 && t1 > senders_done ? (t1 - senders_done) / 1e3 : 0;
		bad |= got != total || gt_store_event_count(s) != total;
		printf("run %d: %llu of %llu events merged, wall %.2f s (%.2f M ev/s), receiver CPU "
		       "%.2f s, done %.3f s after the last sender; store resident peak %.0f MB "
		       "(budget %.0f MB)\n", r, (unsigned long long)got,
		       (unsigned long long)total, wall[r], (double)total / wall[r] / 1e6, cpu[r], lag[r],
		       (double)peak / 1e6, (double)budget / 1e6);
		gt_job_free(j);
		gt_store_free(s);
	}
	int n = runs < 16 ? runs : 16;
	qsort(wall, (size_t)n, sizeof(double), bench_cmp_double);
	qsort(cpu, (size_t)n, sizeof(double), bench_cmp_double);
	qsort(lag, (size_t)n, sizeof(double), bench_cmp_double);
	printf("median: wall %.2f s, %.2f M ev/s merged, receiver CPU %.2f s (%.0f %% of one core), "
	       "lag %.3f s; offered %.2f M ev/s; %s\n", wall[n / 2], (double)total / wall[n / 2] / 1e6,
	       cpu[n / 2], 100 * cpu[n / 2] / wall[n / 2], lag[n / 2],
	       rate > 0 ? rate * nodes / 1e6 : 0, bad ? "EVENTS LOST" : "nothing lost");
	for (int i = 0; i < nodes; i++)
		free(b[i]);
	return bad;
}
