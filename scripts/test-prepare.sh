#!/usr/bin/env bash
# Fetches and sets up what the test suite needs besides the engine (the
# Python MCP SDK, Node and its packages, the UI-kit pages, browserless,
# HAProxy, the deployment checkers). Mostly downloads: .ci/run runs it
# while the engine compiles; scripts/test.sh runs the same steps again,
# each a no-op once done.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/test-python.sh > /dev/null
bash scripts/test-node.sh > /dev/null
bash scripts/test-browserless.sh > /dev/null
bash scripts/fleet.sh prepare
bash scripts/check-deploy.sh
