/* entry_points.h -- ids, names and classes of the wrapped driver entry points.
 *
 * Built from the one table, entry_points.def.  Every other part of the shim names an
 * entry point by its AG_EP_<symbol> id; the name and class arrays live in
 * entry_points.c.  This header carries no CUDA types: the engine may include it.
 */
#ifndef AG_ENTRY_POINTS_H
#define AG_ENTRY_POINTS_H

enum ag_entry_class {
    AG_CLASS_LAUNCH, AG_CLASS_HOSTFN, AG_CLASS_COPY, AG_CLASS_SET, AG_CLASS_EVENT,
    AG_CLASS_STREAM, AG_CLASS_CAPTURE, AG_CLASS_CONTEXT, AG_CLASS_ALLOC, AG_CLASS_FREE,
    AG_CLASS_MEMWORK, AG_CLASS_GRAPH, AG_CLASS_MODULE, AG_CLASS_RESOLVE,
    AG_CLASS_COUNT
};

enum ag_entry_id {
#define AG_ENTRY(sym, cls) AG_EP_##sym,
#include "entry_points.def"
#undef AG_ENTRY
    AG_EP_COUNT
};

extern const char *const ag_entry_name[AG_EP_COUNT];
extern const unsigned char ag_entry_class[AG_EP_COUNT];
extern const char *const ag_class_name[AG_CLASS_COUNT];

/* The id of an exact exported symbol name, or -1. */
int ag_entry_lookup(const char *symbol);

/* True when `base` names a wrapped family: the symbol itself or one of its ABI
 * variants (base_v2, base_ptsz, base_v2_ptds, ...).  Used to spot resolver answers
 * that the shim could not map. */
int ag_entry_family_known(const char *base);

#endif
