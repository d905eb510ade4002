# src/symbolize/build.mk - the symbolizer (libdw), used by the readers only:
# `corotracer report`, `corotracer export` (through the report's state) and
# `corotracer rip`. Never linked into the probe or the engine.
CLI_SRCS += src/symbolize/symbolize.c src/symbolize/demangle.c

# Its unit test is its own fixture: a PIE with debug info that symbolizes
# itself, so it links the symbolizer and libdw directly.
TESTS += $(O)/tests/test-symbolize
$(O)/tests/test-symbolize: $(O)/obj/tests/test-symbolize.o $(O)/obj/src/symbolize/symbolize.o \
                          $(O)/obj/src/symbolize/demangle.o
	$(call link,$(CC) -pie,$(PKG_LIBS))

# A program traced, then rebuilt (tests/test-report-rebuilt.sh): the report
# must warn and leave its sites unsymbolized, not name the new build's lines.
$(O)/obj/tests/lib/rebuilt-prog-b.o: tests/lib/rebuilt-prog.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -DREBUILT -MMD -MP -c $< -o $@
$(O)/tests/lib/rebuilt-prog-a $(O)/tests/lib/rebuilt-prog-b: LDFLAGS += -Wl,--build-id
$(O)/tests/lib/rebuilt-prog-a: $(O)/obj/tests/lib/rebuilt-prog.o $(LIBA)
	$(call link,$(CC) -pie)
$(O)/tests/lib/rebuilt-prog-b: $(O)/obj/tests/lib/rebuilt-prog-b.o $(LIBA)
	$(call link,$(CC) -pie)
PROGS += $(O)/tests/lib/rebuilt-prog-a $(O)/tests/lib/rebuilt-prog-b
TESTS += tests/test-report-rebuilt.sh
