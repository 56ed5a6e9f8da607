"""Keep freed heap memory for reuse instead of handing it back to the OS after every array.

A simulation iteration allocates and frees the same few dozen arrays of a few
megabytes each, thousands of times. With glibc's default settings each free
may trim the heap and the next allocation faults every page back in: on the
landmine reproduction that was 1.6 million page faults and a third of the
CPU time. Raising the trim threshold (and fixing the mmap threshold, which
otherwise moves) keeps those pages mapped; the cost is that up to
``TRIM_BYTES`` of freed memory stays with the process. A no-op where glibc's
``mallopt`` is unavailable (macOS, musl, Windows).
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
TRIM_BYTES = 512 * 2 ** 20
MMAP_BYTES = 32 * 2 ** 20   # glibc's largest allowed value on 64-bit systems

_done = False


def retain_freed_memory() -> bool:
    """Apply the settings once per process; True when they are in effect."""
    global _done
    if _done:
        return True
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    _done = bool(mallopt(M_MMAP_THRESHOLD, MMAP_BYTES)) & bool(mallopt(M_TRIM_THRESHOLD, TRIM_BYTES))
    return _done
