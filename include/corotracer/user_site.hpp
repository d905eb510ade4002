// corotracer/user_site.hpp - the user's return address on a stack, for adapters of runtimes we did
// not write.
//
// An adapter hooked into a runtime (Boost.Fiber's scheduler, Asio's handler
// tracking) runs several runtime frames below the user's code. find() scans
// the stack words between two addresses for the innermost return address
// that lies in the main executable's code, follows a call instruction and is
// not in a runtime's function (boost::, std::, asio::, corotracer:: by the
// executable's symbol table): the user's line, found without unwinding (tens
// of ns), or one in a runtime function that calls the user's code directly
// (an entry: Boost.Fiber's worker_context, Asio's handler completions),
// where the compiler may have inlined the user's function: the frames beyond
// an entry are the runtime's loop and whoever started it. Inlined runtime code around the address
// is skipped by the report's symbolizer (docs/INTEGRATIONS.md).
//
// Limits: user code outside the main executable (a shared library) is not
// found; a stripped executable has no symbol table, so out-of-line runtime
// templates in it are not skipped. Then find() returns the best it has, or
// nullptr.
#ifndef COROTRACER_USER_SITE_HPP
#define COROTRACER_USER_SITE_HPP

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

// Memo::find's hit, inline into the hooks; not forced under AddressSanitizer,
// where GCC inlines no uninstrumented (no_sanitize_address) function into
// instrumented code and a forced inline is an error. COROTRACER_US_ASAN: under
// it, a teardown scan passes over poisoned words (find_word).
#if defined(__SANITIZE_ADDRESS__)
#define COROTRACER_US_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COROTRACER_US_ASAN 1
#endif
#endif
#ifdef COROTRACER_US_ASAN
#include <sanitizer/asan_interface.h>
#define COROTRACER_US_INLINE
#else
#define COROTRACER_US_INLINE [[gnu::always_inline]]
#endif

