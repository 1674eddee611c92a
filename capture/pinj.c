/*
 * pinj.c - gt_pinj_inject (gtrace/pinj.h): the checks that refuse with the
 * way out, then the two calls in a seized thread (pinj_ptrace.c).
 *
 * Order: everything that only reads /proc and ELF files comes first (the
 * target is untouched when a refusal comes); the thread is stopped only
 * for the calls.  Addresses: a library's load bias is the start of its
 * offset-0 mapping minus its first PT_LOAD vaddr; our library's bias after
 * dlopen is the link_map's l_addr (glibc's handle points at it).
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "gtrace/pinj.h"
#include "pinj_ptrace.h"

#define RTLD_NOW_ 0x2
#define RTLD_DLOPEN_ 0x80000000u     /* glibc < 2.34: __libc_dlopen_mode's flag */

/* the value of "Key:" in /proc/PID/status (first field) into out; 0 or -1 */
static int status_field(pid_t pid, const char *key, char *out, size_t len)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t kl = strlen(key);
	int rc = -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			char *v = line + kl + 1;
			v += strspn(v, " \t");
			snprintf(out, len, "%.*s", (int)strcspn(v, " \t\n"), v);
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

/* the state letter of a task (/proc/PID/task/TID/stat), or '?' */
static char task_state(pid_t pid, pid_t tid)
{
	char path[96], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return '?';
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' ? rp[2] : '?';
}

/* a thread of pid asleep (state S) now: the main thread first; 0 if none */
static pid_t sleeping_thread(pid_t pid)
{
	if (task_state(pid, pid) == 'S')
		return pid;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	pid_t pick = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		if (tid > 0 && tid != pid && task_state(pid, tid) == 'S') {
			pick = tid;
			break;
		}
	}
	if (d)
		closedir(d);
	return pick;
}

/* the thread to borrow: one asleep in a system call (at a syscall
 * boundary it holds no libc lock half-way), the main thread first; a
 * thread that sleeps often is runnable for a moment on a busy machine, so
 * look up to 50 times, 1 ms apart, before settling for the main thread */
static pid_t pick_thread(pid_t pid)
{
	for (int i = 0; i < 50; i++) {
		pid_t t = sleeping_thread(pid);
		if (t)
			return t;
		usleep(1000);
	}
	return pid;
}

/* 1 when pid is in another namespace of kind ns than we are */
static int other_ns(pid_t pid, const char *ns)
{
	char a[64], b[64], la[128] = "", lb[128] = "";
	snprintf(a, sizeof(a), "/proc/self/ns/%s", ns);
	snprintf(b, sizeof(b), "/proc/%d/ns/%s", (int)pid, ns);
	ssize_t na = readlink(a, la, sizeof(la) - 1), nb = readlink(b, lb, sizeof(lb) - 1);
	if (na <= 0 || nb <= 0)
		return 0;          /* cannot tell: let ptrace decide */
	la[na] = lb[nb] = 0;
	return strcmp(la, lb) != 0;
}

/* the one-line refusal for a PTRACE_SEIZE that failed with EPERM */
static void perm_message(pid_t pid, char *err, size_t errlen)
{
	char uid[32] = "?", scope[16] = "";
	status_field(pid, "Uid", uid, sizeof(uid));
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	if (f) {
		if (!fgets(scope, sizeof(scope), f))
			scope[0] = 0;
		scope[strcspn(scope, "\n")] = 0;
		fclose(f);
	}
	if (geteuid() != 0 && (uid_t)atol(uid) != geteuid())
		snprintf(err, errlen, "process %d belongs to uid %s (you are uid %d): ptrace not "
			 "permitted; run gtrace as that user (or as root)", (int)pid, uid, (int)geteuid());
	else if (scope[0] && atoi(scope) >= 3)
		snprintf(err, errlen, "process %d: ptrace is disabled (kernel.yama.ptrace_scope=3, "
			 "until reboot); start the program with 'gtrace run -- CMD'", (int)pid);
	else if (scope[0] && atoi(scope) >= 1)
		snprintf(err, errlen, "process %d: ptrace not permitted (kernel.yama.ptrace_scope=%s); "
			 "run gtrace with sudo (CAP_SYS_PTRACE), or 'sudo sysctl kernel.yama.ptrace_scope=0', "
			 "or start the program with 'gtrace run -- CMD'", (int)pid, scope);
	else
		snprintf(err, errlen, "process %d: ptrace not permitted (no CAP_SYS_PTRACE here? a "
			 "container or seccomp policy); run gtrace as root with CAP_SYS_PTRACE, or start "
			 "the program with 'gtrace run -- CMD'", (int)pid);
}

