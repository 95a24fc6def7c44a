/* config.h -- the AUTOGRAPH_* environment switches, parsed once.
 *
 * README.md holds the table of switches; config.c is the only place that reads
 * them.  A malformed value gives one line on stderr and the safe default.
 */
#ifndef AG_CONFIG_H
#define AG_CONFIG_H

#include "log.h"

enum ag_mode { AG_MODE_OFF, AG_MODE_ON };

struct ag_config {
    enum ag_mode mode;              /* AUTOGRAPH */
    int summary_stderr;             /* AUTOGRAPH_SUMMARY */
    const char *summary_file;       /* AUTOGRAPH_SUMMARY_FILE (NULL: none) */
    enum ag_log_level log_level;    /* AUTOGRAPH_LOG */
    int explain;                    /* AUTOGRAPH_EXPLAIN: why windows were not graphed */
    int warmup;                     /* AUTOGRAPH_WARMUP: eager repeats before graphing */
    int min_ops;                    /* AUTOGRAPH_MIN_OPS: shortest window worth a graph */
    int chunk_first, chunk_max;     /* AUTOGRAPH_CHUNK, AUTOGRAPH_CHUNK_MAX: replay chunks */
    int max_variants;               /* AUTOGRAPH_VARIANTS: exec graphs per chunk */
    int period_min;                 /* AUTOGRAPH_PERIOD_MIN: shortest period template */
    int light_after;                /* AUTOGRAPH_LIGHT_AFTER: differing windows before light recording */
};

/* The parsed configuration; parses the environment on first use. */
const struct ag_config *ag_config(void);

/* Parses from a getenv-like function (unit tests); messages go to stderr. */
void ag_config_parse(struct ag_config *out, const char *(*get)(const char *name),
                     char **environment);

#endif
