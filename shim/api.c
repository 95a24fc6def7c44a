/* api.c -- the public functions of include/autograph.h that the shim exports. */
#include <autograph.h>

#define AG_EXPORT __attribute__((visibility("default")))

AG_EXPORT const char *autograph_version(void)
{
    return AUTOGRAPH_VERSION_STRING;
}
