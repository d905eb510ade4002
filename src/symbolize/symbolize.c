/* symbolize.c - code address -> function and file:line with elfutils' libdwfl.
 *
 * Design: every distinct file gets its own offline Dwfl, reported at load bias
 * 0, so module addresses are the ELF's own virtual addresses. A pc is
 * translated to that space through the caller's mapping (pc - start + offset =
 * file offset) and the file's PT_LOAD headers (file offset -> p_vaddr). This
 * works the same for PIE executables, shared libraries and non-PIE programs,
 * and one file mapped by several processes is opened once.
 *
 * Names are the symbol table's (or, for inlined code, DWARF's linkage name or
 * name), demangled by demangle.c for their common forms. */
#include "symbolize/symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/grow.h"
#include "symbolize/demangle.h"

/* One file on disk, opened lazily on the first lookup that needs it. */
struct sym_file {
  char *path;
  Dwfl *dwfl;           /* NULL until loaded, or when loading failed */
  Dwfl_Module *mod;     /* the file's only module, at bias 0 */
  int tried;            /* loading was attempted (do not retry a missing file) */
  char *build_id;       /* the id the trace recorded (hex), NULL when it gave none */
  int stale;            /* the file on disk has another build id: offsets only */
  struct sym_var *vars; /* DWARF's variables at fixed addresses, by address */
  size_t nvars, capvars;
  int vars_built;
  size_t nload;
  GElf_Phdr *load; /* PT_LOAD headers, for file offset -> vaddr */
};

/* A variable DWARF places at a fixed address (a global or static object):
 * where it is defined. file is libdw's, valid while the file's Dwfl lives. */
struct sym_var {
  uint64_t addr; /* ELF vaddr */
  const char *name, *file;
  int line;
};

/* One mapping: [start, end) of process pid maps file offsets from offset. */
struct sym_map {
  uint32_t pid;
  int is_static; /* addresses are the ELF's own vaddrs (no map) */
  uint64_t start, end, offset;
  size_t file; /* index into files */
};

/* What a cached lookup was: a code address (ct_symbolize's is_return_address
 * 0 or 1), a data address (ct_symbolize_data) or a destroy's return address
 * (ct_symbolize_event_site). */
enum { LOOKUP_PC, LOOKUP_RET, LOOKUP_DATA, LOOKUP_DESTROY };

struct cache_ent {
  uint64_t pc;
  uint32_t pid;
  uint8_t used, kind; /* LOOKUP_* */
  struct ct_sym sym;
  int rc;
};

/* A text site: its token and what the program named (owned). */
struct text_site {
  uint64_t site; /* 0: a free entry */
  char *file, *function;
  int line;
};

struct ct_symbolizer {
  struct sym_file *files;
  size_t nfiles, capfiles;
  struct sym_map *maps;
  size_t nmaps, capmaps;
  struct cache_ent *cache; /* open addressing, power-of-two size */
  size_t ncache, capcache;
  char **names; /* demangled names handed out, freed with the symbolizer */
  size_t nnames, capnames;
  char **skip; /* the caller's --skip-frames patterns, after the built-in ones */
  size_t nskip, capskip;
  struct text_site *texts; /* open addressing by token, power-of-two size */
  size_t ntexts, captexts;
};

/* Frames that are the runtime's, not the user's: our SDK's inline wrappers,
 * and the runtimes of the adapters in include/corotracer. */
static const char *const builtin_skip[] = {"corotracer_*", "corotracer::*", "boost::*",
                                           "std::*",       "asio::*",       "/usr/include/*"};

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

int ct_symbolizer_new(ct_symbolizer **out) {
  ct_symbolizer *s = calloc(1, sizeof *s);
  if (!s)
    return -ENOMEM;
  *out = s;
  return 0;
}

