/* Destroyed streams whose pending work later work superseded. A program that makes a stream for
 * each use and never synchronizes the host with it (it orders later work after the stream's with
 * events) never lets the host see that stream's work complete, so the stream table, hb's clocks
 * and every walk over the streams would grow with each stream it ever made. Such a stream is
 * forgotten as if complete once no question can tell the difference: no exchange state names it,
 * and every pending operation in its history is superseded, for each word or range it touches, by
 * an operation of another stream that hb orders after it, touches the same bytes for every
 * tensor it could touch and writes them when it may write them. Producer attribution
 * (attribute.h) then finds the later operation for any tensor the old one touched and drops the
 * old one behind it, exactly as it would have with the stream kept. */
#ifndef DLS_POL_SUPERSEDED_H
#define DLS_POL_SUPERSEDED_H

#include "types.h"

/* Forgets the destroyed streams whose pending work is superseded (see above), looking once the
 * destroyed streams still in the table have doubled since the last look (16 at least), so the
 * look costs a bounded amount per stream destroyed. */
void dls_pol_forget_superseded(void) DLS_REQUIRES(dls_pol_g.lock);

#endif
