// Placeholder.
#include "ofu/analysis/reconcile.h"
