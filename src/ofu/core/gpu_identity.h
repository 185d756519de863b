// Who a GPU is, and where each part of that goes.
//
// GpuIdentity names the GPU behind a stream of samples: its key, UUID,
// model, host, index, PCI bus and MIG instance. The outputs name the parts
// differently (the store's `uuid` column holds the key; the report says
// `gpu` for the index), so each part is a row of the identity table, which
// says once where it goes: the report's JSON key, and whether ofu_gpu_info
// carries it as a label. The store's `gpus` columns are listed in
// history/history_columns.h, with the two that are not identity (sku and
// architecture). The model has no row: the report writes the model it used
// (--gpu-model may override the driver's), and ofu_gpu_info has it first,
// with the SKU and architecture the spec database gives it.
//
// Adding a field is one row: IdentityFieldTable::With(row) appends it, a
// source sets it with row.Set(identity, value), and it lives in
// GpuIdentity::added under the row's name. With no other change the store
// gives it a column (HistoryOptions::identity names the table), and the
// exposition (a label of ofu_gpu_info) and the report (a JSON key) carry
// every added field an identity has, each named as the row is. tests/fleet/identity_field_table_test.cc follows this
// with a test-only row; docs/ARCHITECTURE.md has the recipe.
//
// Absent and empty are one thing here: a field a source does not know is "",
// the report writes null for it and the exposition no label (an empty label
// is no label in Prometheus).
//
// Thread-safety: the built-in table is immutable; the rest are plain values.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ofu {

// Who a stream of samples belongs to. `key` is unique within a recording:
// the GPU UUID, plus "/gi<N>" for a MIG GPU instance.
struct GpuIdentity {
  std::string key;
  std::string uuid;   // may be empty when the source gives none
  std::string model;  // as the driver names it, e.g. "NVIDIA H100 80GB HBM3"
  std::string hostname;
  std::string gpu_index;  // the driver's index on its host, as text
  std::string pci_bus_id;
  std::string mig_profile;   // e.g. "1g.10gb"; empty for a whole GPU
  std::string mig_instance;  // GPU instance id; empty for a whole GPU
  // The fields of rows added to the identity table, by row name. Empty for
  // the built-in table.
  std::map<std::string, std::string, std::less<>> added;

  // The added field `name`; "" when not known.
  const std::string& Added(std::string_view name) const;
};

// One part of a GPU's identity and where it goes.
struct IdentityField {
  // The report's JSON key, and for an added row also its store column and
  // ofu_gpu_info label: lower case, digits and '_'.
  std::string_view name;
  std::string_view help;
  // Where a GpuIdentity holds it; nullptr for an added row (GpuIdentity::
  // added[name]).
  std::string GpuIdentity::*member = nullptr;
  // Whether ofu_gpu_info carries it as a label `name`, where it is not
  // empty (after model, sku and architecture). An added row's always is.
  bool info_label = false;
  // The report writes null when empty; the key is never null.
  bool never_null = false;

  // Its value in `identity`; "" when not known.
  const std::string& Of(const GpuIdentity& identity) const;
  void Set(GpuIdentity& identity, std::string value) const;
};

// The rows: the built-in ones, or those and rows a test adds.
class IdentityFieldTable {
 public:
  // The fields of this ofu, in the report's order.
  static const IdentityFieldTable& Builtin();

  // A copy with `row` appended. For tests and experiments: the row's member
  // must be nullptr, and its name a new one of lower case letters, digits
  // and '_', starting with a letter (it becomes an SQL column name).
  IdentityFieldTable With(const IdentityField& row) const;

  std::span<const IdentityField> rows() const { return rows_; }
  // The rows With added, in order.
  std::span<const IdentityField> added() const { return std::span(rows_).subspan(builtin_); }

 private:
  IdentityFieldTable(std::vector<IdentityField> rows, std::size_t builtin)
      : rows_(std::move(rows)), builtin_(builtin) {}
  std::vector<IdentityField> rows_;
  std::size_t builtin_;
};

// Calls f(field, value) for each field of `identity` in the order the
// outputs write them: the built-in rows, then the added fields. An added
// field comes as a row of its own name that is an info label and may be null.
template <typename F>
void ForEachField(const GpuIdentity& identity, F&& f) {
  for (const IdentityField& row : IdentityFieldTable::Builtin().rows()) f(row, row.Of(identity));
  for (const auto& [name, value] : identity.added) f(IdentityField{name, {}, nullptr, true}, value);
}

}  // namespace ofu
