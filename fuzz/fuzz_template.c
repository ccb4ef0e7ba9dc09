/* fuzz_template.c - libFuzzer target: job templates read from bytes
 * (tmpl_load_buf, placed in templates/ so `extends: default.yaml` reaches the
 * shipped template), then every stage's section loader on what loaded. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "err.h"
#include "fuzz_util.h"
#include "regress.h"
#include "report_spec.h"
#include "tmpl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[PATH_MAX];
	struct ydiag diag = {0};
	struct tmpl t;
	int rc;

	if (!path[0])
		snprintf(path, sizeof path, "%s", fuzz_path("templates/fuzz-input.yaml"));
	err_clear();
	rc = tmpl_load_buf(&t, path, (const char *)data, size, &diag);
	if (rc && diag.n == 0 && err_msg()[0] == '\0')
		abort(); /* an error must say what it is */
	if (rc == 0) {
		struct regress_conf rc_conf;
		struct report_spec *spec = malloc(sizeof *spec);
		regress_conf_load(&rc_conf, &t, &diag);
		if (spec)
			report_spec_load(spec, &t, &diag);
		free(spec);
		for (size_t i = 0; i < t.nscenarios; i++)
			if (tmpl_scenario(&t, t.scenarios[i].name) == NULL)
				abort(); /* every loaded scenario can be found by name */
	}
	tmpl_free(&t);
	ydiag_free(&diag);
	return 0;
}
