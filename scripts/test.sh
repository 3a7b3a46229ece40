#!/usr/bin/env bash
# Runs the whole test suite: unit tests, plugin state-machine tests and the
# integration tests against real headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The official Python MCP SDK, for tests/mcp.rs (a second, independent client).
WABP_TEST_PYTHON="$(bash scripts/test-python.sh)"
export WABP_TEST_PYTHON
# Browser tests share one engine per test binary; two threads keep 2 cores busy.
cargo test --workspace --locked -- --test-threads=2
cargo test --manifest-path plugins/Cargo.toml --locked -p standard-waits -p standard-policy
