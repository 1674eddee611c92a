/*
 * live_sess.c - a live session (live_sess.h): several traced processes
 * (ranks) feeding one store, new descendants of a started command joined
 * as they open their control sockets, the streaming writer fed as events
 * arrive, and the ui_source glue for the viewer.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/gtfile.h"
#include "gtrace/mem_lane.h"
#include "live_sess.h"
#include "live_rec.h"
#include "ui.h"

/* CLOCK_MONOTONIC in ns */
int64_t live_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void live_sess_init(struct live_sess *ss, struct gt_store *s, uint32_t records)
{
	memset(ss, 0, sizeof(*ss));
	ss->s = s;
	ss->records = records;
	ss->rate_t_ns = live_mono_ns();
	ss->last_flush_ns = ss->rate_t_ns;
	/* its .gtrace builds the allocated-bytes lanes when read back */
	gt_store_meta_set(s, GT_MEM_LANE_META, "records");
}

int live_sess_add(struct live_sess *ss, pid_t pid, char *err, size_t errlen)
{
	if (ss->n == LIVE_SESS_MAX) {
		snprintf(err, errlen, "too many processes (max %d)", LIVE_SESS_MAX);
		return -ENOSPC;
	}
	int rc = live_open(&ss->conn[ss->n], pid, ss->n, ss->s, ss->records, err, errlen);
	if (rc == 0) {
		ss->n++;
		ss->joined++;
		if (gt_store_finish(ss->s) < 0)   /* a store the viewer can read from the start */
			return -ENOMEM;
	}
	return rc;
}

/* with a root: join traced descendants not connected yet */
static void discover(struct live_sess *ss)
{
	if (!ss->root)
		return;
	pid_t pids[256];
	size_t n = live_list_pids(pids, 256);
	for (size_t i = 0; i < n && i < 256; i++) {
		int known = 0;
		for (int k = 0; k < ss->n; k++)
			known |= ss->conn[k].pid == pids[i];
		for (int k = 0; k < ss->n_refused; k++)
			known |= ss->refused[k] == pids[i];
		if (known || !live_is_descendant(pids[i], ss->root))
			continue;
		char err[256];
		if (live_sess_add(ss, pids[i], err, sizeof(err)) < 0) {
			/* told once (e.g. "no CUDA driver"), not asked again */
			snprintf(ss->msg, sizeof(ss->msg), "%s", err);
			if (ss->n_refused < LIVE_SESS_MAX)
				ss->refused[ss->n_refused++] = pids[i];
		}
	}
}

static int write_events(void *ctx, struct gt_store *s, const struct gt_event *ev, size_t n)
{
	struct live_sess *ss = ctx;
	if (!ss->ml)
		ss->ml = gt_mem_lane_new();
	if (!ss->ml || gt_mem_lane_note(ss->ml, ev, n))
		return -ENOMEM;
	return ss->rec ? live_rec_add(ss->rec, s, ev, n) : 0;
}

