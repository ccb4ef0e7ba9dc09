/* bench_machine.c - the machine's state over a bench run, from /proc, sysfs and NVML (dlopen). */
#include "bench_machine.h"

#include <dlfcn.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static double self_cpu_s(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru))
		return NAN;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* The aggregate "cpu" line of /proc/stat: total, idle (with iowait) and
 * steal ticks. Returns 0 or -1. */
static int proc_stat(unsigned long long *total, unsigned long long *idle,
		     unsigned long long *steal)
{
	unsigned long long v[8] = {0};
	FILE *fp = fopen("/proc/stat", "r");
	int n = fp ? fscanf(fp, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
			    &v[2], &v[3], &v[4], &v[5], &v[6], &v[7])
		   : 0;
	if (fp)
		fclose(fp);
	if (n < 4)
		return -1;
	*total = 0;
	for (int i = 0; i < 8; i++)
		*total += v[i];
	*idle = v[3] + v[4];
	*steal = v[7];
	return 0;
}

void bench_machine_begin(struct bench_machine_probe *pr)
{
	memset(pr, 0, sizeof *pr);
	pr->load_1m = NAN;
	if (getloadavg(&pr->load_1m, 1) != 1)
		pr->load_1m = NAN;
	pr->ok = proc_stat(&pr->total, &pr->idle, &pr->steal) == 0;
	pr->self_s = self_cpu_s();
}

/* Mean current frequency of the online CPUs (cpufreq), NaN when absent. */
static double cpu_mhz(void)
{
	glob_t g;
	double sum = 0;
	int n = 0;
	if (glob("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_cur_freq", 0, NULL, &g))
		return NAN;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		FILE *fp = fopen(g.gl_pathv[i], "r");
		double khz;
		if (fp && fscanf(fp, "%lf", &khz) == 1)
			sum += khz / 1000, n++;
		if (fp)
			fclose(fp);
	}
	globfree(&g);
	return n ? sum / n : NAN;
}

/* ---- NVML, by name from libnvidia-ml.so.1 (the driver's), no header ---- */

struct nvml_proc { /* nvmlProcessInfo_t (v2/v3 layout) */
	unsigned int pid;
	unsigned long long used_mem;
	unsigned int gpu_instance, compute_instance;
};

struct nvml {
	void *lib;
	int (*init)(void);
	int (*shutdown)(void);
	int (*handle)(unsigned int, void **);
	int (*clock)(void *, int, unsigned int *);
	int (*temp)(void *, int, unsigned int *);
	int (*reasons)(void *, unsigned long long *);
	int (*procs)(void *, unsigned int *, struct nvml_proc *);
};

static int nvml_open(struct nvml *nv)
{
	memset(nv, 0, sizeof *nv);
	if (!(nv->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)))
		return -1;
	*(void **)&nv->init = dlsym(nv->lib, "nvmlInit_v2");
	*(void **)&nv->shutdown = dlsym(nv->lib, "nvmlShutdown");
	*(void **)&nv->handle = dlsym(nv->lib, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&nv->clock = dlsym(nv->lib, "nvmlDeviceGetClockInfo");
	*(void **)&nv->temp = dlsym(nv->lib, "nvmlDeviceGetTemperature");
	*(void **)&nv->reasons = dlsym(nv->lib, "nvmlDeviceGetCurrentClocksEventReasons");
	if (!nv->reasons)
		*(void **)&nv->reasons = dlsym(nv->lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
	*(void **)&nv->procs = dlsym(nv->lib, "nvmlDeviceGetComputeRunningProcesses_v3");
	if (!nv->procs)
		*(void **)&nv->procs = dlsym(nv->lib, "nvmlDeviceGetComputeRunningProcesses_v2");
	if (!nv->init || !nv->shutdown || !nv->handle || nv->init() != 0) {
		dlclose(nv->lib);
		nv->lib = NULL;
		return -1;
	}
	return 0;
}

/* NVML's clock-event reason bits, by name. */
static void reason_names(unsigned long long mask, char *buf, size_t len)
{
	static const char *const names[] = {"gpu_idle",	   "applications_clocks",
					    "sw_power_cap",   "hw_slowdown",
					    "sync_boost",	   "sw_thermal",
					    "hw_thermal",	   "hw_power_brake",
					    "display_clocks"};
	size_t off = 0;
	buf[0] = '\0';
	for (unsigned b = 0; b < sizeof names / sizeof *names && off < len; b++)
		if (mask & (1ull << b))
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "," : "",
						names[b]);
}

static void gpu_state(const struct nvml *nv, int index, struct rec_gpu_state *g)
{
	void *dev = NULL;
	unsigned int v;
	unsigned long long mask;
	struct nvml_proc procs[64];
	memset(g, 0, sizeof *g);
	g->index = index;
	g->sm_clock_mhz = g->mem_clock_mhz = g->temp_c = NAN;
	g->other_procs = -1;
	if (nv->handle((unsigned)index, &dev) != 0)
		return;
	if (nv->clock && nv->clock(dev, 1, &v) == 0) /* NVML_CLOCK_SM */
		g->sm_clock_mhz = v;
	if (nv->clock && nv->clock(dev, 2, &v) == 0) /* NVML_CLOCK_MEM */
		g->mem_clock_mhz = v;
	if (nv->temp && nv->temp(dev, 0, &v) == 0) /* NVML_TEMPERATURE_GPU */
		g->temp_c = v;
	if (nv->reasons && nv->reasons(dev, &mask) == 0)
		reason_names(mask, g->throttle, sizeof g->throttle);
	unsigned int n = 64;
	if (nv->procs && nv->procs(dev, &n, procs) == 0) {
		g->other_procs = 0;
		for (unsigned int k = 0; k < n && k < 64; k++)
			g->other_procs += procs[k].pid != (unsigned int)getpid();
	}
}

void bench_machine_end(const struct bench_machine_probe *pr, int ngpus, struct rec_machine *m)
{
	unsigned long long total, idle, steal;
	memset(m, 0, sizeof *m);
	m->known = 1;
	m->load_avg_1m = pr->load_1m;
	m->cpu_steal_pct = m->cpu_others_pct = NAN;
	m->cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	m->cpu_mhz = cpu_mhz();
	if (pr->ok && proc_stat(&total, &idle, &steal) == 0 && total > pr->total) {
		double dt = (double)(total - pr->total), hz = (double)sysconf(_SC_CLK_TCK);
		double busy = dt - (double)(idle - pr->idle) - (double)(steal - pr->steal);
		double self = (self_cpu_s() - pr->self_s) * hz;
		m->cpu_steal_pct = 100 * (double)(steal - pr->steal) / dt;
		m->cpu_others_pct = 100 * fmax(0, busy - self) / dt;
	}
	struct nvml nv;
	if (ngpus <= 0 || nvml_open(&nv))
		return;
	for (int i = 0; i < ngpus && i < RECORD_MAX_GPU_STATES; i++)
		gpu_state(&nv, i, &m->gpus[m->ngpus++]);
	nv.shutdown();
	dlclose(nv.lib);
}
