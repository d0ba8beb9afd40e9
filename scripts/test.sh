#!/usr/bin/env bash
# The whole test suite, set-up included: installs the real language servers the tests
# start and the dataset with tests (idempotent, quick on a second run), then runs every
# test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-servers.sh
scripts/install-datasets.sh
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --all-targets --no-fail-fast
else
  cargo test --all-targets --no-fail-fast
fi
