/*
 * live_attach.c - attaching to processes that were not started under
 * gtrace: load the capture library with ptrace (gtrace/pinj.h) when the
 * process has no control socket yet, wait for the socket, then join the
 * session as usual.  Also the candidates of `attach --list` and `--all`:
 * processes that map a CUDA driver (libcuda.so*) or listen already.
 */
#include <dirent.h>
#include <signal.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/pinj.h"
#include "gtrace_config.h"
#include "live_sess.h"

int live_listening(pid_t pid)
{
	pid_t pids[1024];
	size_t n = live_list_pids(pids, 1024);
	for (size_t i = 0; i < n && i < 1024; i++)
		if (pids[i] == pid)
			return 1;
	return 0;
}

int live_attach_prepare(pid_t pid, int flags, struct gt_pinj_result *res, char *err, size_t errlen)
{
	memset(res, 0, sizeof(*res));
	if (live_listening(pid)) {
		res->already = 1;
		return 0;
	}
	char lib[4096];
	if (live_inject_path(lib, sizeof(lib)) < 0) {
		snprintf(err, errlen, "process %d has no capture library and libgtrace-inject.so "
			 "was not found next to the gtrace binary", (int)pid);
		return -ENOENT;
	}
	struct gt_pinj_opts o = { .lib_path = lib, .version = GTRACE_VERSION };
	/* no CUDA driver, nothing to record: refused unless forced, or unless
	 * the process runs the library's synthetic source (GTRACE_SYNTH) */
	char synth[32];
	if (!(flags & LIVE_ATTACH_FORCE) && live_proc_env(pid, "GTRACE_SYNTH", synth, sizeof(synth)))
		o.flags |= GT_PINJ_F_NEED_CUDA;
	int rc = gt_pinj_inject(pid, &o, res, err, errlen);
	if (rc < 0)
		return rc;
	/* the library's own thread binds the socket: wait for it */
	for (int i = 0; i < 1000; i++) {
		if (live_listening(pid))
			return 0;
		if (kill(pid, 0) < 0 && errno == ESRCH) {
			snprintf(err, errlen, "process %d exited right after the injection", (int)pid);
			return -ESRCH;
		}
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
	}
	snprintf(err, errlen, "process %d: the capture library was loaded but its control socket "
		 "did not appear within 5 s", (int)pid);
	return -ETIMEDOUT;
}

int live_attach_add(struct live_sess *ss, pid_t pid, int flags, char *err, size_t errlen)
{
	struct gt_pinj_result res;
	int rc = live_attach_prepare(pid, flags, &res, err, errlen);
	if (rc < 0)
		return rc;
	if (!res.already && !(flags & LIVE_ATTACH_QUIET))
		fprintf(stderr, "gtrace: loaded the capture library into process %d in %.1f ms "
			"(thread %d stopped %.1f ms)\n", (int)pid, (double)res.total_ns / 1e6,
			(int)res.tid, (double)res.stopped_ns / 1e6);
	return live_sess_add(ss, pid, err, errlen);
}

/* owner uid of a process, or -1 */
static long proc_uid(pid_t pid)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return stat(path, &st) == 0 ? (long)st.st_uid : -1;
}

size_t live_cuda_pids(pid_t *pids, size_t max, int mine_only)
{
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	size_t n = 0;
	struct dirent *de;
	pid_t self = getpid();
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid == self)
			continue;
		if (mine_only && proc_uid((pid_t)pid) != (long)getuid())
			continue;
		if (gt_pinj_maps_uses_cuda((pid_t)pid) <= 0 && !live_listening((pid_t)pid))
			continue;
		if (n < max)
			pids[n] = (pid_t)pid;
		n++;
	}
	closedir(d);
	return n;
}

int live_proc_env(pid_t pid, const char *key, char *out, size_t len)
{
	char path[64], buf[65536];
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	size_t kl = strlen(key);
	for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
		if (!strncmp(buf + i, key, kl) && buf[i + kl] == '=') {
			snprintf(out, len, "%s", buf + i + kl + 1);
			return 0;
		}
	}
	return -ENOENT;
}

int live_proc_gpus(pid_t pid, char *out, size_t len)
{
	char path[64], link[128], lp[320];
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	unsigned long long seen = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		snprintf(lp, sizeof(lp), "%s/%s", path, de->d_name);
		ssize_t k = readlink(lp, link, sizeof(link) - 1);
		if (k <= 0)
			continue;
		link[k] = 0;
		unsigned g;
		char tail;
		if (sscanf(link, "/dev/nvidia%u%c", &g, &tail) == 1 && g < 64)
			seen |= 1ull << g;
	}
	closedir(d);
	if (!seen)
		return -ENOENT;       /* out untouched */
	size_t o = 0;
	out[0] = 0;
	for (unsigned g = 0; g < 64 && o + 4 < len; g++)
		if (seen >> g & 1)
			o += (size_t)snprintf(out + o, len - o, "%s%u", o ? "," : "", g);
	return 0;
}

struct cand {
	pid_t pid;
	long rank;               /* RANK from the environment, or LONG_MAX */
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

int live_attach_all(struct live_sess *ss, int quiet, char *err, size_t errlen)
{
	pid_t pids[LIVE_SESS_MAX * 4];
	size_t n = live_cuda_pids(pids, LIVE_SESS_MAX * 4, 1);
	if (n > LIVE_SESS_MAX * 4)
		n = LIVE_SESS_MAX * 4;
	struct cand c[LIVE_SESS_MAX * 4];
	for (size_t i = 0; i < n; i++) {
		char v[32];
		c[i].pid = pids[i];
		c[i].rank = live_proc_env(pids[i], "RANK", v, sizeof(v)) == 0 ? atol(v) : 0x7fffffffL;
	}
	qsort(c, n, sizeof(c[0]), cand_cmp);
	int joined = 0;
	for (size_t i = 0; i < n; i++) {
		char why[512];
		if (live_attach_add(ss, c[i].pid, quiet ? LIVE_ATTACH_QUIET : 0, why, sizeof(why)) < 0) {
			fprintf(stderr, "gtrace: skipped: %s\n", why);
			continue;
		}
		joined++;
	}
	if (!joined) {
		snprintf(err, errlen, n ? "none of the %zu processes that use CUDA could be attached" :
			 "no process of yours uses CUDA (none maps libcuda.so)", n);
		return -ENOENT;
	}
	return joined;
}
