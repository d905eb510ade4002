/* demangle.c - a demangler for the Itanium C++ names a site can have (nested
 * and local names, anonymous namespaces, constructors, destructors, operators,
 * lambdas, ABI tags, thunks), because __cxa_demangle would pull libstdc++
 * into a C binary. It prints the name only: template arguments as <...>, no
 * parameter list, no return type; a thunk as the function it adjusts `this`
 * for. What it cannot read (a substitution as a name's prefix, a conversion
 * operator) stays mangled. Used by symbolize.c only. */
#include "symbolize/demangle.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dm {
  const char *p, *e; /* the mangled name still to read */
  char *o;           /* output, NUL-terminated */
  size_t n, len;
  int ok;
  const char *id; /* the last source name (a constructor's class) */
  size_t k;
};

static void put(struct dm *d, const char *str, size_t k) {
  if (d->len + k + 1 > d->n) {
    d->ok = 0;
    return;
  }
  memcpy(d->o + d->len, str, k);
  d->len += k;
  d->o[d->len] = 0;
}

static void puts_(struct dm *d, const char *str) {
  put(d, str, strlen(str));
}

/* Whether the next characters are s (and skips them if so). */
static int eat(struct dm *d, const char *s) {
  size_t k = strlen(s);
  if ((size_t)(d->e - d->p) < k || memcmp(d->p, s, k) != 0)
    return 0;
  d->p += k;
  return 1;
}

/* [digits]: their value; 0 when none (v bounds it). */
static size_t number(struct dm *d) {
  size_t v = 0;
  for (; d->p < d->e && *d->p >= '0' && *d->p <= '9'; d->p++)
    if ((v = v * 10 + (size_t)(*d->p - '0')) > 4096)
      d->ok = 0;
  return v;
}

/* <length><identifier> into d->id, d->k; 0 if malformed. */
static int source_name(struct dm *d) {
  if (d->p >= d->e || *d->p < '1' || *d->p > '9')
    return 0;
  size_t v = number(d);
  if (!d->ok || (size_t)(d->e - d->p) < v)
    return 0;
  d->id = d->p;
  d->k = v;
  d->p += v;
  return 1;
}

static void put_id(struct dm *d) {
  if (d->k >= 10 && memcmp(d->id, "_GLOBAL__N", 10) == 0)
    puts_(d, "(anonymous namespace)");
  else
    put(d, d->id, d->k);
}

/* Skips types and arguments until depth (the openers already read) is back
 * to 0: from an 'I' with depth 0 its template arguments through their 'E'; with
 * depth 1 a parameter list through its closing 'E'. Only the end matters.
 * A lambda's closure type (Ul...E[n]_) ends with its number, marked in lam.
 * 0 on a form it does not know. */
static int skip(struct dm *d, int depth) {
  uint64_t lam = 0;       /* bit i: the opener at depth i is a lambda's */
  const char *id = d->id; /* the names skipped are no constructor's class */
  size_t k = d->k;
  do {
    if (d->p >= d->e || depth >= 63)
      return 0;
    char c = *d->p;
    if (c >= '1' && c <= '9') {
      if (!source_name(d))
        return 0;
      continue;
    }
    if (eat(d, "Ul") || eat(d, "LZ") || eat(d, "DT") || eat(d, "Dt") || eat(d, "L_Z")) {
      lam |= (uint64_t)(d->p[-2] == 'U') << ++depth;
      continue;
    }
    if (eat(d, "Ut")) { /* an unnamed type: Ut[n]_ */
      number(d);
      if (!eat(d, "_"))
        return 0;
      continue;
    }
    if (c == '_') { /* a local name's discriminator: _<digit> or __<n>_ */
      d->p++;
      if (eat(d, "_")) {
        number(d);
        if (!eat(d, "_"))
          return 0;
      } else if (d->p < d->e && *d->p >= '0' && *d->p <= '9') {
        d->p++;
      } else {
        return 0;
      }
      continue;
    }
    if (strchr("INJXFZ", c)) {
      depth++;
    } else if (c == 'E') {
      d->p++;
      if (lam >> depth & 1) { /* the lambda's number: [n]_ */
        lam &= ~((uint64_t)1 << depth);
        number(d);
        if (!eat(d, "_"))
          return 0;
      }
      depth--;
      continue;
    } else if (c == 'L' || c == 'S' || c == 'T' || c == 'A') {
      /* literal L<type><value>E (an enum's type a name: skipped first);
       * substitution S_ / S<seq>_ (St Sa Ss...: two letters); template
       * parameter T_ / T<n>_; array A<n>_ */
      if (c == 'L' && d->p + 1 < d->e && d->p[1] == 'N') {
        d->p++;
        if (!skip(d, 0))
          return 0;
      } else if (c == 'L' && d->p + 1 < d->e && d->p[1] >= '1' && d->p[1] <= '9') {
        d->p++;
        if (!source_name(d))
          return 0;
      }
      if (c == 'S' && d->p + 1 < d->e && strchr("tabsiod", d->p[1])) {
        d->p += 2;
        continue;
      }
      const char *end = memchr(d->p, c == 'L' ? 'E' : '_', (size_t)(d->e - d->p));
      if (!end)
        return 0;
      d->p = end;
    } else if (c == 'D' || (c == 'C' && d->p + 1 < d->e && strchr("12345", d->p[1]))) {
      d->p++; /* Dp, Dn, Da..., a destructor D1, a constructor C1: two letters */
    } else if (!((c >= 'a' && c <= 'z') || strchr("PRKVOMCGBU", c))) {
      return 0; /* builtin types, qualifiers, pointers, ABI tags: one letter */
    }
    d->p++;
  } while (depth > 0);
  d->id = id;
  d->k = k;
  return d->ok;
}

