/* Records of user events in flight: which thread is between the ENTER of an event record and the
 * queueing of its EXIT (see recording.h). Each thread that records events takes one slot of a
 * fixed table for its life; a thread that finds the table full counts itself in `unslotted` while
 * it records, and while that count is nonzero every event is in doubt. Lock-free: the slots are
 * atomics (a wait reads them before it queues its EXIT, a host synchronize under the policy lock;
 * the recording thread writes its own slot). */
#include "recording.h"

#include <pthread.h>
#include <stdatomic.h>

#define SLOTS 64

static _Atomic uint64_t g_slot_event[SLOTS]; /* the event its thread is recording, 0: none */
static atomic_uint g_slots_used;             /* slots ever taken (high-water mark) */
static _Atomic uint64_t g_slot_free;         /* bit i: slot i was given back by its thread */
static atomic_uint g_unslotted;              /* records in flight on threads without a slot */
static pthread_key_t g_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

/* Per thread: its slot + 1 (0: none taken yet, -1: the table was full), and whether it counts
 * in g_unslotted now. */
static __thread struct {
    int slot1;
    int counted;
} t_rec __attribute__((tls_model("local-dynamic")));

/* Thread exit: the slot goes back to the table. */
static void give_back(void *arg)
{
    unsigned i = (unsigned)(uintptr_t)arg - 1;
    atomic_store_explicit(&g_slot_event[i], 0, memory_order_release);
    atomic_fetch_or_explicit(&g_slot_free, UINT64_C(1) << i, memory_order_acq_rel);
}

static void make_key(void)
{
    pthread_key_create(&g_key, give_back);
}

/* The calling thread's slot, taken at its first record; -1 when the table is full. */
static int my_slot(void)
{
    if (t_rec.slot1)
        return t_rec.slot1 > 0 ? t_rec.slot1 - 1 : -1;
    int slot = -1;
    uint64_t free = atomic_load_explicit(&g_slot_free, memory_order_acquire);
    while (free && slot < 0) {
        int i = __builtin_ctzll(free);
        if (atomic_compare_exchange_weak_explicit(&g_slot_free, &free, free & ~(UINT64_C(1) << i), memory_order_acq_rel,
                                                  memory_order_acquire))
            slot = i;
    }
    if (slot < 0) {
        unsigned n = atomic_fetch_add_explicit(&g_slots_used, 1, memory_order_acq_rel);
        slot = n < SLOTS ? (int)n : -1;
    }
    if (slot >= 0) {
        pthread_once(&g_key_once, make_key);
        pthread_setspecific(g_key, (void *)(uintptr_t)(slot + 1));
    }
    t_rec.slot1 = slot >= 0 ? slot + 1 : -1;
    return slot;
}

void dls_pol_recording_begin(uint64_t event)
{
    int slot = my_slot();
    if (slot >= 0) {
        atomic_store_explicit(&g_slot_event[slot], event, memory_order_seq_cst);
    } else if (!t_rec.counted) {
        t_rec.counted = 1;
        atomic_fetch_add_explicit(&g_unslotted, 1, memory_order_seq_cst);
    }
}

void dls_pol_recording_end(void)
{
    if (t_rec.slot1 > 0)
        atomic_store_explicit(&g_slot_event[t_rec.slot1 - 1], 0, memory_order_release);
    if (t_rec.counted) {
        t_rec.counted = 0;
        atomic_fetch_sub_explicit(&g_unslotted, 1, memory_order_release);
    }
}

int dls_pol_recording_other(uint64_t event)
{
    if (atomic_load_explicit(&g_unslotted, memory_order_seq_cst))
        return 1;
    unsigned n = atomic_load_explicit(&g_slots_used, memory_order_acquire);
    int mine = t_rec.slot1 - 1;
    for (unsigned i = 0; i < n && i < SLOTS; i++)
        if ((int)i != mine && atomic_load_explicit(&g_slot_event[i], memory_order_seq_cst) == event)
            return 1;
    return 0;
}
