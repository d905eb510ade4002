# src/probe/build.mk - the probe SDK (libcorotracer), its tests and benchmark.
LIB_SRCS += src/probe/attach.c src/probe/probe.c
TESTS += $(O)/tests/test-layout $(O)/tests/test-probe $(O)/tests/test-probe-fd
PROGS += $(O)/bench/bench-probe

$(O)/bench/bench-probe: $(O)/obj/bench/bench-probe.o $(LIBA)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(LIBA) -lpthread

# test-probe also links the calls made through the exported plain names.
$(O)/tests/test-probe: $(O)/obj/tests/test-probe.o $(O)/obj/tests/test-probe-noinline.o $(LIBA)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $(filter %.o,$^) $(LIBA) -lpthread
