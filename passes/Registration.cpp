// Pass registration lives in Passes.h.inc; this file anchors the library.
#include "passes/Passes.h"