/* refusals that need only /proc: gone, stopped, traced, namespaces */
static int check_process(pid_t pid, const char *lib, char *err, size_t errlen)
{
	char v[64], path[600];
	if (status_field(pid, "State", v, sizeof(v)) < 0) {
		snprintf(err, errlen, "process %d: no such process", (int)pid);
		return -GT_PINJ_ENOPROC;
	}
	if (v[0] == 'Z' || v[0] == 'X') {
		snprintf(err, errlen, "process %d has exited", (int)pid);
		return -GT_PINJ_ENOPROC;
	}
	char uid[32] = "";
	status_field(pid, "Uid", uid, sizeof(uid));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((geteuid() != 0 && uid[0] && (uid_t)atol(uid) != geteuid()) || access(path, R_OK) < 0) {
		perm_message(pid, err, errlen);
		return -GT_PINJ_EPERM;
	}
	if (status_field(pid, "TracerPid", v, sizeof(v)) == 0 && atoi(v) != 0) {
		snprintf(err, errlen, "process %d is already traced by process %s (a debugger?); "
			 "detach it first (gdb: 'detach'), then attach again", (int)pid, v);
		return -GT_PINJ_ETRACED;
	}
	if (task_state(pid, pid) == 'T') {
		snprintf(err, errlen, "process %d is stopped (SIGSTOP, Ctrl-Z); continue it "
			 "('kill -CONT %d'), then attach", (int)pid, (int)pid);
		return -GT_PINJ_ESTOPPED;
	}
	if (other_ns(pid, "net") || other_ns(pid, "pid")) {
		snprintf(err, errlen, "process %d runs in another %s namespace (a container): its "
			 "control socket is out of reach from here; run gtrace inside the container",
			 (int)pid, other_ns(pid, "net") ? "network" : "PID");
		return -GT_PINJ_ECONTAINER;
	}
	if (other_ns(pid, "mnt")) {
		struct stat a, b;
		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, lib);
		if (stat(lib, &a) < 0 || stat(path, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
			snprintf(err, errlen, "process %d runs in another mount namespace (a container) "
				 "where %s is not visible; install gtrace at the same path inside it, or "
				 "run gtrace inside the container", (int)pid, lib);
			return -GT_PINJ_ECONTAINER;
		}
	}
	return 0;
}

/* our library already mapped in pid: same version (1), or a refusal */
static int check_loaded(pid_t pid, const struct gt_pinj_opts *o, char *err, size_t errlen)
{
	struct gt_pinj_map m;
	if (gt_pinj_maps_find(pid, "libgtrace-inject.so", &m) < 0)
		return 0;
	char path[700], want[96], why[256];
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, m.path);
	path[strcspn(path, " ")] = 0;     /* " (deleted)" */
	int n = snprintf(want, sizeof(want), GT_PINJ_IDENT "%s", o->version);
	struct gt_pinj_elf e;
	if (gt_pinj_elf_open(&e, path, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "process %d has %s loaded, which cannot be read (%s); restart "
			 "the process to attach with this gtrace", (int)pid, m.path, why);
		return -GT_PINJ_EVERSION;
	}
	int same = gt_pinj_elf_has_bytes(&e, want, (size_t)n + 1);
	char other[32] = "another";
	const uint8_t *p = same ? NULL : memmem(e.data, e.size, GT_PINJ_IDENT, strlen(GT_PINJ_IDENT));
	if (p) {
		const char *ver = (const char *)p + strlen(GT_PINJ_IDENT);
		size_t max = e.size - (size_t)(ver - (const char *)e.data);
		snprintf(other, sizeof(other), "%.*s", (int)strnlen(ver, max < 31 ? max : 31), ver);
	}
	gt_pinj_elf_close(&e);
	if (same)
		return 1;
	snprintf(err, errlen, "process %d already has libgtrace-inject.so of gtrace %s loaded "
		 "(%s); this is gtrace %s: attach with that gtrace, or restart the process",
		 (int)pid, other, m.path, o->version);
	return -GT_PINJ_EVERSION;
}

/* where things are in the target */
struct addrs {
	uint64_t dlopen, dlopen_flags, dlerror, trap, entry_vaddr;
};

/* dlopen/dlerror from the target's glibc (libc.so.6, or libdl.so.2 before
 * glibc 2.34, or __libc_dlopen_mode), a trap in libc's text, and our
 * entry's vaddr in lib */
