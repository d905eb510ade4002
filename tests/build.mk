# tests/build.mk - tests not owned by one area.
include tests/engine.mk
TESTS += tests/test-abi.sh
# Links a plain-cc program against the installed library: the plain build only.
TESTS_NOSAN += tests/test-install.sh

# Unit tests of the report's building blocks (src/analysis): each links the
# one object it tests.
$(O)/tests/test-trace: $(O)/obj/tests/test-trace.o $(O)/obj/src/analysis/trace.o
	$(call link)
$(O)/tests/test-map: $(O)/obj/tests/test-map.o $(O)/obj/src/analysis/map.o
	$(call link)
$(O)/tests/test-hist: $(O)/obj/tests/test-hist.o $(O)/obj/src/analysis/hist.o
	$(call link)
TESTS += $(O)/tests/test-trace $(O)/tests/test-map $(O)/tests/test-hist

# Style: .clang-format holds on the files already formatted.
TESTS_NOSAN += tests/test-format.sh
# The test kit (tests/lib/check.h, check.sh) itself.
TESTS_NOSAN += tests/test-check.sh
TESTS_NOSAN += tests/test-first-run.sh # clones and builds the repo: once, plain
