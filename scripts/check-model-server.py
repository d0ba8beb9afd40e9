#!/usr/bin/env python3
"""Checks a freshly built llama-server before the install calls it installed.

    check-model-server.py LLAMA_SERVER MODEL.gguf

First, on x86-64, reads the binary's machine code (objdump) and refuses one with AMX or
AVX-512 instructions: the install builds for any x86-64 CPU with AVX2, and such
instructions mean it was tuned to the CPU that built it (on a machine without them the
run below would not notice). Then starts the server with the model on a free 127.0.0.1 port, with the arguments the
local-model profiles use (editors/smollm2.toml), waits for /health, asks one completion
at temperature 0, and stops it. Exit 0 when the answer came back; otherwise exit 1 with
one line saying what happened (for a crash: the signal, e.g. SIGSEGV, which is what
llama.cpp's AMX kernels did at the warm-up decode on Sapphire Rapids Xeons) and the last
lines of the server's log. Standard library only.
"""

import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

STARTUP_S = 120
ANSWER_S = 120


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path, n=15):
    try:
        with open(path, "rb") as f:
            lines = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join("    " + l for l in lines[-n:]) or "    (empty log)"


def exit_reason(code):
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by {name}"
    return f"exited with status {code}"


def fail(binary, log, what):
    print(f"[install-servers] llama-server check failed: {binary} {what}", file=sys.stderr)
    print(f"[install-servers] its last lines ({log}):\n{tail(log)}", file=sys.stderr)
    sys.exit(1)


# AMX's tile instructions, and any use of AVX-512's zmm registers.
AMX = re.compile(r"\b(ldtilecfg|sttilecfg|tileloadd|tileloaddt1|tilestored|tilerelease|tilezero|tdpb[su][su]d|tdpbf16ps|tdpfp16ps)\b")
ZMM = re.compile(r"%zmm\d")


def check_instructions(binary):
    """Counts AMX and AVX-512 instructions in the binary; exits 1 if there are any."""
    if platform.machine() != "x86_64" or shutil.which("objdump") is None:
        return
    amx = zmm = 0
    with subprocess.Popen(["objdump", "-d", "--no-show-raw-insn", binary],
                          stdout=subprocess.PIPE, text=True, errors="replace") as p:
        for line in p.stdout:
            if AMX.search(line):
                amx += 1
            elif ZMM.search(line):
                zmm += 1
    if p.returncode != 0:
        # Not an ELF file (a wrapper script): its machine code is not there to read.
        print(f"[install-servers] {binary}: objdump cannot read it; instructions not checked", file=sys.stderr)
        return
    if amx or zmm:
        print(f"[install-servers] llama-server check failed: {binary} has {amx} AMX and {zmm} AVX-512 "
              "instructions; it must be built for any x86-64 CPU (GGML_NATIVE=OFF, no AVX-512, no AMX)",
              file=sys.stderr)
        sys.exit(1)
    print("[install-servers] llama-server has no AMX or AVX-512 instructions", file=sys.stderr)


def main():
    binary, model = sys.argv[1], sys.argv[2]
    check_instructions(binary)
    port = free_port()
    log = os.path.join(tempfile.mkdtemp(prefix="llama-check-"), "llama-server.log")
    args = [binary, "-m", model, "--host", "127.0.0.1", "--port", str(port),
            "-t", "1", "-c", "2048", "--parallel", "1", "--no-cache-prompt", "--no-webui"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            code = proc.poll()
            if code is not None:
                fail(binary, log, f"{exit_reason(code)} while loading {os.path.basename(model)}")
            try:
                with urllib.request.urlopen(base + "/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                fail(binary, log, f"was not ready within {STARTUP_S} s")
            time.sleep(0.2)
        body = json.dumps({"prompt": "def add(a, b):\n", "max_tokens": 8,
                           "temperature": 0}).encode()
        req = urllib.request.Request(base + "/v1/completions", data=body,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=ANSWER_S) as r:
                answer = json.load(r)
        except (urllib.error.URLError, OSError) as e:
            code = proc.poll()
            if code is not None:
                fail(binary, log, f"{exit_reason(code)} answering its first completion")
            fail(binary, log, f"gave no answer to its first completion ({e})")
        text = answer.get("choices", [{}])[0].get("text")
        if not isinstance(text, str) or answer.get("usage", {}).get("completion_tokens", 0) < 1:
            fail(binary, log, f"answered without a completion: {json.dumps(answer)[:200]}")
        print(f"[install-servers] llama-server answers: {text!r}", file=sys.stderr)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    main()
