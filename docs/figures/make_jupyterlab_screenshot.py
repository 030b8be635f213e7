"""The README's JupyterLab screenshot: ``python docs/figures/make_jupyterlab_screenshot.py``.

Starts JupyterLab on 127.0.0.1 in a temporary folder, the way ``tests/viz/test_jupyterlab.py`` does (its set-up is
imported, not copied), opens a one-cell notebook showing ``lesson_widget`` with the default lesson beside HPCC,
presses Run in headless Chromium (Debian's ``/usr/bin/chromium``; every request to another host refused) and writes
``jupyterlab.png`` next to this script. Needs the test extras (JupyterLab, Playwright).
"""

import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests" / "viz"))
from conftest import CHROMIUM, CHROMIUM_FLAGS  # noqa: E402  (the tests' own browser and JupyterLab set-up)
from test_jupyterlab import Browser, run_widget, start_jupyterlab  # noqa: E402

SOURCE = (
    "from wormhole_lab.viz.notebook import lesson_widget\n"
    "from wormhole_lab.viz.teach_app import CCALesson\n"
    "lesson_widget(CCALesson(compare='HPCC'))"
)


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        lab = start_jupyterlab(Path(folder))
        try:
            with sync_playwright() as p:
                browser = Browser(p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS))
                page = browser.page
                seconds = run_widget(page, lab, "lesson.ipynb", SOURCE)
                page.wait_for_timeout(3000)  # the last redraws reach the page after the "done" line, then paint
                page.set_viewport_size({"width": 1400, "height": 1500})
                out = HERE / "jupyterlab.png"
                page.screenshot(path=str(out))
                refused = sorted(set(browser.foreign))
                errors = browser.console_errors
                browser.close()
        finally:
            lab.stop()
    print(f"{out}: {out.stat().st_size // 1000} KB; the run took {seconds:.1f} s")
    print(f"requests refused: {refused or 'none'}; console errors: {errors or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
