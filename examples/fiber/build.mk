# examples/fiber/build.mk - the Boost.Fiber adapter (include/corotracer/boost_fiber.hpp):
# its example, its test and its benchmark (bench/bench-fiber.cpp). Built only when Boost.Fiber's headers are installed.
ifneq ($(wildcard /usr/include/boost/fiber/all.hpp),)
PROGS += $(O)/examples/fiber-workers $(O)/examples/fiber-switches $(O)/examples/fiber-pool $(O)/examples/fiber-notify \
         $(O)/bench/bench-fiber $(O)/bench/bench-fiber-floor
$(O)/examples/fiber-pool: $(O)/obj/examples/fiber/pool.o $(LIBA)
	$(call link,$(CXX),-lboost_fiber -lboost_context)
$(O)/examples/fiber-notify: $(O)/obj/examples/fiber/notify.o $(LIBA)
	$(call link,$(CXX),-lboost_fiber -lboost_context)
$(O)/examples/fiber-workers: $(O)/obj/examples/fiber/workers.o $(LIBA)
	$(call link,$(CXX),-lboost_fiber -lboost_context)
$(O)/examples/fiber-switches: $(O)/obj/examples/fiber/switches.o $(LIBA)
	$(call link,$(CXX),-lboost_fiber -lboost_context)
# The examples check the adapter's own idea of the running fiber against Boost's.
$(O)/obj/examples/fiber/workers.o $(O)/obj/examples/fiber/switches.o: CXXFLAGS_ALL += -DCOROTRACER_FIBER_CHECK
$(O)/bench/bench-fiber: $(O)/obj/bench/bench-fiber.o $(LIBA)
	$(call link,$(CXX),-lboost_fiber -lboost_context)
# The same program with one clock read an adapter call (bench/floor-probe.c):
# bench-fiber's floor column, what any tracer that stamps each call costs.
$(O)/bench/bench-fiber-floor: $(O)/obj/bench/bench-fiber.o $(O)/obj/bench/floor-probe.o
	$(call link,$(CXX),-lboost_fiber -lboost_context)

# Every allocation of the adapter failing in turn (a replaced operator new):
# plain build only, as its test (a sanitizer's runtime replaces operator new
# and delete itself, and TSan's clashes with ours at link time).
ifeq ($(SAN),)
PROGS += $(O)/tests/lib/fiber-nomem
endif
$(O)/tests/lib/fiber-nomem: $(O)/obj/tests/lib/fiber-nomem.o $(LIBA)
	$(call link,$(CXX),-lboost_fiber -lboost_context)

# Boost.Fiber switches stacks behind the sanitizers' back: plain build only.
TESTS_NOSAN += tests/test-fiber-workers.sh tests/test-fiber-switches.sh tests/test-fiber-nomem.sh tests/test-fiber-pool.sh \
               tests/test-fiber-notify.sh
endif

# The adapters' headers (include/corotracer/, both adapters') install beside the SDK's.
.PHONY: install-adapters
install: install-adapters
install-adapters:
	install -d $(DESTDIR)$(PREFIX)/include/corotracer
	install -m 0644 include/corotracer/*.hpp $(DESTDIR)$(PREFIX)/include/corotracer/
