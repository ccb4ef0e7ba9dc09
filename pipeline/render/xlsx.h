/* xlsx.h - report.xlsx: the run's spreadsheet, with the What-if sheet's live formulas. */
#ifndef DDT_XLSX_H
#define DDT_XLSX_H

#include "report_data.h"

/* Writes report.xlsx to path atomically (temporary file, fsync, rename; no
 * link followed, fsx.h). Returns 0 or DDT_EIO / DDT_EGENERIC with
 * libxlsxwriter's message. */
int xlsx_write_report(const struct report_data *d, const char *path);
/* The same without cached formula results (every formula caches 0), so a
 * test can prove that a recalculation reproduces ddt's numbers. */
int xlsx_write_report_uncached(const struct report_data *d, const char *path);

#endif
