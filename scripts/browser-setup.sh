#!/usr/bin/env bash
# The browser tests/serve.rs drives `reloop serve` in: Debian's `chromium` (installed with apt
# when missing) and npm's `playwright-core` (from tests/serve/package.json and its lock, into
# target/browser), which drives the system chromium (executablePath /usr/bin/chromium). Never
# `npx playwright install`: that downloads browsers from the internet. Idempotent and quiet: a
# stamp records what was installed, so a second run does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
trap 'rm -f "$log"' EXIT
fail() { echo "browser-setup: $1 failed:" >&2; cat "$log" >&2; exit 1; }

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v npm >/dev/null 2>&1 || need+=(nodejs npm)
if [[ ${#need[@]} -gt 0 ]]; then
  echo "browser-setup: installing ${need[*]}" >&2
  apt-get update -qq >"$log" 2>&1 || fail "apt-get update"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >"$log" 2>&1 || fail "apt-get install ${need[*]}"
fi

DIR=target/browser
STAMP="$DIR/.installed"
want="$(cat tests/serve/package.json tests/serve/package-lock.json | cksum)"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" && -d "$DIR/node_modules/playwright-core" ]]; then
  exit 0
fi
mkdir -p "$DIR"
rm -f "$STAMP"
cp tests/serve/package.json tests/serve/package-lock.json "$DIR/"
(cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error >"$log" 2>&1) || fail "npm ci playwright-core"
echo "$want" > "$STAMP"
