"""OpenBLAS's kernel for this CPU, chosen before torch loads it (bench_torch.py, pretrain_torch.py).

OpenBLAS built with DYNAMIC_ARCH picks its kernel from the CPU's family and model when the library
loads. A CPU newer than the build falls back to a generic kernel: Debian's OpenBLAS 0.3.21 on an
Intel Xeon of family 6, model 207 (Emerald Rapids, AVX-512 with bf16) takes the SSE3 kernel
"Prescott", and its 1024³ matmul runs at 18–32 GFLOP/s on one thread against 145 GFLOP/s on the
"Cooperlake" kernel that the same library has for that CPU's instructions (measured 2026-12-05).
A baseline on the fallback kernel flatters whatever is measured beside it, and a user who found
their PyTorch that slow would set OPENBLAS_CORETYPE. So does this module: it asks OpenBLAS, in a
child process (the kernel cannot change once the library is loaded), which kernel it picks; where
that is one without AVX2 on a CPU that has AVX2 and FMA, it sets OPENBLAS_CORETYPE in this
process's environment to the kernel the CPU's instructions call for, before torch is imported.
An OPENBLAS_CORETYPE already set is left alone, and a kernel OpenBLAS did recognise is kept (the
AMD EPYC of the committed benches ran OpenBLAS's own choice, Haswell, and still does).
"""

import os
import subprocess
import sys

# OpenBLAS's x86-64 kernels without AVX2 (its DYNAMIC_ARCH names, as openblas_get_corename gives them).
KERNELS_WITHOUT_AVX2 = frozenset({
    "Katmai", "Coppermine", "Northwood", "Prescott", "Banias", "Atom", "Core2", "Penryn",
    "Dunnington", "Nehalem", "Sandybridge", "Opteron", "Opteron_SSE3", "Barcelona", "Nano",
    "Bobcat", "Bulldozer", "Piledriver", "Steamroller", "Excavator", "Unknown",
})

_PROBE = (
    "import ctypes\n"
    "lib = ctypes.CDLL('libblas.so.3')\n"
    "f = lib.openblas_get_corename\n"
    "f.restype = ctypes.c_char_p\n"
    "print(f().decode())\n"
)


def cpu_flags(path="/proc/cpuinfo"):
    """The first CPU's feature flags (an empty set where /proc/cpuinfo is not there)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def kernel_for_flags(flags):
    """The OpenBLAS kernel a CPU with these flags calls for: Cooperlake (AVX-512 with bf16),
    SkylakeX (AVX-512 F, CD, BW, DQ, VL), Haswell (AVX2 and FMA), or None."""
    if {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        return "Cooperlake" if "avx512_bf16" in flags else "SkylakeX"
    if {"avx2", "fma"} <= flags:
        return "Haswell"
    return None


def choose_kernel(detected, flags, env_coretype=None):
    """(kernel to force or None, why). detected: openblas_get_corename without an override
    (None where OpenBLAS is not the BLAS); env_coretype: OPENBLAS_CORETYPE as the user set it."""
    if env_coretype:
        return None, f"OPENBLAS_CORETYPE={env_coretype} was set by the user"
    if detected is None:
        return None, "torch's BLAS is not OpenBLAS (or it could not be asked)"
    want = kernel_for_flags(flags)
    if detected in KERNELS_WITHOUT_AVX2 and want is not None:
        return want, (f"OpenBLAS picked its {detected} kernel (no AVX2) on a CPU with "
                      f"{'AVX-512' if want != 'Haswell' else 'AVX2 and FMA'}: OPENBLAS_CORETYPE={want}")
    return None, f"OpenBLAS's own choice, {detected}, kept"


def detected_kernel():
    """The kernel OpenBLAS picks here by itself (a child process; None where it cannot say)."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    try:
        r = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    name = r.stdout.strip()
    return name if r.returncode == 0 and name else None


decision = None  # what ensure_openblas_kernel decided in this process (describe_blas reports it)


def ensure_openblas_kernel():
    """Sets OPENBLAS_CORETYPE where OpenBLAS would fall back to a kernel without AVX2 on a CPU
    that has it (see the header). Call before importing torch. Returns what was decided:
    {"detected", "forced", "why"} (forced: the kernel set, or None). A second call in the same
    process (pretrain_torch.py, then bench_torch.py's import) returns the first decision."""
    global decision
    if decision is not None:
        return decision
    user = os.environ.get("OPENBLAS_CORETYPE")
    detected = None if user else detected_kernel()
    forced, why = choose_kernel(detected, cpu_flags(), user)
    if forced:
        os.environ["OPENBLAS_CORETYPE"] = forced
    decision = {"detected": detected, "forced": forced, "why": why}
    return decision
