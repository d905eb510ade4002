# examples/asio/build.mk - the Asio adapter (include/corotracer/asio.hpp): its example,
# its test and its benchmark. Built only when standalone Asio's headers are installed.
ifneq ($(wildcard /usr/include/asio.hpp),)
ASIO_TRACKING := -DASIO_CUSTOM_HANDLER_TRACKING='"corotracer/asio.hpp"'
PROGS += $(O)/examples/asio-echo $(O)/bench/bench-asio $(O)/bench/bench-asio-tracked
$(O)/obj/examples/asio/echo.o: CXXFLAGS += $(ASIO_TRACKING)
# Included from Asio's (system) headers, so -MMD leaves it out of the .d file.
ASIO_TRACKING_DEPS := include/corotracer/asio.hpp include/corotracer/user_site.hpp include/corotracer.h
$(O)/obj/examples/asio/echo.o: $(ASIO_TRACKING_DEPS)
$(O)/examples/asio-echo: $(O)/obj/examples/asio/echo.o $(LIBA)
	$(call link,$(CXX))
# $(call asio_twin,NAME,MACRO): examples/asio/NAME.cpp built on standalone Asio
# as asio-NAME and, where Boost's headers are (Debian's libboost-dev), on
# Boost.Asio as asio-NAME-boost, with -DMACRO and the Boost flag.
define asio_twin
PROGS += $(O)/examples/asio-$1
$(O)/obj/examples/asio/$1.o: CXXFLAGS += $(ASIO_TRACKING)
$(O)/obj/examples/asio/$1.o: $(ASIO_TRACKING_DEPS)
$(O)/examples/asio-$1: $(O)/obj/examples/asio/$1.o $(LIBA)
	$$(call link,$(CXX))
ifneq ($(wildcard /usr/include/boost/asio.hpp),)
PROGS += $(O)/examples/asio-$1-boost
$(O)/obj/examples/asio/$1-boost.o: examples/asio/$1.cpp $(ASIO_TRACKING_DEPS)
	@mkdir -p $$(@D)
	$$(CXX) $$(CXXFLAGS_ALL) -D$2 \
	  -DBOOST_ASIO_CUSTOM_HANDLER_TRACKING='"corotracer/asio.hpp"' -MMD -MP -c $$< -o $$@
$(O)/examples/asio-$1-boost: $(O)/obj/examples/asio/$1-boost.o $(LIBA)
	$$(call link,$(CXX))
endif
endef
# A strand pipeline whose completion is lost (tests/test-asio-pipeline.sh).
PROGS += $(O)/examples/asio-pipeline
$(O)/obj/examples/asio/pipeline.o: CXXFLAGS += $(ASIO_TRACKING)
$(O)/obj/examples/asio/pipeline.o: $(ASIO_TRACKING_DEPS)
$(O)/examples/asio-pipeline: $(O)/obj/examples/asio/pipeline.o $(LIBA)
	$(call link,$(CXX))
# An asio::awaitable echo server whose timer event is never fired
# (tests/test-asio-echo20.sh): the plain use_awaitable and redirect_error.
$(eval $(call asio_twin,echo20,ECHO20_BOOST))
# A C++20 request/reply service whose reply is never written: the client's
# read dropped by the stop, a lost completion (tests/test-asio-lost.sh); on
# standalone Asio and on Boost.Asio, by the Boost flag.
$(eval $(call asio_twin,lost,LOST_BOOST))
# A service whose clients, one on use_future and one on plain callbacks, read
# a reply the server half writes: each read's next step, started by Asio's
# composed operation, a lost completion at the client's own line
# (tests/test-asio-future.sh); on standalone Asio and on Boost.Asio.
$(eval $(call asio_twin,future,FUTURE_BOOST))
# Under ASan too: 1 run in 6-8 named the server's accept and read (started
# from their handlers) at Asio's `range_connect_op<...>::process<...>
# (connect.hpp:369)`, a stale return address (the future client's connect
# step, run on that thread before) no frame had overwritten; the scan now
# passes over words off the frame-pointer chain where it holds (#33).
TESTS += tests/test-asio-future.sh
# Asio has no awaitable with clang 14 and libstdc++ 12 (the TSan build), as
# for echo20.
ifeq ($(findstring clang,$(CXX)),)
TESTS += tests/test-asio-lost.sh
endif
# With clang (the TSan build) too: its sites inside asio_handler_invoke_helpers::
# invoke were named at the adapter's line (asio.hpp) until the report's
# symbolizer walked the unit where libdw's dwarf_getscopes finds no scope
# (#33); now the user's lambda (pipeline.cpp:37).
TESTS += tests/test-asio-pipeline.sh
# Asio has no awaitable with clang 14 and libstdc++ 12 (the TSan build): the
# program only says so, and under CI a skipped test is a failed one.
ifeq ($(findstring clang,$(CXX)),)
TESTS += tests/test-asio-echo20.sh
endif