/* The operators, by their two-letter codes (a conversion operator, cv,
 * names a type: not read). */
static const char *const operators[][2] = {
    {"nw", "new"}, {"na", "new[]"}, {"dl", "delete"}, {"da", "delete[]"}, {"ps", "+"},
    {"ng", "-"},   {"ad", "&"},     {"de", "*"},      {"co", "~"},        {"pl", "+"},
    {"mi", "-"},   {"ml", "*"},     {"dv", "/"},      {"rm", "%"},        {"an", "&"},
    {"or", "|"},   {"eo", "^"},     {"aS", "="},      {"pL", "+="},       {"mI", "-="},
    {"mL", "*="},  {"dV", "/="},    {"rM", "%="},     {"aN", "&="},       {"oR", "|="},
    {"eO", "^="},  {"ls", "<<"},    {"rs", ">>"},     {"lS", "<<="},      {"rS", ">>="},
    {"eq", "=="},  {"ne", "!="},    {"lt", "<"},      {"gt", ">"},        {"le", "<="},
    {"ge", ">="},  {"ss", "<=>"},   {"nt", "!"},      {"aa", "&&"},       {"oo", "||"},
    {"pp", "++"},  {"mm", "--"},    {"cm", ","},      {"pm", "->*"},      {"pt", "->"},
    {"cl", "()"},  {"ix", "[]"},    {"qu", "?"},      {"aw", "co_await"},
};

/* One component of a name (a source name with its ABI tags, a constructor
 * or destructor, an operator, a lambda, an unnamed type), then its template
 * arguments as <...>. 0 on a form it does not know. */
static int unqualified(struct dm *d) {
  char c = d->p < d->e ? *d->p : 0;
  char num[48];
  if (c >= '1' && c <= '9') {
    if (!source_name(d))
      return 0;
    put_id(d);
    const char *id = d->id;
    size_t k = d->k;
    while (eat(d, "B")) /* ABI tags ([abi:cxx11]): not shown */
      if (!source_name(d))
        return 0;
    d->id = id;
    d->k = k;
  } else if ((c == 'C' || c == 'D') && d->id && d->p + 1 < d->e && strchr("012345I", d->p[1])) {
    if (c == 'D')
      put(d, "~", 1); /* constructor or destructor: the class's name */
    put_id(d);
    d->p += 2;
    if (d->p[-1] == 'I') /* an inheriting constructor: CI1 <base class> */
      return 0;
  } else if (eat(d, "Ul")) { /* a lambda: {lambda()#n} */
    int none = eat(d, "vE");
    if (!none && !skip(d, 1))
      return 0;
    size_t i = d->p < d->e && *d->p != '_' ? number(d) + 2 : 1;
    if (!eat(d, "_"))
      return 0;
    snprintf(num, sizeof num, "{lambda(%s)#%zu}", none ? "" : "...", i);
    puts_(d, num);
  } else if (eat(d, "Ut")) {
    size_t i = d->p < d->e && *d->p != '_' ? number(d) + 2 : 1;
    if (!eat(d, "_"))
      return 0;
    snprintf(num, sizeof num, "{unnamed type#%zu}", i);
    puts_(d, num);
  } else {
    size_t i = 0;
    while (i < sizeof operators / sizeof *operators && !eat(d, operators[i][0]))
      i++;
    if (i == sizeof operators / sizeof *operators)
      return 0; /* a conversion operator, a substitution, ... */
    puts_(d, "operator");
    puts_(d, operators[i][1]);
  }
  if (d->p < d->e && *d->p == 'I') {
    if (!skip(d, 0))
      return 0;
    put(d, "<...>", 5);
  }
  return d->ok;
}

