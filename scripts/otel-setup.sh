#!/usr/bin/env bash
# Installs the real OpenTelemetry receiver tests/otel.rs sends sessions to and queries back:
#   target/otel/venv          Python venv with Arize Phoenix (PyPI: arize-phoenix), which ingests
#                             OTLP over HTTP and answers GraphQL about the spans it stored
# The tests start `phoenix serve` themselves on 127.0.0.1, with its working directory under
# target/ and its telemetry off; nothing reaches the internet.
# Idempotent and quiet: a stamp file records what was installed, so a second run does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

PHOENIX_VERSION=20.26.1   # newest arize-phoenix on PyPI when pinned
DIR=target/otel
STAMP="$DIR/.installed"
want="arize-phoenix=$PHOENIX_VERSION"

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" && -x "$DIR/venv/bin/phoenix" ]]; then
  exit 0
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
fail() { echo "otel-setup: $1 failed:" >&2; cat "$log" >&2; exit 1; }

mkdir -p "$DIR"
rm -f "$STAMP"
if [[ ! -x "$DIR/venv/bin/python" ]]; then
  if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
    echo "otel-setup: installing python3-venv" >&2
    apt-get update -qq >"$log" 2>&1 || fail "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >"$log" 2>&1 || fail "apt-get install python3-venv"
  fi
  rm -rf "$DIR/venv"
  python3 -m venv "$DIR/venv" >"$log" 2>&1 || fail "python3 -m venv"
fi
"$DIR/venv/bin/python" -m pip install -q --disable-pip-version-check "arize-phoenix==$PHOENIX_VERSION" >"$log" 2>&1 \
  || fail "pip install arize-phoenix==$PHOENIX_VERSION"

echo "$want" > "$STAMP"
