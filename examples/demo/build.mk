# examples/demo/build.mk - the demo: an M:N coroutine scheduler, a RESP server
# on it (the seed's lost-wakeup bug behind --bug), the scheduler's tests and
# benchmark, and the recipes of `make demo` and `make demo-fixed`.
#
# The raw context switch is hand-written for x86-64 and AArch64; any other
# machine gets the ucontext fallback (force it with DEMO_CTX=ucontext). The
# scheduler test is also linked against the fallback, so both stay tested.
DEMO_MACHINE := $(shell $(CC) -dumpmachine 2>/dev/null)
DEMO_CTX ?= $(if $(findstring x86_64,$(DEMO_MACHINE)),x86_64,$(if $(findstring aarch64,$(DEMO_MACHINE)),aarch64,ucontext))
DEMO_D := $(O)/obj/examples/demo
DEMO_CORE := $(DEMO_D)/sched.o $(DEMO_D)/reactor.o $(DEMO_D)/ctx.o
DEMO_SCHED_OBJS := $(DEMO_CORE) $(DEMO_D)/ctx_$(DEMO_CTX).o
DEMO_UC_OBJS := $(DEMO_CORE) $(DEMO_D)/ctx_ucontext.o
DEMO_SERVER := $(O)/examples/demo/resp_server

# Our switch returns into a stack it did not come from: no CET/BTI marking.
$(DEMO_D)/ctx_x86_64.o: CFLAGS += -fcf-protection=none
$(DEMO_D)/ctx_aarch64.o: CFLAGS += -mbranch-protection=none

$(DEMO_SERVER): $(DEMO_D)/resp_server.o $(DEMO_D)/resp.o $(DEMO_SCHED_OBJS) $(LIBA)
	$(call link)

$(O)/tests/test-demo-sched: $(O)/obj/tests/test-demo-sched.o $(DEMO_SCHED_OBJS) $(LIBA)
	$(call link)

$(O)/tests/test-demo-sched-uc: $(O)/obj/tests/test-demo-sched.o $(DEMO_UC_OBJS) $(LIBA)
	$(call link)

# The switch alone (tests/test-demo-ctx.c), against each switch.
$(O)/tests/test-demo-ctx: $(O)/obj/tests/test-demo-ctx.o $(DEMO_D)/ctx.o $(DEMO_D)/ctx_$(DEMO_CTX).o
	$(call link)

$(O)/tests/test-demo-ctx-uc: $(O)/obj/tests/test-demo-ctx.o $(DEMO_D)/ctx.o $(DEMO_D)/ctx_ucontext.o
	$(call link)

$(O)/bench/bench-demo-switch: $(O)/obj/bench/bench-demo-switch.o $(DEMO_SCHED_OBJS) $(LIBA)
	$(call link)

# The same scheduler with one clock read a call for the probe
# (bench/floor-probe.c): bench-demo.sh's measured floor.
$(O)/bench/bench-demo-switch-floor: $(O)/obj/bench/bench-demo-switch.o $(DEMO_SCHED_OBJS) \
                                    $(O)/obj/bench/floor-probe.o $(O)/obj/tests/lib/v2-file.o
	$(call link)

PROGS += $(DEMO_SERVER) $(O)/bench/bench-demo-switch $(O)/bench/bench-demo-switch-floor
TESTS += $(O)/tests/test-demo-ctx $(O)/tests/test-demo-sched \
         $(if $(filter ucontext,$(DEMO_CTX)),,$(O)/tests/test-demo-ctx-uc $(O)/tests/test-demo-sched-uc)
TESTS_SAN += tests/test-demo-san.sh
TESTS_NOSAN += tests/test-demo-e2e.sh tests/test-demo-switch.sh

# The story, end to end (examples/demo/run-demo.sh): the server with the bug
# (DEMO_ARGS=--bug; `make demo`) or without it (--fixed; `make demo-fixed`)
# under `corotracer run`, hammered by redis-benchmark, then the report. The
# top-level demo targets install the dependencies first, then come here.
demo-story: $(LIBA) $(BIN) $(DEMO_SERVER)
	O=$(O) sh examples/demo/run-demo.sh $(DEMO_ARGS)
