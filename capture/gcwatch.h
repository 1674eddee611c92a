/*
 * gcwatch.h - noticing a second CUPTI client in the traced process (the
 * PyTorch profiler's Kineto started while gtrace captures).
 *
 * CUPTI has one buffer-callback pair and one set of activity kinds per
 * process: a client that calls cuptiActivityRegisterCallbacks takes every
 * later buffer (and the buffers CUPTI already holds complete to it), one
 * that disables kinds stops ours, cuptiFinalize ends everything.  CUPTI
 * says none of this to the first client, and offers no "is my pair still
 * registered" call.  What gtrace can see: its subscriber callback still
 * counts launch calls (the callback API is not part of the activity
 * state), while its buffer callbacks go silent (no request, no completion)
 * although CUPTI's flush period would hand a buffer back at least every
 * 100 ms; and its subscription disappearing (cuptiGetCallbackState fails
 * after cuptiFinalize).  The rule is kept here as a pure function of those
 * counts and the time, so it is unit-tested without CUPTI.
 */
#ifndef GTRACE_CAPTURE_GCWATCH_H
#define GTRACE_CAPTURE_GCWATCH_H

#include <stdatomic.h>
#include <stdint.h>

/* launch calls without buffer traffic needed before a silence counts */
#define GCWATCH_MIN_CALLS 16u
/* default silence window (GTRACE_CLIENT_WATCH_MS overrides) */
#define GCWATCH_WINDOW_NS 3000000000ll

enum gcwatch_verdict {
	GCWATCH_OK = 0,
	GCWATCH_TAKEN,           /* launches go on, our buffer callbacks are silent */
	GCWATCH_FINALIZED,       /* our subscription is gone (cuptiFinalize) */
};

struct gcwatch {
	_Atomic uint64_t calls;      /* launch calls seen at API exit (any thread) */
	_Atomic uint64_t traffic;    /* our buffer requests + completions (any thread) */
	/* checker's own (one thread) */
	int64_t window_ns;
	uint64_t seen_traffic;       /* traffic at since_ns */
	uint64_t calls_at;           /* calls at since_ns */
	int64_t since_ns;            /* when traffic last moved; 0 = not started */
};

/* start watching (at every capture start) with a silence window */
void gcwatch_init(struct gcwatch *w, int64_t window_ns);
/* the verdict at now_ns; sub_ok: our subscription still answers.  OK until
 * the buffer traffic has not moved for window_ns while at least
 * GCWATCH_MIN_CALLS launch calls were made */
enum gcwatch_verdict gcwatch_check(struct gcwatch *w, int64_t now_ns, int sub_ok);

#endif
