"""The reference's random draws: MRG32k3a (L'Ecuyer's RngStream) with one fresh stream per draw.

What the reference does (ns-3 3.18, old random-variable API), written here from its behaviour:

- Every ECN draw between Kmin and Kmax (``UniformVariable(0, 1).GetValue()`` in switch-mmu.cc) and every
  PFC frame's IP id (``UniformVariable(0, 65536)`` in qbb-net-device.cc) is a *new* variable, whose first
  value creates a generator on the next global stream index. So each draw is the first number of stream
  ``n``, and ``n`` goes up by one per draw, whichever switch draws.
- Stream ``n`` of seed ``s`` and run ``r`` starts from the state with all six components equal to ``s``,
  advanced by ``n * 2**127 + r * 2**76`` steps of the two component recurrences.
- Before the first packet the set-up has taken ``6 * nodes + 2`` stream indices (the internet stack takes
  six per node; third.cc's shared error model and its variable take two). Each link given a nonzero error
  rate would take two more, but the engine does not model lossy links. Counted with an instrumented copy of
  the reference on seven topologies (1 to 56 switches, 2 to 320 hosts, 2 to 480 links).

The state lives in one uint64 array (layout below), so a run stays reproducible across kernel calls. A draw
is the first output of the current stream, then one 3x3 modular matrix-vector product per component with
the precomputed jump matrix ``A**(2**127)`` moves the state to the next stream.
"""

import functools

import numpy as np

from wormhole_lab.engine.jit import kernel

M1 = 4294967087
M2 = 4294944443
A12, A13N = 1403580, 810728
A21, A23N = 527612, 1370589
NORM = 1.0 / (M1 + 1.0)
A1 = ((0, 1, 0), (0, 0, 1), (-A13N, A12, 0))
A2 = ((0, 1, 0), (0, 0, 1), (-A23N, 0, A21))
STREAM_JUMP_LOG2 = 127  # one stream index
RUN_JUMP_LOG2 = 76  # one run (substream)

# layout of the state array (length NS3_STATE_LEN; the default generator's state has length 1)
R_STREAM = 1  # index of the stream the next draw uses
R_STATE = 2  # six components: that stream's initial state
R_JUMP1 = 8  # A1 ** (2**127) mod M1, row-major
R_JUMP2 = 17  # A2 ** (2**127) mod M2
NS3_STATE_LEN = 26

_M1_U = np.uint64(M1)
_M2_U = np.uint64(M2)
_SHIFT = np.uint64(16)
_LOW = np.uint64(0xFFFF)


def setup_streams(n_nodes: int, n_lossy_links: int = 0) -> int:
    """Stream indices the reference's set-up takes before the first packet (see the module docstring)."""
    return 6 * int(n_nodes) + 2 + 2 * int(n_lossy_links)


def _mat_mul(a, b, m):
    return tuple(tuple(sum(a[i][k] * b[k][j] for k in range(3)) % m for j in range(3)) for i in range(3))


def _mat_pow(a, e, m):
    """a ** e mod m in exact integers."""
    result = ((1, 0, 0), (0, 1, 0), (0, 0, 1))
    base = tuple(tuple(x % m for x in row) for row in a)
    while e:
        if e & 1:
            result = _mat_mul(result, base, m)
        base = _mat_mul(base, base, m)
        e >>= 1
    return result


def _mat_vec(a, v, m):
    return [sum(a[i][k] * v[k] for k in range(3)) % m for i in range(3)]


@functools.cache
def _jump_matrix(a, log2: int, m: int):
    """a ** (2 ** log2) mod m: 127 squarings in exact integers, made once per process."""
    return _mat_pow(a, 2**log2, m)


def _advance(a, m: int, stream: int, run: int):
    """a ** (stream * 2**127 + run * 2**76) mod m, as the product of the two jumps' powers (powers of one matrix
    commute): a few products of the cached jump matrices instead of ~130 squarings (12 ms of each run's set-up)."""
    streams = _mat_pow(_jump_matrix(a, STREAM_JUMP_LOG2, m), stream, m)
    return _mat_mul(streams, _mat_pow(_jump_matrix(a, RUN_JUMP_LOG2, m), run, m), m)


def stream_state(seed: int, stream: int, run: int = 1) -> list[int]:
    """The six components RngStream(seed, stream, run) starts from."""
    return _mat_vec(_advance(A1, M1, stream, run), [seed] * 3, M1) + _mat_vec(
        _advance(A2, M2, stream, run), [seed] * 3, M2
    )


def check_seed(seed: int) -> bool:
    """The reference accepts seeds 1 .. M2 - 1."""
    return 0 < seed < M2


def ns3_state(seed: int, first_stream: int, run: int = 1) -> np.ndarray:
    """A state array whose next draw is the first number of stream ``first_stream``."""
    if not check_seed(seed):
        raise ValueError(f"the ns3 generator needs a seed in 1..{M2 - 1}, got {seed}")
    rng = np.zeros(NS3_STATE_LEN, dtype=np.uint64)
    rng[R_STREAM] = first_stream
    rng[R_STATE : R_STATE + 6] = stream_state(seed, first_stream, run)
    rng[R_JUMP1 : R_JUMP1 + 9] = [x for row in _jump_matrix(A1, STREAM_JUMP_LOG2, M1) for x in row]
    rng[R_JUMP2 : R_JUMP2 + 9] = [x for row in _jump_matrix(A2, STREAM_JUMP_LOG2, M2) for x in row]
    return rng


def first_uniform(state) -> float:
    """RandU01's first value from a six-component state (Python, for tests and set-up)."""
    p1 = (A12 * state[1] - A13N * state[0]) % M1
    p2 = (A21 * state[5] - A23N * state[3]) % M2
    return float(p1 - p2 if p1 > p2 else p1 - p2 + M1) * NORM


@kernel
def _jump(rng, state, matrix, modulus):
    """One component of the state (``rng[state:state + 3]``) times its jump matrix, mod ``modulus``, exactly
    in uint64: each state word is split into 16-bit halves, so the three products of a row sum below 2**50,
    and two reductions per row suffice (called with constants, so the compiler turns % into multiplications)."""
    s0 = rng[state]
    s1 = rng[state + 1]
    s2 = rng[state + 2]
    h0, h1, h2 = s0 >> _SHIFT, s1 >> _SHIFT, s2 >> _SHIFT
    l0, l1, l2 = s0 & _LOW, s1 & _LOW, s2 & _LOW
    for i in range(3):
        j = matrix + 3 * i
        hi = rng[j] * h0 + rng[j + 1] * h1 + rng[j + 2] * h2
        lo = rng[j] * l0 + rng[j + 1] * l1 + rng[j + 2] * l2
        rng[state + i] = (((hi % modulus) << _SHIFT) + lo) % modulus


@kernel
def ns3_uniform(rng):
    """The first number of the current stream in [0, 1), then move to the next stream index."""
    s0 = np.int64(rng[R_STATE])
    s1 = np.int64(rng[R_STATE + 1])
    s3 = np.int64(rng[R_STATE + 3])
    s5 = np.int64(rng[R_STATE + 5])
    p1 = (A12 * s1 - A13N * s0) % M1
    if p1 < 0:
        p1 += M1
    p2 = (A21 * s5 - A23N * s3) % M2
    if p2 < 0:
        p2 += M2
    d = p1 - p2 if p1 > p2 else p1 - p2 + M1
    _jump(rng, R_STATE, R_JUMP1, _M1_U)
    _jump(rng, R_STATE + 3, R_JUMP2, _M2_U)
    rng[R_STREAM] += np.uint64(1)
    return d * NORM
