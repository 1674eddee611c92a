// kernels.cu - a CUDA program with known work for the capture check:
// on each of NSTREAMS streams: 100 x kA, 50 x kB, 25 x kC, 10 H2D and 10 D2H
// pinned copies of 1 MiB, 5 memsets.  Expected totals are printed first
// ("expect NAME COUNT") so run.sh compares them with what gtrace received.
#include <cstdio>
#include <cuda_runtime.h>

#define NSTREAMS 4
__global__ void kA(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = x[i] * 1.0001f + 1.0f; }
__global__ void kB(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = sqrtf(fabsf(x[i])); }
__global__ void kC(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] -= 0.5f; }

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

int main()
{
	const int n = 1 << 18;
	cudaStream_t s[NSTREAMS];
	float *d[NSTREAMS], *h[NSTREAMS];
	for (int i = 0; i < NSTREAMS; i++) {
		CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
		CK(cudaMalloc(&d[i], n * sizeof(float)));
		CK(cudaMallocHost(&h[i], n * sizeof(float)));
	}
	for (int i = 0; i < NSTREAMS; i++) {
		for (int k = 0; k < 10; k++)
			CK(cudaMemcpyAsync(d[i], h[i], n * sizeof(float), cudaMemcpyHostToDevice, s[i]));
		for (int k = 0; k < 5; k++)
			CK(cudaMemsetAsync(d[i], 0, n * sizeof(float), s[i]));
		for (int k = 0; k < 100; k++)
			kA<<<n / 256, 256, 0, s[i]>>>(d[i], n);
		for (int k = 0; k < 50; k++)
			kB<<<n / 256, 256, 0, s[i]>>>(d[i], n);
		for (int k = 0; k < 25; k++)
			kC<<<n / 256, 256, 0, s[i]>>>(d[i], n);
		for (int k = 0; k < 10; k++)
			CK(cudaMemcpyAsync(h[i], d[i], n * sizeof(float), cudaMemcpyDeviceToHost, s[i]));
	}
	CK(cudaDeviceSynchronize());
	printf("expect kA %d\nexpect kB %d\nexpect kC %d\n", 100 * NSTREAMS, 50 * NSTREAMS, 25 * NSTREAMS);
	printf("expect H2D %d\nexpect D2H %d\nexpect memset %d\nexpect streams %d\n",
	       10 * NSTREAMS, 10 * NSTREAMS, 5 * NSTREAMS, NSTREAMS);
	for (int i = 0; i < NSTREAMS; i++) {
		cudaFree(d[i]);
		cudaFreeHost(h[i]);
		cudaStreamDestroy(s[i]);
	}
	return 0;
}
