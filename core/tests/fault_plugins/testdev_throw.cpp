// testdev_throw.cpp - the kernel-throws fault plugin's thrower: a C++
// exception that escapes into the plugin's C code (which has no unwind
// tables), so it ends the process through std::terminate - the failure a
// plugin that breaks the "no exception crosses the ABI" rule causes.
#include <stdexcept>

extern "C" void tsrtest_throw(void);

extern "C" void tsrtest_throw(void) {
  throw std::runtime_error("testdev kernel-throws: an exception escaping a plugin");
}
