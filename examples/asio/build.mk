# examples/asio/build.mk - the Asio adapter (include/corotracer/asio.hpp): its example,
# its test and its benchmark. Built only when standalone Asio's headers are installed.
ifneq ($(wildcard /usr/include/asio.hpp),)
ASIO_TRACKING := -DASIO_CUSTOM_HANDLER_TRACKING='"corotracer/asio.hpp"'
PROGS += $(O)/examples/asio-echo
$(O)/obj/examples/asio/echo.o: CXXFLAGS += $(ASIO_TRACKING)
# Included from Asio's (system) headers, so -MMD leaves it out of the .d file.
ASIO_TRACKING_DEPS := include/corotracer/asio.hpp include/corotracer/user_site.hpp include/corotracer.h
$(O)/obj/examples/asio/echo.o: $(ASIO_TRACKING_DEPS)
$(O)/examples/asio-echo: $(O)/obj/examples/asio/echo.o $(LIBA)
	$(call link,$(CXX))

TESTS += tests/test-asio-echo.sh
endif
