/* export.h -- AG_EXPORT: the one mark of a symbol the shim exports.  The library is
 * built with -fvisibility=hidden, so everything else stays inside it (build.bats checks
 * the list: the wrapped cu* entry points, the runtime's launch calls, dlsym and
 * autograph_*).
 */
#ifndef AG_EXPORT_H
#define AG_EXPORT_H

#define AG_EXPORT __attribute__((visibility("default")))

#endif
