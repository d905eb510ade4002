# src/rip/build.mk - rip rings: writer (library), `corotracer rip` (reader), tests, bench.
LIB_SRCS += src/rip/rip_ring.c
CLI_SRCS += src/rip/rip_main.c src/rip/rip_load.c src/rip/rip_syms.c

# The test program: one object, linked as a PIE and as a fixed-address
# executable, both against a small shared library, so the reader is checked on
# all three kinds of code. $$ORIGIN finds the library next to the programs.
RIP_PROG_DEPS := $(O)/obj/tests/test-rip-prog.o $(O)/tests/libtest-rip-dso.so $(LIBA)
RIP_PROG_LINK = $(CC) $(LDFLAGS_ALL) -o $@ $< -L$(O)/tests -ltest-rip-dso \
	-Wl,-rpath,'$$ORIGIN' $(LIBA) -lpthread
$(O)/tests/libtest-rip-dso.so: $(O)/obj/tests/test-rip-dso.o
	@mkdir -p $(@D)
	$(CC) -shared $(LDFLAGS_ALL) -o $@ $<
$(O)/tests/test-rip-prog-pie: $(RIP_PROG_DEPS)
	$(RIP_PROG_LINK) -pie
$(O)/tests/test-rip-prog-nopie: $(RIP_PROG_DEPS)
	$(RIP_PROG_LINK) -no-pie
PROGS += $(O)/tests/test-rip-prog-pie $(O)/tests/test-rip-prog-nopie
TESTS += $(O)/tests/test-rip-api tests/test-rip.sh tests/test-rip-bad.sh

$(O)/bench/bench-rip: $(O)/obj/bench/bench-rip.o $(LIBA)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(LIBA) -lpthread
PROGS += $(O)/bench/bench-rip

# The same program with the portable address capture (RIP_GENERIC_PC), as on
# CPUs other than x86-64 and AArch64.
$(O)/obj/tests/test-rip-prog-generic.o: tests/test-rip-prog.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -DRIP_GENERIC_PC -MMD -MP -c $< -o $@
$(O)/tests/test-rip-prog-generic: $(O)/obj/tests/test-rip-prog-generic.o $(O)/tests/libtest-rip-dso.so $(LIBA)
	$(RIP_PROG_LINK) -pie
PROGS += $(O)/tests/test-rip-prog-generic
