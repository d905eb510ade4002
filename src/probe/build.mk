# src/probe/build.mk - the probe SDK (libcorotracer), its tests and benchmark.
LIB_SRCS += src/probe/attach.c src/probe/probe.c
TESTS += $(O)/tests/test-layout $(O)/tests/test-probe $(O)/tests/test-probe-fd
PROGS += $(O)/bench/bench-probe

$(O)/bench/bench-probe: $(O)/obj/bench/bench-probe.o $(LIBA)
	$(call link)

# Both probe tests link the shared fixture (tests/lib/probe-fixture.c); test-probe
# also links the calls made through the exported plain names.
$(O)/tests/test-probe: $(O)/obj/tests/lib/probe-noinline.o
$(O)/tests/test-probe $(O)/tests/test-probe-fd: $(O)/tests/%: $(O)/obj/tests/%.o $(O)/obj/tests/lib/probe-fixture.o $(LIBA)
	$(call link)