namespace corotracer::user_site {
namespace detail {

// The main executable's code and the runtime functions in it, absolute addresses.
struct ExeMap {
  std::uintptr_t bias = 0, lo = 0, hi = 0;
  struct Range {
    std::uintptr_t start, end;
    bool entry;    // calls the user's code directly: it may be inlined there
    bool composed; // an entry that is an Asio composed operation's operator() (is_composed)
    bool operator<(const Range &o) const noexcept {
      return start < o.start;
    }
  };
  std::vector<Range> runtime; // sorted
  // The user's teardown code, sorted: destructors and coroutine destroy
  // clones. Only scans with Skip::teardown go past them.
  std::vector<Range> teardown;
};

// A name reserved to the implementation: a C name starting "__", or a C++
// one whose first namespace does (__sanitizer, __tsan, __gnu_cxx, ...). Not
// the user's code, though linked into the executable: a sanitizer's runtime
// (a stale return address into it, left in a frame under ThreadSanitizer,
// was taken for the user's line), the C library's start files.
inline bool reserved(const char *name) noexcept {
  if (name[0] == '_' && name[1] == '_')
    return true;
  if (std::strncmp(name, "_ZN", 3) != 0 && std::strncmp(name, "_ZZN", 4) != 0)
    return false;
  const char *p = name + (name[2] == 'Z' ? 4 : 3);
  if (*p == 'K')
    p++;
  const char *digits = p;
  while (*p >= '0' && *p <= '9')
    p++;
  return p > digits && p[0] == '_' && p[1] == '_';
}

// Mangled-name prefixes of the runtimes' namespaces (plain and const
// members, and their local entities such as lambdas), the global operator
// new and delete (a sanitizer's replacement is linked into the executable: a
// stale return address into ThreadSanitizer's operator delete was taken for
// a destroyer's line), and reserved names.
inline bool is_runtime(const char *name) noexcept {
  static const char *const prefixes[] = {"_ZN5boost",
                                         "_ZNK5boost",
                                         "_ZZN5boost",
                                         "_ZZNK5boost",
                                         "_ZNSt",
                                         "_ZNKSt",
                                         "_ZSt",
                                         "_ZZNSt",
                                         "_ZN4asio",
                                         "_ZNK4asio",
                                         "_ZZN4asio",
                                         "_ZN27asio_handler_invoke_helpers",
                                         "_ZN33boost_asio_handler_invoke_helpers",
                                         "_ZN10corotracer",
                                         "_ZNK10corotracer",
                                         "_ZZN10corotracer",
                                         "corotracer_",
                                         "_Znw",
                                         "_Zna",
                                         "_Zdl",
                                         "_Zda"};
  for (const char *p : prefixes)
    if (std::strncmp(name, p, std::strlen(p)) == 0)
      return true;
  return reserved(name);
}

// Runtime functions that call the user's function (and may inline it):
// Boost.Fiber's fiber entry, Asio's completions, and the standard library's
// callers of a callable (std::thread's _M_run, std::function's _M_invoke),
// where a thread's or callback's lambda body usually ends up inlined.
inline bool is_entry(const char *name) noexcept {
  static const char *const markers[] = {"worker_context", "do_complete", "binder",
                                        "8complete",      "6_M_run",     "9_M_invoke",
                                        "invoke_helpers"};
  for (const char *m : markers)
    if (std::strstr(name, m))
      return true;
  return false;
}

// An Asio composed operation's operator() (asio::detail::read_op,
// write_op, range_connect_op, read_until_delim_op, composed_op, ...: a class
// template whose name ends in "_op", and its operator(), or the process()
// to which range_connect_op's operator() hands its work): an entry, since it
// calls the user's handler at its end (a lambda there is often inlined, the
// operation the lambda starts called from there), but also the function that
// starts the operation's first step, with no user code, below the user's
// call (a scan from a step passes it: find_word's `below`).
inline bool is_composed(const char *name) noexcept {
  const char *p = std::strncmp(name, "_ZN4asio6detail", 15) == 0         ? name + 15
                  : std::strncmp(name, "_ZN5boost4asio6detail", 21) == 0 ? name + 21
                                                                         : nullptr;
  if (!p)
    return false;
  char *end;
  unsigned long n = std::strtoul(p, &end, 10);
  return n > 3 && std::strlen(end) > n && std::strncmp(end + n - 3, "_opI", 4) == 0 &&
         (std::strstr(end + n, "EclE") || std::strstr(end + n, "E7processI"));
}

// A user function that tears down a coroutine: a destructor (D0, D1, D2;
// any clone of one, such as .cold), or a coroutine's destroy clone (clang's
// .destroy, .cleanup; GCC's .destroy and the .actor it calls, which also is
// the coroutine's body: GCC's frames tell the two apart only by the frame's
// resume index, not by the stack).
inline bool is_teardown(const char *name) noexcept {
  if (std::strstr(name, ".actor") || std::strstr(name, ".destroy") || std::strstr(name, ".cleanup"))
    return true;
  std::size_t n = std::strcspn(name, ".");
  return n >= 4 && name[n - 4] == 'D' && name[n - 3] >= '0' && name[n - 3] <= '2' &&
         std::strncmp(name + n - 2, "Ev", 2) == 0;
}

inline int first_module(dl_phdr_info *info, size_t, void *arg) {
  auto *m = static_cast<ExeMap *>(arg);
  m->bias = info->dlpi_addr;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
      continue;
    std::uintptr_t s = m->bias + ph.p_vaddr, e = s + ph.p_memsz;
    m->lo = m->lo && m->lo < s ? m->lo : s;
    m->hi = std::max(m->hi, e);
  }
  return 1; // the first module is the main program
}

// Runtime function ranges from the ELF symbol table of the mapped file.
inline void read_symtab(const unsigned char *f, std::size_t size, ExeMap &m) {
  const auto *eh = reinterpret_cast<const ElfW(Ehdr) *>(f);
  if (size < sizeof *eh || std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_shentsize != sizeof(ElfW(Shdr)) || eh->e_shoff > size ||
      (size - eh->e_shoff) / sizeof(ElfW(Shdr)) < eh->e_shnum)
    return;
  const auto *sh = reinterpret_cast<const ElfW(Shdr) *>(f + eh->e_shoff);
  for (unsigned i = 0; i < eh->e_shnum; i++) {
    if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
      continue;
    const ElfW(Shdr) &st = sh[sh[i].sh_link];
    if (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset || st.sh_offset > size ||
        st.sh_size > size - st.sh_offset)
      continue;
    const auto *sym = reinterpret_cast<const ElfW(Sym) *>(f + sh[i].sh_offset);
    const char *str = reinterpret_cast<const char *>(f + st.sh_offset);
    for (std::size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++) {
      if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || !sym[k].st_size ||
          sym[k].st_shndx == SHN_UNDEF || sym[k].st_name >= st.sh_size ||
          !memchr(str + sym[k].st_name, 0, st.sh_size - sym[k].st_name))
        continue;
      const char *name = str + sym[k].st_name;
      std::uintptr_t start = m.bias + sym[k].st_value, end = start + sym[k].st_size;
      bool composed = is_runtime(name) && is_composed(name);
      if (is_runtime(name))
        m.runtime.push_back({start, end, composed || is_entry(name), composed});
      else if (is_teardown(name))
        m.teardown.push_back({start, end, false, false});
    }
  }
  std::sort(m.runtime.begin(), m.runtime.end());
  std::sort(m.teardown.begin(), m.teardown.end());
}

