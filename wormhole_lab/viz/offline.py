"""Load the plotting extension in Jupyter with every JS/CSS file inlined, so nothing is fetched from a CDN.

``notebook_extension()`` is the one way notebooks and the ipywidgets views load HoloViews' bokeh extension and
Panel's notebook extension. The resources come from the installed bokeh, HoloViews and Panel packages, so
plots draw in JupyterLab and the Notebook on a machine without internet access.
"""

__all__ = ["notebook_extension"]

_loaded = False


def _inline_stylesheets(viewable, root) -> None:
    """Panel preprocessing hook: swap CDN stylesheet links for their text from the installed Panel.

    Panel inlines the stylesheets of Panel objects shown with ``pn.config.inline``, but not those of
    HoloViews plots, which HoloViews renders through Panel's layout without that step; without this hook
    each plot would link e.g. ``cdn.holoviz.org/panel/<version>/dist/bundled/theme/default.css``.
    """
    import panel as pn
    from bokeh.models import UIElement
    from panel.io.notebook import patch_inline_stylesheets

    if not pn.config.inline:
        return
    for model in root.select({"type": UIElement}):
        patch_inline_stylesheets(model)


def notebook_extension(force: bool = False) -> None:
    """Load HoloViews' bokeh extension and Panel's notebook extension with inlined JS/CSS (no CDN).

    Call it once at the top of a notebook. A second call in the same kernel does nothing (the browser page
    already has the scripts), unless ``force=True``: use that after reloading the page without restarting
    the kernel. Outside IPython it only selects the bokeh backend.
    """
    global _loaded
    if _loaded and not force:
        return
    import holoviews as hv
    import panel as pn
    from panel.viewable import Viewable

    pn.config.inline = True  # before hv.extension: it loads Panel's notebook JS too, and reads this flag
    hv.extension("bokeh", inline=True, logo=False)
    pn.extension(inline=True)  # Panel's comms and CSS; its JS came with hv.extension, so this is small
    if _inline_stylesheets not in Viewable._preprocessing_hooks:
        Viewable._preprocessing_hooks.append(_inline_stylesheets)
    _loaded = True
