#!/usr/bin/env python3
"""A person at a VS Code (code-server) in their browser, for the test of `typist record
--editor vscode`: a headless Chromium of its own, driven over the DevTools pipe (no
port), as a person: it opens the address typist printed, logs in with the password,
waits for the editor to show the file, then follows the steps of a script, keys a few
tens of milliseconds apart and pauses between edits, as typed by hand.

    person_at_vscode.py URL PASSWORD STEPS.json

Steps (a JSON list), each one of:
    {"wait_text": "def f("}     the editor shows this text (60 s at most)
    {"type": "value", "ms": 40} characters typed one at a time, `ms` apart
    {"press": "Delete"}         a key (Enter, Escape, Delete, Backspace, End, Home, ...)
    {"press": "End", "ctrl": true}
    {"goto": "2:9"}             Go to Line (Ctrl+G) line:column, as a person uses it
    {"save": true}              Ctrl+S
    {"command": "Typist: Stop Recording"}  run from the command palette (Ctrl+Shift+P)
    {"pause": 1300}             milliseconds doing nothing
Written independently of typist's own VS Code driver: it reads nothing typist reads.
"""
import fcntl
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time

KEYS = {
    "Enter": ("Enter", "Enter", 13, "\r"),
    "Escape": ("Escape", "Escape", 27, None),
    "Delete": ("Delete", "Delete", 46, None),
    "Backspace": ("Backspace", "Backspace", 8, None),
    "End": ("End", "End", 35, None),
    "Home": ("Home", "Home", 36, None),
    "ArrowLeft": ("ArrowLeft", "ArrowLeft", 37, None),
    "ArrowRight": ("ArrowRight", "ArrowRight", 39, None),
    "ArrowUp": ("ArrowUp", "ArrowUp", 38, None),
    "ArrowDown": ("ArrowDown", "ArrowDown", 40, None),
    "g": ("g", "KeyG", 71, None),
    "s": ("s", "KeyS", 83, None),
    "P": ("P", "KeyP", 80, None),
}
CTRL, SHIFT = 2, 8


class Browser:
    def __init__(self, chromium):
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        self.profile = tempfile.TemporaryDirectory(prefix="person-chromium-")

        def fds():
            a = fcntl.fcntl(to_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [
                chromium,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--remote-debugging-pipe",
                "--no-first-run",
                "--no-default-browser-check",
                "--password-store=basic",
                "--window-size=1400,1000",
                f"--user-data-dir={self.profile.name}",
                "about:blank",
            ],
            preexec_fn=fds,
            close_fds=False,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_r)
        os.close(from_w)
        self.out = os.fdopen(to_w, "wb", buffering=0)
        self.inp = os.fdopen(from_r, "rb", buffering=0)
        self.next_id = 0
        self.answers = {}
        self.cond = threading.Condition()
        threading.Thread(target=self.read, daemon=True).start()
        self.session = None

    def read(self):
        buf = b""
        while True:
            chunk = self.inp.read(65536)
            if not chunk:
                return
            buf += chunk
            while b"\0" in buf:
                msg, buf = buf.split(b"\0", 1)
                m = json.loads(msg)
                if "id" in m:
                    with self.cond:
                        self.answers[m["id"]] = m
                        self.cond.notify_all()

    def call(self, method, params=None, timeout=30):
        self.next_id += 1
        i = self.next_id
        msg = {"id": i, "method": method, "params": params or {}}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        self.out.write(json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        with self.cond:
            while i not in self.answers:
                left = deadline - time.time()
                if left <= 0:
                    raise TimeoutError(method)
                self.cond.wait(left)
            m = self.answers.pop(i)
        if "error" in m:
            raise RuntimeError(f"{method}: {m['error']}")
        return m.get("result", {})

    def eval(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        return r.get("result", {}).get("value")

    def until(self, expr, what, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                if self.eval(expr):
                    return
            except RuntimeError:
                pass  # a page navigating
            time.sleep(0.1)
        raise TimeoutError(f"{what} within {timeout} s")

    def key(self, name, mods=0):
        key, code, vk, text = KEYS[name]
        down = {"type": "keyDown" if text else "rawKeyDown", "key": key, "code": code,
                "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk, "modifiers": mods}
        if text and not mods:
            down["text"] = text
            down["unmodifiedText"] = text
        self.call("Input.dispatchKeyEvent", down)
        up = {"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": vk,
              "nativeVirtualKeyCode": vk, "modifiers": mods}
        self.call("Input.dispatchKeyEvent", up)

    def char(self, c):
        self.call("Input.dispatchKeyEvent", {"type": "keyDown", "key": c, "text": c,
                                             "unmodifiedText": c})
        self.call("Input.dispatchKeyEvent", {"type": "keyUp", "key": c})

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


EDITOR_TEXT = ("(() => { const v = document.querySelector('.monaco-editor .view-lines');"
               " return v ? v.innerText.replace(/\\u00a0/g, ' ') : ''; })()")
QUICK_INPUT = ("(() => { const w = document.querySelector('.quick-input-widget');"
               " return !!w && w.style.display !== 'none'"
               " && !!document.activeElement && !!document.activeElement.closest('.quick-input-widget'); })()")
IN_EDITOR = "!!document.activeElement && !!document.activeElement.closest('.monaco-editor')"


def main():
    url, password, steps_file = sys.argv[1:4]
    steps = json.load(open(steps_file))
    b = Browser(os.environ.get("TYPIST_CHROMIUM", "chromium"))
    try:
        target = b.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        b.session = b.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        b.call("Page.enable")
        b.call("Emulation.setFocusEmulationEnabled", {"enabled": True})
        b.call("Page.navigate", {"url": url})
        b.until("document.querySelector('input[name=password]') !== null", "the login page")
        b.eval("(() => { const i = document.querySelector('input[name=password]');"
               f" i.value = {json.dumps(password)}; i.form.submit(); return true; }})()")
        for s in steps:
            if "wait_text" in s:
                b.until(f"{EDITOR_TEXT}.includes({json.dumps(s['wait_text'])}) && {IN_EDITOR}",
                        f"the editor showing {s['wait_text']!r}")
            elif "type" in s:
                for c in s["type"]:
                    b.char(c)
                    time.sleep(s.get("ms", 40) / 1000)
            elif "press" in s:
                b.key(s["press"], CTRL if s.get("ctrl") else 0)
                time.sleep(0.05)
            elif "goto" in s:
                b.key("g", CTRL)
                b.until(QUICK_INPUT, "Go to Line")
                b.call("Input.insertText", {"text": s["goto"]})
                time.sleep(0.2)
                b.key("Enter")
                b.until(IN_EDITOR, "the editor's focus after Go to Line")
                time.sleep(0.1)
            elif "save" in s:
                b.key("s", CTRL)
                time.sleep(0.3)
            elif "command" in s:
                b.key("P", CTRL | SHIFT)
                b.until(QUICK_INPUT, "the command palette")
                b.call("Input.insertText", {"text": s["command"]})
                time.sleep(0.5)
                b.key("Enter")
                time.sleep(0.3)
            elif "pause" in s:
                time.sleep(s["pause"] / 1000)
            else:
                raise ValueError(f"unknown step {s}")
    finally:
        b.close()


if __name__ == "__main__":
    main()
