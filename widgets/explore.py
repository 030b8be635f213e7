"""Wormhole explorer: ``panel serve widgets/explore.py`` (see wormhole_lab.viz.explore_app)."""

import panel as pn

from wormhole_lab.viz.explore_app import ExploreApp

pn.extension(notifications=False)
ExploreApp().view().servable()
