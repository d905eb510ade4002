# tests/build.mk - tests not owned by one area.
include tests/engine.mk
TESTS += tests/test-abi.sh
# Links a plain-cc program against the installed library: the plain build only.
TESTS_NOSAN += tests/test-install.sh
TESTS_NOSAN += tests/test-first-run.sh # clones and builds the repo: once, plain
