/*
 * test_inject.c - libgtrace-inject.so in a process without a CUDA driver
 * (this machine has none): InitializeInjection returns 1 (the driver's
 * contract), the control socket answers, the state is passive with the
 * reason, and a start is refused with it.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gtrace/ctl.h"

Test(inject, passive_without_driver, .timeout = 30)
{
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
	if (cuda)
		cr_skip_test("this machine has a CUDA driver");
	char path[1024];
	snprintf(path, sizeof(path), "%s/capture/libgtrace-inject.so", getenv("GTRACE_BUILD"));
	void *lib = dlopen(path, RTLD_NOW);
	cr_assert_not_null(lib, "%s", dlerror());
	int (*init)(void);
	*(void **)&init = dlsym(lib, "InitializeInjection");
	cr_assert_not_null(init);
	cr_assert_eq(init(), 1);
	cr_assert_eq(init(), 1);          /* a second call is harmless */
	char err[256], reply[CTL_LINE_MAX], v[200];
	int fd = ctl_connect(getpid(), err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	cr_assert_eq(ctl_request(fd, "status", reply, sizeof(reply), NULL, 3000), 0, "%s", reply);
	cr_assert_eq(ctl_status_get(reply, "state", v, sizeof(v)), 0);
	cr_assert_str_eq(v, "passive");
	cr_assert_eq(ctl_status_get(reply, "source", v, sizeof(v)), 0);
	cr_assert_str_eq(v, "cupti");
	cr_assert_eq(ctl_status_get(reply, "reason", v, sizeof(v)), 0);
	cr_assert(strstr(v, "no CUDA driver") || strstr(v, "built without CUPTI"), "reason: %s", v);
	int rfd = -1;
	cr_assert_eq(ctl_request(fd, "start", reply, sizeof(reply), &rfd, 3000), -EREMOTEIO);
	cr_assert_eq(rfd, -1);
	cr_assert(strstr(reply, "no CUDA driver") || strstr(reply, "without CUPTI"), "%s", reply);
	/* NVTX forwarding without a driver: no crash, a defined answer */
	int (*nvtx)(const void *(*)(uint32_t));
	*(void **)&nvtx = dlsym(lib, "InitializeInjectionNvtx2");
	cr_assert_not_null(nvtx);
	close(fd);
}

static const void *no_export_table(uint32_t id)
{
	(void)id;
	return NULL;
}

/* a CUPTI of another major already in the process (a CUDA 12 framework):
 * the library does not load its own libcupti.so.13 beside it (two CUPTIs
 * would fight; record layouts differ), NVTX is not forwarded */
Test(inject, other_cupti_major_in_process_is_left_alone, .timeout = 30)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/tests/capture/libcupti.so.12", getenv("GTRACE_BUILD"));
	cr_assert_not_null(dlopen(path, RTLD_NOW), "%s", dlerror());
	cr_assert_null(dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD));
	snprintf(path, sizeof(path), "%s/capture/libgtrace-inject.so", getenv("GTRACE_BUILD"));
	void *lib = dlopen(path, RTLD_NOW);
	cr_assert_not_null(lib, "%s", dlerror());
	int (*nvtx)(const void *(*)(uint32_t));
	*(void **)&nvtx = dlsym(lib, "InitializeInjectionNvtx2");
	cr_assert_not_null(nvtx);
	cr_assert_eq(nvtx(no_export_table), 0);
	cr_assert_null(dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD),
		       "libcupti.so.13 was loaded beside another CUPTI");
}
