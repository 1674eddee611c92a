/*
 * pinj_ptrace.h - the ptrace half of injection, private to capture/: one
 * seized thread, its saved registers, calls made in it, and the way back
 * (registers restored, deferred signals delivered, detached).
 */
#ifndef GTRACE_PINJ_PTRACE_H
#define GTRACE_PINJ_PTRACE_H

#include <signal.h>
#include "gtrace/pinj.h"

struct pinj_thread {
	const struct gt_pinj_arch *arch;
	pid_t pid, tid;
	int mem_fd;                      /* /proc/PID/mem */
	int seized, stopped;
	int have_saved;                  /* saved holds the thread's own image */
	union gt_pinj_regs saved;
	uint64_t trap;                   /* address of a trap instruction in the target */
	int timeout_ms;
	int deferred[8];                 /* signals that arrived during our calls */
	int n_deferred;
	int64_t stop_ns;                 /* when the thread stopped (monotonic) */
};

/* seize tid and interrupt it; saves its registers.  0, -EPERM, -ESRCH
 * (gone), -GT_PINJ_EEXITED, or negative errno; err says which */
int pinj_ptrace_stop(struct pinj_thread *t, char *err, size_t errlen);
/* call fn(args) in the stopped thread with `str` (may be NULL) on its stack
 * (GT_PINJ_ARG_STR in args stands for its address); *ret gets the return
 * value.  0, -GT_PINJ_EEXITED, -ETIMEDOUT, -GT_PINJ_ECALL (a fault in the call) */
int pinj_ptrace_call(struct pinj_thread *t, uint64_t fn, const uint64_t args[6], const char *str,
		     uint64_t *ret, char *err, size_t errlen);
/* read len bytes of the target at addr; 0 or -GT_PINJ_EIO */
int pinj_ptrace_read(struct pinj_thread *t, uint64_t addr, void *buf, size_t len);
/* restore the saved registers, deliver deferred signals, detach (also
 * when stop failed half-way); returns the detach time (monotonic ns) */
int64_t pinj_ptrace_release(struct pinj_thread *t);
/* CLOCK_MONOTONIC in ns */
int64_t pinj_ptrace_now_ns(void);

#endif