int live_sess_poll(struct live_sess *ss)
{
	if (ss->root && !ss->root_exited) {
		int st;
		if (waitpid(ss->root, &st, WNOHANG) == ss->root) {
			ss->root_exited = 1;
			ss->root_status = st;
		}
	}
	discover(ss);
	long added = 0;
	for (int k = 0; k < ss->n; k++) {
		long r = live_poll(&ss->conn[k], 1u << 22, write_events, ss);
		if (r < 0) {
			snprintf(ss->msg, sizeof(ss->msg), "writing the capture: %s", strerror((int)-r));
			return (int)r;
		}
		added += r;
		if (ss->conn[k].done)
			live_detach(&ss->conn[k]);   /* lets an ended simulator exit */
	}
	ss->events += (uint64_t)added;
	int64_t now = live_mono_ns();
	if (now - ss->rate_t_ns >= 1000000000) {
		ss->rate = (double)(ss->events - ss->rate_events) * 1e9 / (double)(now - ss->rate_t_ns);
		ss->rate_t_ns = now;
		ss->rate_events = ss->events;
	}
	if (added && (gt_store_finish(ss->s) < 0 || (ss->ml && gt_mem_lane_sync(ss->ml, ss->s) < 0)))
		return -ENOMEM;
	/* --ring: the store keeps the window too (each lane cut once it holds
	 * half a window more: at most about 1.5 windows, each event moved at
	 * most twice); the viewer moves its references (ui.c, ui_data_changed) */
	if (added && ss->rec && ss->rec->ring_ns && gt_store_event_count(ss->s) &&
	    gt_store_drop_before(ss->s, gt_store_t_max(ss->s) - ss->rec->ring_ns, 2, NULL) < 0)
		return -ENOMEM;
	/* once a second, and at the first events (a file killed early opens
	 * with them) */
	if (ss->rec && (now - ss->last_flush_ns >= 1000000000 || (added && ss->events == (uint64_t)added))) {
		ss->last_flush_ns = now;
		int rc = live_rec_flush(ss->rec, ss->s);
		if (rc < 0)
			return rc;
	}
	return added > 0;
}

int live_sess_done(struct live_sess *ss)
{
	if (ss->root && !ss->root_exited)
		return 0;
	for (int k = 0; k < ss->n; k++)
		if (!ss->conn[k].done)
			return 0;
	return 1;
}

void live_sess_drops(struct live_sess *ss)
{
	struct gt_drops *d = gt_store_drops(ss->s);
	struct gt_drops sum;
	memset(&sum, 0, sizeof(sum));
	for (int k = 0; k < ss->n; k++) {
		struct gt_drops x;
		live_drops(&ss->conn[k], &x);
		sum.cupti_dropped += x.cupti_dropped;
		sum.buffers_declined += x.buffers_declined;
		sum.zero_timestamps += x.zero_timestamps;
		sum.ring_overflow += x.ring_overflow;
		sum.import_skipped += x.import_skipped;
		sum.read_errors += x.read_errors;
		sum.client_buffers += x.client_buffers;
	}
	*d = sum;
}

void live_sess_status(struct live_sess *ss, char *buf, size_t len)
{
	live_sess_drops(ss);
	const struct gt_drops *d = gt_store_drops(ss->s);
	uint64_t lost = gt_store_drops_lost(d);
	const char *state = "capturing";
	int alive = 0;
	for (int k = 0; k < ss->n; k++)
		alive += !ss->conn[k].done;
	if (ss->n && !alive)
		state = ss->conn[ss->n - 1].gone ? "target exited" : live_state(&ss->conn[ss->n - 1]);
	else if (!ss->n)
		state = !ss->root_exited ? "waiting for CUDA" :
			ss->n_refused ? "nothing traced (command exited)" :
			"nothing traced (command exited without initializing CUDA)";
	if (ss->paused && !strcmp(state, "capturing"))
		state = "capturing (view paused)";
	char r[16], e[16], l[16];
	live_fmt_count(ss->rate, r, sizeof(r));
	live_fmt_count((double)ss->events, e, sizeof(e));
	live_fmt_count((double)lost, l, sizeof(l));
	/* activity buffers another CUPTI client took (their records lost:
	 * how many is unknown), right after the lost figure */
	char cb[96] = "";
	if (d->client_buffers)
		snprintf(cb, sizeof(cb), " (+%llu activity buffer%s taken by another CUPTI client)",
			 (unsigned long long)d->client_buffers, d->client_buffers == 1 ? "" : "s");
	/* memory held / budget, the capture file's size */
	char mem[48] = "", file[48] = "", ring[128] = "", used[16], bud[16];
	size_t budget = gt_store_budget(ss->s);
	live_fmt_bytes(gt_store_resident_bytes(ss->s), used, sizeof(used));
	live_fmt_bytes(budget, bud, sizeof(bud));
	snprintf(mem, sizeof(mem), budget ? ", mem %s/%s" : ", mem %s", used, bud);
	if (ss->rec)
		live_rec_status(ss->rec, ss->s, file, sizeof(file), ring, sizeof(ring));
	/* the ring's discarded count beside the lost one: a line too narrow
	 * drops the parts from the end, memory and file first */
	int n = snprintf(buf, len, "live: %d proc%s %s, %s ev/s, %s events, %s lost%s%s%s%s%s%s", ss->n,
			 ss->n == 1 ? "" : "s", state, r, e, l, cb, ring, mem, file,
			 ss->msg[0] ? " | " : "", ss->msg);
	/* a process that ended its capture says why (the first one) */
	for (int k = 0; k < ss->n && n >= 0 && (size_t)n < len; k++) {
		if (ss->conn[k].ended[0]) {
			snprintf(buf + n, len - (size_t)n, " | process %d ended its capture: %s",
				 (int)ss->conn[k].pid, ss->conn[k].ended);
			break;
		}
	}
}

