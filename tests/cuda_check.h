/* cuda_check.h - runs one op's CUDA path against its C reference (fresh seeded inputs, poisoned outputs, every element compared, a second run over a new poison); shared by test_cuda.c (GPU) and test_cuda_sim.c (the same sources on the CPU). */
#ifndef DDT_TESTS_CUDA_CHECK_H
#define DDT_TESTS_CUDA_CHECK_H

#include <stdio.h>
#include <string.h>

#include "err.h"
#include "op.h"

/* Runs cu (op's CUDA path, or its simulated build) at p: setup, reference,
 * one run into poisoned outputs, then before_second() (may be NULL) and a
 * second run into a new poison. The errors against the reference go to
 * err[0] and err[1]. Returns 0, or -1 with the failure printed. */
static inline int cuda_check(const struct op_desc *op, const struct op_cuda *cu,
			     const struct op_params *p, uint64_t seed, void (*before_second)(void),
			     double err[2])
{
	void *inst = NULL, *dev = NULL;
	const char *stage = "setup";
	int rc;

	err[0] = err[1] = -1;
	if ((rc = op->setup(&inst, p, seed)))
		goto done;
	stage = "reference";
	if ((rc = op->reference(inst)))
		goto done;
	op->poison(inst);
	stage = "CUDA setup";
	if ((rc = cu->setup(&dev, inst)))
		goto done;
	for (int i = 0; i < 2; i++) {
		if (i) {
			op->poison(inst);
			if (before_second)
				before_second();
		}
		stage = i ? "second run" : "run";
		if ((rc = cu->run(dev, NULL)) || (rc = cu->fetch(dev, inst)))
			goto done;
		err[i] = op->max_error(inst);
	}
done:
	if (rc)
		fprintf(stderr, "%s %s: %s\n", op->name, stage, err_msg());
	if (dev)
		cu->teardown(dev);
	op->teardown(inst);
	return rc ? -1 : 0;
}

#endif
