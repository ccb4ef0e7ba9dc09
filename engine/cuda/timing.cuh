/* timing.cuh - the CUDA measurement loop and row helpers shared by api.cu, allreduce.cu and launch.cu. */
#ifndef DDT_CUDA_TIMING_CUH
#define DDT_CUDA_TIMING_CUH

#include "common.cuh"

extern "C" {
#include "cuda_api.h"
#include "harness.h"
#include "rec.h"
}

/* One stream, two events and (for cold samples) an L2 flush buffer on one
 * device. */
struct cu_timer {
	int dev;
	cudaStream_t s;
	cudaEvent_t e0, e1;
	void *flush;        /* 2 x L2 bytes, NULL when hot */
	size_t flush_bytes;
	unsigned *sink;     /* where the flush's reads would go (never, in practice) */
	double clock_default_mhz; /* cudaDevAttrClockRate; NaN when unknown */
};

/* Sets dev current and creates the stream, events and flush buffer (cold).
 * Returns 0 or an error code; t is safe to free either way. */
int cu_timer_init(struct cu_timer *t, int dev, int cold);
void cu_timer_free(struct cu_timer *t);

/* Enqueues one unit of work on s (and on other devices' streams if it
 * likes, as long as s waits for them); returns 0 or an error code. */
typedef int (*cu_enqueue_fn)(void *arg, cudaStream_t s);

/* Evicts the L2 on t's stream by reading the flush buffer (its clean lines
 * replace everything, as another layer's weights would): a memset would
 * leave dirty lines whose write-back lands inside the next timed kernel.
 * Returns 0 or an error code. */
int cu_flush_l2(struct cu_timer *t);

/* Enqueues a one-thread kernel that spins for about us microseconds at the
 * default clock: the stream waits while the host enqueues what follows, so
 * the device never idles between those launches. Returns 0 or an error. */
int cu_hold_stream(const struct cu_timer *t, double us);

/* Times fn on t under hc's stopping rule with CUDA events around
 * `calls` back-to-back calls per sample (the sample is the time per call),
 * an L2 flush by reads before each sample when hc->cold, and samples taken below
 * hc->min_clock_frac of the default SM clock discarded. Fills row's sample
 * statistics and sm_clock_mhz. Returns 0, or an error code (CUDA failure,
 * or every sample throttled) with err_set() called. */
int cu_time(struct cu_timer *t, const struct harness_conf *hc, cu_enqueue_fn fn, void *arg,
	    int calls, struct rec_row *row);

/* The current SM clock of dev in MHz: NVML when libnvidia-ml can be opened
 * at run time, else a clock64() spin timed with events on s; NaN when
 * neither works. */
double cu_clock_now_mhz(int dev, cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1);

/* A row with every figure NaN, the names set and status ok. */
void cu_row_init(struct rec_row *row, const char *op, const char *variant, const char *backend,
		 int device);
/* Sets status and a one-line reason (format). */
void cu_row_status(struct rec_row *row, enum rec_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* GB/s and % of the device's copy bandwidth from row->bytes and the median. */
void cu_row_rates(struct rec_row *row, double copy_gbps);

/* After a failure: clears the last error and, when the context is broken by
 * a sticky error, resets the current device so later rows can run; returns
 * 0, 1 or -1 as cuda_recover (cuda_api.h). */
int cu_recover(void);
/* Drops dense_gemv's cached cuBLAS handles (after a device reset). */
void cu_gemv_forget(void);

/* The device count (cached); 0 with the reason when none. */
int cu_device_count(char *reason, size_t len);
/* The measured copy bandwidth of dev, measured on first use (GB/s). */
int cu_copy_gbps(int dev, double *gbps);

#endif
