# serve.sh - starts `corotracer serve` for a test (sourced; needs COROTRACER).
# serve_start TRACE ERR [OPTION...]: runs it on TRACE on a free port, stderr to
# ERR; sets spid (its pid) and url (with the token; empty if it printed none in 20 s).
serve_start() {
  _t=$1 _e=$2
  shift 2
  "$COROTRACER" serve "$_t" --addr 127.0.0.1:0 "$@" 2> "$_e" &
  spid=$!
  _i=0
  while ! grep -q "http://" "$_e" && [ $_i -lt 200 ]; do sleep 0.1; _i=$((_i + 1)); done
  url=$(sed -n 's/.* at \(http:.*\)/\1/p' "$_e")
}
