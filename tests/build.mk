# tests/build.mk - tests not owned by one area (each area registers its own in
# its build.mk).
TESTS += tests/test-abi.sh
# Runs of one file (run --append) kept apart by the report, the exports and the dashboard.
TESTS += tests/test-runs-apart.sh
# Links a plain-cc program against the installed library: the plain build only.
TESTS_NOSAN += tests/test-install.sh

# Style: .clang-format holds on every C/C++ file of the tree.
TESTS_NOSAN += tests/test-format.sh
# The test kit (tests/lib/check.h, check.sh) itself.
TESTS_NOSAN += tests/test-check.sh
TESTS_NOSAN += tests/test-first-run.sh # clones and builds the repo: once, plain
