/* Lane drawings as inline SVG with their legend (see lanes.h). */
#include "lanes.h"

#include <stdio.h>
#include <string.h>

#include "htmlesc.h"

/* Geometry in the SVG's own units; the drawing is scaled to the width of its column. */
#define WIDTH 640.0
#define LABEL_W 172.0 /* the lane names */
#define LANE_H 62.0
#define TOP 6.0
#define MARK_R 12.0

size_t dlt_scene_lane(dlt_scene *s, const char *name, const char *kind, const char *where, int host)
{
    for (size_t i = 0; i < s->nlanes; i++)
        if (strcmp(s->lanes[i].name, name) == 0)
            return i;
    if (s->nlanes == DLT_SCENE_LANES) {
        s->lost_lanes++;
        return DLT_SCENE_LANES;
    }
    dlt_lane *l = &s->lanes[s->nlanes];
    snprintf(l->name, sizeof l->name, "%s", name);
    snprintf(l->kind, sizeof l->kind, "%s", kind ? kind : "");
    snprintf(l->where, sizeof l->where, "%s", where ? where : "");
    l->host = host;
    return s->nlanes++;
}

size_t dlt_scene_mark(dlt_scene *s, size_t lane, dlt_mark_kind kind, const char *label, const char *detail)
{
    if (lane >= s->nlanes || s->nmarks == DLT_SCENE_MARKS) {
        s->lost_marks++;
        return DLT_SCENE_MARKS;
    }
    dlt_mark *m = &s->marks[s->nmarks];
    m->lane = lane;
    m->kind = kind;
    snprintf(m->label, sizeof m->label, "%s", label);
    snprintf(m->detail, sizeof m->detail, "%s", detail);
    return s->nmarks++;
}

void dlt_scene_arrow(dlt_scene *s, size_t from, size_t to, dlt_arrow_kind kind, const char *detail)
{
    if (from >= s->nmarks || to >= s->nmarks || from == to || s->narrows == DLT_SCENE_ARROWS)
        return;
    s->arrows[s->narrows++] = (dlt_arrow){.from = from, .to = to, .kind = kind};
    snprintf(s->arrows[s->narrows - 1].detail, sizeof s->arrows[0].detail, "%s", detail);
}

/* The square root of v >= 0 (Newton's method: the command links no maths library). */
static double root(double v)
{
    double r = v > 1 ? v : 1;
    for (int i = 0; i < 40; i++)
        r = (r + v / r) / 2;
    return r;
}

static double lane_y(size_t lane)
{
    return TOP + LANE_H * (double)lane + LANE_H / 2;
}

static double col_x(const dlt_scene *s, size_t col)
{
    double x0 = LABEL_W + 12, w = WIDTH - x0 - 12;
    return x0 + w * ((double)col + 0.5) / (double)(s->nmarks ? s->nmarks : 1);
}

static const char *const g_mark_class[] = {"producer", "consumer", "exchange", "record", "wait"};
static const char *const g_mark_word[] = {"producer", "consumer", "exchange", "event recorded", "wait"};
static const char *const g_arrow_class[] = {"missing", "fix", "made"};
static const char *const g_arrow_word[] = {"missing ordering", "fix", "injected"};

static void draw_lanes(FILE *f, const dlt_scene *s)
{
    for (size_t i = 0; i < s->nlanes; i++) {
        const dlt_lane *l = &s->lanes[i];
        double y = lane_y(i);
        fprintf(f, "<g class=\"lane%s%s\"><rect x=\"0\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\"/>",
                l->host ? " host" : "", i % 2 ? " alt" : "", y - LANE_H / 2, WIDTH, LANE_H);
        fprintf(f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\"/>", LABEL_W, y, WIDTH - 4, y);
        fprintf(f, "<text class=\"lane-name\" x=\"8\" y=\"%.1f\">", y - 10);
        dlt_html_text_cut(f, l->name, 24);
        fprintf(f, "</text><text class=\"lane-what\" x=\"8\" y=\"%.1f\">", y + 5);
        dlt_html_text_cut(f, l->kind, 25);
        fprintf(f, "</text><text class=\"lane-what\" x=\"8\" y=\"%.1f\">", y + 20);
        dlt_html_text_cut(f, l->where, 25);
        fputs("</text></g>\n", f);
    }
}

/* The arrow between two marks, stopped at their edges; a missing ordering bends. */
static void draw_arrow(FILE *f, const dlt_scene *s, const dlt_arrow *a, const char *id)
{
    double x1 = col_x(s, a->from), y1 = lane_y(s->marks[a->from].lane);
    double x2 = col_x(s, a->to), y2 = lane_y(s->marks[a->to].lane);
    double dx = x2 - x1, dy = y2 - y1, len = root(dx * dx + dy * dy);
    if (len < 2 * MARK_R + 4)
        return;
    double ux = dx / len, uy = dy / len, gap = MARK_R + 3;
    x1 += ux * gap;
    y1 += uy * gap;
    x2 -= ux * (gap + 2);
    y2 -= uy * (gap + 2);
    const char *cls = g_arrow_class[a->kind];
    fprintf(f, "<path class=\"arrow %s\" marker-end=\"url(#%s-head-%s)\" d=\"M%.1f %.1f ", cls, id, cls, x1, y1);
    if (a->kind == DLT_ARROW_MISSING) /* bends away from the straight fix arrow */
        fprintf(f, "Q%.1f %.1f %.1f %.1f\"/>\n", (x1 + x2) / 2 + uy * 22, (y1 + y2) / 2 - ux * 30, x2, y2);
    else
        fprintf(f, "L%.1f %.1f\"/>\n", x2, y2);
}

