// CPython's global interpreter lock, recognised by address (docs/time.md, "Sleeps and timed
// waits").
#pragma once

namespace phantora::shim {

// Whether `object` (a condition variable or mutex) lies inside CPython's runtime state,
// `_PyRuntime`, where the main interpreter's GIL lives (its `ceval.gil` in 3.9 to 3.11, the main
// interpreter's own `_gil` from 3.12, which `_PyRuntime` holds). The only condition variables
// there are the GIL's. False in a process without a Python interpreter, or where the
// interpreter was loaded after the first call.
bool is_python_gil(const void* object);

}  // namespace phantora::shim