/* std's abbreviations that stand for a whole component. */
static int std_abbrev(struct dm *d) {
  static const char *const ab[][2] = {
      {"Sa", "std::allocator"}, {"Sb", "std::basic_string"}, {"Ss", "std::string"},
      {"Si", "std::istream"},   {"So", "std::ostream"},      {"Sd", "std::iostream"},
  };
  for (size_t i = 0; i < sizeof ab / sizeof *ab; i++)
    if (eat(d, ab[i][0])) {
      puts_(d, ab[i][1]);
      return 1;
    }
  return 0;
}

/* <name>: nested (N...E), local (Z<encoding>E<entity>) or unscoped, printed.
 * 0 on a form it does not know. */
static int name(struct dm *d, int depth) {
  if (depth > 8)
    return 0;
  if (eat(d, "Z")) { /* a local entity: its function, then itself */
    if (!name(d, depth + 1) || !skip(d, 1))
      return 0;
    put(d, "::", 2);
    if (eat(d, "s")) {
      puts_(d, "string literal");
      return d->ok;
    }
    return name(d, depth + 1);
  }
  if (eat(d, "N")) {
    while (d->p < d->e && strchr("rVKRO", *d->p))
      d->p++; /* qualifiers of a member function */
    for (int first = 1; d->ok && d->p < d->e && *d->p != 'E'; first = 0) {
      if (!first)
        put(d, "::", 2);
      eat(d, "L"); /* internal linkage */
      if (first && eat(d, "St"))
        puts_(d, "std");
      else if (!(first && std_abbrev(d)) && !unqualified(d))
        return 0;
    }
    return eat(d, "E") && d->ok;
  }
  if (eat(d, "St"))
    puts_(d, "std::");
  return unqualified(d);
}

/* A call offset of a thunk: h<offset>_ or v<offset>_<offset>_. */
static int call_offset(struct dm *d) {
  int parts = eat(d, "h") ? 1 : eat(d, "v") ? 2 : 0;
  for (int i = 0; i < parts; i++) {
    eat(d, "n");
    number(d);
    if (!eat(d, "_"))
      return 0;
  }
  return parts > 0;
}

/* <encoding> after "_Z": a function's or a thunk's name, printed. 0 on a form
 * it does not know, or on data (vtables, typeinfo, guard variables: no site). */
static int encoding(struct dm *d) {
  if (eat(d, "Th") || eat(d, "Tv")) { /* a thunk: the function it enters */
    d->p--;
    if (!call_offset(d))
      return 0;
  } else if (eat(d, "Tc")) { /* a covariant return thunk: two offsets */
    if (!call_offset(d) || !call_offset(d))
      return 0;
  } else if (d->p < d->e && (*d->p == 'T' || *d->p == 'G')) {
    return 0;
  }
  eat(d, "L"); /* internal linkage */
  return name(d, 0);
}

/* demangle.h: the name part, a clone suffix in letters kept; a C name's
 * clone suffix read alike. */
int ct_demangle(const char *m, char *out, size_t n) {
  const char *dot = strchr(m, '.'); /* mangled names have none: a clone's suffix */
  const char *last = strrchr(m, '.');
  struct dm d = {m + 2, dot ? dot : m + strlen(m), out, n, 0, 1, NULL, 0};
  out[0] = 0;
  if (strncmp(m, "_Z", 2) != 0) { /* a C name: only a clone suffix to read */
    if (!dot || dot == m)
      return 0;
    put(&d, m, (size_t)(dot - m));
  } else if (!encoding(&d)) {
    return 0;
  }
  /* A clone suffix in letters (".cold"; not ".part.0", ".isra.0"). GCC's
   * coroutine ".actor"/".destroy" are the user's body itself: named as it. */
  if (last && last[1] && strspn(last + 1, "abcdefghijklmnopqrstuvwxyz_") == strlen(last + 1) &&
      strcmp(last, ".actor") != 0 && strcmp(last, ".destroy") != 0)
    put(&d, last, strlen(last));
  return d.ok;
}
