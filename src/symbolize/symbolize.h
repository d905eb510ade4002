/* symbolize.h - code address -> function and file:line, through elfutils' libdw.
 *
 * Shared by `corotracer report` (sites in traces) and `corotracer rip`
 * (snapshots in ring files). Module maps are given by the caller (from a
 * trace's module lines, or a ring file's map); addresses of a PIE executable
 * or a shared library are translated to file offsets through them.
 *
 * Errors: int functions return 0 or a negative errno. Never prints. */
#ifndef CT_SYMBOLIZE_H
#define CT_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

typedef struct ct_symbolizer ct_symbolizer;

/* Result of a lookup. Strings are owned by the symbolizer and live until
 * ct_symbolizer_free(). Fields unknown are NULL / 0. */
struct ct_sym {
  const char *function; /* demangled when possible; inlined code: the inlined function */
  const char *file;     /* source file, as recorded in DWARF */
  int line;             /* 0 when unknown */
  const char *module;   /* path of the module, NULL if no module contains pc */
  uint64_t offset;      /* pc relative to the module's load base (for module+offset) */
};

/* New empty symbolizer; *out owned by the caller. */
int ct_symbolizer_new(ct_symbolizer **out);
void ct_symbolizer_free(ct_symbolizer *s);

/* Add one executable mapping of process pid (pid 0: "any process"): addresses
 * [start, end) map to file offsets [offset, ...) of path. path is copied. */
int ct_symbolizer_add_module(ct_symbolizer *s, uint32_t pid, uint64_t start, uint64_t end,
                             uint64_t offset, const char *path);

/* The GNU build id (lowercase hex) a trace recorded for path when the
 * program ran. When the file on disk holds another one (it was rebuilt
 * since), or none, its addresses give module + offset only, never a line of
 * the new build; ct_symbolizer_stale() names it. The first id given for a
 * path is kept. build_id is copied. */
int ct_symbolizer_set_build_id(ct_symbolizer *s, const char *path, const char *build_id);

/* The i-th file (from 0) whose build id on disk differs from the recorded
 * one, among those a lookup opened so far; NULL past the last. The string
 * lives until ct_symbolizer_free(); s may be NULL (none). */
const char *ct_symbolizer_stale(const ct_symbolizer *s, size_t i);

/* Add a module loaded without a map (a non-PIE executable, or the -e file of
 * `corotracer rip` when the ring has no map): addresses are taken as-is (the
 * ELF's own virtual addresses). */
int ct_symbolizer_add_static(ct_symbolizer *s, const char *path);

/* Skip inlined frames matching any of patterns (comma-separated fnmatch
 * globs over the demangled function name or the source file, such as
 * mylib::* or a directory followed by *), besides the built-in ones (our
 * SDK's wrappers, boost::*, std::*, asio::*, files under /usr/include): a site
 * in such a frame is shown at the line that called it. patterns is copied.
 * Call before the first lookup. */
int ct_symbolizer_skip_frames(ct_symbolizer *s, const char *patterns);

/* Text sites (corotracer_site): a site with bit 63 set is no code address but
 * a token the trace's `site` lines name. */
#define CT_SYM_TEXT_BIT (UINT64_C(1) << 63)

/* Add the text site `site` (a token with CT_SYM_TEXT_BIT): file:line in
 * function, as the program gave them (copied). A token added again keeps
 * its first text. */
int ct_symbolizer_add_text(ct_symbolizer *s, uint64_t site, const char *file, int line,
                           const char *function);

/* Look pc up in pid's modules (a text site: in the text sites, for any pid). is_return_address: pc
 * is a return address, so the call instruction (pc - 1) is looked up. Returns 0 with *out filled
 * (maybe only module+offset), -ENOENT when no module contains pc. Results are cached. */
int ct_symbolize(ct_symbolizer *s, uint32_t pid, uint64_t pc, int is_return_address,
                 struct ct_sym *out);

/* A trace event's site as every reader names it (the report, the dashboard,
 * the exports): ct_symbolize of a return address; for a destroy event's site
 * (destroy non-zero), inlined destructors are skipped as well: a coroutine's
 * frame destroyed by a task's destructor inlined into the owner's erase is
 * named at the erase's line, which is what destroyed it
 * (include/corotracer.hpp records that frame's return address). */
int ct_symbolize_event_site(ct_symbolizer *s, uint32_t pid, uint64_t site, int destroy,
                            struct ct_sym *out);

/* The global or static object of pid's modules that holds data address addr:
 * out->function is its name (demangled), out->file and out->line where DWARF
 * says it is defined (NULL / 0 without), out->module its file, out->offset
 * addr's offset into it. -ENOENT when no module's symbol table has an object
 * there (a heap or stack address). Results are cached. */
int ct_symbolize_data(ct_symbolizer *s, uint32_t pid, uint64_t addr, struct ct_sym *out);

#endif
