/*
 * gtrace/agent.h - the capture agent inside a traced process: it serves
 * the control channel (gtrace/ctl.h), creates a fresh ring for each viewer
 * that starts a capture, and hands that ring to the one producer thread of
 * the source (CUPTI drain thread or synthetic source) without ever making
 * it wait: the producer picks up ring changes when it next asks.
 *
 * States: dormant (no viewer), capturing, passive (the source cannot run:
 * no driver, CUPTI busy; start is refused with the reason), ended (the
 * source finished; the ring stays readable).
 */
#ifndef GTRACE_AGENT_H
#define GTRACE_AGENT_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/publisher.h"

struct gt_agent_source {
	const char *name;                 /* "cupti", "synth" */
	void *ctx;
	/* called on the control thread when a viewer starts/stops a capture;
	 * enable may fail with a message (the viewer is told) */
	int (*enable)(void *ctx, char *err, size_t errlen);
	void (*disable)(void *ctx);
	void (*flush)(void *ctx);
	/* append " key=value" pairs (gpus=N ...) */
	void (*status)(void *ctx, char *buf, size_t len);
};

/* start the agent (control thread) for this process; 0 or negative errno */
int gt_agent_init(const struct gt_agent_source *src, char *err, size_t errlen);
/* start capturing now, before any viewer (`gtrace run`/`record -- CMD`
 * set GTRACE_AUTOSTART): the first viewer receives this ring with all it
 * holds; 0 or negative errno with err */
int gt_agent_autostart(uint32_t records, char *err, size_t errlen);
/* gt_agent_init, with the capture started first on the calling thread when
 * records > 0 (GTRACE_AUTOSTART; < 64 = the default ring), before the
 * control socket listens (a start that fails is tried again by the first
 * viewer's start).  0 or negative errno (the socket) */
/* at process exit: while the capture started by gt_agent_autostart has not
 * been handed to a viewer yet (`gtrace run`/`record -- CMD` connecting to a
 * short-lived process), wait for it, at most max_ms; its memfd dies with
 * the process otherwise */
void gt_agent_exit_wait(int max_ms);
int gt_agent_init_autostart(const struct gt_agent_source *src, uint32_t records, char *err,
			 size_t errlen);
/* stop serving; the current ring is marked stopped */
void gt_agent_shutdown(void);
/* make the agent passive: starts are refused with this one-line reason */
void gt_agent_set_passive(const char *reason);
/* 1 while a viewer has a capture running */
int gt_agent_capturing(void);

/* producer thread only: the publisher of the current ring, switching to a
 * new ring or none when the viewer changed; NULL when not capturing.
 * Never blocks. */
struct gt_publisher *gt_agent_pub(void);
/* producer thread only: add loss counts to the current ring's header */
void gt_agent_count_loss(uint64_t cupti_dropped, uint64_t buffers_declined,
		      uint64_t zero_timestamps);
/* producer thread only: records it could not read or publish (the
 * ring's read_errors) */
void gt_agent_count_read_errors(uint64_t n);
/* producer thread only: activity buffers another CUPTI client now holds
 * (a gauge: the ring's client_buffers is set to n) */
void gt_agent_set_client_buffers(uint64_t n);
/* in a fork()ed child only (one thread, no lock taken): count a buffer
 * request declined there in the ring the parent fills (the producer's
 * current one, or the one still waiting for it) */
void gt_agent_forked_declined(void);
/* producer thread only: the source has finished; the ring says ENDED */
void gt_agent_end(const char *reason);

#endif
