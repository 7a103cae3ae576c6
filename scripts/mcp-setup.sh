#!/usr/bin/env bash
# Installs the official MCP Python SDK that tests/mcp.rs uses to run real MCP servers (stdio and
# streamable HTTP) against reloop:
#   target/mcp/venv          Python venv with mcp (PyPI)
# Idempotent and quiet: a stamp file records what was installed, so a second run does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

MCP_VERSION=2.3.0   # newest mcp on PyPI when pinned
DIR=target/mcp
STAMP="$DIR/.installed"
want="mcp=$MCP_VERSION"

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" && -x "$DIR/venv/bin/python" ]]; then
  exit 0
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
fail() { echo "mcp-setup: $1 failed:" >&2; cat "$log" >&2; exit 1; }

mkdir -p "$DIR"
rm -f "$STAMP"
if [[ ! -x "$DIR/venv/bin/python" ]]; then
  if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
    echo "mcp-setup: installing python3-venv" >&2
    apt-get update -qq >"$log" 2>&1 || fail "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >"$log" 2>&1 || fail "apt-get install python3-venv"
  fi
  rm -rf "$DIR/venv"
  python3 -m venv "$DIR/venv" >"$log" 2>&1 || fail "python3 -m venv"
fi
"$DIR/venv/bin/python" -m pip install -q --disable-pip-version-check "mcp==$MCP_VERSION" >"$log" 2>&1 \
  || fail "pip install mcp==$MCP_VERSION"

echo "$want" > "$STAMP"
