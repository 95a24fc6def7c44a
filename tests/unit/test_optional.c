/* test_optional.c -- include/autograph.h with AUTOGRAPH_OPTIONAL in a program that runs
 * without the shim: every function answers AUTOGRAPH_ERR_NOT_LOADED (autograph_version
 * NULL), twice (the failed lookup is remembered), and autograph_strerror works.  The
 * loaded case is tested on the simulator (tests/bats/introspect_sim.bats).
 */
#define AUTOGRAPH_OPTIONAL
#include <autograph.h>

#include "check.h"

#include <string.h>

int main(void)
{
    autograph_graph_info info;
    autograph_hook_handle h = 0;
    char buf[8];
    void *p = NULL;
    for (int round = 0; round < 2; round++) {
        CHECK(autograph_version() == NULL);
        CHECK(autograph_enable() == AUTOGRAPH_ERR_NOT_LOADED);
        CHECK(autograph_disable() == AUTOGRAPH_ERR_NOT_LOADED);
        CHECK(autograph_flush() == AUTOGRAPH_ERR_NOT_LOADED);
        CHECK(autograph_reset() == AUTOGRAPH_ERR_NOT_LOADED);
        CHECK(autograph_list_graphs(&info, 1) == AUTOGRAPH_ERR_NOT_LOADED);
        CHECK(autograph_graph_exec(1, 0, 0, &p) == AUTOGRAPH_ERR_NOT_LOADED);
        CHECK(autograph_instantiate(1) == AUTOGRAPH_ERR_NOT_LOADED);
        CHECK(autograph_graph_data(1, 0, 0, buf, sizeof buf) == AUTOGRAPH_ERR_NOT_LOADED);
        CHECK(autograph_debug_dump(1, 0, "/dev/null", 0) == AUTOGRAPH_ERR_NOT_LOADED);
        CHECK(autograph_register_capture_end_hook(NULL, NULL, &h) == AUTOGRAPH_ERR_NOT_LOADED);
        CHECK(autograph_register_post_instantiate_hook(NULL, NULL, &h) ==
              AUTOGRAPH_ERR_NOT_LOADED);
        CHECK(autograph_remove_hook(h) == AUTOGRAPH_ERR_NOT_LOADED);
    }
    CHECK(!strcmp(autograph_strerror(AUTOGRAPH_ERR_NOT_LOADED), "libautograph is not loaded"));
    CHECK(!strcmp(autograph_strerror(AUTOGRAPH_OK), "success"));
    CHECK(!strcmp(autograph_strerror(-100), "unknown error"));
    return check_finish("test_optional");
}
