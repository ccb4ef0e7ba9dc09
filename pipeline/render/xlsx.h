/* xlsx.h - report.xlsx: the run's spreadsheet, with the What-if sheet's live formulas. */
#ifndef DDT_XLSX_H
#define DDT_XLSX_H

#include "report_data.h"
#include "whatif.h"

/* Writes report.xlsx of run d to path atomically (temporary file, fsync,
 * rename; no link followed, fsx.h), its What-if sheet's values from wi
 * (whatif_make of the same run). Returns 0 or DDT_EIO / DDT_EGENERIC with
 * libxlsxwriter's message. */
int xlsx_write_report(const struct report_data *d, const struct whatif *wi, const char *path);
/* The same without cached formula results (every formula caches 0), so a
 * test can prove that a recalculation reproduces ddt's numbers. */
int xlsx_write_report_uncached(const struct report_data *d, const struct whatif *wi,
			       const char *path);

/* A What-if input typed over: its --set key (an assumption, an anchor's
 * tok/s, "gpus.ID.bw_tbps") and the value typed. */
struct xlsx_edit {
	const char *key;
	double value;
};
/* The uncached workbook with the What-if's inputs edits[n] holding the
 * values typed, as a user who typed them would leave it (every formula,
 * and every value not typed, as written): a recalculation must then give
 * what `ddt estimate --set KEY=VALUE ...` gives. */
int xlsx_write_report_edited(const struct report_data *d, const struct whatif *wi,
			     const char *path, const struct xlsx_edit *edits, size_t n);

#endif
