"""Screenshots of both apps for the README: ``python docs/figures/make_app_screenshots.py``.

Serves the Wormhole explorer and the CCA teaching app on 127.0.0.1, runs each in headless Chromium (Debian's
``/usr/bin/chromium`` through Playwright; ``WORMHOLE_CHROMIUM`` overrides it) and writes ``explore.png`` (GPT-7B on
64 GPUs, the explorer's default model preset) and ``teach.png`` (the default lesson, a DCTCP 4-to-1 incast in Wormhole
mode, beside HPCC on the same scenario) next to this script.
"""

import os
import socket
import sys
from pathlib import Path

import panel as pn
from playwright.sync_api import expect, sync_playwright

from wormhole_lab.viz.explore_app import Exploration, ExploreApp
from wormhole_lab.viz.teach_app import CCALesson, TeachApp

HERE = Path(__file__).resolve().parent
CHROMIUM = os.environ.get("WORMHOLE_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run", "--disable-quic"]
IDLE = "() => window.Bokeh !== undefined && Bokeh.documents.length > 0 && Bokeh.documents.every(d => d.is_idle)"
# name: (page, button, viewport)
APPS = {
    "explore": (lambda: ExploreApp(Exploration()).view(), "Run in Wormhole mode", (1280, 1000)),
    "teach": (lambda: TeachApp(CCALesson(compare="HPCC")).view(), "Run", (1280, 1500)),
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    pn.extension(notifications=False)
    port = _free_port()
    server = pn.serve(
        {name: make for name, (make, _, _) in APPS.items()},
        port=port,
        address="127.0.0.1",
        threaded=True,
        show=False,
        websocket_origin=[f"127.0.0.1:{port}"],
    )
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            for name, (_, button, (width, height)) in APPS.items():
                page = browser.new_page(viewport={"width": width, "height": height})
                page.goto(f"http://127.0.0.1:{port}/{name}")
                page.wait_for_function(IDLE, timeout=120_000)
                page.get_by_role("button", name=button, exact=True).click()
                expect(page.locator(".run-status").first).to_contain_text("Run 1 done", timeout=300_000)
                page.wait_for_function(IDLE, timeout=60_000)
                page.wait_for_timeout(3000)  # the last redraws reach the page after the status line, then paint
                out = HERE / f"{name}.png"
                page.screenshot(path=str(out))
                print(f"{out}: {out.stat().st_size // 1000} KB")
            browser.close()
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
