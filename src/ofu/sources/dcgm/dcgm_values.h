// Reading DCGM's values into samples: a field value as a number or a text,
// one window's latest values of the watched fields, and the GPU reading a
// device makes of them (profiling pause, lost GPU, exact-cycle mode). See
// dcgm_source.h for the units and what each fault is reported as.
// Internal to the DCGM source (dcgm_source.cc, dcgm_devices.cc).
//
// Thread-safety: stateless functions; the device passed in keeps its
// source's one-thread-at-a-time rule.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ofu/sources/dcgm/dcgm_api.h"
#include "ofu/sources/dcgm/dcgm_devices.h"
#include "ofu/sources/dcgm/dcgm_library.h"
#include "ofu/sources/dcgm/dcgm_watches.h"
#include "ofu/sources/source.h"

namespace ofu::sources {

// A field value as a number, or nullopt when DCGM gave none: an error status,
// a blank sentinel (no data, not supported, profiling paused), or a type that
// is not numeric.
std::optional<double> DcgmNumber(const dcgm::FieldValueV2& v);

// A string field, or "" when blank ("<<<NULL>>>" and friends) or not a string.
std::string DcgmText(const dcgm::FieldValueV2& v);

// The latest values of `fields` for each of `entities`, into `values` (one
// record per entity and field): one dcgmEntitiesGetLatestValues.
dcgm::Return ReadLatestDcgmValues(DcgmLibrary& lib, dcgm::Handle handle, std::vector<dcgm::GroupEntityPair>& entities,
                                  std::vector<unsigned short>& fields, std::vector<dcgm::FieldValueV2>& values);

// A reading with no values: the device kUnavailable for `reason`.
GpuReading DcgmUnavailableReading(const DcgmGpu& gpu, double end_s, const std::string& reason);

// The device's reading for the window ending at end_s from the GPUs'
// `values` and the MIG instances' `instance_values`; `watches` says whether
// the profiling fields are watched. Updates the device's pause and cycle
// state; notes get a line when a pause starts or ends or exact-cycle mode
// is first refused.
GpuReading DcgmReadingFor(DcgmGpu& gpu, double end_s, const std::vector<dcgm::FieldValueV2>& values,
                          const std::vector<dcgm::FieldValueV2>& instance_values, const DcgmWatches& watches,
                          std::vector<std::string>& notes);

}  // namespace ofu::sources
