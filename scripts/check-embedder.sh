#!/usr/bin/env bash
# Builds tests/embedder (a crate outside the workspace that depends on crawldedup by path),
# runs it, and checks with `cargo tree` that it builds the project's copies of sled and
# html5ever (vendor/*/PATCH.md) and never upstream sled. CI runs it; so can anyone:
#   sh scripts/check-embedder.sh
set -euo pipefail
cd "$(dirname "$0")/.."
manifest=tests/embedder/Cargo.toml
# The embedder resolves its own lock file; started from the project's, it gets the versions
# the project is tested with.
cp Cargo.lock tests/embedder/Cargo.lock
cargo run --quiet --manifest-path "$manifest" --target-dir target/embedder

tree=$(cargo tree --manifest-path "$manifest" --edges normal,build --prefix none)
fail() { echo "scripts/check-embedder.sh: $*" >&2; exit 1; }
grep -q '^crawldedup-sled v0\.34\.7 (.*/vendor/sled)' <<<"$tree" \
    || fail "the embedder does not build vendor/sled"
grep -q '^crawldedup-html5ever v0\.40\.1 (.*/vendor/html5ever)' <<<"$tree" \
    || fail "the embedder does not build vendor/html5ever"
if grep -q '^sled v' <<<"$tree"; then
    fail "the embedder builds upstream sled: $(grep '^sled v' <<<"$tree" | head -1)"
fi
# html5ever from crates.io is scraper's own dependency; crawldedup's parser must be the copy.
crawldedup_deps=$(cargo tree --manifest-path "$manifest" --edges normal --depth 2 --prefix depth \
    | sed -n 's/^2//p')
grep -q '^crawldedup-html5ever v' <<<"$crawldedup_deps" \
    || fail "crawldedup does not depend on vendor/html5ever"
grep -q '^crawldedup-sled v' <<<"$crawldedup_deps" \
    || fail "crawldedup does not depend on vendor/sled"
echo "embedder: builds crawldedup-sled and crawldedup-html5ever from vendor/, no upstream sled"
