/* Compiles tessera/types.h alone, first, as strict C99 (see abi/CMakeLists.txt). */
#include "tessera/types.h"
#include "tessera/types.h" /* include guard works */

int main(void) { return 0; }
