/*
 * mapguard.c - SIGBUS on mapped input files (mapguard.h).  The handler is
 * installed once, process-wide; the guarded ranges are a fixed table of
 * atomics so that the handler reads them without locks.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "mapguard.h"

struct slot {
	_Atomic uintptr_t start;     /* 0: free */
	_Atomic uintptr_t end;
	atomic_int hit;
};

static struct slot slots[MAPGUARD_SLOTS];
static struct sigaction prev;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* the fault at addr in a guarded range: zero pages from its page to the
 * range's end, the slot marked; 0 when addr is in no guarded range */
static int rescue(uintptr_t addr)
{
	for (int i = 0; i < MAPGUARD_SLOTS; i++) {
		uintptr_t s = atomic_load(&slots[i].start), e = atomic_load(&slots[i].end);
		if (!s || addr < s || addr >= e)
			continue;
		uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
		uintptr_t from = addr & ~(pg - 1);
		if (from < s)
			from = s;
		/* async-signal-safe system calls only */
		if (mmap((void *)from, e - from, PROT_READ, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1,
			 0) == MAP_FAILED)
			return 0;
		atomic_store(&slots[i].hit, 1);
		return 1;
	}
	return 0;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	if (rescue((uintptr_t)si->si_addr))
		return;                 /* the read is retried on the zero pages */
	if (prev.sa_flags & SA_SIGINFO) {
		if (prev.sa_sigaction) {
			prev.sa_sigaction(sig, si, uc);
			return;
		}
	} else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
		prev.sa_handler(sig);
		return;
	}
	/* not ours: the default action, as if no handler had been installed
	 * (the fault repeats when this returns) */
	signal(SIGBUS, SIG_DFL);
}

static void install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &prev);
}

int mapguard_begin(const void *p, size_t len)
{
	if (!p || !len)
		return -1;
	pthread_once(&once, install);
	for (int i = 0; i < MAPGUARD_SLOTS; i++) {
		uintptr_t zero = 0;
		/* claim the slot by its start (a free slot's end is 0, so the
		 * handler matches nothing in it until end is set below, before
		 * the caller reads the range) */
		if (atomic_compare_exchange_strong(&slots[i].start, &zero, (uintptr_t)p)) {
			atomic_store(&slots[i].hit, 0);
			atomic_store(&slots[i].end, (uintptr_t)p + len);
			return i;
		}
	}
	return -1;
}

int mapguard_hit(int slot)
{
	if (slot < 0 || slot >= MAPGUARD_SLOTS)
		return 0;
	return atomic_load(&slots[slot].hit);
}

int mapguard_end(int slot)
{
	if (slot < 0 || slot >= MAPGUARD_SLOTS)
		return 0;
	int hit = atomic_load(&slots[slot].hit);
	atomic_store(&slots[slot].end, 0);
	atomic_store(&slots[slot].start, 0);
	return hit;
}
