/* demangle.h -- Itanium C++ symbol names made readable, as profilers print them. */
#ifndef AGA_DEMANGLE_H
#define AGA_DEMANGLE_H

#include <stddef.h>

/* Each mangled name of names[0..n) ("_Z...") demangled into out[i]: its first max_len
 * bytes, NUL-terminated, newly allocated.  out[i] is NULL for a name that is not
 * mangled, not understood, or given up on (its demangling ran too long: a few bytes
 * can ask for gigabytes of output; or no process could be started for it).  Returns
 * how many were given up on, or -1 out of memory. */
long demangle_all(const char *const *names, size_t n, size_t max_len, char **out);

#endif
