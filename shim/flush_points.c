/* flush_points.c -- the flush policy of every wrapped entry point.
 *
 * Derived once from the class of each entry in entry_points.def and its name, so a
 * new table line gets a policy without another list to keep in step.  Entries that
 * the engine records (record_points.def) are never flush points when it can record
 * them; when it cannot (a pageable copy, an unknown kernel layout) the engine
 * flushes with reason "unrecorded".  Calls with reason NONE pass straight through.
 * A synchronize, query or destroy of one stream, event or context ends the windows of
 * the engines that hold its work only (the AG_POLICY_SCOPE_ bits); any other flush
 * point ends every engine's.
 */
#include "flush_points.h"

#include "entry_points.h"

#include <string.h>

_Atomic unsigned short ag_call_policy[AG_EP_COUNT];

static const char *const reason_names[AG_FLUSH_REASON_COUNT] = {
    [AG_FLUSH_NONE] = "none",           [AG_FLUSH_SYNC] = "sync",
    [AG_FLUSH_QUERY] = "query",         [AG_FLUSH_SYNC_COPY] = "sync_copy",
    [AG_FLUSH_UNRECORDED] = "unrecorded", [AG_FLUSH_HOSTFN] = "host_func",
    [AG_FLUSH_STREAM_MEMOP] = "stream_memop", [AG_FLUSH_ALLOC] = "alloc",
    [AG_FLUSH_FREE] = "free",           [AG_FLUSH_MODULE] = "module",
    [AG_FLUSH_CAPTURE] = "app_capture", [AG_FLUSH_GRAPH] = "app_graph",
    [AG_FLUSH_LIFETIME] = "destroy",    [AG_FLUSH_CONTEXT] = "context",
    [AG_FLUSH_IPC] = "ipc",             [AG_FLUSH_THREAD] = "thread",
    [AG_FLUSH_EXIT] = "exit",           [AG_FLUSH_API] = "api",
};

const char *ag_flush_reason_name(enum ag_flush_reason reason)
{
    return (unsigned)reason < AG_FLUSH_REASON_COUNT ? reason_names[reason] : "?";
}

static int has(const char *name, const char *part)
{
    return strstr(name, part) != NULL;
}

/* Copies and memsets: the ones named ...Async are stream work, the rest synchronous. */
static unsigned copy_policy(const char *name)
{
    return has(name, "Async") ? AG_FLUSH_UNRECORDED : AG_FLUSH_SYNC_COPY;
}

static unsigned event_policy(const char *name)
{
    if (has(name, "Synchronize"))
        return AG_FLUSH_SYNC | AG_POLICY_SCOPE_EVENT;
    if (has(name, "Query") || has(name, "ElapsedTime"))
        return AG_FLUSH_QUERY | AG_POLICY_SCOPE_EVENT;
    if (has(name, "Destroy"))
        return AG_FLUSH_LIFETIME | AG_POLICY_EVENT_GONE | AG_POLICY_SCOPE_EVENT;
    if (has(name, "Ipc"))
        return AG_FLUSH_IPC;
    if (has(name, "Create"))
        return AG_FLUSH_NONE;
    return AG_FLUSH_UNRECORDED;          /* context/green-context event record/wait */
}

static unsigned stream_policy(const char *name)
{
    if (has(name, "Synchronize"))
        return AG_FLUSH_SYNC | AG_POLICY_SCOPE_STREAM;
    if (has(name, "Query"))
        return AG_FLUSH_QUERY | AG_POLICY_SCOPE_STREAM;
    if (has(name, "Destroy"))
        return AG_FLUSH_LIFETIME | AG_POLICY_STREAM_GONE | AG_POLICY_SCOPE_STREAM;
    if (has(name, "Create"))
        return AG_FLUSH_NONE;
    if (has(name, "Value") || has(name, "BatchMemOp"))
        return AG_FLUSH_STREAM_MEMOP;
    return AG_FLUSH_UNRECORDED;          /* attach managed memory */
}

static unsigned capture_policy(const char *name)
{
    if (has(name, "BeginCapture"))
        return AG_FLUSH_CAPTURE | AG_POLICY_CAPTURE_BEGIN;
    if (has(name, "EndCapture"))
        return AG_POLICY_CAPTURE_END;
    return AG_FLUSH_NONE;                /* capture queries, dependency updates */
}

static unsigned context_policy(const char *name)
{
    if (has(name, "Synchronize"))
        return AG_FLUSH_SYNC | AG_POLICY_SCOPE_CONTEXT;
    if (has(name, "Destroy") || has(name, "Release") || has(name, "Reset"))
        return AG_FLUSH_CONTEXT | AG_POLICY_DROP_GRAPHS | AG_POLICY_FORGET_LAYOUTS;
    return AG_FLUSH_NONE;   /* create, push/pop/set current: each op carries its context */
}

static unsigned policy_of(const char *name, int cls)
{
    switch (cls) {
    case AG_CLASS_LAUNCH:  return AG_FLUSH_UNRECORDED;
    case AG_CLASS_HOSTFN:  return AG_FLUSH_HOSTFN;
    case AG_CLASS_COPY:
    case AG_CLASS_SET:     return copy_policy(name);
    case AG_CLASS_EVENT:   return event_policy(name);
    case AG_CLASS_STREAM:  return stream_policy(name);
    case AG_CLASS_CAPTURE: return capture_policy(name);
    case AG_CLASS_CONTEXT: return context_policy(name);
    case AG_CLASS_ALLOC:   return has(name, "Ipc") ? AG_FLUSH_IPC : AG_FLUSH_ALLOC;
    case AG_CLASS_FREE:    return has(name, "Ipc") ? AG_FLUSH_IPC : AG_FLUSH_FREE;
    case AG_CLASS_MEMWORK: return AG_FLUSH_UNRECORDED;
    case AG_CLASS_GRAPH:
        return (has(name, "Launch") || has(name, "Upload")) ? AG_FLUSH_GRAPH : AG_FLUSH_NONE;
    case AG_CLASS_MODULE:            /* loads, unloads, function configuration */
        if (has(name, "Unload"))
            return AG_FLUSH_MODULE | AG_POLICY_UNLOAD | AG_POLICY_FORGET_LAYOUTS;
        return has(name, "Set") ? AG_FLUSH_MODULE | AG_POLICY_DROP_GRAPHS : AG_FLUSH_MODULE;
    default:               return AG_FLUSH_NONE;   /* the resolver */
    }
}

unsigned ag_flush_policy(int entry)
{
    return policy_of(ag_entry_name[entry], ag_entry_class[entry]);
}

/* The program's capture calls reach the engine from the library's load on, even before
 * the engine has started: a capture begun before the first recordable call must be
 * counted, or the engine would take the captured calls for its own. */
__attribute__((constructor)) static void capture_policies_at_load(void)
{
    for (int id = 0; id < AG_EP_COUNT; id++)
        if (ag_entry_class[id] == AG_CLASS_CAPTURE)
            ag_call_policy[id] = (unsigned short)ag_flush_policy(id);
}

void ag_flush_points_init(void)
{
    for (int id = 0; id < AG_EP_COUNT; id++)
        ag_call_policy[id] = (unsigned short)ag_flush_policy(id);
}
