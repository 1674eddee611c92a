/*
 * pinj_ptrace.c - the ptrace half of injection (pinj_ptrace.h).
 *
 * Stops: after PTRACE_INTERRUPT the thread reports PTRACE_EVENT_STOP; a
 * signal that arrives first is passed on untouched (nothing is changed
 * yet).  During our calls a signal-delivery stop is deferred (the signal is
 * suppressed and delivered again at detach), except a fault (SEGV, BUS,
 * ILL, FPE), which means the call itself broke: the thread is put back as
 * it was.  The call returns to a trap instruction; its SIGTRAP at the
 * expected pc is the end of the call.
 *
 * Syscalls in progress: x86-64 rewinds an interrupted syscall after the
 * ptrace stop, from orig_rax; our call runs with orig_rax = -1 (nothing to
 * restart) and the saved image, restored before detach, restarts the
 * syscall exactly as the kernel would have.  aarch64 has already rewound
 * pc and x0 before the stop, so the saved image re-executes the svc.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "pinj_ptrace.h"

int64_t pinj_ptrace_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int get_regs(struct pinj_thread *t, union gt_pinj_regs *r)
{
	struct iovec iov = { r, t->arch->regs_size };
	return ptrace(PTRACE_GETREGSET, t->tid, (void *)(uintptr_t)NT_PRSTATUS, &iov) < 0 ? -errno : 0;
}

static int set_regs(struct pinj_thread *t, const union gt_pinj_regs *r)
{
	struct iovec iov = { (void *)r, t->arch->regs_size };
	return ptrace(PTRACE_SETREGSET, t->tid, (void *)(uintptr_t)NT_PRSTATUS, &iov) < 0 ? -errno : 0;
}

/* wait for the next report of tid within deadline_ns; 1 with *st, 0 on
 * timeout, -1 when the thread is gone without a report */
static int wait_report(pid_t tid, int *st, int64_t deadline_ns)
{
	long pause_ns = 20000;
	for (;;) {
		pid_t w = waitpid(tid, st, WNOHANG | __WALL);
		if (w == tid)
			return 1;
		if (w < 0 && errno != EINTR)
			return -1;
		if (pinj_ptrace_now_ns() >= deadline_ns)
			return 0;
		struct timespec ts = { 0, pause_ns };
		nanosleep(&ts, NULL);
		if (pause_ns < 1000000)
			pause_ns *= 2;
	}
}

static int gone(int st)
{
	return WIFEXITED(st) || WIFSIGNALED(st);
}

int pinj_ptrace_stop(struct pinj_thread *t, char *err, size_t errlen)
{
	char path[64];
	t->mem_fd = -1;
	if (ptrace(PTRACE_SEIZE, t->tid, NULL, NULL) < 0) {
		int e = errno;
		snprintf(err, errlen, "%s", strerror(e));
		return -e;
	}
	t->seized = 1;
	if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) < 0) {
		int e = errno;
		snprintf(err, errlen, "cannot interrupt thread %d: %s", (int)t->tid, strerror(e));
		return -e;
	}
	int64_t deadline = pinj_ptrace_now_ns() + 2000000000;
	for (;;) {
		int st, w = wait_report(t->tid, &st, deadline);
		if (w <= 0 || gone(st)) {
			if (w == 0)
				snprintf(err, errlen, "thread %d did not stop within 2 s", (int)t->tid);
			else
				snprintf(err, errlen, "the process exited during the injection");
			return w == 0 ? -ETIMEDOUT : -GT_PINJ_EEXITED;
		}
		if (!WIFSTOPPED(st))
			continue;
		if ((st >> 16) == PTRACE_EVENT_STOP)
			break;
		/* a signal arrived before our stop: deliver it as it was */
		ptrace(PTRACE_CONT, t->tid, NULL, (void *)(uintptr_t)WSTOPSIG(st));
	}
	t->stopped = 1;
	t->stop_ns = pinj_ptrace_now_ns();
	int rc = get_regs(t, &t->saved);
	t->have_saved = rc == 0;
	if (rc < 0) {
		snprintf(err, errlen, "cannot read the registers of thread %d: %s", (int)t->tid,
			 strerror(-rc));
		return rc;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)t->pid);
	t->mem_fd = open(path, O_RDWR | O_CLOEXEC);
	if (t->mem_fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	return 0;
}

