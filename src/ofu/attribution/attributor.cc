#include "ofu/attribution/attributor.h"

namespace ofu::attribution {

// Defined here so the vtable has one home.
Attributor::~Attributor() = default;

}  // namespace ofu::attribution
