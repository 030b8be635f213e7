"""`wormhole-lab app` serves the Panel apps over HTTP."""

import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from wormhole_lab.cli import main


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("app", ["teach", "explore"])
def test_app_command_serves_the_page(app):
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "wormhole_lab.cli", "app", app, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, proc.stdout.read().decode()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/{app}", timeout=30) as response:
                    assert response.status == 200
                    assert "bokeh" in response.read().decode().lower()
                    break
            except OSError:
                assert time.monotonic() < deadline, "the app did not answer within 90 s"
                time.sleep(0.5)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_app_command_rejects_a_port_in_use(capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        assert main(["app", "teach", "--port", str(busy.getsockname()[1])]) == 2
    assert "already in use" in capsys.readouterr().err


def test_app_command_rejects_an_impossible_port(capsys):
    assert main(["app", "teach", "--port", "70000"]) == 2
    assert "--port" in capsys.readouterr().err
