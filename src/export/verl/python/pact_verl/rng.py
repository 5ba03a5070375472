"""The project's seeded random streams (src/core/rng.ts) and PACT's anchoring gates
(src/core/gates.ts), bit for bit: cyrb128 seeding, sfc32 with 15 warm-up draws, child
streams keyed by name, seeded Fisher-Yates. The exporter also writes each train row's gate
into its extra_info (``pact_gate``); this module recomputes it from the run seed."""

from __future__ import annotations

M32 = 0xFFFFFFFF


def _imul(a: int, b: int) -> int:
    """JavaScript's Math.imul: the low 32 bits of the product, as an unsigned int here."""
    return ((a & M32) * (b & M32)) & M32


def hash_cyrb128(text: str) -> list[int]:
    h1, h2, h3, h4 = 1779033703, 3144134277, 1013904242, 2773480762
    # JavaScript's charCodeAt walks UTF-16 code units.
    units = text.encode("utf-16-le")
    for i in range(0, len(units), 2):
        k = units[i] | (units[i + 1] << 8)
        h1 = h2 ^ _imul(h1 ^ k, 597399067)
        h2 = h3 ^ _imul(h2 ^ k, 2869860233)
        h3 = h4 ^ _imul(h3 ^ k, 951274213)
        h4 = h1 ^ _imul(h4 ^ k, 2716044179)
    h1 = _imul(h3 ^ (h1 >> 18), 597399067)
    h2 = _imul(h4 ^ (h2 >> 22), 2869860233)
    h3 = _imul(h1 ^ (h3 >> 17), 951274213)
    h4 = _imul(h2 ^ (h4 >> 19), 2716044179)
    h1 ^= h2 ^ h3 ^ h4
    h2 ^= h1
    h3 ^= h1
    h4 ^= h1
    return [h1 & M32, h2 & M32, h3 & M32, h4 & M32]


WARMUP_DRAWS = 15


class Rng:
    """sfc32 over a key; ``split(name)`` derives the stream of key + '/' + name."""

    def __init__(self, key: str):
        self.key = key
        self.a, self.b, self.c, self.d = hash_cyrb128(key)
        for _ in range(WARMUP_DRAWS):
            self.next_uint32()

    def next_uint32(self) -> int:
        t = (self.a + self.b + self.d) & M32
        self.d = (self.d + 1) & M32
        self.a = self.b ^ (self.b >> 9)
        self.b = (self.c + (self.c << 3)) & M32
        self.c = ((self.c << 21) | (self.c >> 11)) & M32
        self.c = (self.c + t) & M32
        return t

    def next(self) -> float:
        return self.next_uint32() / 4294967296

    def int(self, n: int) -> int:
        return int(self.next() * n)

    def split(self, name: str) -> "Rng":
        return Rng(f"{self.key}/{name}")


def create_rng(seed) -> Rng:
    """The root stream of a run; a number seed is keyed by its JavaScript String() form."""
    if isinstance(seed, bool):
        raise TypeError("seed must be a number or a string")
    if isinstance(seed, float) and seed.is_integer():
        seed = int(seed)
    return Rng(str(seed))


def permutation(n: int, rng: Rng) -> list[int]:
    """Seeded Fisher-Yates of 0..n-1 (core/rng.ts shuffleInPlace)."""
    items = list(range(n))
    for i in range(n - 1, 0, -1):
        j = rng.int(i + 1)
        items[i], items[j] = items[j], items[i]
    return items


def sample_step_gates(seed, step: int, n_prompts: int, q: float) -> list[int]:
    """z_i for the n prompts of step s = 1..T: 1 = prompt-only anchor (L^x), 0 = trace co-training."""
    if step < 1:
        raise ValueError(f"step must be >= 1 (s = 1..T), got {step}")
    rng = create_rng(seed).split("gates").split(f"step{step}")
    return [1 if rng.next() < q else 0 for _ in range(n_prompts)]


def epoch_order(seed, n_prompts: int, epoch: int) -> list[int]:
    """The trainer's data order of one epoch (recipes/train/dataOrder.ts)."""
    return permutation(n_prompts, create_rng(seed).split(f"data/epoch{epoch}"))
