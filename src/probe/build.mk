# src/probe/build.mk - the probe SDK (libcorotracer), its tests and benchmark.
LIB_SRCS += src/probe/attach.c src/probe/probe.c
TESTS += $(O)/tests/test-layout $(O)/tests/test-probe
