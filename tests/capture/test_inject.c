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
