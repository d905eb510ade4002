# src/probe/build.mk - the probe SDK (libcorotracer), its tests and benchmark.
LIB_SRCS += src/probe/attach.c src/probe/probe.c
