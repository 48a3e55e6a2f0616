/* String-keyed counters for `dlsync report`: a hash table on the shim's map (common/map.h, a
 * string-keyed map of these entries, kept at most half full) whose entries carry a count, an
 * auxiliary number and the index of the first record that created them. The slots may be walked
 * directly: an entry with a NULL key is empty. */
#ifndef DLT_TALLY_H
#define DLT_TALLY_H

#include <stddef.h>

typedef struct {
    char *key;       /* owned copy; the map's key word, so first */
    long long count; /* starts at 0; the caller increments */
    long long aux;   /* free for the caller; starts at 0 */
    size_t first;    /* free for the caller (typically the first record's index); starts at 0 */
} dlt_tally_entry;

typedef struct {
    dlt_tally_entry *slots;
    size_t cap, n;
} dlt_tally;

/* Finds the entry for key, inserting a zeroed one when it is new (*is_new set to 1 then, else 0;
 * is_new may be NULL). Returns NULL only when memory runs out. Pointers stay valid until the next
 * insertion. Zero-initialize a tally before the first call. */
dlt_tally_entry *dlt_tally_add(dlt_tally *t, const char *key, int *is_new);

/* Finds the entry for key without inserting, or NULL. */
dlt_tally_entry *dlt_tally_find(const dlt_tally *t, const char *key);

/* Returns a malloc'd array of pointers to the n entries, sorted by count (largest first), then
 * by key; NULL when the tally is empty or memory runs out. Free the array (not the entries). */
dlt_tally_entry **dlt_tally_sorted(const dlt_tally *t);

/* Frees every key and the table, leaving an empty tally. */
void dlt_tally_free(dlt_tally *t);

#endif
