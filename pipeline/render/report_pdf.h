/* report_pdf.h - report.pdf: the run's document, every section on its pages. */
#ifndef DDT_REPORT_PDF_H
#define DDT_REPORT_PDF_H

#include "report_data.h"

/* Writes report.pdf to path atomically through cairo's stream API. Returns 0
 * or DDT_EIO / DDT_ENOMEM / DDT_EGENERIC (cairo failed; the message says). */
int report_pdf_write(const struct report_data *d, const char *path);

#endif
