/*
 * inject.c - the entry points of libgtrace-inject.so.  The CUDA driver
 * calls InitializeInjection() at cuInit when CUDA_INJECTION64_PATH names
 * this library; NVTX calls InitializeInjectionNvtx2() at the first NVTX call
 * when NVTX_INJECTION64_PATH does, and we forward to libcupti's so NVTX
 * ranges reach CUPTI as MARKER records.  The library then stays dormant
 * (control thread only) until a viewer starts a capture.  GTRACE_SYNTH
 * selects the built-in synthetic source instead of CUPTI (synth.c).
 *
 * `gtrace attach` on a process started without gtrace loads this library
 * with ptrace (capture/pinj.c) and calls gtrace_inject_attach() in a
 * borrowed thread: it starts the same set-up on a thread of its own and
 * returns at once (the borrowed thread is stopped while it runs), never
 * autostarting: the library waits dormant for the viewer.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "gtrace_config.h"
#include "gtrace/agent.h"
#include "ireport.h"
#include "synth.h"
#if GTRACE_HAVE_CUPTI
#include <dlfcn.h>
#include "gcupti.h"
#endif

#define INJECT_API __attribute__((visibility("default")))

int InitializeInjection(void) INJECT_API;
int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t)) INJECT_API;
int gtrace_inject_attach(void) INJECT_API;
int InitializeInjectionNvtxExtension(void *module_info) INJECT_API;

/* found by pinj in a loaded copy: which gtrace it belongs to */
__attribute__((used)) static const char inject_ident[] = "gtrace-inject-version=" GTRACE_VERSION;
static int inject_late;      /* loaded by gtrace attach: never autostart */

static pthread_once_t inject_once = PTHREAD_ONCE_INIT;

static void passive_status(void *ctx, char *buf, size_t len)
{
	(void)ctx;
	snprintf(buf, len, " gpus=0");
}

static void inject_start(void)
{
	char reason[200] = "", err[256];
	const char *autostart = inject_late ? NULL : getenv("GTRACE_AUTOSTART");
	if (getenv("GTRACE_SYNTH")) {
		/* the built-in synthetic source instead of CUPTI */
		if (synth_start(strtod(getenv("GTRACE_SYNTH"), NULL), err, sizeof(err)) == 0) {
			if (autostart)
				gt_agent_autostart((uint32_t)strtoul(autostart, NULL, 10), err, sizeof(err));
		} else {
			ireport_failure(err);
		}
		return;
	}
#if GTRACE_HAVE_CUPTI
	if (gcupti_probe(reason, sizeof(reason)) == 0) {
		/* started with the library: graphs instantiated while dormant
		 * must be traceable later (a late load cannot: docs/capture.md) */
		if (!inject_late)
			gcupti_prepare();
		/* autostart before the socket listens (gt_agent_init_autostart) */
		uint32_t rec = autostart ? (uint32_t)strtoul(autostart, NULL, 10) : 0;
		if (gt_agent_init_autostart(gcupti_source(), autostart && rec == 0 ? 1 : rec, err,
					 sizeof(err)) < 0)
			ireport_failure(err);
		return;
	}
#else
	snprintf(reason, sizeof(reason), "gtrace was built without CUPTI");
#endif
	/* passive: the trainer runs on; a viewer learns why */
	static const struct gt_agent_source passive = { .name = "cupti", .status = passive_status };
	/* passive before the socket listens: a viewer that connects at once
	 * must not be handed a ring nothing will fill */
	gt_agent_set_passive(reason);
	if (gt_agent_init(&passive, err, sizeof(err)) < 0)
		ireport_failure(err);
}

int InitializeInjection(void)
{
	pthread_once(&inject_once, inject_start);
	return 1;
}

static void *attach_main(void *arg)
{
	(void)arg;
	/* the trainer's signals go to its own threads, never to ours (the
	 * threads started below inherit this mask) */
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	pthread_once(&inject_once, inject_start);
	return NULL;
}

int gtrace_inject_attach(void)
{
	inject_late = 1;
	pthread_t thr;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	int rc = pthread_create(&thr, &at, attach_main, NULL);
	pthread_attr_destroy(&at);
	return -rc;
}

int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t))
{
#if GTRACE_HAVE_CUPTI
	char reason[200];
	void *lib = gcupti_load(reason, sizeof(reason));
	if (!lib)
		return 0;
	int (*fwd)(const void *(*)(uint32_t));
	*(void **)&fwd = dlsym(lib, "InitializeInjectionNvtx2");
	return fwd ? fwd(get_export_table) : 0;
#else
	(void)get_export_table;
	return 0;
#endif
}

/* NVTX's extension modules (memory, payload, counters: nvtxMem*,
 * nvtxPayload*, ...) call this at their first call with a
 * nvtxExtModuleInfo_t whose function slots a tool fills.  gtrace itself
 * records none of them: the call goes to libcupti's, which registers what
 * that CUPTI supports; without one (or without CUPTI) 0 declines, and NVTX
 * keeps the extension's functions no-ops.  Without this entry NVTX fails
 * the same way, but CUPTI's support would be lost. */
int InitializeInjectionNvtxExtension(void *module_info)
{
	if (!module_info)
		return 0;
#if GTRACE_HAVE_CUPTI
	char reason[200];
	void *lib = gcupti_load(reason, sizeof(reason));
	if (!lib)
		return 0;
	int (*fwd)(void *);
	*(void **)&fwd = dlsym(lib, "InitializeInjectionNvtxExtension");
	return fwd ? fwd(module_info) : 0;
#else
	return 0;
#endif
}
