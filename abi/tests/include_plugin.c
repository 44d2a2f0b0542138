/* Compiles tessera/plugin.h alone, first, as strict C99 (see abi/CMakeLists.txt). */
#include "tessera/plugin.h"
#include "tessera/plugin.h" /* include guard works */

int main(void) { return 0; }
