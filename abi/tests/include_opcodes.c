/* Compiles tessera/opcodes.h alone, first, as strict C99 (see abi/CMakeLists.txt). */
#include "tessera/opcodes.h"
#include "tessera/opcodes.h" /* include guard works */

int main(void) { return 0; }
