"""Load the plotting extension in Jupyter with every JS/CSS file inlined, so nothing is fetched from a CDN.

``notebook_extension()`` is the one way notebooks and the ipywidgets views load HoloViews' bokeh extension and
Panel's notebook extension. The resources come from the installed bokeh, HoloViews and Panel packages, so
plots draw in JupyterLab and the Notebook on a machine without internet access.

``pn.extension(inline=True)`` inlines the JS, and Panel inlines the stylesheets of a Panel object when it is
first shown, but two paths still link ``cdn.holoviz.org/panel/<version>/dist/...css`` (measured with Panel 1.9.4
in JupyterLab with every foreign request refused): HoloViews plots, which HoloViews renders through Panel's
layout without that step, and any later update of a shown Panel object (e.g. a Markdown pane's new text sends
its stylesheets again). ``notebook_extension`` closes both: a Panel preprocessing hook for the first, and the
stylesheets Panel computes for a model (``Reactive._get_properties`` / ``_update_properties``) for the second.
Each swaps a CDN link for the file's text from the installed Panel, once per document and file.
"""

import functools
import weakref

__all__ = ["notebook_extension"]

_loaded = False
_sheets: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # document -> {url: InlineStyleSheet}


@functools.cache
def _local_css(url: str) -> str | None:
    """The text of a Panel CDN stylesheet from the installed Panel, or None if ``url`` is not one of them."""
    from panel.io.resources import CDN_DIST, DIST_DIR

    if not url.startswith(CDN_DIST):
        return None
    path = DIST_DIR / url[len(CDN_DIST) :].split("?")[0]
    return path.read_text(encoding="utf-8") if path.is_file() else None


def _inlined(stylesheets: list, doc) -> list:
    """``stylesheets`` with each CDN ``ImportedStyleSheet`` replaced by an ``InlineStyleSheet`` of the same file,
    one per document and file (a bokeh model belongs to one document; sharing it keeps updates small)."""
    from bokeh.models import ImportedStyleSheet, InlineStyleSheet

    cache = _sheets.setdefault(doc, {}) if doc is not None else {}
    out = []
    for sheet in stylesheets:
        if isinstance(sheet, ImportedStyleSheet) and (css := _local_css(str(sheet.url))) is not None:
            if sheet.url not in cache:
                cache[sheet.url] = InlineStyleSheet(css=css)
            sheet = cache[sheet.url]
        out.append(sheet)
    return out


def _inline_stylesheets(viewable, root) -> None:
    """Panel preprocessing hook: inline the CDN stylesheets of every model under ``root`` (HoloViews plots)."""
    import panel as pn
    from bokeh.models import UIElement

    if not pn.config.inline:
        return
    for model in root.select({"type": UIElement}):
        sheets = _inlined(list(model.stylesheets), root.document)
        if sheets != list(model.stylesheets):
            model.stylesheets = sheets


def _inlining(method):
    """Wrap a Panel method that returns bokeh properties so their CDN stylesheets come inlined."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        import panel as pn

        props = method(self, *args, **kwargs)
        if pn.config.inline and props.get("stylesheets"):
            props["stylesheets"] = _inlined(props["stylesheets"], kwargs.get("doc", args[0] if args else None))
        return props

    wrapper._wormhole_inlining = True
    return wrapper


def _patch_panel() -> None:
    from panel.reactive import Reactive
    from panel.viewable import Viewable

    if _inline_stylesheets not in Viewable._preprocessing_hooks:
        Viewable._preprocessing_hooks.append(_inline_stylesheets)
    for name in ("_get_properties", "_update_properties"):
        method = getattr(Reactive, name, None)
        if method is not None and not getattr(method, "_wormhole_inlining", False):
            setattr(Reactive, name, _inlining(method))


def _in_cell() -> bool:
    """False while the kernel handles something other than a cell's execution, e.g. a widget's button click:
    what is displayed then reaches no cell (JupyterLab drops it)."""
    try:
        from IPython import get_ipython

        parent = get_ipython().kernel.get_parent()
    except Exception:  # noqa: BLE001  (no IPython kernel: nothing to display to anyway)
        return True
    return parent.get("header", {}).get("msg_type", "execute_request") == "execute_request"


def notebook_extension(force: bool = False) -> None:
    """Load HoloViews' bokeh extension and Panel's notebook extension with inlined JS/CSS (no CDN).

    Call it once at the top of a notebook, or where a view is created in a cell. A second call in the same
    kernel does nothing (the browser page already has the scripts), unless ``force=True``: use that after
    reloading the page without restarting the kernel. A call from a widget callback (a button's ``on_click``)
    does not count as loaded: its output reaches no cell (in JupyterLab 4 the scripts did not run even when
    captured by an ipywidgets Output), so the next call from a cell loads it again. Views built in a cell and
    drawn from callbacks should call it when they are built. Outside IPython it only selects the bokeh backend.
    """
    global _loaded
    if _loaded and not force:
        return
    import holoviews as hv
    import panel as pn

    pn.config.inline = True  # before hv.extension: it loads Panel's notebook JS too, and reads this flag
    hv.extension("bokeh", inline=True, logo=False)
    pn.extension(inline=True)  # Panel's comms and CSS; its JS came with hv.extension, so this is small
    _patch_panel()
    _loaded = _in_cell()
