// The methods configured for a node, asked in order: per GPU, the first
// method that attributes it wins, and later methods are asked only about the
// GPUs still unattributed.
//
// A method that fails does not blank the others: its error becomes a note
// ("<Describe()>: <message>") and the chain goes on. Notes of the methods
// are passed on with the same prefix. Attribute() returns an Error only
// when every method failed, with all their messages.
//
// Thread-safety: one thread at a time (see attributor.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ofu/attribution/attributor.h"

namespace ofu::attribution {

class ChainAttributor : public Attributor {
 public:
  explicit ChainAttributor(std::vector<std::unique_ptr<Attributor>> methods);

  std::string Describe() const override;  // "chain: a, then b"
  Result<Attribution> Attribute(const std::vector<GpuRef>& gpus) override;

 private:
  std::vector<std::unique_ptr<Attributor>> methods_;
};

}  // namespace ofu::attribution
