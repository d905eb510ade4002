# src/engine/build.mk - `corotracer run`'s engine (libc only: src/run composes
# it with the analysis and the live view for --dump-on and --serve), its tests,
# their tools (tests/lib) and benchmarks.
CLI_SRCS += src/engine/rundir.c src/engine/spawn.c \
            src/engine/guard.c src/engine/harvest.c src/engine/modules.c \
            src/engine/status.c src/engine/sched.c src/engine/clock.c src/engine/rings.c src/engine/rings_format.c \
            src/engine/rings_pack.c src/engine/rings_open.c \
            src/engine/records.c src/engine/sink.c src/engine/sink_cut.c \
            $(FORMAT_WRITE_SRCS) src/engine/flight.c src/engine/flight_ring.c src/engine/flight_snap.c src/engine/sites.c

# The engine's trace writer (records as JSONL lines or binary entries, the
# flight window), as what links it without the engine does: its benchmark,
# ctjl, the tests of the binary trace and of the read side.
CT_WRITER_OBJS := $(patsubst %.c,$(O)/obj/%.o,$(FORMAT_WRITE_SRCS) \
                  src/engine/sink.c src/engine/sink_cut.c src/engine/records.c src/engine/modules.c \
                  src/engine/flight.c src/engine/flight_ring.c src/engine/flight_snap.c src/engine/sched.c)

# The trace writer's formatting benchmark (links the writer alone).
$(O)/bench/bench-writer: $(O)/obj/bench/bench-writer.o $(CT_WRITER_OBJS) \
                         $(FORMAT_READ_SRCS:%.c=$(O)/obj/%.o)
	$(call link)
PROGS += $(O)/bench/bench-writer

# The engine's reading of shared memory, for tests/fuzz/fuzz-shm.c.
FUZZ_SRCS_shm := src/engine/harvest.c src/engine/sched.c src/engine/modules.c src/engine/rings.c src/engine/rings_format.c \
                 src/engine/rings_pack.c src/engine/rings_open.c src/engine/sites.c \
                 src/engine/records.c src/engine/sink.c src/engine/sink_cut.c src/engine/clock.c \
                 src/engine/flight.c src/engine/flight_ring.c src/engine/flight_snap.c src/analysis/trace_read.c \
                 $(FORMAT_WRITE_SRCS) $(FORMAT_READ_SRCS)
# The writer opens the trace through src/common/outfile.c; the flight window
# pins lines in a src/common/buf.c.
FUZZ_SRCS_shm += src/common/outfile.c src/common/buf.c

# The engine's acceptance tests and tools; the C programs link tests/lib/ctlib.c
# besides the library.
CT_ENGINE_TOOLS := $(O)/tests/lib/ctjl $(O)/tests/lib/ct-target $(O)/tests/lib/sdk-writer \
                   $(O)/tests/lib/scribbler $(O)/tests/lib/flight-crash
CT_ENGINE_CTESTS := $(O)/tests/test-engine-stress $(O)/tests/test-engine-sleepwake

$(CT_ENGINE_TOOLS) $(CT_ENGINE_CTESTS): $(O)/tests/%: $(O)/obj/tests/%.o $(O)/obj/tests/lib/ctlib.o $(LIBA)
	$(call link)

# A v1-only SDK of its own (no library, no corotracer header).
$(O)/tests/lib/v1-writer: $(O)/obj/tests/lib/v1-writer.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $<

$(O)/bench/bench-harvest: $(O)/obj/bench/bench-harvest.o $(O)/obj/tests/lib/ctlib.o $(LIBA)
	$(call link)

# ctjl reads binary traces too: the converter and what it links (ctlib.c has
# its own ct_now_ns, modules.c's).
$(O)/tests/lib/ctjl: $(O)/obj/src/export/export_ctrace.o $(O)/obj/src/analysis/trace_read.o \
                     $(FORMAT_READ_SRCS:%.c=$(O)/obj/%.o) \
                     $(filter-out %/modules.o,$(CT_WRITER_OBJS))

PROGS += $(CT_ENGINE_TOOLS) $(O)/tests/lib/v1-writer $(O)/bench/bench-harvest
TESTS += $(CT_ENGINE_CTESTS) tests/test-engine-roundtrip.sh tests/test-engine-faults.sh \
         tests/test-engine-security.sh tests/test-engine-signals.sh tests/test-engine-modules.sh \
         tests/test-engine-v1rate.sh tests/test-engine-lossless.sh \
         tests/test-engine-v2.sh tests/test-engine-stations.sh tests/test-engine-hostile.sh tests/test-engine-sched.sh \
         tests/test-flight.sh tests/test-flight-live.sh tests/test-flight-dumps.sh tests/test-flight-crash.sh \
         tests/test-flight-packts.sh tests/test-fsnap-packs.sh \
         tests/test-engine-alloc.sh
