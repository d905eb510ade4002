# tests/build.mk - tests not owned by one area.
