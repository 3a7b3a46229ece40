#!/usr/bin/env bash
# Idempotent: a virtualenv with the official Python MCP SDK (tests/mcp.rs's
# second client), requests and httpx (tests/clients.rs drives the REST API
# with them) and openapi-spec-validator (tests/browser.rs checks the OpenAPI
# document with it). Prints the interpreter's path.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="target/test-venv"
MCP_VERSION="2.3.0"
OAS_VERSION="0.9.0"
REQUESTS_VERSION="2.34.2"
HTTPX_VERSION="0.28.1"
if ! "$VENV/bin/python" -c "import mcp, openapi_spec_validator, importlib.metadata as m; assert m.version('mcp') == '$MCP_VERSION'; assert m.version('openapi-spec-validator') == '$OAS_VERSION'; assert m.version('requests') == '$REQUESTS_VERSION'; assert m.version('httpx') == '$HTTPX_VERSION'" 2>/dev/null; then
  echo "setup: creating $VENV with mcp==$MCP_VERSION" >&2
  rm -rf "$VENV"
  if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv >/dev/null
    rm -rf "$VENV"
    python3 -m venv "$VENV"
  fi
  "$VENV/bin/pip" install -q --disable-pip-version-check "mcp==$MCP_VERSION" "openapi-spec-validator==$OAS_VERSION" "requests==$REQUESTS_VERSION" "httpx==$HTTPX_VERSION" >&2
fi
echo "$PWD/$VENV/bin/python"
