/*
 * netsess.c - live .gtrace streams from commands or descriptors merged as
 * one job (tui/netsess.h).  Each command runs as `sh -c CMD` in a process
 * group of its own (so a stop reaches the recorder behind a shell), its
 * stdout and stderr on non-blocking pipes.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/gtfile.h"
#include "gtrace/mem_lane.h"
#include "live_rec.h"
#include "live_sess.h"
#include "netsess.h"
#include "ui.h"

#define READ_BYTES (1u << 20)
/* a node whose stream is bad runs on this long for its stderr's last words */
#define NETSESS_BAD_GRACE_NS 2000000000LL

int netsess_init(struct netsess *ns, struct gt_store *s, int apply_clock, size_t memory)
{
	memset(ns, 0, sizeof(*ns));
	ns->s = s;
	ns->apply_clock = apply_clock;
	ns->j = gt_job_new(s);
	ns->buf = malloc(READ_BYTES);
	ns->ml = gt_mem_lane_new();
	ns->rate_t_ns = ns->last_flush_ns = ns->last_align_ns = live_mono_ns();
	/* a long session of many nodes: a memory budget (docs/store.md); the
	 * default one stays unbounded when its cache file cannot be made */
	int brc = memory ? gt_store_set_budget(s, memory == SIZE_MAX ? gt_default_memory_budget() :
					    memory) : 0;
	if (brc && memory == SIZE_MAX) {
		gt_store_set_budget(s, 0);
		brc = 0;
	}
	if (brc || !ns->j || !ns->buf || !ns->ml || gt_store_finish(s)) {
		gt_job_free(ns->j);
		free(ns->buf);
		gt_mem_lane_free(ns->ml);
		return -ENOMEM;
	}
	return 0;
}

static int add_node(struct netsess *ns, const char *label, pid_t pid, int fd, int efd,
		    char *err, size_t errlen)
{
	int k = gt_job_add_node(ns->j, label);
	if (k < 0) {
		snprintf(err, errlen, "%s: %s", label, k == -ENOSPC ? "too many nodes (max 256)" :
			 strerror(-k));
		return k;
	}
	struct netsess_node *n = &ns->node[ns->n++];
	memset(n, 0, sizeof(*n));
	n->pid = pid;
	n->fd = fd;
	n->efd = efd;
	n->last_ns = live_mono_ns();
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if (efd >= 0)
		fcntl(efd, F_SETFL, fcntl(efd, F_GETFL) | O_NONBLOCK);
	return 0;
}

int netsess_add_fd(struct netsess *ns, int fd, const char *label, char *err, size_t errlen)
{
	int rc = add_node(ns, label, 0, fd, -1, err, errlen);
	if (rc < 0)
		close(fd);
	return rc;
}

int netsess_add_cmd(struct netsess *ns, const char *cmd, char *err, size_t errlen)
{
	int out[2], er[2];
	if (pipe2(out, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -errno;
	}
	if (pipe2(er, O_CLOEXEC) < 0) {
		int e = errno;
		close(out[0]);
		close(out[1]);
		snprintf(err, errlen, "pipe: %s", strerror(e));
		return -e;
	}
	pid_t p = fork();
	if (p < 0) {
		int e = errno;
		close(out[0]), close(out[1]), close(er[0]), close(er[1]);
		snprintf(err, errlen, "fork: %s", strerror(e));
		return -e;
	}
	if (p == 0) {
		setpgid(0, 0);
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(out[1], 1);
		dup2(er[1], 2);
		signal(SIGPIPE, SIG_DFL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	setpgid(p, p);
	close(out[1]);
	close(er[1]);
	int rc = add_node(ns, cmd, p, out[0], er[0], err, errlen);
	if (rc < 0) {
		kill(-p, SIGTERM);
		close(out[0]);
		close(er[0]);
		waitpid(p, NULL, 0);
	}
	return rc;
}

/* the command's stderr: keep its last complete line */
static void read_err(struct netsess_node *n)
{
	char b[512];
	ssize_t r;
	while (n->efd >= 0 && (r = read(n->efd, b, sizeof(b))) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN) {
				close(n->efd);
				n->efd = -1;
			}
			return;
		}
		for (ssize_t i = 0; i < r; i++) {
			if (b[i] == '\n' || b[i] == '\r') {
				if (n->elen) {
					memcpy(n->eline, n->epart, n->elen);
					n->eline[n->elen] = 0;
					n->elen = 0;
				}
			} else if (n->elen < sizeof(n->epart) - 1 && (unsigned char)b[i] >= 0x20) {
				n->epart[n->elen++] = b[i];
			}
		}
	}
	if (n->efd >= 0 && r == 0) {
		close(n->efd);
		n->efd = -1;
	}
}

/* a batch holds a lane sample made already (a stream of a file saved
 * with its allocated-bytes lanes, gtrace/mem_lane.h) */
static int has_lane_samples(const struct gt_event *ev, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ev[i].kind == GT_EV_COUNTER && (ev[i].flags & GT_EVF_MEMORY) &&
		    ev[i].sub == GT_MEM_LANE_SUB)
			return 1;
	return 0;
}

