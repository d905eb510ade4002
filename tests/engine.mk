# tests/engine.mk - the engine's acceptance tests, their tools (tests/lib) and
# bench-harvest. The C programs here link tests/lib/ctlib.c besides the library.
CT_ENGINE_TOOLS := $(O)/tests/lib/ctjl $(O)/tests/lib/ct-target
CT_ENGINE_CTESTS := $(O)/tests/test-engine-stress $(O)/tests/test-engine-sleepwake

$(CT_ENGINE_TOOLS) $(CT_ENGINE_CTESTS): $(O)/tests/%: $(O)/obj/tests/%.o $(O)/obj/tests/lib/ctlib.o $(LIBA)
	$(call link)

# A v1-only SDK of its own (no library, no corotracer header).
$(O)/tests/lib/v1-writer: $(O)/obj/tests/lib/v1-writer.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $<

$(O)/bench/bench-harvest: $(O)/obj/bench/bench-harvest.o $(O)/obj/tests/lib/ctlib.o $(LIBA)
	$(call link)

PROGS += $(CT_ENGINE_TOOLS) $(O)/tests/lib/v1-writer $(O)/bench/bench-harvest
TESTS += $(CT_ENGINE_CTESTS) tests/test-engine-roundtrip.sh tests/test-engine-faults.sh \
         tests/test-engine-security.sh tests/test-engine-signals.sh tests/test-engine-modules.sh \
         tests/test-engine-v1rate.sh tests/test-engine-lossless.sh
# The protocol model (spin): once, in the plain build.
TESTS_NOSAN += tests/test-model-spin.sh