// Out of line: the scans that call exe() keep a small frame. Out of memory,
// a map of no code (every scan finds nothing: the callers' own sites), in
// static storage: the hooks that call it cannot throw.
[[gnu::noinline]] inline ExeMap *load() noexcept {
  alignas(ExeMap) static unsigned char none[sizeof(ExeMap)];
  auto *m = new (std::nothrow) ExeMap;
  if (!m)
    return new (none) ExeMap;
  dl_iterate_phdr(first_module, m);
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  struct stat sb;
  if (fd >= 0 && fstat(fd, &sb) == 0 && sb.st_size > 0) {
    void *f = mmap(nullptr, (std::size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (f != MAP_FAILED) {
      try {
        read_symtab(static_cast<const unsigned char *>(f), (std::size_t)sb.st_size, *m);
      } catch (...) { // half a table would stop scans in runtime code: none at all
        delete m;
        m = new (none) ExeMap;
      }
      munmap(f, (std::size_t)sb.st_size);
    }
  }
  if (fd >= 0)
    close(fd);
  return m;
}

// Built once per process, never freed (adapters may run during exit).
inline const ExeMap &exe() noexcept {
  static const ExeMap *m = load();
  return *m;
}

// ra follows a call instruction (x86-64: call rel32, call through a
// register or memory; AArch64: bl, blr). Elsewhere any address passes.
__attribute__((no_sanitize_address)) inline bool after_call(std::uintptr_t ra,
                                                            std::uintptr_t lo) noexcept {
#if defined(__x86_64__)
  const auto *c = reinterpret_cast<const unsigned char *>(ra);
  return (ra - lo >= 5 && c[-5] == 0xe8) ||
         (ra - lo >= 2 && c[-2] == 0xff && (c[-1] & 0x38) == 0x10) ||
         (ra - lo >= 3 && c[-3] == 0xff && (c[-2] & 0x38) == 0x10) ||
         (ra - lo >= 6 && c[-6] == 0xff && (c[-5] & 0x38) == 0x10);
#elif defined(__aarch64__)
  if (ra - lo < 4 || ra % 4)
    return false;
  std::uint32_t insn;
  std::memcpy(&insn, reinterpret_cast<const void *>(ra - 4), 4);
  return (insn & 0xfc000000u) == 0x94000000u || (insn & 0xfffffc1fu) == 0xd63f0000u;
#else
  (void)ra, (void)lo;
  return true;
#endif
}

// The range of sorted ranges v holding pc, or nullptr. (Look a return
// address up less one: a call may be the last instruction of its function.)
inline const ExeMap::Range *range_at(const std::vector<ExeMap::Range> &v,
                                     std::uintptr_t pc) noexcept {
  auto it = std::upper_bound(v.begin(), v.end(), ExeMap::Range{pc, 0, false, false});
  return it != v.begin() && pc < std::prev(it)->end ? &*std::prev(it) : nullptr;
}

// The runtime function holding pc, or nullptr.
inline const ExeMap::Range *runtime_at(const ExeMap &m, std::uintptr_t pc) noexcept {
  return range_at(m.runtime, pc);
}

// Return address ra is in an Asio composed operation's operator().
inline bool composed_at(const ExeMap &m, std::uintptr_t ra) noexcept {
  const ExeMap::Range *r = runtime_at(m, ra - 1);
  return r && r->composed;
}

// The last verdicts on code addresses (does ra end the scan?): a two-way
// table (256 pairs, a pair in half a cache line, the newest first), each
// entry (ra << 1 | verdict) in one word, so threads racing on an entry read a
// whole entry or a miss. Two ways: a direct-mapped table whose slot two hot
// addresses shared (one code layout in a few) made every scan of theirs a
// binary search of the symbol table (bench-fiber: 9% of the traced handoff in
// find()).
inline std::atomic<std::uintptr_t> seen[512];

inline std::size_t seen_pair(std::uintptr_t ra) noexcept {
  return (std::size_t)((ra * 0x9e3779b97f4a7c15ull) >> 56) * 2;
}

// stops_scan's miss: decide ra from its code and the symbol table, and keep
// the verdict in pair i (whose first entry was v0), the older one second.
// Out of line, so the scan's loop stays a few instructions.
[[gnu::noinline]] inline bool decide(const ExeMap &m, std::uintptr_t ra, std::size_t i,
                                     std::uintptr_t v0) noexcept {
  bool stop = false;
  // The first byte of a runtime function is no return address, though it
  // follows a call: the call ending the function before was a noreturn one
  // (under ASan/UBSan a report's, which never returns), its stale word left
  // on the stack.
  const ExeMap::Range *at = runtime_at(m, ra);
  if (after_call(ra, m.lo) && !(at && at->start == ra)) {
    const ExeMap::Range *r = runtime_at(m, ra - 1);
    stop = !r || r->entry;
  }
  if (v0)
    seen[i + 1].store(v0, std::memory_order_relaxed);
  seen[i].store(ra << 1 | stop, std::memory_order_relaxed);
  return stop;
}

// Code address ra (in the executable) ends the scan: it follows a call and
// is the user's, or a runtime entry's (the user's code may be inlined there;
// beyond is the event loop). Decided once per address (decide), then a look
// in `seen`, inline in the scan (three words of the executable per scan of a
// Boost.Fiber hook: a call each was a tenth of the adapter's cost).
[[gnu::always_inline]] inline bool stops_scan(const ExeMap &m, std::uintptr_t ra) noexcept {
  std::size_t i = seen_pair(ra);
  std::uintptr_t v0 = seen[i].load(std::memory_order_relaxed);
  if (v0 >> 1 == ra)
    return v0 & 1;
  std::uintptr_t v1 = seen[i + 1].load(std::memory_order_relaxed);
  if (v1 >> 1 == ra)
    return v1 & 1;
  return decide(m, ra, i, v0);
}

} // namespace detail

// The calling thread's own stack, [lo, end), or nulls when unknown. Looked
// up once per thread and kept in plain pointers: nothing to destroy when the
// thread's storage goes. The look-up out of line: every operation start
// asks (an Asio hook's), and the hit is a load and a branch.
struct Stack {
  const char *lo = nullptr, *end = nullptr;
};
namespace detail {
[[gnu::noinline]] inline void look_up_stack(Stack &st) noexcept {
  pthread_attr_t a;
  void *lo = nullptr;
  std::size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &a) == 0) {
    if (pthread_attr_getstack(&a, &lo, &size) == 0)
      st = {static_cast<const char *>(lo), static_cast<const char *>(lo) + size};
    pthread_attr_destroy(&a);
  }
}
} // namespace detail
inline Stack thread_stack() noexcept {
  static thread_local Stack st;
  if (!st.end)
    detail::look_up_stack(st);
  return st;
}

