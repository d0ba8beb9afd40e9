#!/bin/sh
# Recaptures fixtures/completion/*.json from the installed language servers (pyright,
# basedpyright, jedi-language-server, python-lsp-server, typescript-language-server,
# the TypeScript 7 server (typescript-native), clangd; scripts/install-servers.sh installs them). Optional arguments: profile names
# to recapture only those.
set -eu
cd "$(dirname "$0")/.."
exec cargo run --quiet --example capture_completions -- fixtures/completion "$@"
