"""Execute every notebook in ``notebooks/`` at ``WORMHOLE_LAB_SCALE=smoke`` and write the executed copies here.

GitHub renders a notebook's stored outputs but runs no JavaScript, so interactive HoloViews/Bokeh plots would
show up blank (and weigh megabytes). The copies are therefore made with HoloViews drawing **static PNGs through
its matplotlib backend**: a cell added at the top of each copy (marked as such) makes ``hv.extension(...)``
load the matplotlib backend with PNG output instead of Bokeh. The notebooks in ``notebooks/`` are not changed.
After execution the remaining bulky browser-only outputs (``application/javascript``, HoloViews/Bokeh load and
exec bundles, HTML carrying ``<script>``, widget views) are dropped, keeping PNG, text and table (HTML without
script) outputs, and the notebook-level widget state is removed; a notebook whose copy is still over 2 MB is
reported.

usage: python docs/gallery/make_gallery.py [NOTEBOOK ...]     (default: all of notebooks/*.ipynb)

Each notebook runs in a fresh ``python3`` kernel (the interpreter running this script) with the notebooks
folder as working directory and a per-cell timeout of 30 min. Exit status 1 if any cell raised; the copy is
still written, with the error in it, and the error is printed.
"""

import os
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
NOTEBOOKS = HERE.parents[1] / "notebooks"
LIMIT = 2_000_000  # bytes per executed copy

NOTE = """*Gallery copy.* Executed by `docs/gallery/make_gallery.py` at `WORMHOLE_LAB_SCALE=smoke`. The next cell
was added to this copy only: it makes HoloViews draw static PNGs (matplotlib backend) instead of interactive
Bokeh plots, which GitHub cannot show. Run the original in `notebooks/` for the interactive version."""

STATIC = """# gallery copy only: HoloViews renders static PNGs through matplotlib instead of Bokeh
import holoviews as hv

_hv_extension = hv.extension


def _static_extension(*args, **kwargs):
    _hv_extension("matplotlib")
    hv.output(backend="matplotlib", fig="png", dpi=110)


hv.extension = _static_extension"""

BULKY = {
    "application/javascript",
    "application/vnd.holoviews_load.v0+json",
    "application/vnd.holoviews_exec.v0+json",
    "application/vnd.bokehjs_load.v0+json",
    "application/vnd.bokehjs_exec.v0+json",
    "application/vnd.jupyter.widget-view+json",
}


#: HoloViews' matplotlib renderer shows a figure as HTML holding one base64 PNG; stored as image/png instead,
#: which every notebook viewer (GitHub's included) shows
LONE_PNG = re.compile(r"\s*<img src=['\"]data:image/png;base64,([A-Za-z0-9+/=\s]+)['\"][^>]*/?>\s*")


def slim(nb) -> int:
    """Drop browser-only outputs in place; returns how many bytes of output data were dropped."""
    dropped = 0
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        kept = []
        for out in cell.get("outputs", []):
            data = out.get("data")
            if data is not None:
                png = LONE_PNG.fullmatch(data.get("text/html", ""))
                if png:
                    data["image/png"] = re.sub(r"\s", "", png.group(1))
                    del data["text/html"]
                if 'class="logo-block"' in data.get("text/html", ""):
                    dropped += len(data.pop("text/html"))  # the HoloViews logo the extension shows on loading
                for mime in list(data):
                    text = data[mime] if isinstance(data[mime], str) else str(data[mime])
                    if mime in BULKY or (mime == "text/html" and "<script" in text):
                        dropped += len(text)
                        del data[mime]
                        out.get("metadata", {}).pop(mime, None)
                if not data:
                    continue  # nothing left to show (e.g. the extension's load bundle)
            kept.append(out)
        cell.outputs = kept
    return dropped


def errors(nb) -> list[str]:
    found = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if out.output_type == "error":
                found.append(f"cell {i} (counting from 0 in the copy): {out.ename}: {out.evalue}")
    return found


def run(path: Path) -> tuple[int, list[str], float]:
    nb = nbformat.read(path, as_version=4)
    nb.cells[:0] = [nbformat.v4.new_markdown_cell(NOTE), nbformat.v4.new_code_cell(STATIC)]
    t0 = time.perf_counter()
    client = NotebookClient(
        nb,
        timeout=1800,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()
    seconds = time.perf_counter() - t0
    dropped = slim(nb)
    out = HERE / path.name
    nbformat.write(nb, out)
    size = out.stat().st_size
    found = errors(nb)
    print(
        f"{path.name}: {seconds:.0f} s, {size / 1e3:.0f} kB written ({dropped / 1e3:.0f} kB of browser-only output "
        f"dropped){'; OVER 2 MB' if size > LIMIT else ''}",
        flush=True,
    )
    for e in found:
        print(f"  ERROR {e}", flush=True)
    return size, found, seconds


def main() -> None:
    os.environ["WORMHOLE_LAB_SCALE"] = "smoke"  # the kernels inherit it
    paths = [Path(p).resolve() for p in sys.argv[1:]] or sorted(NOTEBOOKS.glob("*.ipynb"))
    failed = False
    for path in paths:
        _, found, _ = run(path)
        failed |= bool(found)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
