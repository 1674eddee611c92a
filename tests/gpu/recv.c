/*
 * recv.c - a minimal receiver for the GPU checks (no store, no zstd, so it
 * builds on a bare GPU machine): starts CMD with libgtrace-inject.so
 * injected (capture from CUDA's start), reads the ring until CMD exits and
 * prints one line per (kind, name): kind, count, total ns, name; and a
 * final "#streams N" line (distinct GPU lanes with GPU work) and "#lost N";
 * a capture the library ended says why on stdout.
 * With GPU_RECV_EVENTS=FILE it also writes every GPU event to FILE as
 * kind, start ns (host CLOCK_REALTIME axis), duration ns, name.
 * usage: gpu_recv LIB OUT.tsv -- CMD [ARGS]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/ctl.h"
#include "gtrace/ring.h"

#define MAXS (1 << 20)
static char *strs[MAXS];
static struct gt_ring_lane_def lanes[4096];
struct row { int kind; uint32_t name; uint64_t n; int64_t dur; };
static struct row rows[65536];
static int nrows;
static int lane_gpu_used[4096];
static FILE *events_out;

static void add(const struct gt_event *e)
{
	for (int i = 0; i < nrows; i++)
		if (rows[i].kind == e->kind && rows[i].name == e->name) {
			rows[i].n++;
			rows[i].dur += e->dur_ns;
			return;
		}
	if (nrows < 65536)
		rows[nrows++] = (struct row){ e->kind, e->name, 1, e->dur_ns };
}

static void drain(struct gt_ring *r)
{
	uint32_t n;
	const struct gt_ring_rec *m;
	static char buf[1 << 16];
	while ((m = gt_ring_peek(r, &n))) {
		if (m->type == GT_RING_REC_STR && m->u.str.id < MAXS) {
			gt_ring_str_text(r, buf, sizeof(buf));
			free(strs[m->u.str.id]);
			strs[m->u.str.id] = strdup(buf);
		} else if (m->type == GT_RING_REC_LANE && m->u.lane.id < 4096) {
			lanes[m->u.lane.id] = m->u.lane;
		} else if (m->type == GT_RING_REC_EVENT) {
			const struct gt_event *e = &m->u.ev;
			add(e);
			if (e->lane < 4096 && gt_event_is_gpu(e))
				lane_gpu_used[e->lane] = 1;
			if (events_out && gt_event_is_gpu(e))
				fprintf(events_out, "%d\t%lld\t%lld\t%s\n", e->kind, (long long)e->start_ns,
					(long long)e->dur_ns,
					e->name < MAXS && strs[e->name] ? strs[e->name] : "?");
		}
		gt_ring_release(r, n);
	}
}

int main(int argc, char **argv)
{
	if (argc < 5 || strcmp(argv[3], "--")) {
		fprintf(stderr, "usage: gpu_recv LIB OUT.tsv -- CMD [ARGS]\n");
		return 2;
	}
	if (getenv("GPU_RECV_EVENTS") && !(events_out = fopen(getenv("GPU_RECV_EVENTS"), "w"))) {
		perror(getenv("GPU_RECV_EVENTS"));
		return 1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		unsetenv("GPU_RECV_EVENTS");
		setenv("CUDA_INJECTION64_PATH", argv[1], 1);
		setenv("NVTX_INJECTION64_PATH", argv[1], 1);
		setenv("GTRACE_AUTOSTART", "4194304", 1);   /* 256 MiB ring */
		execvp(argv[4], argv + 4);
		_exit(127);
	}
	char err[256], reply[GT_CTL_LINE_MAX];
	int fd = -1, rfd = -1, status = 0, exited = 0;
	struct timespec ms = { 0, 2000000 };
	while (fd < 0) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			fprintf(stderr, "gpu_recv: %s exited before CUDA started (%s)\n", argv[4], err);
			return 1;
		}
		fd = gt_ctl_connect(pid, err, sizeof(err));
		if (fd < 0)
			nanosleep(&ms, NULL);
	}
	if (gt_ctl_request(fd, "start", reply, sizeof(reply), &rfd, 10000) < 0 || rfd < 0) {
		fprintf(stderr, "gpu_recv: start: %s\n", reply);
		return 1;
	}
	struct gt_ring r;
	if (gt_ring_map(&r, rfd, err, sizeof(err)) < 0) {
		fprintf(stderr, "gpu_recv: %s\n", err);
		return 1;
	}
	while (!exited) {
		drain(&r);
		if (waitpid(pid, &status, WNOHANG) == pid)
			exited = 1;
		else
			nanosleep(&ms, NULL);
	}
	drain(&r);
	FILE *f = fopen(argv[2], "w");
	if (!f) {
		perror(argv[2]);
		return 1;
	}
	for (int i = 0; i < nrows; i++)
		fprintf(f, "%d\t%llu\t%lld\t%s\n", rows[i].kind, (unsigned long long)rows[i].n,
			(long long)rows[i].dur, rows[i].name < MAXS && strs[rows[i].name] ? strs[rows[i].name] : "?");
	int streams = 0;
	for (int i = 0; i < 4096; i++)
		streams += lane_gpu_used[i];
	fprintf(f, "#streams\t%d\n#lost\t%llu\n", streams,
		/* a declined buffer is why CUPTI dropped records: in its count */
		(unsigned long long)(atomic_load(&r.hdr->ring_overflow) + atomic_load(&r.hdr->cupti_dropped) +
				     atomic_load(&r.hdr->zero_timestamps) + atomic_load(&r.hdr->read_errors)));
	/* a capture the library ended (another CUPTI client ...) says why */
	if (atomic_load(&r.hdr->state) == GT_RING_ST_ENDED)
		printf("gpu_recv: capture ended: %.95s (%llu activity buffers lost to another "
		       "CUPTI client)\n", r.hdr->reason,
		       (unsigned long long)atomic_load(&r.hdr->client_buffers));
	fclose(f);
	if (events_out)
		fclose(events_out);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