void ct_symbolizer_free(ct_symbolizer *s) {
  if (!s)
    return;
  for (size_t i = 0; i < s->nfiles; i++) {
    if (s->files[i].dwfl)
      dwfl_end(s->files[i].dwfl);
    free(s->files[i].path);
    free(s->files[i].build_id);
    free(s->files[i].vars);
    free(s->files[i].load);
  }
  for (size_t i = 0; i < s->nnames; i++)
    free(s->names[i]);
  free(s->names);
  for (size_t i = 0; i < s->nskip; i++)
    free(s->skip[i]);
  free(s->skip);
  for (size_t i = 0; i < s->captexts; i++) {
    free(s->texts[i].file);
    free(s->texts[i].function);
  }
  free(s->texts);
  free(s->files);
  free(s->maps);
  free(s->cache);
  free(s);
}

/* Index of path in files, adding it if new; -errno on failure. */
static long file_index(ct_symbolizer *s, const char *path) {
  for (size_t i = 0; i < s->nfiles; i++)
    if (strcmp(s->files[i].path, path) == 0)
      return (long)i;
  int rc = ct_grow((void **)&s->files, &s->capfiles, s->nfiles + 1, sizeof *s->files, 16);
  if (rc)
    return rc;
  char *dup = strdup(path);
  if (!dup)
    return -ENOMEM;
  s->files[s->nfiles] = (struct sym_file){.path = dup};
  return (long)s->nfiles++;
}

static int add_map(ct_symbolizer *s, struct sym_map m, const char *path) {
  if (!path || !*path)
    return -EINVAL;
  long fi = file_index(s, path);
  if (fi < 0)
    return (int)fi;
  int rc = ct_grow((void **)&s->maps, &s->capmaps, s->nmaps + 1, sizeof *s->maps, 16);
  if (rc)
    return rc;
  m.file = (size_t)fi;
  s->maps[s->nmaps++] = m;
  /* A new mapping may change earlier answers (e.g. a re-read /proc/PID/maps). */
  if (s->cache)
    memset(s->cache, 0, s->capcache * sizeof *s->cache);
  s->ncache = 0;
  return 0;
}

int ct_symbolizer_add_module(ct_symbolizer *s, uint32_t pid, uint64_t start, uint64_t end,
                             uint64_t offset, const char *path) {
  if (end <= start)
    return -EINVAL;
  return add_map(s, (struct sym_map){.pid = pid, .start = start, .end = end, .offset = offset},
                 path);
}

/* The entry of token site in s->texts (a free one if absent); NULL if none. */
static struct text_site *text_slot(const ct_symbolizer *s, uint64_t site) {
  if (!s->captexts)
    return NULL;
  size_t mask = s->captexts - 1, i = (size_t)((site * 0x9e3779b97f4a7c15ull) >> 32) & mask;
  while (s->texts[i].site && s->texts[i].site != site)
    i = (i + 1) & mask;
  return &s->texts[i];
}

int ct_symbolizer_add_text(ct_symbolizer *s, uint64_t site, const char *file, int line,
                           const char *function) {
  if (!(site & CT_SYM_TEXT_BIT))
    return -EINVAL;
  if ((s->ntexts + 1) * 2 > s->captexts) { /* at most half full */
    size_t cap = s->captexts ? s->captexts * 2 : 64;
    struct text_site *old = s->texts;
    size_t oldcap = s->captexts;
    if (!(s->texts = calloc(cap, sizeof *s->texts))) {
      s->texts = old;
      return -ENOMEM;
    }
    s->captexts = cap;
    for (size_t i = 0; i < oldcap; i++)
      if (old[i].site)
        *text_slot(s, old[i].site) = old[i];
    free(old);
  }
  struct text_site *t = text_slot(s, site);
  if (t->site)
    return 0;
  char *f = strdup(file), *fn = strdup(function);
  if (!f || !fn) {
    free(f);
    free(fn);
    return -ENOMEM;
  }
  *t = (struct text_site){site, f, fn, line};
  s->ntexts++;
  return 0;
}

int ct_symbolizer_skip_frames(ct_symbolizer *s, const char *patterns) {
  for (const char *p = patterns; *p;) {
    size_t k = strcspn(p, ",");
    if (k) {
      char *dup = strndup(p, k);
      if (!dup || ct_grow((void **)&s->skip, &s->capskip, s->nskip + 1, sizeof *s->skip, 16)) {
        free(dup);
        return -ENOMEM;
      }
      s->skip[s->nskip++] = dup;
    }
    p += k + (p[k] == ',');
  }
  return 0;
}

