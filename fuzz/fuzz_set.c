/* fuzz_set.c - libFuzzer target: `--set KEY=VALUE` overrides (one a line,
 * at most 8) applied to the shipped calibration with calibrate_set_arg, then the
 * model prepared and every scenario of the default template estimated. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "calibrate.h"
#include "fit.h"
#include "err.h"
#include "estimate.h"
#include "fuzz_util.h"
#include "model.h"
#include "tmpl.h"

static struct calib base; /* the shipped calibration, loaded once */
static struct calibration base_d; /* what the calibrate stage derived from it */
static struct tmpl tmpl_default;

/* A copy of base that calib_free can free: its arrays duplicated (the ones
 * calib_free frees; a new one there shows at once as a double free). */
static int copy_base(struct calib *c)
{
	*c = base;
	c->gpus = malloc(base.ngpus * sizeof *c->gpus);
	c->ar.per_gpu = malloc((base.ar.n ? base.ar.n : 1) * sizeof *c->ar.per_gpu);
	if (!c->gpus || !c->ar.per_gpu) {
		calib_free(c);
		return -1;
	}
	memcpy(c->gpus, base.gpus, base.ngpus * sizeof *c->gpus);
	memcpy(c->ar.per_gpu, base.ar.per_gpu, base.ar.n * sizeof *c->ar.per_gpu);
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct ydiag diag = {0};

	(void)argc;
	(void)argv;
	if (calibrate_load(&base, &base_d, fuzz_path("calibration"), &diag) != 0 ||
	    tmpl_load(&tmpl_default, fuzz_path("templates/default.yaml"), &diag) != 0) {
		ydiag_print(&diag, stderr);
		exit(1);
	}
	ydiag_free(&diag);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ydiag diag = {0};
	struct calib *cal = malloc(sizeof *cal);
	struct calibration der = base_d;
	char *args = malloc(size + 1), *save = NULL;
	int n = 0, rc = 0;

	if (!cal || !args)
		goto done;
	memcpy(args, data, size);
	args[size] = '\0';
	if (copy_base(cal) != 0)
		goto done;
	for (char *a = strtok_r(args, "\n", &save); a && n < 8 && !rc;
	     a = strtok_r(NULL, "\n", &save), n++) {
		err_clear();
		rc = calibrate_set_arg(cal, &der, a);
		if (rc && (rc != DDT_EINPUT || err_msg()[0] == '\0'))
			abort(); /* a bad --set is bad input, and says why */
	}
	if (!rc) {
		struct model m;
		struct estimate e = {0};
		if (model_prepare(&m, cal, &der, NULL) == 0 &&
		    estimate_run(&e, &m, tmpl_default.scenarios, tmpl_default.nscenarios) == 0)
			estimate_free(&e);
	}
	calib_free(cal);
done:
	free(cal);
	free(args);
	ydiag_free(&diag);
	return 0;
}
