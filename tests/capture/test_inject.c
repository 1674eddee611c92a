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
#include <sys/resource.h>
#include <sys/wait.h>
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
	char err[256], reply[GT_CTL_LINE_MAX], v[200];
	int fd = gt_ctl_connect(getpid(), err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	cr_assert_eq(gt_ctl_request(fd, "status", reply, sizeof(reply), NULL, 3000), 0, "%s", reply);
	cr_assert_eq(gt_ctl_status_get(reply, "state", v, sizeof(v)), 0);
	cr_assert_str_eq(v, "passive");
	cr_assert_eq(gt_ctl_status_get(reply, "source", v, sizeof(v)), 0);
	cr_assert_str_eq(v, "cupti");
	cr_assert_eq(gt_ctl_status_get(reply, "reason", v, sizeof(v)), 0);
	cr_assert(strstr(v, "no CUDA driver") || strstr(v, "built without CUPTI"), "reason: %s", v);
	int rfd = -1;
	cr_assert_eq(gt_ctl_request(fd, "start", reply, sizeof(reply), &rfd, 3000), -EREMOTEIO);
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

/* a library that cannot listen (here socket() fails: no file descriptor
 * may be opened) was silent: the process ran untraceable, and `gtrace
 * record -- CMD` said it never initialized CUDA.  It says why on stderr
 * and on the status pipe of GTRACE_STATUS_FD (capture/ireport.c) */
Test(inject, listen_failure_is_reported, .timeout = 30)
{
	int sp[2], ep[2];
	cr_assert_eq(pipe(sp), 0);
	cr_assert_eq(pipe(ep), 0);
	pid_t pid = fork();
	if (pid == 0) {
		char path[1024], v[16];
		snprintf(path, sizeof(path), "%s/capture/libgtrace-inject.so", getenv("GTRACE_BUILD"));
		void *lib = dlopen(path, RTLD_NOW);
		if (!lib)
			_exit(2);
		int (*init)(void);
		*(void **)&init = dlsym(lib, "InitializeInjection");
		dup2(ep[1], 2);
		snprintf(v, sizeof(v), "%d", sp[1]);
		setenv("GTRACE_STATUS_FD", v, 1);
		setenv("GTRACE_SYNTH", "1000", 1);
		struct rlimit rl = { 0, 0 };          /* no new fd: socket() fails */
		if (setrlimit(RLIMIT_NOFILE, &rl))
			_exit(3);
		_exit(init() == 1 ? 0 : 4);
	}
	close(sp[1]);
	close(ep[1]);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
	char e[512] = "", s[512] = "";
	ssize_t n = read(ep[0], e, sizeof(e) - 1);
	e[n > 0 ? n : 0] = 0;
	n = read(sp[0], s, sizeof(s) - 1);
	s[n > 0 ? n : 0] = 0;
	char want[64];
	snprintf(want, sizeof(want), "process %d cannot be traced: ", (int)pid);
	cr_expect(strstr(e, want), "stderr: %s", e);
	cr_expect(strstr(e, strerror(EMFILE)), "stderr: %s", e);
	cr_expect_eq(strchr(e, '\n'), e + strlen(e) - 1, "one line: %s", e);
	snprintf(want, sizeof(want), "%d ", (int)pid);
	cr_expect_eq(strncmp(s, want, strlen(want)), 0, "status pipe: %s", s);
	cr_expect(strstr(s, strerror(EMFILE)), "status pipe: %s", s);
	close(sp[0]);
	close(ep[0]);
}
