# tests/build.mk - tests not owned by one area.
include tests/engine.mk
TESTS += tests/test-abi.sh