int ct_symbolizer_add_static(ct_symbolizer *s, const char *path) {
  return add_map(s, (struct sym_map){.is_static = 1, .end = UINT64_MAX}, path);
}

/* Marks f stale when the trace recorded a build id for it and the loaded
 * file holds another one, or none: it is not the file that ran. */
static void check_build_id(struct sym_file *f) {
  const unsigned char *bits;
  GElf_Addr vaddr;
  if (!f->build_id || !f->mod)
    return;
  int n = dwfl_module_build_id(f->mod, &bits, &vaddr);
  size_t k = strlen(f->build_id);
  f->stale = n <= 0 || k != 2 * (size_t)n;
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; !f->stale && i < n; i++)
    f->stale = f->build_id[2 * i] != digits[bits[i] >> 4] ||
               f->build_id[2 * i + 1] != digits[bits[i] & 15];
}

int ct_symbolizer_set_build_id(ct_symbolizer *s, const char *path, const char *build_id) {
  if (!path || !*path || !build_id || !*build_id)
    return -EINVAL;
  long fi = file_index(s, path);
  if (fi < 0)
    return (int)fi;
  struct sym_file *f = &s->files[fi];
  if (f->build_id)
    return 0;
  if (!(f->build_id = strdup(build_id)))
    return -ENOMEM;
  for (char *c = f->build_id; *c; c++)
    if (*c >= 'A' && *c <= 'F')
      *c = (char)(*c - 'A' + 'a');
  if (f->tried) { /* loaded already: judge it now, and forget its answers */
    check_build_id(f);
    if (s->cache)
      memset(s->cache, 0, s->capcache * sizeof *s->cache);
    s->ncache = 0;
  }
  return 0;
}

const char *ct_symbolizer_stale(const ct_symbolizer *s, size_t i) {
  for (size_t k = 0; s && k < s->nfiles; k++)
    if (s->files[k].stale && i-- == 0)
      return s->files[k].path;
  return NULL;
}

/* Opens f once; leaves f->dwfl NULL when the file cannot be read. */
static void load_file(struct sym_file *f) {
  if (f->tried)
    return;
  f->tried = 1;
  int fd = open(f->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  Dwfl *dwfl = dwfl_begin(&offline_callbacks);
  if (!dwfl) {
    close(fd);
    return;
  }
  dwfl_report_begin(dwfl);
  /* ET_DYN with add_p_vaddr at base 0: module addresses = the ELF's p_vaddr. */
  Dwfl_Module *mod = dwfl_report_elf(dwfl, f->path, f->path, fd, 0, true);
  dwfl_report_end(dwfl, NULL, NULL);
  if (!mod) { /* fd is consumed only on success */
    close(fd);
    goto fail;
  }
  GElf_Addr bias = 0;
  Elf *elf = dwfl_module_getelf(mod, &bias);
  size_t nph = 0;
  if (!elf || elf_getphdrnum(elf, &nph) != 0)
    goto fail;
  f->load = calloc(nph ? nph : 1, sizeof *f->load);
  if (!f->load)
    goto fail;
  for (size_t i = 0; i < nph; i++) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
      f->load[f->nload++] = ph;
  }
  f->dwfl = dwfl;
  f->mod = mod;
  check_build_id(f);
  return;
fail:
  dwfl_end(dwfl);
}

/* File offset -> ELF vaddr through the PT_LOAD headers; 0 if none holds it. */
static int offset_to_vaddr(const struct sym_file *f, uint64_t off, uint64_t *vaddr) {
  for (size_t i = 0; i < f->nload; i++) {
    const GElf_Phdr *ph = &f->load[i];
    if (off >= ph->p_offset && off - ph->p_offset < ph->p_filesz) {
      *vaddr = ph->p_vaddr + (off - ph->p_offset);
      return 1;
    }
  }
  return 0;
}

