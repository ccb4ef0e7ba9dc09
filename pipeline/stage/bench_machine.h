/* bench_machine.h - the machine's state over a bench run: load, CPU steal and others' CPU time, frequency, and each GPU's clocks, clock-event reasons, temperature and other processes (NVML, loaded at run time). */
#ifndef DDT_BENCH_MACHINE_H
#define DDT_BENCH_MACHINE_H

#include "record.h"

/* What the start of the run saw, for the differences at its end. */
struct bench_machine_probe {
	double load_1m;                 /* when the run began: others' load, not ours */
	unsigned long long total, idle, steal; /* /proc/stat ticks, all CPUs */
	double self_s;                  /* this process's CPU seconds */
	int ok;                         /* /proc/stat was readable */
};

/* Notes the state at the start of a run. Cannot fail (what cannot be read
 * stays unknown). */
void bench_machine_begin(struct bench_machine_probe *pr);

/* Fills m (known = 1) from the start and now: load when the run began, CPU
 * steal and other processes' share of the CPUs over the run, the mean CPU
 * frequency, and for each of the first ngpus GPUs (NVML index = CUDA
 * ordinal: set CUDA_DEVICE_ORDER=PCI_BUS_ID for the two to agree) its SM and
 * memory clocks, clock-event reasons, temperature and the compute processes
 * of others. Without NVML (no NVIDIA driver) the GPUs are left out. */
void bench_machine_end(const struct bench_machine_probe *pr, int ngpus, struct rec_machine *m);

#endif
