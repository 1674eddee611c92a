/*
 * convert12.h - CUDA 12 CUPTI records (the versions a CUDA 12.x libcupti
 * emits: Kernel9, Memcpy5, MemcpyPtoP3, Device4, Context2,
 * Synchronization, Overhead2; API, Marker2, Memset4 and
 * ExternalCorrelation are unchanged in CUDA 13) lifted to the CUDA 13
 * records that convert.c decodes.  Pure: no state, no CUPTI call.
 */
#ifndef GTRACE_CAPTURE_CONVERT12_H
#define GTRACE_CAPTURE_CONVERT12_H

#include <cupti_activity.h>

/* room for any record convert12_up fills */
union convert12_rec {
	CUpti_Activity any;
	CUpti_ActivityKernel10 kernel;
	CUpti_ActivityMemcpy6 memcpy;
	CUpti_ActivityMemcpyPtoP4 p2p;
	CUpti_ActivityDevice5 device;
	CUpti_ActivityContext3 context;
	CUpti_ActivitySynchronization2 sync;
	CUpti_ActivityOverhead3 overhead;
};

/* the CUDA 13 form of the CUDA 12 record `rec`: `tmp` filled from the
 * fields convert.c reads (the rest zeroed; string pointers shared with
 * rec) and returned, or `rec` itself for kinds whose record is the same
 * in both */
const void *convert12_up(const void *rec, union convert12_rec *tmp);

#endif
