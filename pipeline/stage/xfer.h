/* xfer.h - the transfer calibration: from a kernel class measured on several
 * GPUs, the factor that moves a time measured on one GPU onto another, and
 * the error of that move.
 *
 * Per measured M (a column of the class) and per memory kind of the target
 * (calibration/transfer.yaml: memory_kinds; HBM, GDDR), over the measured
 * GPUs of that kind:
 *
 *     t(M) = c(M) + a(M) / compute + b(M) / bandwidth
 *
 * (a fixed time per call, a compute part, a bytes part; compute is the peak
 * the class runs on, bandwidth the datasheet's), fitted by relative least
 * squares with c, a, b >= 0. A kind measured at one bandwidth only frees b:
 * time scales with bandwidth within the kind. A kind never measured takes
 * the fit over every GPU. Each family (transfer.yaml: families) then takes
 * an offset, the mean log residual of its measured GPUs; a family never
 * measured takes none. Moving a time from GPU S to GPU T:
 *
 *     log t_T = log t_S + log(m_T / m_S) + off(T) - off(S)
 *
 * and the factor on bandwidth scaling is t_T / t_S x bw_T / bw_S.
 *
 * Its error (sigma of the log) is what the same procedure gave on data it
 * was not fitted to, pooled per M range of transfer.yaml: each measured GPU
 * of T's kind held out in turn with its twins (T's family measured), each
 * measured family held out whole (T's family never measured), or each
 * memory kind held out whole (T's kind never measured); plus the fit's own
 * parameter uncertainty at (S, T) and the calibration's sigma_floor.
 */
#ifndef DDT_XFER_H
#define DDT_XFER_H

#include "calib.h"

#define XFER_MAX_KINDS 8
#define XFER_NPARAM 3
enum xfer_param { XFER_C, XFER_A, XFER_B };

/* One column fitted for the GPUs of one memory kind. */
struct xfer_col {
	int ok;
	int kind_seen;                   /* 0: the kind had no GPU here; every GPU was used */
	int npoints;                     /* GPUs the curve was fitted to */
	double p[XFER_NPARAM];           /* c (us), a (us TFLOP/s), b (us TB/s) */
	int nact, act[XFER_NPARAM];      /* the parameters freed (the rest are 0) */
	double cov[XFER_NPARAM][XFER_NPARAM]; /* (J'J)^-1 over act, J the relative design */
	double s2;                       /* residual variance (0: exactly determined) */
	double off[CALIB_MAX_MEAS_GPUS]; /* per family of xfer_fit.fams (NaN: not measured here) */
	int nfam[CALIB_MAX_MEAS_GPUS];   /* the family's GPUs behind off */
};

/* The transfer calibration of one class with some GPUs held out. */
struct xfer_fit {
	int ok;                          /* 0: no column could be fitted */
	int ncols;
	double m[CALIB_MAX_MEAS_M];      /* the class's M per column (not sorted: fleet columns) */
	int nkinds;
	char kinds[XFER_MAX_KINDS][24];  /* measured kinds; col[][nkinds] is every GPU */
	int nfams;
	char fams[CALIB_MAX_MEAS_GPUS][24]; /* measured families */
	int ngpus;                       /* series used */
	unsigned char use[CALIB_MAX_MEAS_GPUS];
	struct xfer_col col[CALIB_MAX_MEAS_M][XFER_MAX_KINDS + 1];
	/* held-out errors, variance of the log per M range: by target kind with
	 * its family measured, and with its family never measured; NaN: none */
	double cv_seen[CALIB_MAX_RANGES][XFER_MAX_KINDS];
	double cv_unseen[CALIB_MAX_RANGES];
	/* and with the target's memory kind never measured (each kind held out
	 * whole; NaN: one kind) */
	double cv_nokind[CALIB_MAX_RANGES];
};

/* Fits class k of c's measured tables without GPU `exclude` and its twins
 * (NULL: none) and GPUs not in c's catalog. Returns 0 (x->ok says whether anything was
 * fitted) or DDT_ENOMEM. */
int xfer_fit(struct xfer_fit *x, const struct calib *c, const struct meas_class *k,
	     const char *exclude);

/* What a held-out fit leaves out (each NULL: nothing on that ground): GPU
 * `gpu` with its twins (xfer_twins), every GPU of memory kind `kind`
 * (xfer_kind), every GPU of family `fam`. */
struct xfer_hold {
	const char *gpu, *kind, *fam;
};

/* xfer_fit without the GPUs h names (h NULL: none). */
int xfer_fit_hold(struct xfer_fit *x, const struct calib *c, const struct meas_class *k,
		  const struct xfer_hold *h);

/* Whether a and b are twins: the same die (arch), memory and bandwidth
 * (B300 and GB300), whose tables say the same thing twice. */
int xfer_twins(const struct gpu *a, const struct gpu *b);

/* The factor from -> to at column j of x's class: the log of time_to /
 * time_from x bw_to / bw_from (lf) and its sigma (c's sigma_floor in);
 * seen: XFER_SEEN_TO when to's family was measured there, | XFER_SEEN_FROM
 * when from's was. Returns 0, or -1 when the column has no fit, a GPU's
 * curve is not positive or nothing sizes the error. */
enum { XFER_SEEN_TO = 1, XFER_SEEN_FROM = 2 };
int xfer_predict(const struct xfer_fit *x, const struct calib *c, const struct meas_class *k,
		 const struct gpu *from, const struct gpu *to, int j, double *lf, double *sig,
		 int *seen);

/* The kind and family of a GPU as the fit names them (transfer.yaml's
 * memory_kinds and families; unknown: the GPU's own memory or arch). */
const char *xfer_kind(const struct calib *c, const struct gpu *g);

/* The M range of c (transfer.yaml: ranges) that holds M, whole tokens;
 * below the first: the first. */
int xfer_range_of(const struct calib *c, double M);

/* The peak the class computes at on g, TFLOP/s (the class's `compute`). */
double xfer_compute(const struct meas_class *k, const struct gpu *g);

/* Builds into t the transfer entries for the reference GPU ref (one per
 * other catalog GPU and M range) and their curves, calibrated from the
 * class moe_transfer.class of the measured tables ms, the prior where it
 * has nothing. Returns 0, or DDT_EINPUT (unknown reference GPU, too many
 * entries) / DDT_ENOMEM. */
int xfer_build_for(const struct calib *c, const char *ref, const struct measured *ms,
		   struct xfer_table *t);
/* xfer_build_for the facts' own: moe_reference.gpu and measured tables. */
int xfer_build(const struct calib *c, struct xfer_table *t);

#endif
