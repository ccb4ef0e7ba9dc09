/* cuda_api.h - the CUDA backend as `ddt bench` sees it: devices, versions, one
 * timed and validated op, the NCCL all-reduce sweep and the launch benchmarks.
 * ddt links no CUDA library: engine/cuda_load.c opens the NVIDIA driver and
 * then the backend (libddt-cuda.so, cuda_backend.h) on first use, and only
 * when a device is there; without them every function below answers "none"
 * or a skipped row with the reason. */
#ifndef DDT_CUDA_API_H
#define DDT_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

#include "harness.h"
#include "op.h"
#include "rec.h"

/* How the reason of rows that cannot run (row.status = REC_SKIPPED) starts. */
#define CUDA_REASON_NO_DRIVER "no NVIDIA driver"
#define CUDA_REASON_NO_DEVICE "no CUDA device"
#define CUDA_REASON_NO_BACKEND "no CUDA backend"

/* The number of usable CUDA devices into *count. Absence is not an error: with
 * no driver, no device, or no loadable backend it returns 0 with *count = 0 and
 * reason set to one line starting with CUDA_REASON_NO_DRIVER, _NO_DEVICE or
 * _NO_BACKEND and saying why; with devices, reason is "". Never fails; the int
 * return is kept for symmetry and is always 0. */
int cuda_devices(int *count, char *reason, size_t len);

/* Describes CUDA device dev into *out (kind "cuda", index dev, name, "sm_XY",
 * SMs, memory, default SM and memory clocks, datasheet peak NaN, and the copy
 * bandwidth measured now by a large device-to-device copy counting bytes read
 * plus written; the figure is cached for cuda_time_op's pct_peak). Returns 0
 * or an error code with err_set() called. */
int cuda_device_describe(int dev, struct rec_device *out);

/* Versions as "13.0" (runtime, driver) and "2.27.7" (NCCL); each buffer has
 * len bytes; "" where unknown (no driver). Never fails; returns 0. */
int cuda_versions(char *runtime, char *driver, char *nccl, size_t len);

/* Measures op at sizes p on CUDA device dev and fills every field of *row
 * (row->device is set to dev: the caller maps it to the run record's device
 * index). Steps: op->setup with seed, op->reference, the CUDA path's setup, poison,
 * one run + fetch, op->max_error against op->tol, then timing with CUDA events
 * under hc's stopping rule (an L2 flush before every sample when hc->cold,
 * samples under hc->min_clock_frac of the default SM clock dropped), bytes and
 * flops from the op, GB/s and % of the device's measured copy bandwidth.
 * Validation failure, a CUDA error or a missing CUDA path become a row with
 * status failed / unsupported / skipped and a one-line reason; the return is
 * 0 for every such row and an error code only when the row itself cannot be
 * produced (out of host memory). Never exits. */
int cuda_time_op(const struct op_desc *op, const struct op_params *p, int dev,
		 const struct harness_conf *hc, uint64_t seed, struct rec_row *row);

/* NCCL all-reduce (sum, bf16) of M x hidden over all local GPUs, one
 * communicator across them, for each M of ms[0..nm): appends one row per M to
 * r (op "allreduce", backend "nccl", params M, hidden, gpus; median latency,
 * gbps = algbw, extra param busbw_gbps = algbw x 2(n-1)/n; device = rec_device).
 * Fewer than 2 GPUs: the rows are appended with status skipped and the reason.
 * Validates the sum on the first sample. Returns 0, or DDT_ENOMEM when a row
 * cannot be appended. */
int cuda_bench_allreduce(struct rec_rows *r, const int *ms, int nm, int hidden,
			 const struct harness_conf *hc, int rec_device);

/* Launch overhead on CUDA device 0: appends to r the rows
 *   launch / empty_async  back-to-back empty-kernel launches, µs each
 *   launch / empty_sync   launch + stream synchronize, host round trip, µs
 *   launch / step_kernels sum of the synthetic step's kernels, each timed
 *                         between events inside an eager step (its cache state)
 *   launch / step_eager   the synthetic decode step launched eagerly
 *   launch / step_graph   the same step replayed as a CUDA graph
 * The synthetic step is `layers` x (tree_attn + all-reduce + moe_w4a16 +
 * all-reduce, the all-reduces over a one-rank NCCL communicator) then the
 * drafter's lm_head GEMV (M = L + 1, N = V / 8), tree_build and accept, at the
 * sizes in p, all per GPU: layers (61), B (32), M (B + 1), L (15), ctx (4096),
 * hidden (7168), inter (256: moe_inter / 8), experts (384), topk (8),
 * group (32), heads (8: 64 / 8), V (163840); absent keys take those values.
 * step_graph carries param pct_of_kernels = graph / sum of kernels x 100
 * (target <= 105).
 * Rows that cannot run are appended as skipped/failed with the reason.
 * device = rec_device on every row. Returns 0 or DDT_ENOMEM. */
int cuda_bench_launch(struct rec_rows *r, const struct op_params *p,
		      const struct harness_conf *hc, int rec_device);

/* After a row that may have faulted: clears the last error and, when a
 * kernel fault left the context unusable (a sticky error), resets the device
 * so that later rows run in a fresh context (the buffers and handles of the
 * old one are gone). Returns 0 when the context was fine, 1 after a reset
 * that worked, -1 when the device still fails after it (only ending the
 * process frees it then). Without a backend: 0. */
int cuda_recover(void);

/* The tensor ceiling of CUDA device 0: cuBLAS bf16 n x n x n products (fp32
 * accumulation, random data, never zeros) after 3 warm-ups, the mean of 10
 * timed with events, into *tflops (TFLOP/s). Returns 0 or an error code with
 * err_set() called (no backend, n < 256, a CUDA or cuBLAS failure). */
int cuda_tensor_tflops(int n, double *tflops);

/* The device a rank uses among the visible GPUs this process sees, given
 * its place among the local_size ranks on its host: one visible GPU is the
 * rank's own (Slurm's per-task binding, --gpus-per-task=1 or --gpu-bind,
 * or a launcher that sets CUDA_VISIBLE_DEVICES per rank): device 0; at
 * least one per rank (each rank sees them all): the local_rank-th. Returns
 * 0 with *dev, or DDT_EINPUT with err_set() naming the counts and
 * CUDA_VISIBLE_DEVICES (no GPU, or more than one but fewer than ranks). */
int cuda_local_device(int visible, int local_rank, int local_size, int *dev);

/* The CUDA path of the op of that name (engine/cuda/<op>.cu), or NULL when
 * it has none or no backend is loaded. */
const struct op_cuda *cuda_op_path(const char *op);

#endif
