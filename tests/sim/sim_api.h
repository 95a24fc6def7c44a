/* sim_api.h -- prototypes of the shared implementations that sim_exports.def
 * names, each declared with the exact parameter list of an export it serves
 * (build/sim/gen/sim_signatures.h), so the compiler checks every
 * implementation against cuda.h in the file that defines it.
 */
#ifndef SIM_API_H
#define SIM_API_H

#include "sim_signatures.h"

#define SIM_FN(sym, impl) CUresult impl SIM_PARAMS_##sym;
#define SIM_FN_PT(sym, impl) SIM_FN(sym, impl)
#include "sim_exports.def"
#undef SIM_FN
#undef SIM_FN_PT

#endif /* SIM_API_H */
