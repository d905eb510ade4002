# bench/build.mk - the benchmarks of the seeds' claim (issue #32, bench/bench-seedclaim.sh):
# programs built against the public API only (-Iinclude and libcorotracer), as a user
# builds; seedclaim.c itself is built by the script, from ../shared/bench/.
PROGS += $(O)/bench/bench-coswitch $(O)/bench/bench-server
$(O)/obj/bench/bench-coswitch.o $(O)/obj/bench/bench-server.o: INC = -Iinclude
$(O)/bench/bench-coswitch $(O)/bench/bench-server: $(O)/bench/%: $(O)/obj/bench/%.o $(LIBA)
	$(call link)
