/*
 * fake_cupti12.c - built as "libcupti.so.12": stands for a framework's own
 * CUPTI of another major version mapped in the traced process (a CUDA 12
 * PyTorch wheel), for test_inject.
 */
int fake_cupti12_marker(void);

/* a symbol so the object is not empty */
int fake_cupti12_marker(void)
{
	return 12;
}
