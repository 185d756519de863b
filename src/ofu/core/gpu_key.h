// The key a GPU or a MIG GPU instance is known by, and its rule, in one
// place. The key is what every output names a device by: the report's
// `key`, the store's `uuid` column, the exposition's `uuid` label, the
// agent's job map and the HTML page's timelines.
//
//   a whole GPU          its UUID; without one, "<host>/gpu<index>", or
//                        "gpu<index>" where the host does not matter
//   a MIG GPU instance   its GPU's key, then "/gi<instance id>"
//
// Sources make keys with WholeGpuKey and MigInstanceKey and keep them in
// GpuIdentity::key; everything downstream reads them with GpuKey, which
// never puts the UUID before the key: a GPU's MIG instances share its UUID
// and must stay apart (in the store, the exposition, attribution and the
// HTML page). A source whose data name neither a UUID nor an index (dcgmi
// dmon's GPU instances) keeps a key of its own, unique in its data.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "ofu/core/gpu_identity.h"

namespace ofu {

// The key of a whole GPU: `uuid`, else its `index` on its host, prefixed by
// `hostname` when that is given (data from many hosts; "" on one host).
inline std::string WholeGpuKey(std::string_view uuid, std::string_view hostname, std::string_view index) {
  if (!uuid.empty()) return std::string(uuid);
  std::string key = hostname.empty() ? std::string() : std::string(hostname) + "/";
  return key + "gpu" + std::string(index);
}

// The key of GPU instance `instance` (its id, as text) of the GPU keyed `gpu_key`.
inline std::string MigInstanceKey(std::string_view gpu_key, std::string_view instance) {
  return std::string(gpu_key) + "/gi" + std::string(instance);
}

// A device's key from the labels that name it (dcgm-exporter's spellings:
// UUID or uuid, Hostname or hostname, gpu, GPU_I_ID), by the rule above;
// and, for a MIG instance, its GPU's key (else empty). Both empty when
// neither a UUID nor an index is given. One rule for a recording's reader
// (sources/replay.h) and dcgm-exporter's sums read from Prometheus
// (history/dcgm_hourly.h).
inline std::pair<std::string, std::string> GpuKeyOfLabels(std::string_view uuid, std::string_view hostname,
                                                          std::string_view index, std::string_view mig_id) {
  if (uuid.empty() && index.empty()) return {};
  std::string key = WholeGpuKey(uuid, hostname, index);
  if (mig_id.empty()) return {std::move(key), ""};
  std::string instance = MigInstanceKey(key, mig_id);
  return {std::move(instance), std::move(key)};
}

// The key of `identity`: its key, or its UUID where no key was set.
inline const std::string& GpuKey(const GpuIdentity& identity) {
  return identity.key.empty() ? identity.uuid : identity.key;
}

}  // namespace ofu
