/* The sections of the HTML report (html.h), each written by a file of its own: the run at a
 * glance (html.c), the races (html_races.c), the injected orderings (html_injects.c), and the
 * style they share (html_style.c). */
#ifndef DLT_HTML_PARTS_H
#define DLT_HTML_PARTS_H

#include <stdio.h>

#include "analysis.h"
#include "logread.h"
#include "symbolize.h"

#define DLT_HTML_MAX_RACES 50   /* distinct races drawn; the others are listed */
#define DLT_HTML_MAX_INJECTS 20 /* distinct ways of injecting drawn */

/* The page's style sheet (one <style> element's text). */
extern const char dlt_html_style[];

/* Writes the races section: links to each race drawn, then each of the first DLT_HTML_MAX_RACES
 * distinct races of a (the most frequent first) drawn with its stacks, why and fix; the others
 * in a table. Returns -1 when
 * memory runs out. */
int dlt_html_races(const dlt_log_set *set, const dlt_analysis *a, const dlt_symbolizer *sym, FILE *out);

/* Writes the injected-orderings section: the exchanges into which dlsync injected orderings,
 * grouped by the way they were made (framework pair and each ordering's kind, streams' kinds and
 * reason), one drawn for each of the first DLT_HTML_MAX_INJECTS groups. Returns -1 when memory
 * runs out. */
int dlt_html_injects(const dlt_log_set *set, FILE *out);

#endif
