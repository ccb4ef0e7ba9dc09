/* report_summary.h - summary.txt: the run in a few lines. */
#ifndef DDT_REPORT_SUMMARY_H
#define DDT_REPORT_SUMMARY_H

#include <stdio.h>

#include "report_data.h"

/* The short summary: headline, baseline, bands, regression status. */
void report_summary_write(const struct report_data *d, FILE *fp);

#endif