// Words scanned at most: runtime frames between the adapter and the user.
inline constexpr std::size_t kMaxWords = 1024;

// What a scan goes past besides the runtimes' code. teardown: also the
// user's destructors and coroutine destroy clones (is_teardown), to the line
// that destroyed a coroutine (a container's erase: corotracer.hpp).
enum class Skip { runtime, teardown };

namespace detail {
// A stack word AddressSanitizer poisoned: a redzone around a frame's locals,
// which the frame never writes, so it may hold a stale return address of an
// earlier call (a scan would take it for the user's line: a client's read
// named at its connect's line, a teardown scan's destroyer past the innermost
// user frames). A real return address never lies in one.
inline bool poisoned(const std::uintptr_t *w) noexcept {
#ifdef COROTRACER_US_ASAN
  return __asan_address_is_poisoned(w);
#else
  (void)w;
  return false;
#endif
}

// The frame record (x86-64, AArch64: the saved frame pointer, then the
// return address) that the one at rec links to, when it looks like one:
// above rec and below to, aligned, its return address in the executable's
// code after a call; else nullptr.
__attribute__((no_sanitize_address)) inline const std::uintptr_t *
next_record(const ExeMap &m, const std::uintptr_t *rec, const void *to) noexcept {
  std::uintptr_t n = rec[0];
  if (n <= reinterpret_cast<std::uintptr_t>(rec) ||
      n + 2 * sizeof n > reinterpret_cast<std::uintptr_t>(to) || n % sizeof n)
    return nullptr;
  const auto *next = reinterpret_cast<const std::uintptr_t *>(n);
  return next[1] - m.lo < m.hi - m.lo && after_call(next[1], m.lo) ? next : nullptr;
}

// The return-address word of frame record rec, when the frame-pointer chain
// from it holds for two more records (code built with frame pointers, as
// sanitizer builds are: the chain is the stack's frames, and a code address
// in any other word is stale); else nullptr: without frame pointers the word
// at rec is whatever the caller kept in that register, the chain is not
// trusted, and any word may be a return address.
__attribute__((no_sanitize_address)) inline const std::uintptr_t *
chain_start(const ExeMap &m, const std::uintptr_t *rec, const void *to) noexcept {
  if (!rec || reinterpret_cast<std::uintptr_t>(rec) % sizeof *rec || rec + 2 > to)
    return nullptr;
  const std::uintptr_t *r1 = next_record(m, rec, to);
  return r1 && next_record(m, r1, to) ? rec + 1 : nullptr;
}

// find()'s scan: the stack word holding its answer, or nullptr. below: a
// word under it in an Asio composed operation's operator() is passed over
// (the operation whose first step starts now, below the user's call). rec:
// a frame record at or below from (a hook's __builtin_frame_address(0)), or
// nullptr. When the frame-pointer chain from it holds (chain_start), a word
// below the chain's last record that is not one of its return addresses is
// passed over: a stale return address that no frame overwrote (under ASan, a
// server's accept named at the line of a client connect's step, in Asio's
// range_connect_op, which had run on that thread before); the words beyond
// the chain's end are scanned as without it.
__attribute__((no_sanitize_address)) inline const std::uintptr_t *
find_word(const void *from, const void *to, Skip skip = Skip::runtime, const void *below = nullptr,
          const void *rec = nullptr) noexcept {
  const ExeMap &m = exe();
  auto *p = reinterpret_cast<const std::uintptr_t *>(
      (reinterpret_cast<std::uintptr_t>(from) + sizeof(std::uintptr_t) - 1) &
      ~(sizeof(std::uintptr_t) - 1));
  auto *end = std::min(p + kMaxWords, reinterpret_cast<const std::uintptr_t *>(to));
  const std::uintptr_t lo = m.lo, span = m.hi - m.lo; // not reloaded after each table store
  // The chain's next return-address word at or above p, while the chain holds.
  const std::uintptr_t *slot = chain_start(m, static_cast<const std::uintptr_t *>(rec), to);
  for (; p < end; p++) {
    std::uintptr_t ra = *p;
    if (ra - lo < span && stops_scan(m, ra) && !poisoned(p) &&
        (skip == Skip::runtime || !range_at(m.teardown, ra - 1)) &&
        !(static_cast<const void *>(p) < below && composed_at(m, ra))) {
      while (slot && slot < p) {
        const std::uintptr_t *next = next_record(m, slot - 1, to);
        slot = next ? next + 1 : nullptr;
      }
      if (!slot || slot == p)
        return p;
    }
  }
  return nullptr;
}
} // namespace detail

