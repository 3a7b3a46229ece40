#!/usr/bin/env bash
# Idempotent set-up for building and running wabp on Debian: Chromium
# (headless-shell for the default engine, full chromium for --headed) and the
# wasm32-wasip2 target the plugins build for.
set -euo pipefail

SUDO=""
if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null; then SUDO="sudo"; fi

if ! command -v chromium-headless-shell >/dev/null || ! command -v chromium >/dev/null; then
  echo "setup: installing chromium and chromium-headless-shell" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-headless-shell >/dev/null
fi

if ! rustup target list --installed | grep -qx wasm32-wasip2; then
  echo "setup: adding the wasm32-wasip2 target" >&2
  rustup target add wasm32-wasip2
fi
