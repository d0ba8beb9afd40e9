#!/usr/bin/env bash
# The whole test suite, set-up included: installs the real language servers the tests
# start and the dataset with tests (idempotent, quick on a second run), then runs every
# test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-servers.sh
# The dataset with tests needs the registries; without them only the tests that use it
# fail (naming the script), not the whole suite.
scripts/install-datasets.sh || echo "[test] scripts/install-datasets.sh failed: the tests of the dataset with tests will fail" >&2
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --all-targets --no-fail-fast
else
  cargo test --all-targets --no-fail-fast
fi
