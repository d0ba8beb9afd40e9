#!/usr/bin/env bash
# The default dataset with tests (datasets/tests.txt: real releases, pinned) into
# .servers/datasets/tests by `typist dataset add`, with each package's test environment.
# Idempotent: a stamp of the list skips it when nothing changed (a second add would only
# check each archive against its registry). TYPIST=PATH uses that binary instead of
# building the debug one (which the test suite builds anyway).
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="$PWD/.servers"
dest="$prefix/datasets/tests"
list=datasets/tests.txt
log() { echo "[install-datasets] $*" >&2; }
want="$(sha256sum "$list" | cut -c1-64)"
stamp="$prefix/datasets-tests.stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$dest/dataset.toml" ]; then
  log "tests dataset up to date: $dest"
  exit 0
fi
typist="${TYPIST:-}"
if [ -z "$typist" ]; then
  cargo build --quiet --bin typist
  typist="${CARGO_TARGET_DIR:-target}/debug/typist"
fi
mapfile -t specs < <(grep -v '^#' "$list" | grep -v '^[[:space:]]*$')
log "typist dataset add $dest (${#specs[@]} packages)"
start=$SECONDS
"$typist" dataset add "$dest" "${specs[@]}"
printf '%s' "$want" >"$stamp"
log "done in $((SECONDS - start)) s: $dest"