# The protocol model (spin): once, in the plain build.
TESTS_NOSAN += tests/test-model-spin.sh
# The flight recorder under 10^8 events (~30 s): its memory bound.
TESTS_NOSAN += tests/test-flight-memory.sh
# Live findings as triggers: the demo server (examples/demo) under redis-benchmark.
TESTS_NOSAN += tests/test-flight-findings.sh

# A v2 writer of its own, from docs/PROTOCOL.md alone (no probe).
$(O)/tests/lib/v2-writer: $(O)/obj/tests/lib/v2-writer.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $< -lpthread
PROGS += $(O)/tests/lib/v2-writer

# The clock conversion's error, measured (docs/ENGINE.md "Clock").
$(O)/bench/bench-clock: $(O)/obj/bench/bench-clock.o $(O)/obj/src/engine/clock.o
	$(call link)
PROGS += $(O)/bench/bench-clock

# A wake-up's CPU cost against the memory mapped (docs/BENCHMARKS.md "Engine
# CPU, 10 coroutines active").
$(O)/bench/bench-wake: $(O)/obj/bench/bench-wake.o
	$(call link)
PROGS += $(O)/bench/bench-wake

# The binary trace: encoder against decoder and against the JSONL line
# (records.c, then the reader's parser), cut and damaged files.
$(O)/tests/test-ctrace: $(O)/obj/tests/test-ctrace.o $(CT_WRITER_OBJS) \
                        $(O)/obj/src/analysis/trace_read.o $(FORMAT_READ_SRCS:%.c=$(O)/obj/%.o)
	$(call link)
TESTS += $(O)/tests/test-ctrace tests/test-ctrace-engine.sh tests/test-ctrace-enospc.sh tests/test-ctrace-switch.sh \
  tests/test-pack-roundtrip.sh tests/test-pack-blocked.sh tests/test-pack-readers.sh tests/test-pack-bound.sh
# Not under TSan: there the engine is stopped before the writers make a loss
# (24 M events, 0 lost, 550 s spent exporting and checking them: nothing
# exercised); the default and ASan builds lose ~21 M of 24 M each run.
ifneq ($(SAN),tsan)
TESTS += tests/test-pack-gap.sh
endif

# Pack entries (docs/ROUTE1.md) through the decoder: one expanded and
# checked, then mutated ones, each judged by the decoder alone.
$(O)/tests/test-pack-decode: $(O)/obj/tests/test-pack-decode.o $(FORMAT_READ_SRCS:%.c=$(O)/obj/%.o)
	$(call link)
TESTS += $(O)/tests/test-pack-decode

# An open pack taken by the harvest (rings_open.c): on a ring made by the test.
$(O)/tests/test-pack-open: $(O)/obj/tests/test-pack-open.o $(O)/obj/src/engine/rings_open.o
	$(call link)
TESTS += $(O)/tests/test-pack-open

# The engine's v2 side linked alone, fed capture blocks: the formatter's
# fast path for a burst of one coroutine against its general path, and the
# formatter's CPU per record.
CT_FORMAT_OBJS := $(patsubst %.c,$(O)/obj/%.o,$(FUZZ_SRCS_shm))
# Its fast writers and encoders again with -DCT_COVERAGE (src/common/coverage.h):
# the test asserts each of their branches was taken.
CT_COV_SRCS := src/engine/rings_format.c src/format/ctrace_enc.c
$(O)/obj-cov/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(PKG_CFLAGS) -DCT_COVERAGE -MMD -MP -c $< -o $@
$(O)/tests/test-rings-format: $(O)/obj/tests/test-rings-format.o $(O)/obj/tests/lib/fmt-map.o \
                              $(filter-out $(CT_COV_SRCS:%.c=$(O)/obj/%.o),$(CT_FORMAT_OBJS)) \
                              $(CT_COV_SRCS:%.c=$(O)/obj-cov/%.o)
	$(call link)
-include $(CT_COV_SRCS:%.c=$(O)/obj-cov/%.d)
TESTS += $(O)/tests/test-rings-format
$(O)/bench/bench-format: $(O)/obj/bench/bench-format.o $(O)/obj/tests/lib/fmt-map.o $(CT_FORMAT_OBJS)
	$(call link)
