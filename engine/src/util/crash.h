#pragma once

// A crash of the engine prints where it happened before the process dies by the same signal (exit
// status unchanged): a backtrace of frames as "binary(+offset)", which `addr2line -f -C -e kernelopt
// OFFSET` turns into functions and lines for a bug report. Installed once at startup.
namespace kopt::util {
void install_crash_handler();
}
