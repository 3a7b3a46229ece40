#!/usr/bin/env bash
# Idempotent: Node.js (Debian's package if the machine has none) and the
# JavaScript clients the suite drives the engine with (tests/clients: the
# official TypeScript MCP SDK, pinned by its package-lock.json), and the
# UI-kit pages (tests/uikits: React with MUI and Headless UI, Bootstrap,
# Vue, Svelte, Angular, SortableJS, built into static pages). Prints the
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
# npm ci again only when the lock file changed since the last install.
install() {
  local dir="$1" stamp="$1/node_modules/.wabp-lock"
  if ! cmp -s "$dir/package-lock.json" "$stamp" 2>/dev/null; then
    echo "setup: npm ci in $dir" >&2
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
    cp "$dir/package-lock.json" "$stamp"
  fi
}
install tests/clients
# Pages built from real UI kits (tests/uikits/README.md): a second or two.
install tests/uikits
(cd tests/uikits && node build.mjs >&2)
command -v node
