"""Which BLAS this PyTorch runs on, and its threads: the part of bench_torch.py that names the
machine (pact bench, pretrain_torch.py). A ratio measured on Debian's reference BLAS says nothing,
so describe_blas says when the loaded BLAS is the reference one (see bench_torch.py's docstring,
"BLAS = {...}", for the fields).
"""

import ctypes
import os
import platform
import re

import torch

import openblas_core

REFERENCE_BLAS_DIR = "/usr/lib/x86_64-linux-gnu/blas/"
REFERENCE_GEMM_GFLOPS = 20.0


def loaded_blas_libraries():
    """Shared libraries of this process that look like a BLAS or LAPACK (Linux /proc/self/maps)."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "/" in line}
    except OSError:
        return []
    keys = ("blas", "lapack", "mkl", "blis", "atlas")
    return sorted(p for p in paths if any(k in os.path.basename(p).lower() for k in keys))


def openblas_libraries():
    """ctypes handles of the loaded libraries that export OpenBLAS's own API."""
    out = []
    for path in loaded_blas_libraries():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        if hasattr(lib, "openblas_set_num_threads") and hasattr(lib, "openblas_get_config"):
            out.append((path, lib))
    return out


def set_threads(threads, blas_threads=None):
    """torch's intra-op threads, and OpenBLAS's own pool (default: the same count) where torch's
    BLAS is OpenBLAS; None leaves a setting as it is."""
    if threads is not None:
        torch.set_num_threads(threads)
    torch.mm(torch.ones(2, 2), torch.ones(2, 2))  # loads the BLAS library, so it can be found
    blas_threads = threads if blas_threads is None else blas_threads
    if blas_threads is not None:
        for _, lib in openblas_libraries():
            lib.openblas_set_num_threads(blas_threads)


def describe_blas(device, gemm_gflops):
    """Which BLAS PyTorch runs on, and whether it is a reference BLAS (see the header)."""
    config = torch.__config__.show()
    m = re.search(r"BLAS_INFO=([^,\s]+)", config)
    info = m.group(1) if m else None
    alt = None
    for name in ("/etc/alternatives/libblas.so.3-x86_64-linux-gnu", "/etc/alternatives/libblas.so.3"):
        if os.path.exists(name):
            alt = os.path.realpath(name)
            break
    loaded = loaded_blas_libraries()
    out = {"torch_blas_info": info, "alternative": alt, "loaded": loaded, "gemm_gflops": gemm_gflops,
           "library": None, "kernel": None, "openblas_threads": None}
    openblas = openblas_libraries()
    if device.type == "cuda":
        out.update(kind="cublas", is_reference=False, why="CUDA matmuls run on cuBLAS")
        return out
    m = re.search(r"CPU capability usage: (\S+)", config)
    out["torch_cpu_capability"] = m.group(1) if m else None
    try:
        import threadpoolctl  # optional: not a dependency

        out["threadpoolctl"] = [
            {k: i.get(k) for k in ("internal_api", "version", "architecture", "num_threads", "filepath")}
            for i in threadpoolctl.threadpool_info()
        ]
    except ImportError:
        pass
    if openblas:
        lib = openblas[0][1]
        lib.openblas_get_config.restype = ctypes.c_char_p
        out["library"] = lib.openblas_get_config().decode()
        out["openblas_threads"] = lib.openblas_get_num_threads()
        if hasattr(lib, "openblas_get_corename"):
            lib.openblas_get_corename.restype = ctypes.c_char_p
            out["kernel"] = lib.openblas_get_corename().decode()
        # Whether the kernel was OpenBLAS's own choice or set because it fell back (openblas_core.py).
        out["kernel_choice"] = openblas_core.decision or {
            "detected": None, "forced": None,
            "why": f"OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']} was set by the user"
            if os.environ.get("OPENBLAS_CORETYPE") else "OpenBLAS's own choice (not checked)"}
        out.update(kind="openblas", is_reference=False, why=f"OpenBLAS is loaded ({openblas[0][0]})")
    elif "MKL" in config and "MKL not found" not in torch.__config__.parallel_info() or any("mkl" in p for p in loaded):
        out.update(kind="mkl", is_reference=False, why="torch runs on Intel MKL")
    elif any(p.startswith(REFERENCE_BLAS_DIR) for p in loaded) or (not loaded and alt and alt.startswith(REFERENCE_BLAS_DIR)):
        where = next((p for p in loaded if p.startswith(REFERENCE_BLAS_DIR)), alt)
        out.update(kind="reference", is_reference=True,
                   why=f"the reference BLAS is loaded ({where}): install libopenblas0-pthread")
    else:
        slow = gemm_gflops < REFERENCE_GEMM_GFLOPS
        out.update(kind="unknown", is_reference=slow,
                   why=f"unknown BLAS; the {'gemm reads under' if slow else 'gemm reads at least'} {REFERENCE_GEMM_GFLOPS:g} GFLOP/s")
    return out


def cpu_model():
    """The CPU's model name (/proc/cpuinfo; platform.processor() elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None