// The innermost user return address among the stack words in [from, to)
// (from: an address in the caller's frame; to: the end of that stack; at most
// kMaxWords words) or in a runtime entry, else nullptr; skip: what else it
// goes past (Skip).
// Reads the stack only; owns nothing. Safe on any thread; the first call
// reads the executable's symbol table (once per process).
// Not instrumented: the word found lies in some caller's frame, maybe in what
// AddressSanitizer marks as a redzone.
__attribute__((no_sanitize_address)) inline const void *find(const void *from, const void *to,
                                                             Skip skip = Skip::runtime) noexcept {
  const std::uintptr_t *w = detail::find_word(from, to, skip);
  return w ? reinterpret_cast<const void *>(*w) : nullptr;
}

// find() for hooks that scan the same stacks over and over (a scheduler's:
// every fiber blocking at one line leaves the same frames below the hook).
// N past answers, each under the hook frame's return address and its
// distance from the stack's end: a scan from a frame that returns to the
// same place from the same depth, where the word of the past answer holds
// that same return address again, has that answer, without a scan (about a
// third of the Boost.Fiber adapter's cost per handoff). The user frame is
// then the same one, live on the stack; only another user frame between it
// and the hook would be missed, which takes runtime frames of exactly the
// size of that frame on the other path. Two ways a set, the newest first:
// one hook frame may return to the same place at the same depth from two
// user lines that alternate (an Asio strand pipeline's post in a function
// that two stages' lambdas inline: with one way, two scans in three posts).
// One per thread: no locking.
template <std::size_t N> class Memo {
  static_assert(N >= 2 && (N & (N - 1)) == 0, "a power of two, 2 or more");

public:
  // find(frame, to) where frame is a hook's __builtin_frame_address(0) (the
  // word after it is its return address, on x86-64 and AArch64). The hit is
  // a few loads, inline in the hook (as a call, with the scan's register
  // saves, 49 of the ~570 instructions the Boost.Fiber adapter and the probe
  // add to a handoff); the miss scans out of line.
  COROTRACER_US_INLINE __attribute__((no_sanitize_address)) const void *
  find(const void *frame, const void *to) noexcept {
    auto *f = static_cast<const std::uintptr_t *>(frame);
    std::uintptr_t ret = f[1];
    std::uintptr_t depth =
        reinterpret_cast<std::uintptr_t>(to) - reinterpret_cast<std::uintptr_t>(f);
    Entry *e = &memo_[(((ret ^ depth) * 0x9e3779b97f4a7c15ull) >> (64 - kBits)) & ~std::size_t{1}];
    if (e[0].holds(f, ret, depth))
      return reinterpret_cast<const void *>(e[0].site);
    if (e[1].holds(f, ret, depth))
      return reinterpret_cast<const void *>(e[1].site);
    return miss(f, to, e, ret, depth);
  }

  // find(frame, the end of the calling thread's own stack), or nullptr when
  // frame is not on it (as find_on_thread()). Inline in the hook, as find().
  COROTRACER_US_INLINE const void *find_on_thread(const void *frame) noexcept {
    Stack st = thread_stack();
    const char *f = static_cast<const char *>(frame);
    return f >= st.lo && f < st.end ? find(frame, st.end) : nullptr;
  }

private:
  static constexpr unsigned kBits = __builtin_ctzll(N);
  struct Entry {
    std::uintptr_t ret = 0, depth = 0;
    std::size_t word = 0; // the answer's index from the frame
    std::uintptr_t site = 0;
    // The answer for a hook frame f returning to ret at depth: this one's,
    // when its word from f holds its site again.
    COROTRACER_US_INLINE __attribute__((no_sanitize_address)) bool
    holds(const std::uintptr_t *f, std::uintptr_t r, std::uintptr_t d) const noexcept {
      return ret == r && depth == d && word < d / sizeof *f && f[word] == site;
    }
  };

  // find()'s scan, its answer kept in the set's first way e[0], the one there
  // moved to e[1]. Not instrumented: the answer's word may lie in what
  // AddressSanitizer marks as a redzone (as in find()).
  [[gnu::noinline]] __attribute__((no_sanitize_address)) static const void *
  miss(const std::uintptr_t *f, const void *to, Entry *e, std::uintptr_t ret,
       std::uintptr_t depth) noexcept {
    const std::uintptr_t *w = detail::find_word(f, to, Skip::runtime, nullptr, f);
    if (!w)
      return nullptr;
    e[1] = e[0];
    e[0] = {ret, depth, static_cast<std::size_t>(w - f), *w};
    return reinterpret_cast<const void *>(*w);
  }

  Entry memo_[N];
};