/* The newest mapping of pid (or of any process) that holds pc; NULL if none. */
static const struct sym_map *find_map(const ct_symbolizer *s, uint32_t pid, uint64_t pc) {
  for (size_t i = s->nmaps; i-- > 0;) {
    const struct sym_map *m = &s->maps[i];
    if (m->is_static)
      continue;
    if (pid && m->pid && m->pid != pid)
      continue;
    if (pc >= m->start && pc < m->end)
      return m;
  }
  /* Files without a map take any address their own symbol table knows. */
  for (size_t i = s->nmaps; i-- > 0;) {
    const struct sym_map *m = &s->maps[i];
    if (!m->is_static)
      continue;
    struct sym_file *f = &s->files[m->file];
    load_file(f);
    if (f->mod) {
      Dwarf_Addr lo = 0, hi = 0;
      dwfl_module_info(f->mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
      if (pc >= lo && pc < hi)
        return m;
    }
  }
  return NULL;
}

/* The compile unit holding module address a. dwfl_module_addrdie needs
 * .debug_aranges, which clang does not emit by default (and libdw 0.188 does
 * not fall back): then walk the units. Returns 1 when found. */
static int find_unit(Dwfl_Module *mod, Dwarf_Addr a, Dwarf_Die *cudie, Dwarf_Addr *bias) {
  Dwarf_Die *d = dwfl_module_addrdie(mod, a, bias);
  /* Checked: with .debug_aranges for only some units (a gcc-built library
   * linked into a clang-built program), the unit found may not hold a. */
  if (d && dwarf_haspc(d, a - *bias) == 1) {
    *cudie = *d;
    return 1;
  }
  Dwarf *dw = dwfl_module_getdwarf(mod, bias);
  Dwarf_CU *cu = NULL;
  while (dw && dwarf_get_units(dw, cu, &cu, NULL, NULL, cudie, NULL) == 0)
    if (dwarf_haspc(cudie, a - *bias) == 1)
      return 1;
  return 0;
}

static int skip_match(const char *pattern, const char *name, const char *file) {
  return (name && fnmatch(pattern, name, 0) == 0) || (file && fnmatch(pattern, file, 0) == 0);
}

/* Name for matching when our demangler gives up (long template
 * arguments): the outermost namespace spelled out, the rest left mangled
 * ("_ZN5boost6fibers..." -> "boost::6fibers..."), enough for "ns::*". */
static const char *outer_scope(const char *m, char *buf, size_t n) {
  const char *p = m + 2;
  p += *p == 'Z'; /* a local entity: the function holding it */
  p += *p == 'N';
  p += *p == 'K';
  if (strncmp(p, "St", 2) == 0) {
    snprintf(buf, n, "std::%s", p + 2);
    return buf;
  }
  char *end;
  unsigned long k = strtoul(p, &end, 10);
  if (end == p || k == 0 || strlen(end) < k)
    return m;
  snprintf(buf, n, "%.*s::%s", (int)k, end, end + k);
  return buf;
}

/* An inlined frame to skip: its function (demangled) or the file its code
 * is in matches a built-in or the caller's pattern. */
static int skip_frame(const ct_symbolizer *s, const char *mangled, const char *file) {
  char buf[512];
  const char *name = mangled;
  if (mangled && strncmp(mangled, "_Z", 2) == 0)
    name = ct_demangle(mangled, buf, sizeof buf) ? buf : outer_scope(mangled, buf, sizeof buf);
  for (size_t i = 0; i < sizeof builtin_skip / sizeof *builtin_skip; i++)
    if (skip_match(builtin_skip[i], name, file))
      return 1;
  for (size_t i = 0; i < s->nskip; i++)
    if (skip_match(s->skip[i], name, file))
      return 1;
  return 0;
}

/* A destructor: mangled (D0 to D5, then Ev: one takes no parameters; maybe a
 * clone suffix such as .cold), or as DWARF names it (~T, ns::T::~T). */
static int is_destructor(const char *name) {
  if (!name)
    return 0;
  if (strncmp(name, "_Z", 2) != 0)
    return name[0] == '~' || strstr(name, "::~") != NULL;
  size_t n = strcspn(name, ".");
  return n >= 4 && name[n - 4] == 'D' && name[n - 3] >= '0' && name[n - 3] <= '5' &&
         name[n - 2] == 'E' && name[n - 1] == 'v';
}

/* A site inside an inlined call of a skipped frame (include/corotracer.h's
 * wrappers: the default site of corotracer_suspend(co, NULL, ...) is the
 * library's return address, which lands in the inlined wrapper; a runtime's
 * template inlined into the user's function): the file and line of that
 * call, one level closer to the user's code. */
static void call_site(Dwarf_Die *cudie, Dwarf_Die *inl, struct ct_sym *out) {
  Dwarf_Attribute attr;
  Dwarf_Word line, file;
  Dwarf_Files *files;
  size_t nfiles;
  if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &attr), &line) == 0)
    out->line = (int)line;
  if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &attr), &file) == 0 &&
      dwarf_getsrcfiles(cudie, &files, &nfiles) == 0 && file < nfiles) {
    const char *f = dwarf_filesrc(files, file, NULL, NULL);
    if (f)
      out->file = f;
  }
}