/* each batch merged into the job's store: its allocator records to the
 * lanes' tracker (the same lanes as a local live session's), its events to
 * the recording */
static int write_events(void *ctx, struct gt_store *s, const struct gt_event *ev, size_t n)
{
	struct netsess *ns = ctx;
	if (!ns->ml_off && has_lane_samples(ev, n))
		ns->ml_off = 1;   /* the stream brings its lanes: not made twice */
	/* only a live capture's records (not an importer's allocator records,
	   whose allocator keeps its own totals) */
	struct gt_job_node_info in;
	gt_job_node(ns->j, ns->feeding, &in);
	if (!ns->ml_off && in.mem_lane && gt_mem_lane_note(ns->ml, ev, n))
		return -ENOMEM;
	return ns->w ? gt_file_writer_add(ns->w, s, ev, n) : 0;
}

/* after the store's finish: the records noted since into the lanes; the
 * store (and a recording of it) then says it has them */
static int sync_lanes(struct netsess *ns)
{
	struct gt_mem_lane_stats st;
	gt_mem_lane_stats(ns->ml, &st);
	int rc = ns->ml_off ? 0 : gt_mem_lane_sync(ns->ml, ns->s);
	struct gt_mem_lane_stats now;
	gt_mem_lane_stats(ns->ml, &now);
	if (!rc && now.records > st.records && !gt_store_meta_get(ns->s, GT_MEM_LANE_META))
		rc = gt_store_meta_set(ns->s, GT_MEM_LANE_META, "records");
	return rc;
}

/* read node k's stdout (bounded); events added or negative errno (writer) */
static long read_node(struct netsess *ns, int k)
{
	struct netsess_node *n = &ns->node[k];
	long added = 0;
	size_t budget = NETSESS_POLL_BYTES;
	while (n->fd >= 0 && budget) {
		ssize_t r = read(n->fd, ns->buf, READ_BYTES);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			break;
		if (r <= 0) {
			close(n->fd);
			n->fd = -1;
			gt_job_close(ns->j, k);
			break;
		}
		n->last_ns = live_mono_ns();
		budget -= (size_t)r < budget ? (size_t)r : budget;
		ns->feeding = k;
		long a = gt_job_feed(ns->j, k, ns->buf, (size_t)r, write_events, ns);
		if (a == -EINVAL) {       /* a bad stream: this node ends, the rest go on */
			close(n->fd);     /* more output: EPIPE */
			n->fd = -1;
			/* stopped later (NETSESS_BAD_GRACE_NS): what it says on
			 * stderr next is often why (ssh's reason after a banner) */
			n->bad_ns = n->pid ? live_mono_ns() : 0;
			break;
		}
		if (a < 0)
			return a;
		added += a;
	}
	if (n->pid && n->fd < 0 && n->bad_ns &&
	    live_mono_ns() - n->bad_ns >= NETSESS_BAD_GRACE_NS) {
		kill(-n->pid, SIGTERM);
		n->bad_ns = 0;
	}
	if (n->pid && n->fd < 0) {
		int st;
		if (waitpid(n->pid, &st, WNOHANG) == n->pid)
			n->pid = 0;
	}
	return added;
}

