/*
 * kineto_open.h - the B events of a trace file waiting for their E, as one stack
 * per (pid, tid): a pool of entries linked to the previous open B of the
 * same thread, and an open-addressing table from (pid, tid) to its top.
 * Push and pop are O(1) whatever the number of open B events or threads
 * (a scan of every open B per E was quadratic: 200k pairs, 42 s).
 */
#ifndef GTRACE_KOPEN_H
#define GTRACE_KOPEN_H

#include <stddef.h>
#include <stdint.h>

/* an open B event: its local lane and index there */
struct kineto_open {
	uint32_t lane;
	uint32_t idx;
	size_t prev;               /* pool index + 1 of the thread's previous open B, 0 = none */
};

struct kineto_open_top {
	int64_t pid, tid;
	size_t top;                /* pool index + 1 of the latest open B, 0 = none (slot free if pid/tid unset) */
	int used;
};

struct kineto_opens {
	struct kineto_open *pool;
	size_t n, cap;
	struct kineto_open_top *tab;
	size_t tcap, tn;           /* slots (power of two), threads held */
};

/* remember an open B of (pid, tid); 0 or -ENOMEM */
int kineto_open_push(struct kineto_opens *o, int64_t pid, int64_t tid, uint32_t lane, uint32_t idx);
/* the latest open B of (pid, tid), removed; 1 with *out, 0 when none */
int kineto_open_pop(struct kineto_opens *o, int64_t pid, int64_t tid, struct kineto_open *out);
void kineto_open_done(struct kineto_opens *o);

#endif
