"""Flow-level mode: every flow gets its max-min fair share of the links on its path; no packets, queues or CCA.

``model`` turns the engine's prepared arrays into link capacities and per-flow fixed latencies, ``maxmin`` holds
the water-filling kernels (whole and incremental), ``loop`` the event loop over flow starts, drains and
completions, ``run`` the Python driver that checks the inputs, calls the loop and writes the results where the
packet engine writes its own. See ``docs/flow-level-mode.md``.
"""
