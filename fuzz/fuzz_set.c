/* fuzz_set.c - libFuzzer target: `--set KEY=VALUE` overrides (one a line,
 * at most 8) given to the shipped calibration as it is loaded (calibrate_with),
 * then the model prepared and every scenario of the default template estimated. */
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

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct ydiag diag = {0};

	(void)argc;
	(void)argv;
	if (calibrate_load(&base, &base_d, fuzz_path("calibration"), NULL, &diag) != 0 ||
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
	struct calibration der;
	char *args = malloc(size + 1), *save = NULL;
	const char *sets[8];
	struct calibrate_opts o = {.sets = sets};
	int rc;

	if (!cal || !args)
		goto done;
	memcpy(args, data, size);
	args[size] = '\0';
	for (char *a = strtok_r(args, "\n", &save); a && o.nsets < 8; a = strtok_r(NULL, "\n", &save))
		sets[o.nsets++] = a;
	err_clear();
	rc = calibrate_with(cal, &der, &base, &base_d, &o);
	if (rc && (rc != DDT_EINPUT || err_msg()[0] == '\0'))
		abort(); /* a bad --set is bad input, and says why */
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
