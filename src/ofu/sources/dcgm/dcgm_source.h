// Live counters from DCGM, loaded with dlopen (dcgm_library.h).
//
// Opening: loads options.dcgm_library, else libdcgm.so.4 then libdcgm.so.3,
// calls dcgmInit and connects:
//   ""            the hostengine on 127.0.0.1:5555; when none answers, an
//                 embedded hostengine inside this process (which needs the
//                 privileges profiling needs, and is updated by ofu itself);
//   "unix:/path"  the hostengine listening on that unix socket, only;
//   "host[:port]" the hostengine at that TCP address, only.
// It enumerates the supported GPUs (name, UUID and PCI bus id from fields
// 50/54/57; SM count from the spec database by model name), makes a group of
// them and watches, at an update interval of one window and a keep age of a
// few windows, the fields of options.fields (all when empty): the device
// fields among 100, 112, 113, 155, 156 (100 always); the profiling fields
// among 1001-1015; and, when the tensor activity or the clock is wanted and
// the library knows them (DCGM 4.6), the cumulative cycle counters 1084 and
// 1086. A field not watched is absent, never 0.
//
// MIG: a GPU in MIG mode (field 67) is reported as its GPU instances, the
// way dcgm-exporter and the NVML source do, each a device of its own. The
// instances come from dcgmGetGpuInstanceHierarchy (compute instances are
// skipped): identity.key "<GPU uuid>/gi<N>" and mig_instance N, where N is
// the NVML GPU instance id (dcgm-exporter's GPU_I_ID), not DCGM's entity id;
// mig_profile is field 50 read on the instance ("3g.40gb", dcgm-exporter's
// GPU_I_PROFILE); uuid, model, PCI bus id and gpu_index are the parent's;
// sm_count is the profile's in the spec database, absent when not listed.
// The profiling and cycle fields are watched on a second group holding the
// instances (DCGM_FE_GPU_I entities) and read from them; the SM clock, its
// maximum and the clock event reasons are the chip's and come from the
// parent GPU; power and energy are the board's and are not given to an
// instance. A MIG-mode GPU whose instances cannot be read (a library without
// dcgmGetGpuInstanceHierarchy, a hierarchy refused, or no instance created)
// stays one device with its device fields only and a problem that says why.
//
// Next() sleeps through the Clock to the end of the window (boundaries follow
// the previous window's end), then reads the latest values. Profiling fields
// are 0..1 ratios; 100/113 are MHz, 155 W, 156 mJ, 112 a bitmask. A DCGM blank
// is absent, never 0. The SM clock is a point reading (ClockBasis
// kPointReading) unless 1084 and 1086 are present on two consecutive
// windows and agree with it (DeriveExactCycles): then tensor_active and
// sm_clock_mhz are exact for the window (kExactCycles).
//
// Faults, all values (see source.h):
//   * connection to the hostengine lost (CONNECTION_NOT_VALID from any call):
//     every GPU kUnavailable with the reason; later Next() calls reconnect
//     to the same hostengine with back-off (1 s doubling to 60 s, on the
//     Clock), re-create the groups and watches and note "reconnected";
//   * one GPU lost (GPU_IS_LOST in its values): that GPU kLost;
//   * profiling fields refused (NO_PERMISSION, REQUIRES_ROOT) or unsupported:
//     every GPU kNoPermission / kNotSupported with what to do, while the
//     device fields still flow;
//   * profiling paused (every profiling field blank while the clock is not:
//     another profiler such as Nsight holds the counters): tensor fields
//     absent, and one note when the pause starts and one when it ends.
//
// Thread-safety: the source is used by one thread at a time.
#pragma once

#include <memory>
#include <string_view>

#include "ofu/core/result.h"
#include "ofu/sources/clock.h"
#include "ofu/sources/source.h"

namespace ofu::sources {

// Errors: kUnavailable naming the library or the address, DCGM's error, and
// what to do (install DCGM, start nv-hostengine, pass --dcgm-library).
Result<std::unique_ptr<Source>> OpenDcgmSource(std::string_view address, const SourceOptions& options, Clock& clock);

}  // namespace ofu::sources
