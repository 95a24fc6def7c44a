/* autograph.h -- public C interface of libautograph.
 *
 * libautograph is used as LD_PRELOAD=libautograph.so ./app; nothing needs to be
 * linked.  This header is for programs and plugins that want to talk to the shim
 * when it is loaded.  Every function is declared weak-friendly: a program can
 * look them up with dlsym(RTLD_DEFAULT, "autograph_version") and carry on when
 * the shim is absent.
 */
#ifndef AUTOGRAPH_H
#define AUTOGRAPH_H

#ifdef __cplusplus
extern "C" {
#endif

#define AUTOGRAPH_VERSION_MAJOR 0
#define AUTOGRAPH_VERSION_MINOR 1
#define AUTOGRAPH_VERSION_PATCH 0
#define AUTOGRAPH_VERSION_STRING "0.1.0"

/* The version of the loaded shim, e.g. "0.1.0". */
const char *autograph_version(void);

#ifdef __cplusplus
}
#endif
#endif /* AUTOGRAPH_H */
