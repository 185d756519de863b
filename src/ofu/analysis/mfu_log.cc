// Placeholder.
#include "ofu/analysis/mfu_log.h"
