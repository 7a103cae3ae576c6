#!/usr/bin/env bash
# The PostgreSQL server binaries the journal tests start a throwaway server with
# (crates/reloop-journal-pg/tests): installs Debian's `postgresql` package when no server is
# found, then prints the folder holding initdb, pg_ctl and postgres (for RELOOP_PG_BIN).
# The tests start their own server on a Unix socket in a temporary folder; nothing here starts
# or configures one.
set -euo pipefail

find_bin() {
  if [ -n "${RELOOP_PG_BIN:-}" ] && [ -x "$RELOOP_PG_BIN/initdb" ]; then
    echo "$RELOOP_PG_BIN"
    return
  fi
  # Debian keeps the server's programs out of PATH, one folder per major version: the newest.
  local newest
  newest=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$newest" ] && [ -x "$newest/initdb" ]; then
    echo "$newest"
    return
  fi
  if command -v initdb >/dev/null 2>&1; then
    dirname "$(command -v initdb)"
  fi
}

bin=$(find_bin)
if [ -z "$bin" ]; then
  echo "installing postgresql (the journal tests start a real PostgreSQL server)" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  bin=$(find_bin)
fi
if [ -z "$bin" ]; then
  echo "no PostgreSQL server binaries (initdb) after installing postgresql" >&2
  exit 1
fi
echo "$bin"
