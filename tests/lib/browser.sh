# browser.sh - for the dashboard's browser tests: skip (77) without chromium,
# node or npm; install playwright-core (tests/browser/package.json) into the
# gitignored tests/browser/node_modules once. fail and skip: tests/lib/check.sh
# (sourced by the test, before it calls browser_setup).
browser_setup() {
  for t in chromium node npm; do
    command -v $t >/dev/null 2>&1 || skip "$t not installed (sh scripts/install-deps.sh)"
  done
  [ -d tests/browser/node_modules/playwright-core ] ||
    npm install --prefix tests/browser --no-audit --no-fund --loglevel=error >/dev/null ||
    { fail "npm install playwright-core"; check_done; }
}