PROGS += $(O)/bench/bench-format

# The flight window's snapshot table against a model.
$(O)/tests/test-flight-snap: $(O)/obj/tests/test-flight-snap.o $(CT_WRITER_OBJS) \
                             $(O)/obj/src/analysis/trace_read.o $(FORMAT_READ_SRCS:%.c=$(O)/obj/%.o) \
                             $(O)/obj/src/common/outfile.o $(O)/obj/src/common/buf.o
	$(call link)
TESTS += $(O)/tests/test-flight-snap
# The snapshot tracker's walk of packs against the decoder's merge, chunks in a hostile order.
$(O)/tests/test-fsnap-order: $(O)/obj/tests/test-fsnap-order.o $(CT_WRITER_OBJS) \
                             $(O)/obj/src/analysis/trace_read.o $(FORMAT_READ_SRCS:%.c=$(O)/obj/%.o) \
                             $(O)/obj/src/common/outfile.o $(O)/obj/src/common/buf.o
	$(call link)
TESTS += $(O)/tests/test-fsnap-order

# The live findings told of a gap in what they were fed (issue #34 item 10).
$(O)/tests/test-flight-watch: $(O)/obj/tests/test-flight-watch.o $(CT_WRITER_OBJS) \
                              $(patsubst %.c,$(O)/obj/%.o,$(REPORT_SRCS)) \
                              $(O)/obj/src/symbolize/symbolize.o $(O)/obj/src/symbolize/demangle.o \
                              $(O)/obj/src/common/outfile.o $(O)/obj/src/common/buf.o
	$(call link,,$(PKG_LIBS))
TESTS += $(O)/tests/test-flight-watch

# The live findings' memory over a server's connections (issue #34 item 13):
# the analysis' allocations counted through the linker's --wrap.
WRAP_ALLOC := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free
$(O)/tests/test-flight-watch-memory: $(O)/obj/tests/test-flight-watch-memory.o $(CT_WRITER_OBJS) \
                                     $(patsubst %.c,$(O)/obj/%.o,$(REPORT_SRCS)) \
                                     $(O)/obj/src/symbolize/symbolize.o \
                                     $(O)/obj/src/symbolize/demangle.o \
                                     $(O)/obj/src/common/outfile.o $(O)/obj/src/common/buf.o
	$(call link,,$(WRAP_ALLOC) $(PKG_LIBS))
TESTS += $(O)/tests/test-flight-watch-memory

# The flight window's memory over a long run (issue #34 item 13): its
# chunks' allocations counted through the linker's --wrap.
$(O)/tests/test-flight-window-memory: $(O)/obj/tests/test-flight-window-memory.o $(CT_WRITER_OBJS) \
                                      $(patsubst %.c,$(O)/obj/%.o,$(FORMAT_READ_SRCS)) \
                                      $(O)/obj/src/common/outfile.o $(O)/obj/src/common/buf.o
	$(call link,,$(WRAP_ALLOC) $(PKG_LIBS))
TESTS += $(O)/tests/test-flight-window-memory

# The formatter's packs of a pass (rings_pack.c): kept in the blocks or
# copied, sorted across rings by time, ties in capture order.
$(O)/tests/test-rings-pack: $(O)/obj/tests/test-rings-pack.o $(CT_FORMAT_OBJS)
	$(call link)
TESTS += $(O)/tests/test-rings-pack

# The snapshot table fed a whole trace (bench/bench-fsnap.c): its CPU per
# byte of the chunks a turning window drops, and its lines to compare builds.
$(O)/bench/bench-fsnap: $(O)/obj/bench/bench-fsnap.o $(CT_WRITER_OBJS) \
                        $(O)/obj/src/analysis/trace_read.o $(FORMAT_READ_SRCS:%.c=$(O)/obj/%.o) \
                        $(O)/obj/src/common/outfile.o $(O)/obj/src/common/buf.o
	$(call link)
PROGS += $(O)/bench/bench-fsnap

# Coroutine entries like the last (format/ctrace_like.h): a server's shape
# round trip and its bytes, hand-made and mutated entries.
$(O)/tests/test-ctrace-like: $(O)/obj/tests/test-ctrace-like.o $(CT_WRITER_OBJS) \
                             $(FORMAT_READ_SRCS:%.c=$(O)/obj/%.o)
	$(call link)
TESTS += $(O)/tests/test-ctrace-like