int netsess_poll(struct netsess *ns)
{
	long added = 0;
	for (int k = 0; k < ns->n; k++) {
		read_err(&ns->node[k]);
		long a = read_node(ns, k);
		if (a < 0) {
			snprintf(ns->msg, sizeof(ns->msg), "writing the capture: %s", strerror((int)-a));
			return (int)a;
		}
		added += a;
	}
	ns->events += (uint64_t)added;
	int64_t now = live_mono_ns();
	if (now - ns->rate_t_ns >= 1000000000) {
		ns->rate = (double)(ns->events - ns->rate_events) * 1e9 / (double)(now - ns->rate_t_ns);
		ns->rate_t_ns = now;
		ns->rate_events = ns->events;
	}
	if (added && (gt_store_finish(ns->s) < 0 || sync_lanes(ns) < 0))
		return -ENOMEM;
	int changed = added > 0;
	if (now - ns->last_align_ns >= 1000000000 || (netsess_done(ns) && added)) {
		ns->last_align_ns = now;
		gt_job_align(ns->j);
		if (ns->apply_clock) {
			int moved = gt_job_apply(ns->j);
			if (moved < 0)
				return -ENOMEM;
			changed |= moved > 0;
		}
	}
	if (ns->w && now - ns->last_flush_ns >= 1000000000) {
		ns->last_flush_ns = now;
		gt_job_drops(ns->j);
		int rc = gt_file_writer_flush(ns->w, ns->s);
		if (rc < 0)
			return rc;
	}
	return changed;
}

int netsess_done(const struct netsess *ns)
{
	for (int k = 0; k < ns->n; k++)
		if (ns->node[k].fd >= 0)
			return 0;
	return 1;
}

/* why node k failed, without its stream's name in front ("" = it did not) */
static const char *failed_why(const struct netsess *ns, int k, struct gt_job_node_info *in)
{
	gt_job_node(ns->j, k, in);
	if (ns->node[k].fd >= 0 || ns->node[k].left ||
	    (in->state == GT_STREAM_COMPLETE && in->events))
		return "";
	const char *m = in->msg;
	size_t ll = strlen(in->name);
	if (m[0] && !strncmp(m, in->name, ll) && !strncmp(m + ll, ": ", 2))
		m += ll + 2;
	return m[0] ? m : in->events ? "stream closed" : "no data";
}

/* ", N ended (HOST: why[, +M more])": the first failed node named in the
 * status's first part, which the viewer keeps when the line is cut */
static void ended_part(const struct netsess *ns, int ended, char *out, size_t len)
{
	int failed = 0;
	const char *host = NULL, *why = NULL;
	for (int k = 0; k < ns->n; k++) {
		struct gt_job_node_info in;
		const char *w = failed_why(ns, k, &in);
		if (!w[0])
			continue;
		if (!failed++)
			host = in.host, why = w;
	}
	/* a long reason keeps its head, up to its first " (": never a number cut in two */
	int wl = why ? (int)strlen(why) : 0;
	const char *paren = why ? strstr(why, " (") : NULL;
	if (wl > 80)
		wl = paren && paren - why <= 80 ? (int)(paren - why) : 80;
	if (!failed)
		snprintf(out, len, ", %d ended", ended);
	else if (failed == 1)
		snprintf(out, len, ", %d ended (%s: %.*s)", ended, host, wl, why);
	else
		snprintf(out, len, ", %d ended (%s: %.*s; +%d more failed)", ended, host, wl, why,
			 failed - 1);
}

void netsess_name_failed(const struct netsess *ns, const char *prog)
{
	for (int k = 0; k < ns->n; k++) {
		struct gt_job_node_info in;
		const char *w = failed_why(ns, k, &in);
		if (w[0])
			fprintf(stderr, "%s: node %s failed: %s%s%s\n", prog, in.host, w,
				ns->node[k].eline[0] ? " | " : "", ns->node[k].eline);
	}
}

