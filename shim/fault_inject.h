/* fault_inject.h -- AUTOGRAPH_INJECT_FAULTS: make the shim's own driver calls fail.
 *
 * For tests on a real GPU (the simulator has SIM_FAIL for the same purpose): the
 * backend asks ag_fault_due() before each use of a driver function it calls on its
 * own behalf (building, instantiating, patching, launching graphs, creating its
 * streams and events).  The program's own calls are never failed.
 */
#ifndef AG_FAULT_INJECT_H
#define AG_FAULT_INJECT_H

extern int ag_faults_armed;     /* nonzero when AUTOGRAPH_INJECT_FAULTS names anything */

/* Nonzero (the error code to return instead of calling) when this use of the
 * driver function `name` is one the switch asks to fail. */
int ag_fault_due(const char *name);

static inline int ag_fault_check(const char *name)
{
    return __builtin_expect(ag_faults_armed, 0) ? ag_fault_due(name) : 0;
}

/* Parses the switch (called once at engine start). */
void ag_faults_setup(const char *spec);

#endif
