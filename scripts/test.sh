#!/usr/bin/env bash
# Runs the whole test suite: unit tests, plugin state-machine tests and the
# integration tests against real headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The official Python MCP SDK, for tests/mcp.rs (a second, independent client).
WABP_TEST_PYTHON="$(bash scripts/test-python.sh)"
export WABP_TEST_PYTHON
# Node.js with the TypeScript MCP SDK (tests/clients.rs) and the UI-kit
# pages, built (tests/uikits.rs).
WABP_TEST_NODE="$(bash scripts/test-node.sh)"
export WABP_TEST_NODE
# The browserless platform (tests/fleet.rs attaches engines to it).
WABP_TEST_BROWSERLESS="$(bash scripts/test-browserless.sh)"
export WABP_TEST_BROWSERLESS
# HAProxy, the balancer tests/fleet.rs puts in front of engines; the
# deployment files, checked against their schemas.
bash scripts/fleet.sh prepare
bash scripts/check-deploy.sh
# Session folders (Chromium profiles included) go to one place that each run
# clears, so repeated runs never fill the disk.
TMPDIR="$PWD/target/test-tmp"
rm -rf "$TMPDIR" && mkdir -p "$TMPDIR"
export TMPDIR
# Browser tests share one engine per test binary; two threads keep 2 cores busy.
cargo test --workspace --locked -- --test-threads=2
cargo test --manifest-path plugins/Cargo.toml --locked -p standard-waits -p standard-policy
# Kept after a failure, for a look; gone after a pass.
rm -rf "$TMPDIR"
