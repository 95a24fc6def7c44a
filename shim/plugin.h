/* plugin.h -- AUTOGRAPH_PLUGIN: a library loaded when the engine starts. */
#ifndef AG_PLUGIN_H
#define AG_PLUGIN_H

/* Loads `path` (NULL or empty: nothing) and calls its autograph_plugin_init(), once
 * per process; a failure is said in one line on stderr and the program goes on. */
void ag_plugin_start(const char *path);

#endif
