// Placeholder.
#include "ofu/analysis/html_report.h"
