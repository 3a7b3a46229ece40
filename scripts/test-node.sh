#!/usr/bin/env bash
# Idempotent: Node.js (Debian's package if the machine has none) and the
# JavaScript clients the suite drives the engine with (tests/clients: the
# official TypeScript MCP SDK, pinned by its package-lock.json). Prints the
# path of `node`.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "setup: installing nodejs and npm" >&2
  SUDO=""
  if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm >/dev/null
fi
CLIENTS="tests/clients"
# npm ci again only when the lock file changed since the last install.
STAMP="$CLIENTS/node_modules/.wabp-lock"
if ! cmp -s "$CLIENTS/package-lock.json" "$STAMP" 2>/dev/null; then
  echo "setup: npm ci in $CLIENTS" >&2
  (cd "$CLIENTS" && npm ci --no-audit --no-fund --loglevel=error >&2)
  cp "$CLIENTS/package-lock.json" "$STAMP"
fi
command -v node
