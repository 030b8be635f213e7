"""CCA teaching app: ``panel serve widgets/teach.py`` (see wormhole_lab.viz.teach_app)."""

import panel as pn

from wormhole_lab.viz.teach_app import TeachApp

pn.extension(notifications=False)
TeachApp().view().servable()
