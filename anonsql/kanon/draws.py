"""The loop's random numbers: `numpy.random.default_rng(seed).random(n)`, bit for bit, without
importing numpy.random (~6 ms of a ~0.37 s kanon run on Adult, more than any module of ours).

numpy seeds its default generator, PCG64, through a SeedSequence: the seed's 32-bit words are
hashed into a pool of four words, and the pool into PCG64's 128-bit state and increment
(numpy/random/bit_generator.pyx: hashmix, mix, mix_entropy, generate_state). That part is a
few dozen 32-bit operations and is written out below; the compiled module steps PCG64 (XSL-RR
128/64: state = state * multiplier + increment, output = rotr(high ^ low, state >> 122)) and
turns each 64-bit output x into a double as numpy does, (x >> 11) * 2^-53. A test compares
both with numpy over many seeds, short and long, so a change on either side shows.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

_uniform: Callable[[int, int, int, int, np.ndarray], None] | None
try:
    from ._core import uniform as _uniform
except ImportError:  # no compiled module (a source tree without `pip install -e .`): numpy draws them
    _uniform = None

_MASK32 = 0xFFFFFFFF
_POOL = 4  # numpy's DEFAULT_POOL_SIZE
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_MULT_L, _MIX_MULT_R, _XSHIFT = 0xCA01F9DD, 0x4973F715, 16


def seed_state(seed: int) -> tuple[int, int]:
    """PCG64's (state, increment) seeds, 128 bits each, as numpy's SeedSequence(seed) makes them:
    generate_state(4, uint64) read as seed = w0·2^64 + w1 and increment = w2·2^64 + w3."""
    if seed < 0:
        raise ValueError("seed must be >= 0")
    words = []
    while True:  # the seed's 32-bit words, least significant first (0 is one word)
        words.append(seed & _MASK32)
        seed >>= 32
        if not seed:
            break
    const = _INIT_A

    def hashmix(value: int) -> int:
        nonlocal const
        value ^= const
        const = (const * _MULT_A) & _MASK32
        value = (value * const) & _MASK32
        return value ^ (value >> _XSHIFT)

    def mix(x: int, y: int) -> int:
        result = (_MIX_MULT_L * x - _MIX_MULT_R * y) & _MASK32
        return result ^ (result >> _XSHIFT)

    pool = [hashmix(words[i] if i < len(words) else 0) for i in range(_POOL)]
    for src in range(_POOL):
        for dst in range(_POOL):
            if src != dst:
                pool[dst] = mix(pool[dst], hashmix(pool[src]))
    for word in words[_POOL:]:
        for dst in range(_POOL):
            pool[dst] = mix(pool[dst], hashmix(word))
    const, state = _INIT_B, []
    for i in range(8):  # generate_state: 4 uint64 = 8 uint32, cycling through the pool
        value = pool[i % _POOL] ^ const
        const = (const * _MULT_B) & _MASK32
        value = (value * const) & _MASK32
        state.append(value ^ (value >> _XSHIFT))
    w = [state[2 * i] | state[2 * i + 1] << 32 for i in range(4)]  # little-endian pairs
    return w[0] << 64 | w[1], w[2] << 64 | w[3]


def uniform(seed: int, n: int) -> np.ndarray:
    """`numpy.random.default_rng(seed).random(n)`: n doubles in [0, 1)."""
    out = np.empty(n, dtype=np.float64)
    if _uniform is None:
        out[:] = np.random.default_rng(seed).random(n)
        return out
    state, inc = seed_state(seed)
    _uniform(state >> 64, state & (2**64 - 1), inc >> 64, inc & (2**64 - 1), out)
    return out