/* The innermost DIE under parent whose code holds pc, in *out: 1 when found.
 * libdw 0.188's dwarf_getscopes passes over a function defined inside a DIE
 * with no code of its own (it prunes the abstract instance of an inline
 * function, and with it the local classes it holds: the out-of-line
 * operator() of a lambda in an inlined function, where ASan's builds keep a
 * handler's lambda; it then answered an unrelated function, and the report
 * named the line of the Asio call inlined there, not the user's): here a
 * scope that does not hold pc is searched too, for its local classes. Only
 * when dwarf_getscopes failed: the whole unit may be walked. */
static int pc_die(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out, int depth) {
  Dwarf_Die c;
  if (depth > 64 || dwarf_child(parent, &c) != 0)
    return 0;
  do {
    int tag = dwarf_tag(&c);
    int code =
        tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block;
    if (code && dwarf_haspc(&c, pc) == 1) {
      if (!pc_die(&c, pc, out, depth + 1))
        *out = c;
      return 1;
    }
    /* A scope without pc: its local classes' functions lie elsewhere. */
    if ((code || tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
         tag == DW_TAG_structure_type || tag == DW_TAG_union_type) &&
        pc_die(&c, pc, out, depth + 1))
      return 1;
  } while (dwarf_siblingof(&c, &c) == 0);
  return 0;
}

/* The scopes holding module address pc in cudie's unit, innermost first (as
 * dwarf_getscopes_die), in *scopes (the caller frees it); their count. */
static int pc_scopes(Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die **scopes) {
  Dwarf_Die *inner = NULL, found;
  int n = dwarf_getscopes(cudie, pc, &inner);
  if (n > 1 && dwarf_haspc(&inner[0], pc) == 1)
    n = dwarf_getscopes_die(inner, scopes);
  else
    n = pc_die(cudie, pc, &found, 0) ? dwarf_getscopes_die(&found, scopes) : 0;
  free(inner);
  return n;
}

/* File and line of a, and the name of the function the line is in when that
 * code was inlined (the symbol table names only the function it was inlined
 * into, which would pair one function's name with another's source line).
 * destroyer: inlined destructors are skipped too (ct_symbolize_event_site). */
