/*
 * passive_prog.c - stands in for a CUDA program on a machine without a
 * driver: loads libgtrace-inject.so (path in argv[1]) and calls
 * InitializeInjection as the driver would, then "trains" for argv[2] ms.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	void *lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	int (*init)(void);
	*(void **)&init = dlsym(lib, "InitializeInjection");
	if (!init || init() != 1)
		return 1;
	long ms = atol(argv[2]);
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
	return 0;
}