static int find_addrs(pid_t pid, const struct gt_pinj_arch *arch, const char *lib, struct addrs *ad,
		      char *err, size_t errlen)
{
	struct gt_pinj_map m;
	char path[700], why[300];
	int rc = gt_pinj_maps_find(pid, "libc.so.6", &m);
	if (rc < 0 || m.offset != 0) {
		snprintf(err, errlen, "process %d has no glibc (libc.so.6) mapped: statically linked or "
			 "another C library (musl?); only dynamically linked glibc programs can be "
			 "attached: start it with 'gtrace run -- CMD'", (int)pid);
		return -GT_PINJ_ENOGLIBC;
	}
	if (strstr(m.path, " (deleted)")) {
		snprintf(err, errlen, "process %d: its %s was replaced on disk since it started "
			 "(a glibc upgrade?); restart it to attach", (int)pid, m.path);
		return -GT_PINJ_ENOGLIBC;
	}
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, m.path);
	struct gt_pinj_elf e;
	if ((rc = gt_pinj_elf_open(&e, path, why, sizeof(why))) < 0) {
		snprintf(err, errlen, "process %d: cannot read its libc: %s", (int)pid, why);
		return -GT_PINJ_EIO;
	}
	rc = -GT_PINJ_EIO;
	if (e.machine != arch->machine) {
		snprintf(err, errlen, "process %d is not an %s program; this gtrace injects into %s "
			 "programs only", (int)pid, arch->name, arch->name);
		rc = -GT_PINJ_EARCH;
		goto out;
	}
	uint64_t bias = m.start - e.load_vaddr, v;
	memset(ad, 0, sizeof(*ad));
	ad->dlopen_flags = RTLD_NOW_;
	if (gt_pinj_elf_sym(&e, "dlopen", &v) == 0) {
		ad->dlopen = bias + v;
		if (gt_pinj_elf_sym(&e, "dlerror", &v) == 0)
			ad->dlerror = bias + v;
	} else if (gt_pinj_elf_sym(&e, "__libc_dlopen_mode", &v) == 0) {
		ad->dlopen = bias + v;
		ad->dlopen_flags = RTLD_NOW_ | RTLD_DLOPEN_;
	}
	if (gt_pinj_elf_find_code(&e, NULL, arch->trap_len, arch->trap_align, &v) == 0)
		ad->trap = bias + v;
	if (!ad->dlopen || !ad->trap) {
		snprintf(err, errlen, "process %d: no %s in its libc (%s); start it with "
			 "'gtrace run -- CMD'", (int)pid, ad->dlopen ? "trap instruction" : "dlopen",
			 m.path);
		rc = -GT_PINJ_ENOGLIBC;
		goto out;
	}
	gt_pinj_elf_close(&e);
	if ((rc = gt_pinj_elf_open(&e, lib, why, sizeof(why))) < 0) {
		snprintf(err, errlen, "%s", why);
		return -GT_PINJ_EIO;
	}
	if (gt_pinj_elf_sym(&e, GT_PINJ_ENTRY, &ad->entry_vaddr) < 0) {
		snprintf(err, errlen, "%s: no %s (not a gtrace capture library?)", lib, GT_PINJ_ENTRY);
		rc = -GT_PINJ_EIO;
		goto out;
	}
	rc = 0;
out:
	gt_pinj_elf_close(&e);
	return rc;
}

/* the calls in the stopped thread: dlopen, then the entry */
static int do_calls(struct pinj_thread *t, const struct addrs *ad, const char *lib, char *err,
		    size_t errlen)
{
	uint64_t args[6] = { GT_PINJ_ARG_STR, ad->dlopen_flags, 0, 0, 0, 0 }, h = 0, ret = 0;
	int rc = pinj_ptrace_call(t, ad->dlopen, args, lib, &h, err, errlen);
	if (rc < 0)
		return rc;
	if (!h) {
		char msg[200] = "no reason given";
		uint64_t none[6] = { 0 }, sp = 0;
		if (ad->dlerror && pinj_ptrace_call(t, ad->dlerror, none, NULL, &sp, err, errlen) == 0 &&
		    sp && pinj_ptrace_read(t, sp, msg, sizeof(msg) - 1) == 0)
			msg[sizeof(msg) - 1] = 0;
		snprintf(err, errlen, "dlopen failed in the target: %s", msg);
		return -GT_PINJ_ECALL;
	}
	uint64_t l_addr;      /* struct link_map's first field */
	if (pinj_ptrace_read(t, h, &l_addr, sizeof(l_addr)) < 0) {
		snprintf(err, errlen, "cannot read the library's link map in the target");
		return -GT_PINJ_EIO;
	}
	uint64_t none[6] = { 0 };
	rc = pinj_ptrace_call(t, l_addr + ad->entry_vaddr, none, NULL, &ret, err, errlen);
	if (rc < 0)
		return rc;
	if ((int)ret != 0) {
		snprintf(err, errlen, "%s failed in the target: %s", GT_PINJ_ENTRY, strerror(-(int)ret));
		return -GT_PINJ_ECALL;
	}
	return 0;
}

