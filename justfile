# dossier: serve a company's public information to AI agents.
# `just` lists the recipes.

set shell := ["bash", "-euo", "pipefail", "-c"]

# List the recipes.
default:
    @just --list

# Compile content/ and serve it on 127.0.0.1:8080 (flags pass through, e.g. `just serve --addr 0.0.0.0:9000`).
serve *ARGS:
    cargo run --profile local -- serve {{ARGS}}

# Compile content/ into build/ (flags pass through, e.g. `just build --base-url https://info.example.com`).
build *ARGS:
    cargo run --profile local -- build {{ARGS}}

# Run every test: cargo test, then others' tools (OpenAPI, OAuth, MCP clients and conformance, schemathesis, Chromium).
test:
    command -v redis-server >/dev/null || (apt-get update -qq && apt-get install -y -qq --no-install-recommends redis-server)
    cargo test --all-targets
    # The auth suite again, with revocations and rate limits in Redis instead of redb.
    DOSSIER_TEST_STORE=redis cargo test --test tests auth_flow::
    # Python tools in a virtual environment of the project's own, never the system's Python.
    test -x target/venv/bin/python || python3 -m venv target/venv
    target/venv/bin/python -m pip install --quiet --disable-pip-version-check -r tests/external/requirements.txt
    npm ci --prefix tests/external/node --no-audit --no-fund --silent
    command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium)
    command -v jq >/dev/null || (apt-get update -qq && apt-get install -y -qq --no-install-recommends jq curl)
    bash conformance/run.sh
    target/venv/bin/python -m pytest -q tests/external

# Formatting and lints, as CI enforces them.
lint:
    cargo fmt --check
    cargo clippy --all-targets -- -D warnings
    just doc

# The code's documentation, private items included (for contributors), with warnings denied.
doc:
    RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --document-private-items

# Load benchmark: dossier against nginx on the same build/, as ratios; writes benches/results/.
bench *ARGS:
    cargo build --release
    test -x target/venv/bin/python || python3 -m venv target/venv
    target/venv/bin/python -m pip install --quiet --disable-pip-version-check matplotlib
    target/venv/bin/python benches/http_bench.py {{ARGS}}

# Edit-to-live latency of hot reload: 50 edits on the sample and on 10,000 generated pages.
bench-reload *ARGS:
    cargo build --release
    python3 benches/reload_bench.py {{ARGS}}

# Scale: build, start, one-page edit to live, RSS and /api/company size at 1k, 10k and 50k pages.
bench-scale *ARGS:
    cargo build --release
    python3 benches/scale_bench.py {{ARGS}}

# Fuzz every parser of untrusted bytes for SECONDS each (crashes land in fuzz/artifacts/<target>/).
fuzz SECONDS="60":
    command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
    RUSTC_BOOTSTRAP=1 cargo fuzz build -s none --debug-assertions
    mkdir -p fuzz/corpus
    for target in $(cargo fuzz list); do \
        mkdir -p fuzz/corpus/$target; \
        RUSTC_BOOTSTRAP=1 cargo fuzz run -s none --debug-assertions $target fuzz/corpus/$target fuzz/seeds/$target -- \
            -max_total_time={{SECONDS}} -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 2>&1 \
            | grep -E '^Done|ERROR|panicked|SUMMARY' | sed "s/^/$target: /"; \
        test "${PIPESTATUS[0]}" -eq 0 || { echo "$target: failed; see fuzz/artifacts/$target"; exit 1; }; \
    done

# Upload build/ to S3 with each file's type from the manifest (AWS CLI), e.g. `just deploy-s3 s3://bucket --dry-run`.
deploy-s3 TARGET *ARGS:
    python3 deploy/s3.py build {{TARGET}} {{ARGS}}
