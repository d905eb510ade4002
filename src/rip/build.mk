# src/rip/build.mk - rip rings: `corotracer rip` (the reader), its tests and bench; the
# writer is header-only (include/rip.h, include/rip-writer.h).
RIP_READER_SRCS := src/rip/rip_load.c src/rip/rip_syms.c
CLI_SRCS += src/rip/rip_main.c $(RIP_READER_SRCS)

# The test program (tests/lib/rip-prog.c): one object, linked as a PIE and as
# a fixed-address executable, both against a small shared library, so the
# reader is checked on all three kinds of code; and once more with the portable
# address capture (RIP_GENERIC_PC), as on CPUs other than x86-64 and AArch64.
# $$ORIGIN finds the library next to the programs.
RIP_LIB := $(O)/tests/lib
RIP_PROG_LIBS = -L$(RIP_LIB) -lrip-dso -Wl,-rpath,'$$ORIGIN'
$(RIP_LIB)/librip-dso.so: $(O)/obj/tests/lib/rip-dso.o
	$(call link,$(CC) -shared)
$(O)/obj/tests/lib/rip-prog-generic.o: tests/lib/rip-prog.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -DRIP_GENERIC_PC -MMD -MP -c $< -o $@
$(RIP_LIB)/rip-prog-pie $(RIP_LIB)/rip-prog-generic: RIP_PIE := -pie
$(RIP_LIB)/rip-prog-nopie: RIP_PIE := -no-pie
$(RIP_LIB)/rip-prog-pie $(RIP_LIB)/rip-prog-nopie: $(O)/obj/tests/lib/rip-prog.o
$(RIP_LIB)/rip-prog-generic: $(O)/obj/tests/lib/rip-prog-generic.o
$(RIP_LIB)/rip-prog-%: $(RIP_LIB)/librip-dso.so $(LIBA)
	$(call link,$(CC) $(RIP_PIE),$(RIP_PROG_LIBS))
PROGS += $(RIP_LIB)/rip-prog-pie $(RIP_LIB)/rip-prog-nopie $(RIP_LIB)/rip-prog-generic
TESTS += $(O)/tests/test-rip-api tests/test-rip.sh tests/test-rip-bad.sh tests/test-rip-librip.sh

$(O)/bench/bench-rip: $(O)/obj/bench/bench-rip.o $(LIBA)
	$(call link)
PROGS += $(O)/bench/bench-rip

# The ring reader, fuzzed (tests/fuzz/fuzz-rip.c).
FUZZ_SRCS_rip := src/rip/rip_load.c
# Its module map parser (tests/fuzz/fuzz-ripmaps.c).
FUZZ_SRCS_ripmaps := src/rip/rip_syms.c src/symbolize/symbolize.c src/symbolize/demangle.c
