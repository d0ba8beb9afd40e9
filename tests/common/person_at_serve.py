#!/usr/bin/env python3
"""A person at typist serve's web pages in their browser, for tests/suite/serve_web.rs: a
headless Chromium of its own (person_at_vscode.py's Browser, over the DevTools pipe), used
as a person uses the pages: it opens the service's address, logs in with a token typed
into the form, opens "New submission", fills the form and chooses the extension's file,
submits, watches the submission's page until the job has finished, opens its report,
goes to the board, chooses the two submissions and compares them. A screenshot of each
page goes to SHOTS (login, submit, running, done, report, board, compare .png). It
prints what it saw as one JSON line.

    person_at_serve.py URL TOKEN VSIX SHOTS

Written independently of typist's pages' code: it reads only what a person sees.
"""
import base64
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from person_at_vscode import Browser  # noqa: E402


def shot(b, path):
    png = b.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
    with open(path, "wb") as f:
        f.write(base64.b64decode(png["data"]))


def text(b, selector):
    return b.eval(f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                  " return e ? e.innerText : null; })()")


def click(b, selector):
    """A click where the element is, as a mouse gives it."""
    box = b.eval(f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                 " if (!e) return null; e.scrollIntoView({block: 'center'});"
                 " const r = e.getBoundingClientRect();"
                 " return [r.left + r.width / 2, r.top + r.height / 2]; })()")
    if not box:
        raise RuntimeError(f"no {selector} on {b.eval('location.href')}")
    x, y = box
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        ev = {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}
        if kind == "mouseMoved":
            ev = {"type": kind, "x": x, "y": y}
        b.call("Input.dispatchMouseEvent", ev)


def type_into(b, selector, value):
    click(b, selector)
    b.call("Input.insertText", {"text": value})


def choose(b, selector, value):
    """Picks an option of a select, as the keyboard would (the change event fired)."""
    ok = b.eval(f"(() => {{ const s = document.querySelector({json.dumps(selector)});"
                f" const o = Array.from(s.options).find(o => o.value === {json.dumps(value)});"
                " if (!o) return false; s.value = o.value;"
                " s.dispatchEvent(new Event('change', {bubbles: true})); return true; })()")
    if not ok:
        raise RuntimeError(f"{selector} has no option {value!r}")


def path(b):
    return b.eval("location.pathname")


def main():
    url, token, vsix, shots = sys.argv[1:5]
    os.makedirs(shots, exist_ok=True)
    seen = {}
    b = Browser(os.environ.get("TYPIST_CHROMIUM", "chromium"))
    try:
        target = b.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        b.session = b.call("Target.attachToTarget",
                           {"targetId": target, "flatten": True})["sessionId"]
        b.call("Page.enable")
        b.call("DOM.enable")
        b.call("Emulation.setDeviceMetricsOverride",
               {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        # The service's address: not logged in, it shows the login page.
        b.call("Page.navigate", {"url": url})
        b.until("document.querySelector('#token') !== null", "the login page")
        shot(b, os.path.join(shots, "login.png"))
        type_into(b, "#token", token)
        click(b, "#login")
        b.until("location.pathname === '/' && document.querySelector('header form') !== null",
                "the submissions page after logging in")
        # New submission: the extension, in VS Code.
        click(b, "a[href='/submit']")
        b.until("document.querySelector('#submit-form') !== null", "the submission form")
        type_into(b, "#name", "typist-ngram extension")
        choose(b, "#editor", "vscode")
        doc = b.call("DOM.getDocument", {"depth": -1})
        node = b.call("DOM.querySelector",
                      {"nodeId": doc["root"]["nodeId"], "selector": "#extension"})["nodeId"]
        b.call("DOM.setFileInputFiles", {"nodeId": node, "files": [vsix]})
        shot(b, os.path.join(shots, "submit.png"))
        click(b, "#send")
        try:
            b.until("location.pathname.startsWith('/submissions/')", "the submission's page", 60)
        except TimeoutError:
            raise RuntimeError(f"no submission's page: {path(b)} says {text(b, '#error')!r}")
        seen["submission"] = int(path(b).rsplit("/", 1)[1])
        b.until("document.querySelector('#state') !== null", "the submission's state")
        # Its progress, live, until the job has ended (the page reloads itself then).
        states, shot_running = [], False
        deadline = time.time() + 900
        while time.time() < deadline:
            s = text(b, "#state")
            if s and (not states or states[-1] != s):
                states.append(s)
            if s == "running" and not shot_running and (b.eval(
                    "document.querySelector('#progress').value") or 0) > 0:
                shot(b, os.path.join(shots, "running.png"))
                shot_running = True
            if s in ("done", "failed") and document_ready(b):
                break
            time.sleep(0.5)
        seen["states"] = states
        seen["error"] = text(b, "#error")
        seen["result"] = text(b, "#result")
        shot(b, os.path.join(shots, "done.png"))
        if states[-1] != "done":
            raise RuntimeError(f"the submission ended {states}: {seen['error']}")
        # Its report.
        click(b, "#report")
        b.until("document.title === 'typist report' && document.readyState === 'complete'",
                "the report")
        seen["report_h1"] = text(b, "h1")
        shot(b, os.path.join(shots, "report.png"))
        b.call("Page.navigate", {"url": url.rstrip("/") + f"/submissions/{seen['submission']}"})
        b.until("document.querySelector('a[href^=\"/benchmarks/\"]') !== null", "the submission")
        # The board, and the comparison of the two.
        click(b, "p a[href^='/benchmarks/']")
        b.until("document.querySelector('#board') !== null", "the board")
        seen["board"] = b.eval("Array.from(document.querySelectorAll('#board tbody tr'))"
                               ".map(r => Array.from(r.cells).map(c => c.innerText))")
        shot(b, os.path.join(shots, "board.png"))
        others = b.eval("Array.from(document.querySelector('#b').options).map(o => o.value)")
        other = next(v for v in others if v != str(seen["submission"]))
        choose(b, "#a", str(seen["submission"]))
        choose(b, "#b", other)
        click(b, "#compare")
        b.until("document.querySelector('#verdict') !== null", "the comparison")
        seen["verdict"] = text(b, "#verdict")
        seen["comparison"] = b.eval(
            "Array.from(document.querySelectorAll('#comparison tr'))"
            ".map(r => Array.from(r.cells).map(c => c.innerText))")
        shot(b, os.path.join(shots, "compare.png"))
    finally:
        b.close()
    print(json.dumps(seen))


def document_ready(b):
    return b.eval("document.readyState") == "complete"


if __name__ == "__main__":
    main()
