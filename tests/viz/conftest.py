"""Fixtures for the viz tests: tiny finished runs, and serving a Panel app for headless Chromium.

Browser tests use Debian's ``chromium`` (``apt-get install chromium``) through Playwright's Python package;
``playwright install`` is never needed. Without /usr/bin/chromium (or without playwright) they are skipped.
"""

import os
import shutil
import socket
import time
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("WORMHOLE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
ARTIFACTS = Path(os.environ.get("WORMHOLE_TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "test-artifacts"))
BOKEH_IDLE = "() => window.Bokeh !== undefined && Bokeh.documents.length > 0 && Bokeh.documents.every(d => d.is_idle)"


def pytest_configure(config):
    config.addinivalue_line("markers", "browser: drives a served Panel app in headless Chromium (needs chromium)")


def _browser_skip_reason() -> str | None:
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        return f"{CHROMIUM} is missing: apt-get install -y chromium (Debian) to run the browser tests"
    try:
        import playwright  # noqa: F401
        import pytest_playwright  # noqa: F401
    except ImportError:
        return "playwright / pytest-playwright are not installed: pip install playwright pytest-playwright"
    return None


def pytest_collection_modifyitems(config, items):
    reason = _browser_skip_reason()
    if reason is None:
        return
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """pytest-playwright's launch arguments, pointed at Debian's Chromium with the flags that work as root."""
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_FLAGS}


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def serve():
    """``serve(make_page) -> url``: serve ``make_page()`` (called per session) on 127.0.0.1 in a thread."""
    import panel as pn

    servers = []

    def start(make_page) -> str:
        port = _free_port()
        server = pn.serve(
            {"app": make_page},
            port=port,
            address="127.0.0.1",
            threaded=True,
            show=False,
            websocket_origin=[f"127.0.0.1:{port}"],
        )
        servers.append(server)
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError(f"the Panel server did not open port {port}")
        return f"http://127.0.0.1:{port}/app"

    yield start
    for server in servers:
        server.stop()
