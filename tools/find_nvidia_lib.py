#!/usr/bin/env python3
"""find_nvidia_lib.py - a CUDA library from NVIDIA's Python wheels, for builds
that do not find it in the toolkit (tools/gpu-check, the Makefile's NCCL).

usage: find_nvidia_lib.py LIB HEADER   e.g. libnccl nccl.h

Prints "INCLUDE_DIR LIB_DIR SONAME" of the first wheel folder holding both
the header and LIB.so.* (CUDA 12 wheels install under nvidia/<lib>/, e.g.
nvidia-nccl-cu12 as nvidia/nccl/{include,lib}; CUDA 13 ones under
nvidia/cu13/), the folders on sys.path in their order; prints nothing and
exits 1 when there is none (or no nvidia package at all).
"""
import glob
import os
import sys


def find(lib, header):
    try:
        import nvidia
    except ImportError:
        return None
    for root in nvidia.__path__:
        for d in sorted(glob.glob(os.path.join(root, "*"))):
            so = sorted(p for p in glob.glob(os.path.join(d, "lib", lib + ".so.*")) if "Lt" not in p)
            if so and os.path.exists(os.path.join(d, "include", header)):
                return os.path.join(d, "include"), os.path.join(d, "lib"), os.path.basename(so[0])
    return None


def main(argv):
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    hit = find(argv[1], argv[2])
    if not hit:
        return 1
    print(" ".join(hit))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
