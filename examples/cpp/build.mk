# examples/cpp/build.mk - the C++20 SDK (include/corotracer.hpp): its example
# scheduler, its tests (tests/test-cpp-*) and its benchmark (bench/bench-cpp*).
#
# The SDK must compile with g++ and clang++, at -O0 and -O2 (the co_await site
# is a return address: tests check it names the right line). So the tests are
# also built in variants: -O0 with $(CXX), and -O2/-O0 with the other compiler
# when it is installed. Variants are plain builds only: a sanitizer runtime
# must come from the compiler that instrumented the library.
CPP_ALT_CXX := $(if $(SAN),,$(shell command -v $(if $(findstring clang,$(CXX)),g++,clang++) 2>/dev/null))
CPP_VARIANTS := O0 $(if $(CPP_ALT_CXX),alt alt-O0)
cpp_cxx = $(if $(findstring alt,$1),$(CPP_ALT_CXX),$(CXX))
cpp_opt = $(if $(findstring O0,$1),-O0)

# $(O)/obj/cpp-VARIANT/X.o from X.cpp, $(O)/tests/T-VARIANT from tests/T.cpp, and
# task_erase.cpp's (its destroyer's line depends on what the compiler inlined).
define CPP_VARIANT_RULES
$(O)/obj/cpp-$1/%.o: %.cpp
	@mkdir -p $$(@D)
	$(call cpp_cxx,$1) $$(CXXFLAGS_ALL) $(call cpp_opt,$1) -MMD -MP -c $$< -o $$@

$(O)/tests/test-cpp-%-$1: $(O)/obj/cpp-$1/tests/test-cpp-%.o $$(LIBA)
	$$(call link,$(call cpp_cxx,$1))

$(O)/examples/cpp-task-erase-$1: $(O)/obj/cpp-$1/examples/cpp/task_erase.o $$(LIBA)
	$$(call link,$(call cpp_cxx,$1))
endef
$(foreach v,$(CPP_VARIANTS),$(eval $(call CPP_VARIANT_RULES,$v)))

# The examples, the benchmark and the test, each from its one object.
CPP_PROGS := $(O)/examples/cpp-pipeline $(O)/examples/cpp-task-erase $(O)/bench/bench-cpp \
	$(O)/tests/test-cpp-forms
$(O)/examples/cpp-pipeline: $(O)/obj/examples/cpp/pipeline.o
$(O)/examples/cpp-task-erase: $(O)/obj/examples/cpp/task_erase.o
$(O)/bench/bench-cpp: $(O)/obj/bench/bench-cpp.o
$(O)/tests/test-cpp-forms: $(O)/obj/tests/test-cpp-forms.o
$(CPP_PROGS): $(LIBA)
	$(call link,$(CXX))

TESTS += $(O)/tests/test-cpp-forms tests/test-cpp-trace.sh tests/test-cpp-pipeline.sh tests/test-cpp-task.sh
# The dashboard and the exports name task_erase's destroyer as the report does (node: decode.mjs).
TESTS += tests/test-cpp-task-readers.sh
PROGS += $(CPP_PROGS) $(foreach v,$(CPP_VARIANTS),$(O)/tests/test-cpp-forms-$v $(O)/examples/cpp-task-erase-$v)