void live_sess_close(struct live_sess *ss)
{
	live_sess_drops(ss);
	for (int k = 0; k < ss->n; k++)
		live_close(&ss->conn[k]);
	ss->n = 0;
	gt_mem_lane_free(ss->ml);
	ss->ml = NULL;
}

/* ---- viewer glue ---- */

static int ui_poll(void *ctx, struct gt_store *s)
{
	(void)s;
	return live_sess_poll(ctx);
}

static void ui_status(void *ctx, char *buf, size_t len)
{
	live_sess_status(ctx, buf, len);
}

static int ui_save_as(void *ctx, const char *path, char *msg, size_t len)
{
	struct live_sess *ss = ctx;
	live_sess_drops(ss);
	return live_rec_keep(ss->rec, ss->s, path, msg, len);
}

static int ui_save(void *ctx, char *msg, size_t len)
{
	struct live_sess *ss = ctx;
	char path[PATH_MAX + 32];
	live_save_path(path, sizeof(path));
	live_sess_drops(ss);
	char err[256];
	struct gt_file_writer_opts wo = { .open_flags = GT_FILE_W_KEEP };   /* W never replaces */
	int rc = gt_file_write_store_opts(ss->s, path, &wo, err, sizeof(err));
	if (rc < 0)
		snprintf(msg, len, "%s", err);
	else
		snprintf(msg, len, "saved %s, %llu events", path,
			 (unsigned long long)gt_store_event_count(ss->s));
	return rc;
}

static int ui_pause(void *ctx, int paused)
{
	((struct live_sess *)ctx)->paused = paused;
	return 0;
}

void live_sess_ui(struct live_sess *ss, struct ui_source *src, const char *name)
{
	memset(src, 0, sizeof(*src));
	src->name = name;
	src->store = ss->s;
	src->ctx = ss;
	src->poll = ui_poll;
	src->status = ui_status;
	src->save = ui_save;
	if (ss->rec)
		src->save_as = ui_save_as;
	src->pause = ui_pause;
	src->poll_ms = 200;
	src->flags = UI_SRC_LIVE;
}

int live_inject_path(char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -ENOENT;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;
	/* build tree: build/tui/gtrace -> build/capture/; installed: bin -> lib */
	static const char *const rel[] = { "/../capture/libgtrace-inject.so",
		"/../lib/libgtrace-inject.so", "/../lib64/libgtrace-inject.so",
		"/../lib/x86_64-linux-gnu/libgtrace-inject.so", "/libgtrace-inject.so" };
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char p[PATH_MAX + 64];
		snprintf(p, sizeof(p), "%s%s", exe, rel[i]);
		if (access(p, R_OK) == 0) {
			if (!realpath(p, out) && snprintf(out, len, "%s", p) >= (int)len)
				return -ENAMETOOLONG;
			return 0;
		}
	}
	return -ENOENT;
}
