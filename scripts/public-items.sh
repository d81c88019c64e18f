#!/usr/bin/env bash
# Counts the library's public items, as an embedder sees them with every feature of the
# product on (`cli` and `spider`; not `testing` or `failpoints`, the tests' own): modules,
# types, traits, functions and methods, constants, statics, macros, enum variants and public
# fields (trait impls' methods are not counted: they add no name). Items under
# `#[doc(hidden)]` are counted apart. Reads rustdoc's JSON output, which needs the nightly
# toolchain (`rustup toolchain install nightly`):
#   bash scripts/public-items.sh
set -euo pipefail
cd "$(dirname "$0")/.."
dir=target/public-items
count() {
    cargo +nightly rustdoc --quiet --lib --features cli,spider --target-dir "$dir/$1" -- \
        -Z unstable-options --output-format json "${@:2}"
    python3 - "$dir/$1/doc/crawldedup.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
index = doc["index"]
kinds = {"module", "struct", "enum", "variant", "function", "trait", "constant", "static",
         "type_alias", "macro", "struct_field", "assoc_const", "assoc_type", "union"}
in_trait_impl = set()
for item in index.values():
    inner = item.get("inner", {})
    if "impl" in inner and inner["impl"].get("trait") is not None:
        in_trait_impl.update(str(i) for i in inner["impl"]["items"])
counts = {}
for id_, item in index.items():
    if item.get("crate_id") != 0 or id_ in in_trait_impl:
        continue
    kind = next(iter(item.get("inner", {})), None)
    if kind not in kinds:
        continue
    if kind not in ("variant", "assoc_const", "assoc_type") and item.get("visibility") != "public":
        # A trait's own methods are public through the trait.
        if not (kind == "function" and item.get("visibility") == "default"):
            continue
    if item.get("name") is None:
        continue
    counts[kind] = counts.get(kind, 0) + 1
print(sum(counts.values()), " ".join(f"{k}={v}" for k, v in sorted(counts.items())))
PY
}
shown=$(count shown)
all=$(count hidden --document-hidden-items)
echo "public items, documented: $shown"
echo "public items, with #[doc(hidden)] ones: $all"
