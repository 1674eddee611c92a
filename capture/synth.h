/*
 * synth.h - the injection library's built-in synthetic source
 * (GTRACE_SYNTH=EVENTS_PER_S); see synth.c.
 */
#ifndef GTRACE_CAPTURE_SYNTH_H
#define GTRACE_CAPTURE_SYNTH_H

#include <stddef.h>
#include "gtrace/agent.h"

/* start the agent with the synthetic source and its producer thread;
 * 0 or negative errno with err */
int synth_start(double events_per_s, char *err, size_t errlen);

#endif
