# src/symbolize/build.mk - the symbolizer (libdw), used by the readers only:
# `corotracer report`, `corotracer export` (through the report's state) and
# `corotracer rip`. Never linked into the probe or the engine.
CLI_SRCS += src/symbolize/symbolize.c

# Its unit test is its own fixture: a PIE with debug info that symbolizes
# itself, so it links the symbolizer and libdw directly.
TESTS += $(O)/tests/test-symbolize
$(O)/tests/test-symbolize: $(O)/obj/tests/test-symbolize.o $(O)/obj/src/symbolize/symbolize.o
	$(call link,$(CC) -pie,$(PKG_LIBS))
