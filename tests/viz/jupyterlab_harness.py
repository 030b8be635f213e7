"""Start JupyterLab on 127.0.0.1 in a folder of its own, with every call out of it turned off, for browser tests.

``start_jupyterlab(root)`` returns a ``JupyterLab`` (base URL, token, process); ``stop()`` ends it. The server's
config, runtime, settings and workspace folders live under ``root/.jupyter-test`` so nothing of the user's
Jupyter setup is read or written, and the settings turn off what would reach the internet or get in the way:
JupyterLab's news and update check (server side: ``news_url=None``, ``NeverCheckForUpdate``), the PyPI
extension manager (``readonly``), and the notebook's windowing, so every output is laid out and drawn even when
scrolled out of view. ``expose_app_in_browser`` gives the test ``window.jupyterapp`` to run lab commands.
"""

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

#: user settings written before JupyterLab starts (plugin id -> settings)
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
}


@dataclass
class JupyterLab:
    url: str  #: base URL, e.g. http://127.0.0.1:8888
    token: str
    root: Path
    process: subprocess.Popen
    log: Path

    def lab_url(self, path: str) -> str:
        """URL that opens ``path`` (relative to the root folder) in JupyterLab, with a fresh workspace."""
        return f"{self.url}/lab/tree/{path}?token={self.token}&reset"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_settings(settings_dir: Path) -> None:
    for plugin, values in LAB_SETTINGS.items():
        package, name = plugin.split(":")
        path = settings_dir / package / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def start_jupyterlab(root: Path, env: dict[str, str] | None = None, timeout: float = 90) -> JupyterLab:
    """Start ``python -m jupyter lab`` serving ``root`` on 127.0.0.1 and wait until its API answers."""
    state = root / ".jupyter-test"
    folders = {name: state / name for name in ("config", "runtime", "settings", "workspaces", "ipython")}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    _write_settings(folders["settings"])
    port, token = _free_port(), secrets.token_hex(16)
    environment = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(folders["config"]),
        "JUPYTER_RUNTIME_DIR": str(folders["runtime"]),
        "JUPYTERLAB_SETTINGS_DIR": str(folders["settings"]),
        "JUPYTERLAB_WORKSPACES_DIR": str(folders["workspaces"]),
        "IPYTHONDIR": str(folders["ipython"]),
        **(env or {}),
    }
    command = [
        sys.executable, "-m", "jupyter", "lab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
        "--LabApp.expose_app_in_browser=True",
    ]  # fmt: skip
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # CI and containers run as root; JupyterLab refuses that without it
    log = state / "jupyterlab.log"
    with log.open("w") as out:
        process = subprocess.Popen(command, cwd=root, env=environment, stdout=out, stderr=subprocess.STDOUT)
    lab = JupyterLab(f"http://127.0.0.1:{port}", token, root, process, log)
    deadline = time.time() + timeout
    while time.time() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{lab.url}/api/status?token={token}", timeout=2) as response:
                if response.status == 200:
                    return lab
        except OSError:
            time.sleep(0.3)
    lab.stop()
    raise RuntimeError(f"JupyterLab did not answer on {lab.url} within {timeout:.0f} s:\n{log.read_text()[-3000:]}")
