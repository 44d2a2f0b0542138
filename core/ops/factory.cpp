// Issue 3 op family (being written).
#include "ops/op_impls.h"