static void dwarf_info(const ct_symbolizer *s, Dwfl_Module *mod, Dwarf_Addr a, int destroyer,
                       struct ct_sym *out) {
  Dwarf_Die cudie, *scopes = NULL;
  Dwarf_Addr bias = 0;
  if (!find_unit(mod, a, &cudie, &bias))
    return;
  Dwarf_Line *ln = dwarf_getsrc_die(&cudie, a - bias);
  int line = 0;
  const char *file = ln ? dwarf_linesrc(ln, NULL, NULL) : NULL;
  if (file && dwarf_lineno(ln, &line) == 0) {
    out->file = file;
    out->line = line;
  }
  /* The innermost scope, then the scopes it is nested in as compiled (an
   * inlined call inside another inlined call inside the function). */
  int n = pc_scopes(&cudie, a - bias, &scopes);
  for (int i = 0; i < n; i++) { /* innermost first */
    int tag = dwarf_tag(&scopes[i]);
    if (tag == DW_TAG_inlined_subroutine) {
      Dwarf_Attribute attr;
      const char *name =
          dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name, &attr));
      if (!name)
        name = dwarf_diename(&scopes[i]);
      const char *decl = dwarf_decl_file(&scopes[i]);
      if (skip_frame(s, name, out->file) || (decl && skip_frame(s, NULL, decl)) ||
          (destroyer && (is_destructor(name) || is_destructor(dwarf_diename(&scopes[i]))))) {
        call_site(&cudie, &scopes[i], out); /* the runtime's (or teardown): where it was called */
        continue;
      }
      if (name)
        out->function = name;
    }
    if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram)
      break;
  }
  free(scopes);
}

/* The demangled form of out->function, owned by s, when there is one. */
static void demangle_function(ct_symbolizer *s, struct ct_sym *out) {
  char buf[512];
  if (!out->function || !ct_demangle(out->function, buf, sizeof buf))
    return;
  char *dup = strdup(buf);
  if (!dup || ct_grow((void **)&s->names, &s->capnames, s->nnames + 1, sizeof *s->names, 16)) {
    free(dup); /* no memory: the mangled name will do */
    return;
  }
  s->names[s->nnames++] = dup;
  out->function = dup;
}

/* The uncached lookup of a code address, kind LOOKUP_PC, _RET or _DESTROY. */
static int lookup_code(ct_symbolizer *s, uint32_t pid, uint64_t pc, int kind, struct ct_sym *out) {
  memset(out, 0, sizeof *out);
  if (pc & CT_SYM_TEXT_BIT) { /* a text site: as the program named it */
    const struct text_site *t = text_slot(s, pc);
    if (!t || !t->site)
      return -ENOENT;
    out->function = t->function[0] ? t->function : NULL;
    out->file = t->file[0] ? t->file : NULL;
    out->line = t->line;
    out->module = t->file; /* no module: the named file stands for one */
    return 0;
  }
  const struct sym_map *m = find_map(s, pid, pc);
  if (!m)
    return -ENOENT;
  struct sym_file *f = &s->files[m->file];
  out->module = f->path;
  load_file(f);
  uint64_t vaddr;
  if (m->is_static) {
    vaddr = pc;
  } else {
    uint64_t off = pc - m->start + m->offset;
    /* An unreadable file still gives module + file offset, and so does a
     * rebuilt one (its lines would be another program's). */
    if (!f->mod || f->stale || !offset_to_vaddr(f, off, &vaddr)) {
      out->offset = off;
      return 0;
    }
  }
  out->offset = vaddr;
  if (!f->mod || f->stale)
    return 0;
  /* A return address points after the call: the call itself is at pc - 1. */
  Dwarf_Addr a = kind != LOOKUP_PC && vaddr ? vaddr - 1 : vaddr;
  out->function = dwfl_module_addrname(f->mod, a);
  dwarf_info(s, f->mod, a, kind == LOOKUP_DESTROY, out);
  demangle_function(s, out);
  return 0;
}

