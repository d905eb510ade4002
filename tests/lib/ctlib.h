/* ctlib.h - helpers shared by the engine's C tests, test tools and benchmarks:
 * reading fields of one JSONL trace line, running a program, failing loudly. */
#ifndef CT_TESTS_LIB_CTLIB_H
#define CT_TESTS_LIB_CTLIB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The raw text of top-level key `key` of the JSON object `line` (a string value
 * without its quotes, escapes left as they are). Returns NULL when absent. */
const char *ct_json_raw(const char *line, const char *key, size_t *len);

/* One top-level key and its raw value (as ct_json_raw gives it). */
struct ct_jkv {
  const char *key, *val;
  size_t klen, vlen;
};

/* Every top-level pair of `line`, in order, at most max of them, in one pass
 * (for checkers reading millions of lines). Returns how many, -1 if malformed. */
int ct_json_split(const char *line, struct ct_jkv *kv, int max);

/* The value of `key` in pairs from ct_json_split, or NULL. */
const struct ct_jkv *ct_json_find(const struct ct_jkv *kv, int n, const char *key);

/* Parse a raw value as an unsigned number: decimal, or a "0x..." string. */
int ct_parse_u64(const char *v, size_t len, uint64_t *out);

/* The value of `key` as an unsigned number: decimal, or a "0x..." string.
 * Returns 0 on success, -ENOENT when absent, -EINVAL when not a number. */
int ct_json_u64(const char *line, const char *key, uint64_t *out);

/* 1 when the line is a record of type `type` ("meta", "end", ...); with type
 * NULL, 1 when it is an event line (no "type" key). */
int ct_json_is(const char *line, const char *type);

/* Print "test: <message>" on stderr and exit 1. */
_Noreturn void ct_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* CLOCK_MONOTONIC in ns. */
uint64_t ct_now_ns(void);

/* Start argv[0] with argv (execvp) and return its pid, or die. */
pid_t ct_spawn(char *const argv[]);

/* waitpid() retried on EINTR; returns the wait status, or dies. */
int ct_wait(pid_t pid);

/* The exit status a shell would report: code, or 128 + signal. */
int ct_exit_code(int wstatus);

/* Absolute path of this executable (so a test can run itself as the target). */
void ct_self_path(char *buf, size_t size);

#endif
