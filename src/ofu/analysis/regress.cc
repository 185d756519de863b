// Placeholder.
#include "ofu/analysis/regress.h"
