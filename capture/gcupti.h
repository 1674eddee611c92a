/*
 * gcupti.h - the CUPTI source of the injection library: libcupti loaded
 * with dlopen, activity buffers from a preallocated pool, a drain thread
 * that converts completed buffers into events for the agent's ring.
 */
#ifndef GTRACE_CAPTURE_GCUPTI_H
#define GTRACE_CAPTURE_GCUPTI_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/agent.h"

/* check for a driver and a usable libcupti of our major version; 0, or
 * negative with a one-line reason ("no CUDA driver", "CUPTI ... not found") */
int gcupti_probe(char *reason, size_t len);
/* CUDA graphs are instrumented for kernel tracing when instantiated: a
 * graph instantiated while CUPTI traced no kernels never reports its
 * kernels.  Called at injection (after a successful probe) in a process
 * started with the library: kernel tracing stays enabled while the
 * library is dormant (every buffer request declined, so CUPTI drops those
 * records; the count is discarded at start), and again after each stop.
 * GTRACE_PREPARE_GRAPHS=0 turns it off.  0, or -EIO when CUPTI refused. */
int gcupti_prepare(void);
/* the agent source backed by CUPTI (valid after a successful probe) */
const struct gt_agent_source *gcupti_source(void);
/* libcupti's handle (NULL before a successful probe) */
void *gcupti_lib(void);
/* load libcupti without the driver check (for NVTX forwarding); handle or NULL */
void *gcupti_load(char *reason, size_t len);

#endif
