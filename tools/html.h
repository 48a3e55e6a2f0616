/* The HTML report `dlsync report --html OUT.html` writes: one self-contained page (its style
 * inline; no script, no font, no image, nothing fetched: a Content-Security-Policy of
 * `default-src 'none'; style-src 'unsafe-inline'` says so to the browser) that opens from a file
 * on an air-gapped machine. It shows the run at a glance as the text summary does (what was not
 * checked first, processes, exchanges per framework pair and device, races by kind, injected
 * waits, suppressed races, fallbacks, warnings, capped logs), then each distinct race drawn on
 * lanes (scenes.h, lanes.h) beside both stacks, the Python frames first (stacks.h), with its
 * `why:` and `fix:` lines, then the orderings a fix run injected, drawn the same way (one
 * exchange for each distinct way they were made). The layout fits a 1280-pixel-wide window
 * without scrolling sideways; contents, marks and links are reached with the keyboard; every
 * text is selectable, and every value from a log is escaped (htmlesc.h). */
#ifndef DLT_HTML_H
#define DLT_HTML_H

#include <stdio.h>

#include "logread.h"
#include "symbolize.h"

/* Writes the page of set to out, native frames with the source lines sym found (NULL: as
 * logged). Returns 0, or -1 when memory runs out or writing fails. */
int dlt_html_write(const dlt_log_set *set, const dlt_symbolizer *sym, FILE *out);

#endif
