/* The lane drawings of the HTML report: one lane per stream involved and one for the host
 * threads, the operations and exchange points as numbered marks on their lanes in enqueue order
 * (one column each, left to right), and arrows between marks: an ordering that is missing
 * (dashed), an ordering that would fix it or that dlsync injected (solid). A scene is drawn as
 * inline SVG (scaled to the page's width, so it never scrolls sideways) followed by its legend,
 * an ordered list that says each mark and arrow in words: the drawing's text equivalent, which
 * screen readers and keyboard users read, and whose text can be selected and copied. Each mark
 * is focusable (Tab) and names itself. Every text from a log is escaped (htmlesc.h). */
#ifndef DLT_LANES_H
#define DLT_LANES_H

#include <stddef.h>
#include <stdio.h>

#define DLT_SCENE_LANES 8  /* the host lane and up to 7 streams */
#define DLT_SCENE_MARKS 24 /* columns */
#define DLT_SCENE_ARROWS 12

typedef enum {
    DLT_MARK_PRODUCER, /* the producer side's access */
    DLT_MARK_CONSUMER, /* the consumer side's access */
    DLT_MARK_EXCHANGE, /* export, import, release (host lane) */
    DLT_MARK_RECORD,   /* an event recorded (fix, or injected) */
    DLT_MARK_WAIT,     /* a wait: a stream's event wait, or the host's */
} dlt_mark_kind;

typedef enum {
    DLT_ARROW_MISSING, /* nothing orders the second mark after the first */
    DLT_ARROW_FIX,     /* the ordering that would fix it */
    DLT_ARROW_MADE,    /* an ordering dlsync injected */
} dlt_arrow_kind;

typedef struct {
    char name[64];  /* "stream 2", "host threads" */
    char kind[64];  /* "non-blocking", "threads 22672" */
    char where[96]; /* "0x55d5322436f0, device 0" */
    int host;
} dlt_lane;

typedef struct {
    size_t lane;
    dlt_mark_kind kind;
    char label[48];    /* drawn under the mark (cut to fit) */
    char detail[1024]; /* the legend's words */
} dlt_mark;

typedef struct {
    size_t from, to; /* marks */
    dlt_arrow_kind kind;
    char detail[1024]; /* the legend's words */
} dlt_arrow;

typedef struct {
    dlt_lane lanes[DLT_SCENE_LANES];
    size_t nlanes;
    dlt_mark marks[DLT_SCENE_MARKS];
    size_t nmarks;
    dlt_arrow arrows[DLT_SCENE_ARROWS];
    size_t narrows;
    size_t lost_lanes, lost_marks; /* what did not fit, said under the drawing */
} dlt_scene;

/* Adds a lane (copying the texts: its name and two lines that describe it; the host lane with
 * host 1) and returns its index, or the index of the lane with the same name; DLT_SCENE_LANES
 * when there is no room (counted in lost_lanes). */
size_t dlt_scene_lane(dlt_scene *s, const char *name, const char *kind, const char *where, int host);

/* Appends a mark on lane in the next column and returns its index; DLT_SCENE_MARKS when the
 * lane is DLT_SCENE_LANES or there is no room (counted in lost_marks). */
size_t dlt_scene_mark(dlt_scene *s, size_t lane, dlt_mark_kind kind, const char *label, const char *detail);

/* Adds an arrow between two marks (nothing when either is not a mark). */
void dlt_scene_arrow(dlt_scene *s, size_t from, size_t to, dlt_arrow_kind kind, const char *detail);

/* Writes the scene: a <figure> with the SVG drawing (its accessible name: title) and the legend,
 * whose element ids begin with id (letters, digits and '-' only). */
void dlt_scene_draw(FILE *f, const dlt_scene *s, const char *id, const char *title);

#endif
