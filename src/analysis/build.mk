# src/analysis/build.mk - `corotracer report` (its symbolizer: src/symbolize/build.mk).
REPORT_SRCS := $(FORMAT_READ_SRCS) src/analysis/trace_read.c src/analysis/map.c src/analysis/hist.c \
               src/analysis/state.c src/analysis/state_record.c src/analysis/state_sched.c src/analysis/state_snapshot.c \
               src/analysis/findings.c src/analysis/findings_objs.c \
               src/analysis/findings_stuck.c src/analysis/findings_behind.c src/analysis/findings_sched.c \
               src/analysis/findings_tables.c src/analysis/report.c src/analysis/write_md.c \
               src/analysis/write_json.c src/analysis/watch.c
CLI_SRCS += src/analysis/report_main.c $(REPORT_SRCS)

# Unit tests of the report's building blocks (src/analysis): each links only the
# module it tests (test-trace: the block reader and the format's reader, its parser).
$(O)/tests/test-trace: $(O)/obj/tests/test-trace.o $(O)/obj/src/analysis/trace_read.o \
                      $(FORMAT_READ_SRCS:%.c=$(O)/obj/%.o)
	$(call link)
$(O)/tests/test-map: $(O)/obj/tests/test-map.o $(O)/obj/src/analysis/map.o
	$(call link)
$(O)/tests/test-hist: $(O)/obj/tests/test-hist.o $(O)/obj/src/analysis/hist.o
	$(call link)
TESTS += $(O)/tests/test-trace $(O)/tests/test-map $(O)/tests/test-hist

# The report: findings on synthetic traces, input robustness (incl. the
# reference fixture), symbolized sites of a real PIE (needs test-symbolize),
# a real trace of examples/hello under the engine.
TESTS += tests/test-report.sh tests/test-report-input.sh tests/test-report-pie.sh tests/test-report-precision.sh \
         tests/test-report-engine.sh tests/test-report-reuse.sh

# The scheduling findings (starvation, destroyed while waiting) on programs
# traced by the engine, in C and C++, each beside its correct twin.
REPORT_STORIES := $(O)/tests/lib/sched-story $(O)/tests/lib/cpp-dwait
$(O)/tests/lib/sched-story: $(O)/obj/tests/lib/sched-story.o $(LIBA)
	$(call link)
$(O)/tests/lib/cpp-dwait: $(O)/obj/tests/lib/cpp-dwait.o $(LIBA)
	$(call link,$(CXX))
PROGS += $(REPORT_STORIES)
TESTS += tests/test-report-sched.sh
# One meaning per record (record.h): report, dashboard and export agree; impossible end records.
TESTS += tests/test-record-meaning.sh

# Benchmark: bench/bench-report.sh generates traces with this and times the report.
PROGS += $(O)/bench/bench-report-gen
$(O)/bench/bench-report-gen: $(O)/obj/bench/bench-report-gen.o
	$(call link)

# The trace reader, fuzzed (tests/fuzz/fuzz-trace.c).
FUZZ_SRCS_trace := $(FORMAT_READ_SRCS) src/analysis/trace_read.c
# The binary trace's reader, fuzzed (tests/fuzz/fuzz-ctrace.c).
FUZZ_SRCS_ctrace := $(FUZZ_SRCS_trace)

# The report is a value: building it leaves the state as it was (the live
# view builds one per snapshot from the state it goes on feeding).
$(O)/tests/test-report-value: $(O)/obj/tests/test-report-value.o \
                              $(patsubst %.c,$(O)/obj/%.o,$(REPORT_SRCS) src/symbolize/symbolize.c \
                                                        src/symbolize/demangle.c)
	$(call link,,$(PKG_LIBS))
TESTS += $(O)/tests/test-report-value

# The thresholds a user sets (report --stuck-ms), and the waits below them
# said, not silent: a coroutine destroyed after waiting 300 ms; and its
# wait object named (a global by its symbol, a heap object by its first wait).
$(O)/tests/lib/short-wait: $(O)/obj/tests/lib/short-wait.o $(LIBA)
	$(call link)
PROGS += $(O)/tests/lib/short-wait
TESTS += tests/test-report-thresholds.sh tests/test-report-objects.sh
