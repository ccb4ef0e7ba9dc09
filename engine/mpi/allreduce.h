/* allreduce.h - the multi-node all-reduce's timing core: MPI ranks, NCCL or MPI, one result row per size. */
#ifndef DDT_MPI_ALLREDUCE_H
#define DDT_MPI_ALLREDUCE_H

#include <stddef.h>

#include "harness.h"
#include "rec.h"

#define ALLREDUCE_MAX_M 16

enum allreduce_backend { ALLREDUCE_AUTO, ALLREDUCE_NCCL, ALLREDUCE_MPI };

/* What every rank needs to agree on. */
struct allreduce_conf {
	int backend;        /* ALLREDUCE_NCCL or ALLREDUCE_MPI once decided */
	int nm;
	int m[ALLREDUCE_MAX_M]; /* message widths: one all-reduce is M x hidden bf16 */
	int hidden;
	struct harness_conf hc; /* the stopping rule; never cold */
};

/* The world as this rank sees it. */
struct allreduce_world {
	int rank, size;      /* in MPI_COMM_WORLD */
	int local_rank, local_size;
	int nodes;           /* distinct hosts among the ranks */
	char host[256];
};

/* MPI_Init, then this rank's place: its rank on its host and how many hosts
 * there are. Collective. allreduce_end finishes MPI. */
void allreduce_start(int *argc, char ***argv, struct allreduce_world *w);
void allreduce_end(void);

/* Rank 0's len bytes at buf into every rank's buf. Collective. */
void allreduce_share(void *buf, size_t len);

/* 1 when any rank says 1. Collective. */
int allreduce_any(int mine);

/* Decides the backend together: nccl only when every rank has a GPU and the
 * build has NCCL. Returns 0 or DDT_EINPUT (nccl asked for but impossible).
 * Collective. */
int allreduce_backend_decide(struct allreduce_conf *c);

/* Sets up the sum (and, for NCCL, each rank's GPU and the communicator).
 * Returns 0 or an error on every rank. Collective; allreduce_close undoes it. */
int allreduce_open(const struct allreduce_conf *c, const struct allreduce_world *w);
void allreduce_close(const struct allreduce_conf *c);

/* This rank's device (its GPU for NCCL, else the CPU) and the build's
 * provenance (git revision of home). Returns 0 or an error code. */
int allreduce_describe(const struct allreduce_conf *c, const struct allreduce_world *w,
		       const char *home, struct rec_device *d, struct rec_provenance *prov);

/* Times the all-reduce of m x hidden bf16 under c->hc's stopping rule, the
 * sum checked on every rank, into row (complete on rank 0; the slowest
 * rank's time per sample). A failure on any rank is a failed row naming the
 * lowest failing rank. Collective. */
void allreduce_measure(const struct allreduce_conf *c, const struct allreduce_world *w, int m,
		       struct rec_row *row);

#endif
