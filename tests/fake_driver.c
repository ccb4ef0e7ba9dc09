/* fake_driver.c - a stand-in for the NVIDIA driver (libcuda.so.1) that counts one device and has nothing else, so test_cuda_load can open the CUDA backend on a machine without a GPU. */

int cuInit(unsigned flags);
int cuDeviceGetCount(int *count);
int cuDriverGetVersion(int *version);

int cuInit(unsigned flags)
{
	(void)flags;
	return 0;
}

int cuDeviceGetCount(int *count)
{
	*count = 1;
	return 0;
}

int cuDriverGetVersion(int *version)
{
	*version = 13000;
	return 0;
}
