// Jobs from the agent's configuration: a fixed map for nodes no scheduler
// describes (a workstation, a long-lived service, a reservation).
//
// Keys are GPU uuids ("GPU-…", "MIG-…") or GPU indices in decimal ("0");
// a uuid key wins over an index key for the same GPU. The scheduler is
// "static" unless the entry sets one. The agent's config loader fills the
// map; this class only looks it up.
//
// Thread-safety: one thread at a time (see attributor.h); never fails.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ofu/attribution/attributor.h"

namespace ofu::attribution {

class StaticAttributor : public Attributor {
 public:
  explicit StaticAttributor(std::map<std::string, JobInfo> by_uuid_or_index);

  std::string Describe() const override;
  Result<Attribution> Attribute(const std::vector<GpuRef>& gpus) override;

 private:
  std::map<std::string, JobInfo> labels_;
};

}  // namespace ofu::attribution
