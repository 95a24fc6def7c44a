# plugin.mk -- the example AUTOGRAPH_PLUGIN (included by the Makefile).
#
#   make plugins   build/tests/plugin/libexample_plugin.so (tests/plugin/example_plugin.c)
#
# Its autograph_* references are left undefined: they bind to the preloaded shim.

PLUGIN_EXAMPLE := $(BUILD)/tests/plugin/libexample_plugin.so

.PHONY: plugins
plugins: $(PLUGIN_EXAMPLE)
test: plugins
SAN_TARGETS += plugins     # introspect_sim.bats runs it under sanitizers too

$(PLUGIN_EXAMPLE): tests/plugin/example_plugin.c include/autograph.h
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(CFLAGS) -shared -o $@ $<
