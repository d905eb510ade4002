# examples/pool/build.mk - a scheduler that frees and reuses its coroutines
# (reused ids, final suspends), built against the public API only.
PROGS += $(O)/examples/pool

$(O)/examples/pool: $(O)/obj/examples/pool/pool.o $(LIBA)
	$(call link)