void netsess_status(struct netsess *ns, char *buf, size_t len)
{
	gt_job_drops(ns->j);
	int recv = 0, ended = 0;
	for (int k = 0; k < ns->n; k++)
		ns->node[k].fd >= 0 ? recv++ : ended++;
	char r[16], e[16], l[16];
	live_fmt_count(ns->rate, r, sizeof(r));
	live_fmt_count((double)ns->events, e, sizeof(e));
	live_fmt_count((double)gt_store_drops_lost(gt_store_drops(ns->s)), l, sizeof(l));
	size_t off = 0;
	char nodes[160] = "";
	if (ended)
		ended_part(ns, ended, nodes, sizeof(nodes));
	/* memory held / budget and the capture file's size, as the other live
	 * commands show them (live_sess.c) */
	char mem[48], file[48] = "", used[16], bud[16];
	size_t budget = gt_store_budget(ns->s);
	live_fmt_bytes(gt_store_resident_bytes(ns->s), used, sizeof(used));
	live_fmt_bytes(budget, bud, sizeof(bud));
	snprintf(mem, sizeof(mem), budget ? ", mem %s/%s" : ", mem %s", used, bud);
	struct stat st;
	if (ns->out && stat(ns->out, &st) == 0) {
		live_fmt_bytes((uint64_t)st.st_size, used, sizeof(used));
		snprintf(file, sizeof(file), ", file %s", used);
	}
	int w = snprintf(buf, len, "nodes: %d receiving%s, %s ev/s, %s events, %s lost%s%s", recv,
			 nodes, r, e, l, mem, file);
	off = w > 0 ? (size_t)w : 0;
	int64_t now = live_mono_ns();
	int first_failed = 1;
	for (int k = 0; k < ns->n && off < len; k++) {
		struct gt_job_node_info in;
		const char *why = failed_why(ns, k, &in);
		const struct netsess_node *n = &ns->node[k];
		/* the first failed node is named in the first part: again only with its stderr */
		int shown = 0;
		if (n->fd < 0 && (in.state != GT_STREAM_COMPLETE || !in.events) && first_failed)
			first_failed = 0, shown = 1;
		if (shown && !n->eline[0])
			w = 0;
		else if (n->fd < 0 && in.state != GT_STREAM_COMPLETE)
			w = snprintf(buf + off, len - off, " | %s ended: %s%s%s", in.host,
				     why[0] ? why : "stream closed", n->eline[0] ? " | " : "", n->eline);
		else if (n->fd >= 0 && now - n->last_ns >= NETSESS_STALL_NS)
			w = snprintf(buf + off, len - off, " | %s: no data for %.0f s%s%s", in.host,
				     (double)(now - n->last_ns) / 1e9, n->eline[0] ? ": " : "", n->eline);
		else if (in.msg[0])
			w = snprintf(buf + off, len - off, " | %s: %s", in.host, in.msg);
		else
			w = 0;
		off += w > 0 ? (size_t)w : 0;
	}
	char c[512];
	gt_job_clock_line(ns->j, c, sizeof(c));
	if (c[0] && off < len)
		snprintf(buf + off, len - off, " | %s", c);
	if (ns->msg[0] && off < len)
		snprintf(buf + strlen(buf), len - strlen(buf), " | %s", ns->msg);
}

/* a node with a bad stream still running with its stderr open */
static int bad_pending(const struct netsess *ns)
{
	for (int k = 0; k < ns->n; k++)
		if (ns->node[k].pid && ns->node[k].bad_ns && ns->node[k].efd >= 0)
			return 1;
	return 0;
}

void netsess_stop(struct netsess *ns, double wait_s)
{
	for (int k = 0; k < ns->n; k++)
		if (ns->node[k].pid && ns->node[k].fd >= 0)
			kill(-ns->node[k].pid, SIGTERM);
	int64_t t0 = live_mono_ns();
	while ((!netsess_done(ns) || bad_pending(ns)) &&
	       live_mono_ns() - t0 < (int64_t)(wait_s * 1e9)) {
		if (netsess_poll(ns) < 0)
			break;
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	for (int k = 0; k < ns->n; k++) {
		struct netsess_node *n = &ns->node[k];
		if (n->fd >= 0) {
			n->left = !n->pid;   /* a stream on stdin cannot be asked to end */
			close(n->fd);
			n->fd = -1;
			gt_job_close(ns->j, k);
		}
		read_err(n);           /* its last words (ssh's reason) */
		if (n->efd >= 0) {
			close(n->efd);
			n->efd = -1;
		}
		if (n->pid) {
			kill(-n->pid, SIGKILL);
			waitpid(n->pid, NULL, 0);
			n->pid = 0;
		}
	}
	if (gt_store_finish(ns->s) == 0 && sync_lanes(ns) == 0)
		gt_job_align(ns->j);
	if (ns->apply_clock)
		gt_job_apply(ns->j);
	gt_job_drops(ns->j);
	gt_job_meta(ns->j);
}

void netsess_free(struct netsess *ns)
{
	gt_job_free(ns->j);
	free(ns->buf);
	gt_mem_lane_free(ns->ml);
	ns->ml = NULL;
	ns->j = NULL;
	ns->buf = NULL;
}

static volatile sig_atomic_t stop_flag;

static void on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

int netsess_headless(struct netsess *ns, double duration_s, double every_s)
{
	struct sigaction sa, oi, ot;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, &oi);
	sigaction(SIGTERM, &sa, &ot);
	stop_flag = 0;
	int64_t t0 = live_mono_ns(), last = t0;
	int rc = 0;
	while (!stop_flag && !netsess_done(ns)) {
		int r = netsess_poll(ns);
		if (r < 0) {
			rc = r;
			break;
		}
		int64_t now = live_mono_ns();
		if (duration_s > 0 && now - t0 >= (int64_t)(duration_s * 1e9))
			break;
		if (every_s > 0 && now - last >= (int64_t)(every_s * 1e9)) {
			char line[1024];
			netsess_status(ns, line, sizeof(line));
			fprintf(stderr, "%s\n", line);
			last = now;
		}
		struct pollfd pf[GT_JOB_MAX_NODES];
		int np = 0;
		for (int k = 0; k < ns->n; k++)
			if (ns->node[k].fd >= 0)
				pf[np++] = (struct pollfd){ ns->node[k].fd, POLLIN, 0 };
		if (!r)
			poll(pf, (nfds_t)np, 50);
	}
	netsess_stop(ns, 5.0);
	sigaction(SIGINT, &oi, NULL);
	sigaction(SIGTERM, &ot, NULL);
	return rc;
}