/* qsort order of struct sym_var: by address. */
static int cmp_var(const void *a, const void *b) {
  const struct sym_var *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The fixed address of a variable whose DW_AT_location is attr, into *addr:
 * 0 when it is one operation naming an address, DW_OP_addr (gcc, DWARF 4)
 * or an index into .debug_addr, DW_OP_addrx (clang, DWARF 5); else -1. */
static int var_addr(Dwarf_Attribute *attr, Dwarf_Addr *addr) {
  Dwarf_Op *ops;
  size_t nops;
  Dwarf_Attribute at;
  if (dwarf_getlocation(attr, &ops, &nops) != 0 || nops != 1)
    return -1;
  if (ops[0].atom == DW_OP_addr) {
    *addr = ops[0].number;
    return 0;
  }
  if (ops[0].atom != DW_OP_addrx && ops[0].atom != DW_OP_GNU_addr_index)
    return -1;
  return dwarf_getlocation_attr(attr, &ops[0], &at) == 0 && dwarf_formaddr(&at, addr) == 0 ? 0 : -1;
}

/* The file that declares die, in the unit cu: dwarf_decl_file, or where
 * it gives none (elfutils 0.188 refuses DWARF 5's file 0, the unit's own
 * source, which clang names there) the unit's file table at that index. */
static const char *decl_file(Dwarf_Die *die, Dwarf_Die *cu) {
  const char *file = dwarf_decl_file(die);
  Dwarf_Attribute attr;
  Dwarf_Word idx;
  Dwarf_Files *files;
  size_t n;
  if (file || dwarf_formudata(dwarf_attr(die, DW_AT_decl_file, &attr), &idx) != 0 ||
      dwarf_getsrcfiles(cu, &files, &n) != 0 || idx >= n)
    return file;
  return dwarf_filesrc(files, idx, NULL, NULL);
}

/* Adds the variables at fixed addresses under die (DW_AT_location a lone
 * address: globals, statics, static locals) of the unit cu to f->vars;
 * bias turns DWARF's addresses into the module's. depth bounds the
 * recursion. */
static void index_vars(struct sym_file *f, Dwarf_Die *cu, Dwarf_Die *die, Dwarf_Addr bias,
                       int depth) {
  Dwarf_Die child;
  if (depth > 32 || dwarf_child(die, &child) != 0)
    return;
  do {
    int tag = dwarf_tag(&child);
    Dwarf_Attribute attr;
    Dwarf_Addr a;
    int line = 0;
    if (tag == DW_TAG_variable && dwarf_attr(&child, DW_AT_location, &attr) &&
        var_addr(&attr, &a) == 0 &&
        ct_grow((void **)&f->vars, &f->capvars, f->nvars + 1, sizeof *f->vars, 64) == 0) {
      dwarf_decl_line(&child, &line);
      f->vars[f->nvars++] =
          (struct sym_var){a + bias, dwarf_diename(&child), decl_file(&child, cu), line};
    } else if (tag == DW_TAG_namespace || tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block ||
               tag == DW_TAG_module) {
      index_vars(f, cu, &child, bias, depth + 1);
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

/* Where the object at ELF vaddr v of f is defined (DWARF), into out, and
 * for a C name its source name (a function's static "event" is symbol
 * "event.2"); the index is built on the first data lookup in f. */
static void var_decl(struct sym_file *f, uint64_t v, struct ct_sym *out) {
  if (!f->vars_built) {
    f->vars_built = 1;
    Dwarf_Addr bias = 0;
    Dwarf *dw = dwfl_module_getdwarf(f->mod, &bias);
    Dwarf_CU *cu = NULL;
    Dwarf_Die cudie;
    while (dw && dwarf_get_units(dw, cu, &cu, NULL, NULL, &cudie, NULL) == 0)
      index_vars(f, &cudie, &cudie, bias, 0);
    if (f->nvars)
      qsort(f->vars, f->nvars, sizeof *f->vars, cmp_var);
  }
  size_t lo = 0, hi = f->nvars;
  while (lo < hi) { /* the first at or after v */
    size_t mid = lo + (hi - lo) / 2;
    if (f->vars[mid].addr < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < f->nvars && f->vars[lo].addr == v) {
    out->file = f->vars[lo].file;
    out->line = f->vars[lo].line;
    if (f->vars[lo].name && strncmp(out->function, "_Z", 2) != 0)
      out->function = f->vars[lo].name;
  }
}

/* The uncached lookup of a data address: the object (a symbol of the
 * symbol table, STT_OBJECT or STT_TLS excluded) of a module of pid holding
 * addr. The module's load bias comes from its mapping at file offset 0 and
 * its first PT_LOAD (which starts the file): data lies in writable or
 * anonymous (.bss) mappings the trace does not list. */
static int lookup_data(ct_symbolizer *s, uint32_t pid, uint64_t addr, struct ct_sym *out) {
  memset(out, 0, sizeof *out);
  for (size_t i = s->nmaps; i-- > 0;) {
    const struct sym_map *m = &s->maps[i];
    if (m->is_static || m->offset != 0 || (pid && m->pid && m->pid != pid))
      continue;
    struct sym_file *f = &s->files[m->file];
    load_file(f);
    if (!f->mod || f->stale || !f->nload || f->load[0].p_offset != 0 ||
        m->start < f->load[0].p_vaddr)
      continue;
    uint64_t v = addr - (m->start - f->load[0].p_vaddr);
    int inside = 0;
    for (size_t k = 0; k < f->nload && !inside; k++)
      inside = v >= f->load[k].p_vaddr && v - f->load[k].p_vaddr < f->load[k].p_memsz;
    if (!inside)
      continue;
    GElf_Off off = 0;
    GElf_Sym sym;
    const char *name = dwfl_module_addrinfo(f->mod, v, &off, &sym, NULL, NULL, NULL);
    if (!name || GELF_ST_TYPE(sym.st_info) != STT_OBJECT || (sym.st_size && off >= sym.st_size))
      return -ENOENT;
    out->function = name;
    out->module = f->path;
    out->offset = off;
    var_decl(f, v - off, out);
    demangle_function(s, out);
    return 0;
  }
  return -ENOENT;
}

static uint64_t hash_key(uint32_t pid, uint64_t pc, int kind) {
  uint64_t h = pc * 0x9E3779B97F4A7C15ull ^ ((uint64_t)pid << 2 | (uint64_t)kind);
  return h ^ (h >> 29);
}

/* Slot of the key in the cache, growing it first when it is half full. */
static struct cache_ent *cache_slot(ct_symbolizer *s, uint32_t pid, uint64_t pc, int kind) {
  if (s->ncache * 2 >= s->capcache) {
    size_t ncap = s->capcache ? s->capcache * 2 : 256;
    struct cache_ent *nc = calloc(ncap, sizeof *nc);
    if (!nc)
      return NULL;
    for (size_t i = 0; i < s->capcache; i++) {
      struct cache_ent *e = &s->cache[i];
      if (!e->used)
        continue;
      size_t j = hash_key(e->pid, e->pc, e->kind) & (ncap - 1);
      while (nc[j].used)
        j = (j + 1) & (ncap - 1);
      nc[j] = *e;
    }
    free(s->cache);
    s->cache = nc;
    s->capcache = ncap;
  }
  size_t j = hash_key(pid, pc, kind) & (s->capcache - 1);
  while (s->cache[j].used &&
         !(s->cache[j].pc == pc && s->cache[j].pid == pid && s->cache[j].kind == kind))
    j = (j + 1) & (s->capcache - 1);
  return &s->cache[j];
}

/* The lookup of kind (LOOKUP_*), through the cache. */
static int cached(ct_symbolizer *s, uint32_t pid, uint64_t a, int kind, struct ct_sym *out) {
  struct cache_ent *e = cache_slot(s, pid, a, kind);
  if (e && e->used) {
    *out = e->sym;
    return e->rc;
  }
  int rc = kind == LOOKUP_DATA ? lookup_data(s, pid, a, out) : lookup_code(s, pid, a, kind, out);
  if (e) { /* else no memory for the cache: answered all the same */
    *e = (struct cache_ent){
        .pc = a, .pid = pid, .used = 1, .kind = (uint8_t)kind, .sym = *out, .rc = rc};
    s->ncache++;
  }
  return rc;
}

int ct_symbolize(ct_symbolizer *s, uint32_t pid, uint64_t pc, int is_return_address,
                 struct ct_sym *out) {
  return cached(s, pid, pc, is_return_address ? LOOKUP_RET : LOOKUP_PC, out);
}

int ct_symbolize_event_site(ct_symbolizer *s, uint32_t pid, uint64_t site, int destroy,
                            struct ct_sym *out) {
  return cached(s, pid, site, destroy ? LOOKUP_DESTROY : LOOKUP_RET, out);
}

int ct_symbolize_data(ct_symbolizer *s, uint32_t pid, uint64_t addr, struct ct_sym *out) {
  return cached(s, pid, addr, LOOKUP_DATA, out);
}
