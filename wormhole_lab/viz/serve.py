"""Serve the Panel apps without a ``widgets/`` checkout: ``python -m wormhole_lab.viz.serve teach|explore``.

This is what ``wormhole-lab app`` starts (in its own process, so that the command line does not import the
viz layer above it). Each browser session gets a fresh app.
"""

import argparse

import panel as pn

from wormhole_lab.viz.explore_app import ExploreApp
from wormhole_lab.viz.teach_app import TeachApp

APPS = {"teach": lambda: TeachApp().view(), "explore": lambda: ExploreApp().view()}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m wormhole_lab.viz.serve", description=__doc__)
    parser.add_argument("app", choices=sorted(APPS))
    parser.add_argument("--port", type=int, default=5006)
    parser.add_argument("--address", default="127.0.0.1")
    parser.add_argument("--show", action="store_true", help="open a browser tab")
    args = parser.parse_args(argv)
    pn.extension(notifications=False)
    pn.serve(
        {args.app: APPS[args.app]},
        port=args.port,
        address=args.address,
        show=args.show,
        title=f"wormhole_lab {args.app}",
    )


if __name__ == "__main__":
    main()