/* ---- viewer glue ---- */

static int ui_poll(void *ctx, struct gt_store *s)
{
	(void)s;
	return netsess_poll(ctx);
}

static void ui_status(void *ctx, char *buf, size_t len)
{
	netsess_status(ctx, buf, len);
}

/* W: the job as it stands, written to PATH (relative to the current
 * directory, named in full in the message); never replaces a file */
static int ui_save_as(void *ctx, const char *name, char *msg, size_t len)
{
	struct netsess *ns = ctx;
	char path[PATH_MAX + 32], cwd[PATH_MAX], err[256];
	if (name[0] != '/' && getcwd(cwd, sizeof(cwd)))
		snprintf(path, sizeof(path), "%s%s%s", cwd, cwd[1] ? "/" : "", name);
	else
		snprintf(path, sizeof(path), "%s", name);
	gt_job_drops(ns->j);
	gt_job_meta(ns->j);
	struct gt_file_writer_opts wo = { .open_flags = GT_FILE_W_KEEP };
	int rc = gt_file_write_store_opts(ns->s, path, &wo, err, sizeof(err));
	if (rc < 0)
		snprintf(msg, len, "%s", err);
	else
		snprintf(msg, len, "saved %s, %llu events", path,
			 (unsigned long long)gt_store_event_count(ns->s));
	return rc;
}

static int ui_align(void *ctx, char *msg, size_t len)
{
	struct netsess *ns = ctx;
	char c[512];
	gt_job_clock_line(ns->j, c, sizeof(c));
	if (!c[0]) {
		snprintf(msg, len, "no clock offset estimated yet (no NCCL collectives matched "
			 "between nodes)");
		return -EAGAIN;
	}
	/* the shift happens in the next poll, where the viewer expects the
	 * store to change */
	ns->apply_clock = 1;
	ns->last_align_ns = 0;
	snprintf(msg, len, "applying the clock offsets: %s", c + 7);
	return 0;
}

int netsess_view(struct netsess *ns, const char *name)
{
	if (isatty(0) && isatty(1) && getenv("TERM")) {
		struct ui_source src;
		memset(&src, 0, sizeof(src));
		src.name = name;
		src.store = ns->s;
		src.ctx = ns;
		src.poll = ui_poll;
		src.status = ui_status;
		src.save_as = ui_save_as;
		src.poll_ms = 200;
		src.flags = UI_SRC_LIVE;
		src.align_clocks = ui_align;
		int rc = ui_run(&src);
		netsess_stop(ns, 1.0);
		netsess_name_failed(ns, "gtrace");   /* the screen is gone: say it once more */
		return rc;
	}
	int rc = netsess_headless(ns, 0, 1.0);
	char line[1024];
	netsess_status(ns, line, sizeof(line));
	fprintf(stderr, "%s\n", line);
	return rc < 0 ? 1 : 0;
}
