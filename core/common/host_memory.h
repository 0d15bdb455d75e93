#pragma once
// How the process's heap treats freed host memory.

namespace h3p {

// Keeps freed blocks of up to 1 GiB in the process for the next allocation instead of returning
// them to the system. glibc serves blocks above its mmap threshold (128 KiB, growing to at most
// 32 MiB) with fresh mappings and unmaps them on free, so every CPU operator's output is
// page-faulted in anew: on a virtual machine that is a third of a small CPU generation's time.
// Freed memory stays reserved until exit (the peak is what the run needed anyway). Call once
// at start-up; a no-op where the C library is not glibc.
void keep_freed_host_memory();

}  // namespace h3p