/* 1 when the process is dying or dead (waits up to 100 ms for the news;
 * never reaps: the tracer may be its parent) */
static int died(pid_t pid, pid_t tid)
{
	for (int i = 0; i < 50; i++) {
		char st[16];
		siginfo_t si = { 0 };
		if (status_field(pid, "State", st, sizeof(st)) < 0 || st[0] == 'Z' || st[0] == 'X')
			return 1;
		if (waitid(P_PID, (id_t)tid, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) == 0 &&
		    si.si_pid == tid)
			return 1;
		usleep(2000);
	}
	return 0;
}

int gt_pinj_inject(pid_t pid, const struct gt_pinj_opts *o, struct gt_pinj_result *res, char *err,
		size_t errlen)
{
	int64_t t0 = pinj_ptrace_now_ns();
	memset(res, 0, sizeof(*res));
	const struct gt_pinj_arch *arch = gt_pinj_arch_host();
	if (!arch) {
		snprintf(err, errlen, "attaching to a running process is not built for this "
			 "architecture; start the program with 'gtrace run -- CMD'");
		return -GT_PINJ_EARCH;
	}
	int rc = check_process(pid, o->lib_path, err, errlen);
	if (rc < 0)
		return rc;
	rc = check_loaded(pid, o, err, errlen);
	if (rc != 0) {
		res->already = rc > 0;
		res->total_ns = pinj_ptrace_now_ns() - t0;
		return rc > 0 ? 0 : rc;
	}
	struct addrs ad;
	if ((rc = find_addrs(pid, arch, o->lib_path, &ad, err, errlen)) < 0)
		return rc;
	/* the library records through the CUDA driver: without one mapped, it
	 * would stay loaded (and its thread running) with nothing to record */
	if ((o->flags & GT_PINJ_F_NEED_CUDA) && gt_pinj_maps_uses_cuda(pid) == 0) {
		snprintf(err, errlen, "process %d does not use CUDA (no libcuda.so in its maps): "
			 "nothing to record; attach once it has started CUDA (--force-inject loads "
			 "the library anyway)", (int)pid);
		return -GT_PINJ_ENOCUDA;
	}
	struct pinj_thread t = { .arch = arch, .pid = pid, .tid = pick_thread(pid), .mem_fd = -1,
				 .trap = ad.trap, .timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 10000 };
	char why[300] = "";
	/* Ctrl-C, SIGTERM, SIGHUP wait until the thread is put back: a gtrace
	 * that died mid-call would leave it to run into the trap (SIGKILL
	 * cannot be held; it is the one way to break a target this way) */
	sigset_t hold, old;
	sigemptyset(&hold);
	sigaddset(&hold, SIGINT);
	sigaddset(&hold, SIGTERM);
	sigaddset(&hold, SIGHUP);
	sigaddset(&hold, SIGQUIT);
	pthread_sigmask(SIG_BLOCK, &hold, &old);
	rc = pinj_ptrace_stop(&t, why, sizeof(why));
	char tracer[32] = "0";
	if (rc == -EPERM && status_field(pid, "TracerPid", tracer, sizeof(tracer)) == 0 &&
	    atoi(tracer) != 0) {
		/* a debugger came first, between our check and the seize */
		snprintf(err, errlen, "process %d is already traced by process %s (a debugger?); "
			 "detach it first (gdb: 'detach'), then attach again", (int)pid, tracer);
		rc = -GT_PINJ_ETRACED;
	} else if (rc == -EPERM) {
		perm_message(pid, err, errlen);
		rc = -GT_PINJ_EPERM;
	} else if (rc == -ESRCH || rc == -GT_PINJ_EEXITED) {
		snprintf(err, errlen, "process %d exited before it could be attached", (int)pid);
		rc = -GT_PINJ_EEXITED;
	} else if (rc < 0)
		snprintf(err, errlen, "process %d: %s", (int)pid, why);
	if (rc == 0) {
		if (o->on_stopped)
			o->on_stopped(o->hook_ctx, t.tid);
		rc = do_calls(&t, &ad, o->lib_path, why, sizeof(why));
		if (rc < 0 && died(pid, t.tid))
			rc = -GT_PINJ_EEXITED;      /* a failed read or write was its death */
		if (rc == -GT_PINJ_EEXITED)
			snprintf(err, errlen, "process %d exited during the injection", (int)pid);
		else if (rc < 0)
			snprintf(err, errlen, "process %d: %s; the process was put back as it was and "
				 "runs on", (int)pid, why);
	}
	int64_t t_end = pinj_ptrace_release(&t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	res->tid = t.tid;
	res->stopped_ns = t.stop_ns ? t_end - t.stop_ns : 0;
	res->total_ns = pinj_ptrace_now_ns() - t0;
	return rc;
}
