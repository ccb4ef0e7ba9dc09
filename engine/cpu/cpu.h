/* cpu.h - the CPU backend's shared parts: device detection and provenance,
 * plus the host pool and allocator it runs on (cpu_pool.h). */
#ifndef DDT_CPU_H
#define DDT_CPU_H

#include <stddef.h>

#include "cpu_pool.h"
#include "rec.h"

/* Fills d with this CPU: model name, cores, arch, RAM. copy_gbps is left NaN
 * for the caller to measure. Cannot fail (unknown fields stay empty/NaN). */
void cpu_device_detect(struct rec_device *d);

/* Fills the CPU-side provenance: git revision of home ("unknown" outside a
 * checkout, "+dirty" when modified), compiler, build configuration, host.
 * CUDA fields are left empty. Cannot fail. */
void cpu_provenance(struct rec_provenance *p, const char *home);

#endif
