// globaltimer.cu - ground truth from the same run for the capture check:
// NK single-thread spin kernels on one stream, each spinning SPIN_NS by the
// GPU's own %globaltimer and writing that timer at its entry and exit.
// Printed: "spin I ENTRY_NS EXIT_NS" (globaltimer ns), one line per kernel,
// in launch order.  gtrace's start/end of the same kernels (on the host
// clock) must give the same durations and the same distances between
// kernel starts, within 1 % + 2 us (run.sh); the absolute axis differs.
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>

#define NK 40
#define SPIN_NS 200000ull

__device__ __forceinline__ uint64_t gtimer()
{
	uint64_t t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__global__ void spin(uint64_t *stamp, uint64_t ns)
{
	uint64_t t0 = gtimer(), t = t0;
	while (t - t0 < ns)
		t = gtimer();
	stamp[0] = t0;
	stamp[1] = gtimer();
}

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

int main()
{
	uint64_t *d, h[2 * NK];
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&d, sizeof(h)));
	spin<<<1, 1, 0, s>>>(d, 1000);        // warm-up (module load), not compared
	CK(cudaStreamSynchronize(s));
	for (int i = 0; i < NK; i++) {
		// gaps between kernels: alternate back-to-back and a host sleep
		spin<<<1, 1, 0, s>>>(d + 2 * i, SPIN_NS + (uint64_t)(i % 4) * 50000);
		if (i % 3 == 2)
			CK(cudaStreamSynchronize(s));
	}
	CK(cudaStreamSynchronize(s));
	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	for (int i = 0; i < NK; i++)
		printf("spin %d %llu %llu\n", i, (unsigned long long)h[2 * i], (unsigned long long)h[2 * i + 1]);
	CK(cudaFree(d));
	CK(cudaStreamDestroy(s));
	return 0;
}
