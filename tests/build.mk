# tests/build.mk - tests not owned by one area (each area registers its own in
# its build.mk).
TESTS += tests/test-abi.sh
# Runs of one file (run --append) kept apart by the report, the exports and the dashboard.
TESTS += tests/test-runs-apart.sh
# One threshold, one verdict: report, html, serve and export judge with the same options.
TESTS += tests/test-thresholds-agree.sh
# The report, the dashboard's data and the exports of the checked-in traces, byte for byte as before.
TESTS += tests/test-outputs-same.sh
# Links a plain-cc program against the installed library: the plain build only.
TESTS_NOSAN += tests/test-install.sh
# What install-deps.sh asks for (make demo: the build's and redis-tools only), make help.
TESTS_NOSAN += tests/test-install-deps.sh
# Links a plain-cc program against the build tree's shared library: plain build only.
TESTS_NOSAN += tests/test-build-link.sh
# `make bench`'s runner knows every benchmark (bench/run.sh); two quick ones run.
TESTS_NOSAN += tests/test-bench.sh

# Style: .clang-format holds on every C/C++ file of the tree.
TESTS_NOSAN += tests/test-format.sh
# The house: includes run down the floors (scripts/house.sh, docs/ARCHITECTURE.md).
TESTS_NOSAN += tests/test-house.sh
# The test kit (tests/lib/check.h, check.sh) itself.
TESTS_NOSAN += tests/test-check.sh
TESTS_NOSAN += tests/test-first-run.sh # clones and builds the repo: once, plain
# Outputs of every subcommand: links, temporary names, modes (src/common/outfile.c).
TESTS += tests/test-outputs-safe.sh
# A join (wait "coroutine") through the engine, in both trace formats.
PROGS += $(O)/tests/lib/join-prog
TESTS += tests/test-report-join.sh
# Text sites (corotracer_site) through the engine, in both trace formats.
PROGS += $(O)/tests/lib/site-prog
TESTS += tests/test-report-site.sh
# One trace (v1 lines and ours, JSONL and binary) read by the report's state,
# the dashboard's model and the export: one meaning per event (struct ct_event).
READ_EVENT_OBJS := $(patsubst %.c,$(O)/obj/%.o,$(REPORT_SRCS) src/symbolize/symbolize.c src/symbolize/demangle.c \
                     src/html/model.c src/html/model_lod.c src/common/buf.c src/export/export_model.c src/common/outfile.c) \
                   $(CT_WRITER_OBJS)
$(O)/tests/test-read-event: $(O)/obj/tests/test-read-event.o $(READ_EVENT_OBJS)
	$(call link,,$(PKG_LIBS))
TESTS += $(O)/tests/test-read-event
# The report's and the dashboard's fast path (a binary trace's runs of
# events) against their general one (line by line): the same lines, meanings
# and reports, and the same dashboard blobs.
$(O)/tests/test-report-runs: $(O)/obj/tests/test-report-runs.o $(READ_EVENT_OBJS) \
                             $(patsubst %.c,$(O)/obj/%.o,src/html/model_out.c src/html/page.c src/html/assets.c)
	$(call link,,$(PKG_LIBS))
TESTS += $(O)/tests/test-report-runs
# One exit rule for empty and damaged inputs across every reader; dump of no process.
TESTS += tests/test-readers-bad-input.sh
# Every reader of a binary trace (report, html, export csv/sqlite/jsonl/perfetto)
# on 500 crafted traces, each called in the test's process as the binary calls it.
$(O)/tests/test-reader-hostile: $(O)/obj/tests/test-reader-hostile.o \
                                $(patsubst %.c,$(O)/obj/%.o,$(filter-out src/cli/main.c,$(CLI_SRCS))) $(LIBA)
	$(call link,,$(PKG_LIBS))
TESTS += $(O)/tests/test-reader-hostile
# The same, fuzzed (tests/fuzz/fuzz-readers.c): every reader's sources but the
# command's dispatcher, and the probe library the engine's objects link.
FUZZ_SRCS_readers := $(filter-out src/cli/main.c,$(CLI_SRCS)) $(LIB_SRCS)
# include/corotracer/user_site.hpp's verdict on symbols (the adapters' stack scan).
$(O)/tests/test-user-site: $(O)/obj/tests/test-user-site.o
	$(call link,$(CXX))
PROGS += $(O)/tests/test-user-site
TESTS += $(O)/tests/test-user-site

# `corotracer run`'s defaults per mode (src/run/opts.c); it links what the parser
# calls (the flight watch's and the live view's parsers), so the CLI's objects,
# here where CLI_SRCS is complete.
$(O)/tests/test-run-opts: $(O)/obj/tests/test-run-opts.o \
                          $(patsubst %.c,$(O)/obj/%.o,$(filter-out src/cli/main.c,$(CLI_SRCS))) $(LIBA)
	$(call link,,$(PKG_LIBS))
TESTS += $(O)/tests/test-run-opts
