/* svg_dot.h -- the SVG output: Graphviz dot when asked for or found, else the
 * built-in drawing; one line on stderr says which made it. */
#ifndef AGA_SVG_DOT_H
#define AGA_SVG_DOT_H

#include <stddef.h>

#include "analysis.h"

/* engine: "auto", "dot" or "builtin"; 0, or -1 with a message in err. */
int svg_write(const char *path, const char *engine, const struct analysis *a, char *err,
              size_t errsize);

#endif
