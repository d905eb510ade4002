# src/run/build.mk - `corotracer run` composed: its options, its loop, and the
# readers it runs beside the engine through the engine's callbacks (the flight
# watch feeds src/analysis/watch.c, the flight window's live source feeds
# src/html/live.c). Its tests are the engine's (src/engine/build.mk), except the nap's (below).
CLI_SRCS += src/run/run_main.c src/run/opts.c src/run/flight_watch.c src/run/flight_live.c

# The loop's nap against the rings' fill (src/run/nap.h, both headers only).
$(O)/tests/test-nap: $(O)/obj/tests/test-nap.o
	$(call link)
TESTS += $(O)/tests/test-nap
