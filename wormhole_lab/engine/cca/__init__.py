"""Congestion-control algorithms, one module each with the same functions (init, on_ack, on_timer).

Adding a CCA means one module here plus one branch in ``dispatch.py``.
"""
