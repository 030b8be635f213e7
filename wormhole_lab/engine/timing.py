"""Serialisation time of a frame, truncated to the engine's time quantum as the reference's clock does."""

from wormhole_lab.engine.jit import kernel


@kernel
def serialisation_ps(wire_bytes, rate_bps, quantum_ps):
    """The reference computes Seconds(bytes * 8.0 / bps) and ns-3 truncates that to its 1 ns clock
    (int64x64_t(double) drops the fraction below 2^-64 s, Time(int64x64_t) keeps GetHigh()), so a
    1048 B frame at 100 Gb/s takes 83 ns (83.84), a 1090 B HPCC frame 87 ns (87.2), and a time that
    is a whole number of ns in exact arithmetic comes out 1 ns short (50 B at 25 Gb/s: 15 ns, not 16)."""
    return ((wire_bytes * (8_000_000_000_000 // quantum_ps) - 1) // rate_bps) * quantum_ps
