# examples/hello/build.mk - the first-run example, built against the public API only.
PROGS += $(O)/examples/hello

$(O)/examples/hello: $(O)/obj/examples/hello/hello.o $(LIBA)
	$(call link)
