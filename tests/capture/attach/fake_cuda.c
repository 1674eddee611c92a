/* a stand-in libcuda.so.1 for tests: a process that maps it "uses CUDA"
 * to gtrace attach --list (it is only ever looked up in /proc/PID/maps) */
int gtrace_fake_cuda_marker(void);
int gtrace_fake_cuda_marker(void)
{
	return 1;
}
