/* graph.h -- exec graph topology (from get_graph_data JSON files, or built by the
 * analyzer for an eager window: eager_group.c) and the queries the dependency analysis
 * needs: node lookup by id, topological order, the "timed" view (kernel, memcpy and
 * memset nodes, which leave records in a trace, with paths through the other nodes
 * collapsed) and reachability. */
#ifndef AGA_GRAPH_H
#define AGA_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "strtab.h"

#define GRAPH_MAX_NODES (1u << 22)
#define GRAPH_MAX_EDGES (1u << 24)
#define GRAPH_MAX_TIMED_PREDS (1u << 25)  /* collapsed lists, all nodes together */

struct gnode {
    union {
        uint64_t tools_id;
        int64_t stream;     /* positional graphs: the record's stream */
    };
    uint32_t node_id;
    uint32_t name;          /* kernel name (strtab id, 0: none; positional graphs: the
                               trace's strtab) */
    uint32_t type;          /* node_type (strtab id) */
    uint8_t timed, has_id;
};

struct pair_memo {          /* (a, b) -> reachable, open addressing */
    uint64_t *keys;         /* (a + 1) << 32 | b, 0 = free */
    uint8_t *vals;
    size_t n, cap;
};

struct graph {
    char *file;
    size_t seq;                     /* the order it was read in */
    uint64_t exec_id;
    int has_exec_id;
    int positional;         /* an eager window's graph: node v is the window's v-th record */
    uint32_t n, m;
    struct gnode *nodes;
    uint32_t *from, *to;            /* the edges (NULL once finished when they were sorted
                                       by (to, from): pred lists them in that order) */
    uint32_t *pred_off, *pred;      /* direct predecessors (CSR) */
    uint32_t *topo, *topo_pos, n_topo;
    uint32_t *tp_off, *tp;          /* timed predecessors of every node (collapsed, CSR) */
    int tp_shared;                  /* they are pred_off and pred (all nodes timed) */
    uint32_t *by_id;                /* nodes with an id, sorted by node_id (NULL: none) */
    uint32_t n_by_id, n_timed;
    struct pair_memo memo;
    uint32_t *stamp, *stack, gen;   /* the searches' (made when needed) */
};

/* The edges in their order, whether kept as such or only as predecessor lists. */
struct edge_iter {
    uint32_t e, v;
};

struct graphset {
    struct strtab strs;
    struct graph *g;
    size_t n, cap;
    size_t dups;            /* files that repeated an exec id (dropped) */
};

int graphset_init(struct graphset *s);
void graphset_free(struct graphset *s);
/* Sort by exec id (after every file was read); duplicates: the first file's wins,
 * *dups counts the others. */
void graphset_index(struct graphset *s, size_t *dups);
struct graph *graphset_find(const struct graphset *s, uint64_t exec_id);

enum graph_error { GRAPH_OK, GRAPH_NOMEM, GRAPH_CYCLE, GRAPH_DUP_ID, GRAPH_TOO_LARGE };
/* After the nodes and edges were filled in: CSR, order, timed view, id index.  On a
 * cycle or a node id used twice, *bad is a node concerned. */
enum graph_error graph_finish(struct graph *g, uint32_t *bad);
void graph_free(struct graph *g);
/* The node named by a record's "graph node id" (64-bit tools id or 32-bit node id:
 * the low 32 bits are compared); -1 when none. */
long graph_find_node(const struct graph *g, uint64_t node_id);
/* 1 when a path a -> b exists (a != b), 0 when not, -1 out of memory. */
int graph_reaches(struct graph *g, uint32_t a, uint32_t b);
/* The searches' memory (and memo) given back; the next query makes it again. */
void graph_release_search(struct graph *g);
/* The next edge (it starts zeroed): 1, or 0 after the last. */
int graph_next_edge(const struct graph *g, struct edge_iter *it, uint32_t *from, uint32_t *to);

#endif