int pinj_ptrace_read(struct pinj_thread *t, uint64_t addr, void *buf, size_t len)
{
	return pread(t->mem_fd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -GT_PINJ_EIO;
}

static int mem_write(struct pinj_thread *t, uint64_t addr, const void *buf, size_t len)
{
	return pwrite(t->mem_fd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -GT_PINJ_EIO;
}

static int is_fault(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE;
}

/* run the thread until the call returns to the trap; 0 with regs at the trap */
static int run_call(struct pinj_thread *t, union gt_pinj_regs *r, char *err, size_t errlen)
{
	int64_t deadline = pinj_ptrace_now_ns() + (int64_t)t->timeout_ms * 1000000;
	int sig = 0;
	for (;;) {
		if (ptrace(PTRACE_CONT, t->tid, NULL, (void *)(uintptr_t)sig) < 0 && errno == ESRCH) {
			snprintf(err, errlen, "the process exited during the injection");
			return -GT_PINJ_EEXITED;
		}
		sig = 0;
		int st, w = wait_report(t->tid, &st, deadline);
		if (w < 0 || (w > 0 && gone(st))) {
			t->stopped = 0;
			snprintf(err, errlen, "the process exited during the injection");
			return -GT_PINJ_EEXITED;
		}
		if (w == 0) {
			/* stop it again; the image is put back by release */
			ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
			int w2 = wait_report(t->tid, &st, pinj_ptrace_now_ns() + 1000000000);
			t->stopped = w2 > 0 && WIFSTOPPED(st);
			snprintf(err, errlen, "the call in thread %d did not return within %d ms",
				 (int)t->tid, t->timeout_ms);
			return -ETIMEDOUT;
		}
		if (!WIFSTOPPED(st))
			continue;
		int s = WSTOPSIG(st);
		if ((st >> 16) != 0)
			continue;            /* a group stop or our interrupt: run on */
		if (s == SIGTRAP) {
			int rc = get_regs(t, r);
			if (rc == 0 && gt_pinj_arch_returned(t->arch, r, t->trap))
				return 0;
		}
		if (is_fault(s) || s == SIGTRAP) {
			snprintf(err, errlen, "the call in thread %d raised signal %d (%s)", (int)t->tid,
				 s, strsignal(s));
			return -GT_PINJ_ECALL;
		}
		if (t->n_deferred < (int)(sizeof(t->deferred) / sizeof(t->deferred[0])))
			t->deferred[t->n_deferred++] = s;
	}
}

int pinj_ptrace_call(struct pinj_thread *t, uint64_t fn, const uint64_t args[6], const char *str,
		     uint64_t *ret, char *err, size_t errlen)
{
	union gt_pinj_regs r = t->saved;
	struct gt_pinj_frame fr;
	size_t sl = str ? strlen(str) + 1 : 0;
	gt_pinj_arch_call(t->arch, &r, fn, args, t->trap, sl, &fr);
	uint64_t sp = t->arch->machine == EM_X86_64 ? t->saved.x86.rsp : t->saved.a64.sp;
	size_t keep_len = (size_t)(sp - fr.lo);
	uint8_t *keep = malloc(keep_len);
	if (!keep) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	int rc = pinj_ptrace_read(t, fr.lo, keep, keep_len);
	if (rc < 0) {
		snprintf(err, errlen, "cannot read the stack of thread %d", (int)t->tid);
		goto out_free;
	}
	uint8_t ra[8];
	for (int i = 0; i < 8; i++)
		ra[i] = (uint8_t)(t->trap >> (8 * i));
	if ((sl && mem_write(t, fr.str_addr, str, sl) < 0) ||
	    (fr.ret_slot && mem_write(t, fr.ret_slot, ra, 8) < 0)) {
		snprintf(err, errlen, "cannot write the stack of thread %d", (int)t->tid);
		rc = -GT_PINJ_EIO;
		goto out_restore;
	}
	rc = set_regs(t, &r);
	if (rc < 0) {
		snprintf(err, errlen, "cannot set the registers of thread %d: %s", (int)t->tid,
			 strerror(-rc));
		goto out_restore;
	}
	rc = run_call(t, &r, err, errlen);
	if (rc == 0)
		*ret = gt_pinj_arch_ret(t->arch, &r);
out_restore:
	if (rc != -GT_PINJ_EEXITED)
		mem_write(t, fr.lo, keep, keep_len);
out_free:
	free(keep);
	return rc;
}

int64_t pinj_ptrace_release(struct pinj_thread *t)
{
	int sig = 0, st;
	if (t->seized && !t->stopped && t->have_saved) {
		/* running (a call that timed out and did not stop): stop first */
		if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) == 0 &&
		    wait_report(t->tid, &st, pinj_ptrace_now_ns() + 1000000000) > 0 && WIFSTOPPED(st))
			t->stopped = 1;
	}
	if (t->seized && t->stopped && t->have_saved) {
		set_regs(t, &t->saved);
		if (t->n_deferred)
			sig = t->deferred[0];
	}
	if (t->mem_fd >= 0)
		close(t->mem_fd);
	t->mem_fd = -1;
	if (t->seized)
		ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(uintptr_t)sig);
	int64_t now = pinj_ptrace_now_ns();
	for (int i = 1; i < t->n_deferred; i++)
		syscall(SYS_tgkill, t->pid, t->tid, t->deferred[i]);
	t->seized = t->stopped = 0;
	return now;
}
