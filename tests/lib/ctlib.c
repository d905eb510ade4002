/* ctlib.c - helpers shared by the engine's C tests, tools and benchmarks. */
#include "ctlib.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* End of the JSON value starting at p (a string, number, literal, object or
 * array), or NULL if the line ends first. Only as strict as a test needs. */
static const char *skip_value(const char *p) {
  int depth = 0;
  for (;;) {
    switch (*p) {
    case '\0':
    case '\n':
      return NULL;
    case '"':
      for (p++; *p != '"'; p++) {
        if (*p == '\0')
          return NULL;
        if (*p == '\\' && p[1] != '\0')
          p++;
      }
      p++;
      if (depth == 0)
        return p;
      continue;
    case '{':
    case '[':
      depth++;
      break;
    case '}':
    case ']':
      if (depth == 0)
        return p; /* end of the enclosing object */
      depth--;
      if (depth == 0)
        return p + 1;
      break;
    case ',':
      if (depth == 0)
        return p;
      break;
    default:
      break;
    }
    p++;
  }
}

/* Parse the pair at p (after '{' or a ','): fills kv, returns the end of its
 * value, or NULL at the end of the object or on malformed input. */
static const char *next_pair(const char *p, struct ct_jkv *kv) {
  while (*p == ' ' || *p == ',')
    p++;
  if (*p != '"')
    return NULL;
  const char *k = p + 1;
  const char *kend = strchr(k, '"');
  if (kend == NULL || kend[1] != ':')
    return NULL;
  const char *v = kend + 2;
  while (*v == ' ')
    v++;
  const char *vend = skip_value(v);
  if (vend == NULL)
    return NULL;
  kv->key = k;
  kv->klen = (size_t)(kend - k);
  kv->val = v;
  kv->vlen = (size_t)(vend - v);
  if (*v == '"') { /* hand out a string without its quotes */
    kv->val++;
    kv->vlen -= 2;
  }
  return vend;
}

int ct_json_split(const char *line, struct ct_jkv *kv, int max) {
  const char *p = strchr(line, '{');
  if (p == NULL)
    return -1;
  p++;
  int n = 0;
  while (n < max && (p = next_pair(p, &kv[n])) != NULL)
    n++;
  return n;
}

const struct ct_jkv *ct_json_find(const struct ct_jkv *kv, int n, const char *key) {
  size_t klen = strlen(key);
  for (int i = 0; i < n; i++)
    if (kv[i].klen == klen && memcmp(kv[i].key, key, klen) == 0)
      return &kv[i];
  return NULL;
}

const char *ct_json_raw(const char *line, const char *key, size_t *len) {
  size_t klen = strlen(key);
  const char *p = strchr(line, '{');
  if (p == NULL)
    return NULL;
  struct ct_jkv kv;
  for (p++; (p = next_pair(p, &kv)) != NULL;) {
    if (kv.klen == klen && memcmp(kv.key, key, klen) == 0) {
      *len = kv.vlen;
      return kv.val;
    }
  }
  return NULL;
}

int ct_parse_u64(const char *v, size_t len, uint64_t *out) {
  uint64_t x = 0;
  if (len > 2 && v[0] == '0' && v[1] == 'x') {
    if (len > 18)
      return -EINVAL;
    for (size_t i = 2; i < len; i++) {
      char c = v[i];
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0)
        return -EINVAL;
      x = x << 4 | (uint64_t)d;
    }
  } else {
    if (len == 0 || len > 20)
      return -EINVAL;
    for (size_t i = 0; i < len; i++) {
      if (v[i] < '0' || v[i] > '9')
        return -EINVAL;
      uint64_t nx = x * 10 + (uint64_t)(v[i] - '0');
      if (nx / 10 != x)
        return -EINVAL;
      x = nx;
    }
  }
  *out = x;
  return 0;
}

int ct_json_u64(const char *line, const char *key, uint64_t *out) {
  size_t len;
  const char *v = ct_json_raw(line, key, &len);
  if (v == NULL)
    return -ENOENT;
  return ct_parse_u64(v, len, out);
}

int ct_json_is(const char *line, const char *type) {
  size_t len;
  const char *v = ct_json_raw(line, "type", &len);
  if (type == NULL)
    return v == NULL;
  return v != NULL && len == strlen(type) && memcmp(v, type, len) == 0;
}

void ct_die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("test: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

uint64_t ct_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

pid_t ct_spawn(char *const argv[]) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0)
    ct_die("fork: %s", strerror(errno));
  if (pid == 0) {
    execvp(argv[0], argv);
    fprintf(stderr, "test: exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  return pid;
}

int ct_wait(pid_t pid) {
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR)
      ct_die("waitpid %d: %s", (int)pid, strerror(errno));
  return st;
}

int ct_exit_code(int wstatus) {
  if (WIFSIGNALED(wstatus))
    return 128 + WTERMSIG(wstatus);
  return WEXITSTATUS(wstatus);
}

void ct_self_path(char *buf, size_t size) {
  ssize_t n = readlink("/proc/self/exe", buf, size - 1);
  if (n < 0 || (size_t)n >= size - 1)
    ct_die("readlink /proc/self/exe failed");
  buf[n] = '\0';
}
