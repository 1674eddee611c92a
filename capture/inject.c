/*
 * inject.c - the entry points of libgtrace-inject.so.  The CUDA driver
 * calls InitializeInjection() at cuInit when CUDA_INJECTION64_PATH names
 * this library; NVTX calls InitializeInjectionNvtx2() at the first NVTX call
 * when NVTX_INJECTION64_PATH does, and we forward to libcupti's so NVTX
 * ranges reach CUPTI as MARKER records.  The library then stays dormant
 * (control thread only) until a viewer starts a capture.  GTRACE_SYNTH
 * selects the built-in synthetic source instead of CUPTI (synth.c).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "gtrace_config.h"
#include "gtrace/agent.h"
#include "synth.h"
#if GTRACE_HAVE_CUPTI
#include <dlfcn.h>
#include "gcupti.h"
#endif

#define INJECT_API __attribute__((visibility("default")))

int InitializeInjection(void) INJECT_API;
int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t)) INJECT_API;

static pthread_once_t inject_once = PTHREAD_ONCE_INIT;

static void passive_status(void *ctx, char *buf, size_t len)
{
	(void)ctx;
	snprintf(buf, len, " gpus=0");
}

static void inject_start(void)
{
	char reason[200] = "", err[256];
	const char *autostart = getenv("GTRACE_AUTOSTART");
	if (getenv("GTRACE_SYNTH")) {
		/* the built-in synthetic source instead of CUPTI */
		if (synth_start(strtod(getenv("GTRACE_SYNTH"), NULL), err, sizeof(err)) == 0 && autostart)
			agent_autostart((uint32_t)strtoul(autostart, NULL, 10), err, sizeof(err));
		return;
	}
#if GTRACE_HAVE_CUPTI
	if (gcupti_probe(reason, sizeof(reason)) == 0) {
		/* autostart before the socket listens (agent_init_autostart) */
		uint32_t rec = autostart ? (uint32_t)strtoul(autostart, NULL, 10) : 0;
		agent_init_autostart(gcupti_source(), autostart && rec == 0 ? 1 : rec, err, sizeof(err));
		return;
	}
#else
	snprintf(reason, sizeof(reason), "gtrace was built without CUPTI");
#endif
	/* passive: the trainer runs on; a viewer learns why */
	static const struct agent_source passive = { .name = "cupti", .status = passive_status };
	/* passive before the socket listens: a viewer that connects at once
	 * must not be handed a ring nothing will fill */
	agent_set_passive(reason);
	agent_init(&passive, err, sizeof(err));
}

int InitializeInjection(void)
{
	pthread_once(&inject_once, inject_start);
	return 1;
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
