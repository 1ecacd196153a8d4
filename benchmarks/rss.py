"""Peak memory of the calling process, measured honestly in a child a benchmark started.

ru_maxrss is not that figure: when a process forks and execs, Linux carries the parent's
high-water mark into the child's ru_maxrss, so a job started by a benchmark that holds gigabytes
of generated rows reports the benchmark's memory. VmHWM is the high-water mark of the process's
own address space. No imports beyond the standard library: importing this costs no memory.
"""

from __future__ import annotations

import resource


def peak_rss_mb() -> int:
    """VmHWM of this process in MB (Linux); elsewhere ru_maxrss (KiB on Linux, bytes on macOS)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
