# src/probe/build.mk - the probe SDK (libcorotracer), its tests and benchmark.
LIB_SRCS += src/probe/attach.c src/probe/probe.c src/probe/ring.c src/probe/wait.c src/probe/site.c
TESTS += $(O)/tests/test-layout $(O)/tests/test-probe $(O)/tests/test-probe-fd $(O)/tests/test-probe-v2
TESTS += $(O)/tests/test-pack-plain
# Packs in overwrite mode (--flight): the probe's take-back of whole packs.
TESTS += $(O)/tests/test-pack-flight
PROGS += $(O)/bench/bench-probe

$(O)/bench/bench-probe: $(O)/obj/bench/bench-probe.o $(O)/obj/tests/lib/v2-file.o $(LIBA)
	$(call link)
# Its --compare mode lays out v2 files (its own rule: examples/demo/build.mk).
$(O)/bench/bench-demo-switch: $(O)/obj/tests/lib/v2-file.o

# The probe tests link the shared fixture (tests/lib/probe-fixture.c); test-probe
# also links the calls made through the exported plain names, test-probe-v2 the
# v2 file layout (tests/lib/v2-file.c).
$(O)/tests/test-probe: $(O)/obj/tests/lib/probe-noinline.o
$(O)/tests/test-probe-v2 $(O)/tests/test-pack-flight: $(O)/obj/tests/lib/v2-file.o
$(O)/tests/test-probe $(O)/tests/test-probe-fd $(O)/tests/test-probe-v2 $(O)/tests/test-pack-flight: $(O)/tests/%: $(O)/obj/tests/%.o $(O)/obj/tests/lib/probe-fixture.o $(LIBA)
	$(call link)
# The probe's inline yield entry against the format's encoder: header-only.
$(O)/tests/test-pack-plain: $(O)/obj/tests/test-pack-plain.o
	$(call link)
