/* Compiles tessera/status.h alone, first, as strict C99 (see abi/CMakeLists.txt). */
#include "tessera/status.h"
#include "tessera/status.h" /* include guard works */

int main(void) { return 0; }