# The benchmark (bench/bench-asio.sh), built plain and with the tracking header.
$(O)/obj/bench/bench-asio-tracked.o: bench/bench-asio.cpp $(ASIO_TRACKING_DEPS)
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS_ALL) $(ASIO_TRACKING) -c $< -o $@
$(O)/bench/bench-asio: $(O)/obj/bench/bench-asio.o
	$(call link,$(CXX))
$(O)/bench/bench-asio-tracked: $(O)/obj/bench/bench-asio-tracked.o $(LIBA)
	$(call link,$(CXX))

TESTS += tests/test-asio-echo.sh

# Four threads in one io_context's run(): stand-ins handed on across threads.
PROGS += $(O)/tests/lib/asio-threads
$(O)/obj/tests/lib/asio-threads.o: CXXFLAGS += $(ASIO_TRACKING)
$(O)/obj/tests/lib/asio-threads.o: $(ASIO_TRACKING_DEPS)
$(O)/tests/lib/asio-threads: $(O)/obj/tests/lib/asio-threads.o $(LIBA)
	$(call link,$(CXX))
TESTS += tests/test-asio-threads.sh

# Handlers that throw, io_contexts built while another thread runs (TSan: the
# adapter's switch): tests/test-asio-faults.sh.
PROGS += $(O)/tests/lib/asio-faults
$(O)/obj/tests/lib/asio-faults.o: CXXFLAGS += $(ASIO_TRACKING)
$(O)/obj/tests/lib/asio-faults.o: $(ASIO_TRACKING_DEPS)
$(O)/tests/lib/asio-faults: $(O)/obj/tests/lib/asio-faults.o $(LIBA)
	$(call link,$(CXX))
TESTS += tests/test-asio-faults.sh

# Posted functions destroyed without running (the adapter records a post as
# queued): tests/test-asio-dropped.sh.
PROGS += $(O)/tests/lib/asio-dropped
$(O)/obj/tests/lib/asio-dropped.o: CXXFLAGS += $(ASIO_TRACKING)
$(O)/obj/tests/lib/asio-dropped.o: $(ASIO_TRACKING_DEPS)
$(O)/tests/lib/asio-dropped: $(O)/obj/tests/lib/asio-dropped.o $(LIBA)
	$(call link,$(CXX))
# With clang (the TSan build) too, as test-asio-pipeline.
TESTS += tests/test-asio-dropped.sh

# An awaitable parked at a line Asio passes as a source location (text sites).
PROGS += $(O)/tests/lib/asio-await
$(O)/obj/tests/lib/asio-await.o: CXXFLAGS += $(ASIO_TRACKING)
$(O)/obj/tests/lib/asio-await.o: $(ASIO_TRACKING_DEPS)
$(O)/tests/lib/asio-await: $(O)/obj/tests/lib/asio-await.o $(LIBA)
	$(call link,$(CXX))
# Its test runs where the compiler gives Asio its awaitable: with clang 14 and
# libstdc++ 12 (the TSan build) Asio has none, the program only says so, and
# under CI a skipped test is a failed one.
ifeq ($(findstring clang,$(CXX)),)
TESTS += tests/test-asio-await.sh
endif
endif
