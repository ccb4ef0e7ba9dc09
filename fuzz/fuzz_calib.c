/* fuzz_calib.c - libFuzzer target: a calibration file from bytes (calibrate_load
 * on a memfd), then what the nightly does with a calibration that loads:
 * every assumption's quantiles, the model prepared, and every catalog GPU
 * evaluated at a spread of configurations. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "calib.h"
#include "calibrate.h"
#include "fit.h"
#include "err.h"
#include "fuzz_util.h"
#include "model.h"

/* Evaluates the model on every GPU and both pipelines at a few shapes. */
static void exercise(const struct calib *cal, const struct calibration *der)
{
	static const double shapes[][4] = {
		/* block, budget, concurrency, accept */
		{8, 8, 1, 4.4}, {16, 32, 1, 12}, {16, 64, 4, 8}, {1, 1, 1, 1}, {64, 1024, 64, 30},
	};
	struct model m;

	for (int a = 0; a < calib_nassumptions(&der->xt); a++) {
		const struct dist *d = calib_asm(cal, &der->xt, a);
		(void)calib_dist_quantile(d, 0.05);
		(void)calib_dist_quantile(d, 0.5);
		(void)calib_dist_quantile(d, 0.95);
	}
	if (model_prepare(&m, cal, der, NULL) != 0)
		return;
	for (size_t g = 0; g < cal->ngpus; g++)
		for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
			for (int p = 0; p < 2; p++) {
				struct model_in in = {&cal->gpus[g], p ? PIPE_NATIVE : PIPE_SGLANG,
						      shapes[s][0], shapes[s][1], shapes[s][2],
						      shapes[s][3], 0};
				struct model_out out;
				model_eval(&m, &in, &out);
			}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	char path[64];
	struct ydiag diag = {0};
	struct calib *cal = malloc(sizeof *cal);
	struct calibration der;
	int rc;

	if (!cal)
		return 0;
	fd = fuzz_memfile(fd, data, size, path, sizeof path);
	err_clear();
	rc = calibrate_load(cal, &der, path, NULL, &diag);
	if (rc && diag.n == 0 && err_msg()[0] == '\0')
		abort(); /* an error must say what it is */
	if (rc == 0)
		exercise(cal, &der);
	calib_free(cal);
	free(cal);
	ydiag_free(&diag);
	return 0;
}