static void draw_mark(FILE *f, const dlt_scene *s, size_t i)
{
    const dlt_mark *m = &s->marks[i];
    double x = col_x(s, i), y = lane_y(m->lane);
    /* a label goes above the mark when the mark before it, on the same lane, has it below */
    int above = 0;
    for (size_t k = i; k > 0 && s->marks[k - 1].lane == m->lane; k--)
        above = !above;
    fprintf(f, "<g class=\"mark %s\" tabindex=\"0\" role=\"img\" aria-label=\"%zu: ", g_mark_class[m->kind], i + 1);
    dlt_html_text(f, m->detail);
    fprintf(f, "\"><title>%zu. %s: ", i + 1, g_mark_word[m->kind]);
    dlt_html_text(f, m->detail);
    fputs("</title>", f);
    if (m->kind == DLT_MARK_EXCHANGE)
        fprintf(f, "<path d=\"M%.1f %.1f l%.1f %.1f l%.1f %.1f l%.1f %.1f z\"/>", x, y - MARK_R - 1, MARK_R + 1,
                MARK_R + 1, -MARK_R - 1, MARK_R + 1, -MARK_R - 1, -MARK_R - 1);
    else if (m->kind == DLT_MARK_RECORD || m->kind == DLT_MARK_WAIT)
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"3\"/>", x - MARK_R + 1,
                y - MARK_R + 1, 2 * MARK_R - 2, 2 * MARK_R - 2);
    else
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"/>", x, y, MARK_R);
    fprintf(f, "<text class=\"num\" x=\"%.1f\" y=\"%.1f\">%zu</text>", x, y + 4, i + 1);
    double colw = (WIDTH - LABEL_W - 24) / (double)s->nmarks;
    size_t fit = colw > 12 ? (size_t)(colw / 6.6) : 2;
    fprintf(f, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\">", x, above ? y - MARK_R - 5 : y + MARK_R + 12);
    dlt_html_text_cut(f, m->label, fit < 3 ? 3 : fit);
    fputs("</text></g>\n", f);
}

static void draw_legend(FILE *f, const dlt_scene *s, const char *id)
{
    fprintf(f, "<ol class=\"legend\" id=\"%s-legend\">\n", id);
    for (size_t i = 0; i < s->nmarks; i++) {
        fprintf(f, "<li id=\"%s-m%zu\"><span class=\"key %s\">%s</span> ", id, i + 1, g_mark_class[s->marks[i].kind],
                g_mark_word[s->marks[i].kind]);
        dlt_html_text(f, s->marks[i].detail);
        fputs("</li>\n", f);
    }
    fputs("</ol>\n", f);
    if (s->narrows) {
        fputs("<ul class=\"arrows\">\n", f);
        for (size_t i = 0; i < s->narrows; i++) {
            const dlt_arrow *a = &s->arrows[i];
            fprintf(f, "<li><span class=\"key %s\">%s</span> %zu &#8594; %zu: ", g_arrow_class[a->kind],
                    g_arrow_word[a->kind], a->from + 1, a->to + 1);
            dlt_html_text(f, a->detail);
            fputs("</li>\n", f);
        }
        fputs("</ul>\n", f);
    }
    if (s->lost_lanes || s->lost_marks)
        fprintf(f, "<p class=\"note\">Not drawn: %zu more stream%s, %zu more mark%s.</p>\n", s->lost_lanes,
                s->lost_lanes == 1 ? "" : "s", s->lost_marks, s->lost_marks == 1 ? "" : "s");
}

void dlt_scene_draw(FILE *f, const dlt_scene *s, const char *id, const char *title)
{
    double height = TOP * 2 + LANE_H * (double)s->nlanes;
    fprintf(f, "<figure class=\"scene\" id=\"%s\">\n", id);
    fprintf(f,
            "<svg viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
            "role=\"group\" aria-labelledby=\"%s-title\" aria-describedby=\"%s-legend\"><title id=\"%s-title\">",
            WIDTH, height, WIDTH, height, id, id, id);
    dlt_html_text(f, title);
    fputs("</title>\n<defs>", f);
    for (size_t k = 0; k < 3; k++)
        fprintf(f,
                "<marker id=\"%s-head-%s\" class=\"head %s\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
                "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0 0 L10 5 L0 10 "
                "z\"/></marker>",
                id, g_arrow_class[k], g_arrow_class[k]);
    fputs("</defs>\n", f);
    draw_lanes(f, s);
    for (size_t i = 0; i < s->narrows; i++)
        draw_arrow(f, s, &s->arrows[i], id);
    for (size_t i = 0; i < s->nmarks; i++)
        draw_mark(f, s, i);
    fputs("</svg>\n<figcaption>\n", f);
    draw_legend(f, s, id);
    fputs("</figcaption>\n</figure>\n", f);
}
