/* sim_api.h - the CPU execution of the CUDA kernels as C code sees it: each op's CUDA path built by the host compiler, and the simulated device's settings. */
#ifndef DDT_CUDA_SIM_API_H
#define DDT_CUDA_SIM_API_H

#include <stdint.h>

#include "op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* engine/cuda/<op>.cu compiled for the CPU (sim.h): the same setup, launch
 * and fetch code as the GPU build, with every kernel run by sim.cpp. */
extern const struct op_cuda op_sim_moe_w4a16, op_sim_tree_attn, op_sim_tree_build, op_sim_accept,
	op_sim_memcpy;

/* The simulated CUDA path of the op of that name, or NULL. */
const struct op_cuda *sim_op_path(const char *op);

/* The order in which runnable threads (and blocks) are resumed: a race that
 * depends on it gives different results under two orders. */
enum sim_order { SIM_FORWARD, SIM_REVERSE, SIM_SHUFFLE };

struct sim_conf {
	int sms;           /* multiprocessors the device reports (132: an H200) */
	int blocks_per_sm; /* what the occupancy query answers (1) */
	enum sim_order order;
	uint64_t seed;     /* of SIM_SHUFFLE's order */
};

/* The H200-like defaults above. */
void sim_conf_default(struct sim_conf *c);
/* Applies c to every later launch. */
void sim_configure(const struct sim_conf *c);

/* What the simulator saw since sim_stats_reset: launches, blocks run and
 * fiber switches (the cost of a test), device buffers still allocated. */
struct sim_stats {
	unsigned long long launches, blocks, switches;
	long live_buffers;
};
void sim_stats_get(struct sim_stats *s);
void sim_stats_reset(void);

/* The last fault's one-line description ("" when none): which kernel, which
 * block and thread, and what it did. Launch errors also carry it through
 * cudaGetErrorString. */
const char *sim_fault(void);

/* Tests' hooks for what a GPU can do to a run: the nth kernel launch from
 * now (1: the next) faults (an illegal address: a sticky error, as a bad
 * access by a kernel leaves the context) or hangs (never returns, as the
 * synchronize after a kernel that spins on a flag nothing sets). SIM_NONE
 * cancels what is pending. */
enum sim_inject { SIM_INJECT_NONE, SIM_INJECT_FAULT, SIM_INJECT_HANG };
void sim_inject(enum sim_inject what, int nth_launch);

/* cuda_recover's simulation: clears the last error; after a fault (a sticky
 * error) resets the simulated device (every buffer freed). Returns 0 when
 * there was no fault, 1 after the reset. */
int sim_recover(void);

#ifdef __cplusplus
}
#endif

#endif
