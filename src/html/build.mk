# src/html/build.mk - the dashboard: `corotracer html`, `corotracer serve` and
# the live view of `corotracer run --serve` (docs/DASHBOARD.md). The page's
# sources in web/ are linked in by assets.c (.incbin).
HTML_SRCS := src/html/assets.c src/html/model.c src/html/model_out.c src/html/model_lod.c \
             src/html/build.c src/html/page.c src/html/html_main.c src/html/live.c \
             src/html/live_trace.c src/html/live_detail.c \
             src/html/serve_main.c
CLI_SRCS += $(HTML_SRCS)
$(O)/obj/src/html/assets.o: web/dashboard.html web/dashboard.css web/dashboard.js web/nav.js web/timeline.js

# Browser tests (Chromium + playwright-core from npm): the plain build only,
# they test the page, not the C code under sanitizers.
TESTS += tests/test-html.sh
TESTS_NOSAN += tests/test-dashboard.sh tests/test-dashboard-live.sh
# Joins and exits in the page (tests/browser/waits.mjs).
TESTS_NOSAN += tests/test-dashboard-waits.sh
# The waits under --stuck-ms said in the findings panel, with the option that would judge them (Chromium).
TESTS_NOSAN += tests/test-dashboard-short-waits.sh
# Navigation, the time range, the URL's view, lanes at scale (tests/browser/nav.mjs).
TESTS_NOSAN += tests/test-dashboard-nav.sh
# The whole run at any zoom: a trace past the span budget zoomed out and in
# (tests/browser/lod.mjs; the trace from bench-coswitch).
TESTS_NOSAN += tests/test-dashboard-lod.sh

# The live view under silent and slowloris clients (tests/lib/live-client.c).
$(O)/tests/lib/live-client: $(O)/obj/tests/lib/live-client.o
	$(call link)
PROGS += $(O)/tests/lib/live-client
TESTS += tests/test-live-limits.sh
# The live view's token and request parsing (a repeated token, a garbage request).
TESTS += tests/test-live-request.sh
# serve of a large trace: its first data "analysing", the whole one, detail requests at once.
TESTS += tests/test-live-first.sh
