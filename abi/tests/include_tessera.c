/* Compiles tessera/tessera.h alone, first, as strict C99 (see abi/CMakeLists.txt). */
#include "tessera/tessera.h"
#include "tessera/tessera.h" /* include guard works */

int main(void) { return 0; }