// find() from `from` up to the end of the calling thread's own stack; nullptr
// when `from` is not on it (code running on a coroutine's own stack, such as
// a stackful coroutine's, whose end is not known: no scan).
inline const void *find_on_thread(const void *from, Skip skip = Skip::runtime) noexcept {
  Stack st = thread_stack();
  const char *f = static_cast<const char *>(from);
  return f >= st.lo && f < st.end ? find(from, st.end, skip) : nullptr;
}

// The address of the code calling it (inlined), or nullptr where unknown.
[[gnu::always_inline]] inline const void *here() noexcept {
  const void *pc = nullptr;
#if defined(__x86_64__)
  __asm__("lea 0(%%rip), %0" : "=r"(pc));
#elif defined(__aarch64__)
  __asm__("adr %0, ." : "=r"(pc));
#endif
  return pc;
}

// find_on_thread() for the first step of an Asio composed operation, whose
// operator() opened a location scope in the frame at `frame` (its
// __builtin_frame_address: the word after it is that function's return
// address), at code address pc (here()). When that function is a runtime's
// (the operator() out of line), the words below its return address are
// passed over: they are its callees' and its own, where a stale return
// address of an earlier handler's call may lie (a server's read, taken for a
// client's); its return address is taken when it stops a scan (the user's
// caller, or a composed operation whose handler, the user's, inlined there,
// started this one), else the scan goes on past it. Otherwise (the
// operator() inlined into the user's function, or pc unknown) the scan is
// find_on_thread()'s, passing over the composed operations' operator()s
// below that return address. Not instrumented, as find().
__attribute__((no_sanitize_address)) inline const void *
find_first_step(const void *from, const void *frame, const void *pc) noexcept {
  Stack st = thread_stack();
  const char *f = static_cast<const char *>(from);
  auto *ret = static_cast<const std::uintptr_t *>(frame) + 1;
  if (f < st.lo || f >= st.end || reinterpret_cast<const char *>(ret) < f ||
      reinterpret_cast<const char *>(ret + 1) > st.end)
    return find_on_thread(from);
  const detail::ExeMap &m = detail::exe();
  const std::uintptr_t *w;
  if (pc && detail::runtime_at(m, reinterpret_cast<std::uintptr_t>(pc)))
    w = *ret - m.lo < m.hi - m.lo && detail::stops_scan(m, *ret)
            ? ret
            : detail::find_word(ret + 1, st.end, Skip::runtime, nullptr, frame);
  else
    w = detail::find_word(from, st.end, Skip::runtime, ret, from);
  return w ? reinterpret_cast<const void *>(*w) : nullptr;
}

} // namespace corotracer::user_site

#undef COROTRACER_US_INLINE
#undef COROTRACER_US_ASAN

#endif // COROTRACER_USER_SITE_HPP
