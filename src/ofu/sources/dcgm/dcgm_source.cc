#include "ofu/sources/dcgm/dcgm_source.h"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ofu/core/gpu_spec.h"
#include "ofu/sources/backoff.h"
#include "ofu/sources/dcgm/dcgm_api.h"
#include "ofu/sources/dcgm/dcgm_devices.h"
#include "ofu/sources/dcgm/dcgm_library.h"
#include "ofu/sources/dcgm/dcgm_values.h"
#include "ofu/sources/dcgm/dcgm_watches.h"

namespace ofu::sources {
namespace {

enum class AddressKind { kLocalOrEmbedded, kUnixSocket, kTcp };

struct Address {
  AddressKind kind = AddressKind::kLocalOrEmbedded;
  std::string target;   // what dcgmConnect_v2 gets
  std::string display;  // what messages say
};

Address ParseAddress(std::string_view text) {
  if (text.empty()) {
    const std::string local = fmt::format("127.0.0.1:{}", dcgm::kDefaultPort);
    return {AddressKind::kLocalOrEmbedded, local, local};
  }
  if (text.starts_with("unix:")) return {AddressKind::kUnixSocket, std::string(text.substr(5)), std::string(text)};
  return {AddressKind::kTcp, std::string(text), std::string(text)};
}

// The source: the connection to the hostengine (or an embedded one), its
// loss and reconnection with back-off, and the window grid; the devices are
// found by dcgm_devices.h, watched by dcgm_watches.h and read by
// dcgm_values.h.
class DcgmSource final : public Source {
 public:
  DcgmSource(std::unique_ptr<DcgmLibrary> lib, Address address, const SourceOptions& options, Clock& clock)
      : lib_(std::move(lib)),
        address_(std::move(address)),
        options_(options),
        plan_(PlanDcgmWatches(options)),
        clock_(clock),
        watches_(*lib_, plan_, options_) {
    if (auto specs = GpuSpecDatabase::Embedded(); specs.ok()) specs_ = std::move(*specs);
  }

  ~DcgmSource() override {
    if (connected_) {
      // Our watches go with the connection (persistAfterDisconnect = 0);
      // the groups are destroyed explicitly for an embedded engine's sake.
      watches_.Destroy(handle_);
      Disconnect();
    }
    lib_->shutdown();
  }

  DcgmSource(const DcgmSource&) = delete;
  DcgmSource& operator=(const DcgmSource&) = delete;

  Status Start() {
    if (dcgm::Return rc = lib_->init(); rc != dcgm::kOk) {
      return Error::Unavailable(
          "dcgmInit failed in {}: {}; reinstall DCGM (datacenter-gpu-manager) or pass "
          "--dcgm-library PATH",
          lib_->path(), lib_->ErrorText(rc));
    }
    if (auto failure = Connect(address_.kind == AddressKind::kLocalOrEmbedded)) {
      return Error::Unavailable("{}", failure->message);
    }
    if (auto failure = SetUp()) {
      Disconnect();
      return Error::Unavailable("{}", failure->message);
    }
    window_end_s_ = clock_.NowS();
    return OkStatus();
  }

  std::string_view kind() const override { return "dcgm"; }

  std::string Describe() const override {
    return fmt::format("dcgm ({}, {}{})", lib_->path(),
                       embedded_ ? std::string("embedded hostengine") : "hostengine at " + address_.display,
                       lib_->is_test_double() ? ", TEST DOUBLE: synthetic data" : "");
  }

  bool live() const override { return true; }

  Result<std::optional<Snapshot>> Next() override {
    const double start_s = window_end_s_;
    double end_s = start_s + options_.window_s;
    const double now_s = clock_.NowS();
    if (now_s < end_s) {
      clock_.SleepS(end_s - now_s);
    } else {
      end_s = now_s;  // late: this window is longer, the next starts now
    }
    window_end_s_ = end_s;

    Snapshot snapshot;
    snapshot.time_s = end_s;
    snapshot.window_s = end_s - start_s;
    snapshot.synthetic = lib_->is_test_double();

    if (!connected_) {
      if (!backoff_.ReadyToRetry(clock_.NowS())) return Unavailable(std::move(snapshot));
      if (auto failure = Reconnect()) {
        LoseConnection(fmt::format("cannot reconnect to the DCGM hostengine at {}: {}", address_.display,
                                   failure->message));
        return Unavailable(std::move(snapshot));
      }
      backoff_.Succeeded();
      snapshot.notes.push_back(fmt::format("reconnected to the DCGM hostengine at {}", address_.display));
    }

    if (embedded_) {
      // An embedded engine runs in manual mode: nothing is sampled unless
      // we ask, and waiting makes the values belong to this window's end.
      if (dcgm::Return rc = lib_->update_all_fields(handle_, 1); rc == dcgm::kConnectionNotValid) {
        LoseConnection(fmt::format("DCGM stopped answering: {}", lib_->ErrorText(rc)));
        return Unavailable(std::move(snapshot));
      }
    }

    // The GPUs first (every field watched on them), then the MIG instances
    // (only what is watched on them), so no unwatched value is asked for.
    std::vector<dcgm::GroupEntityPair> entities;
    for (unsigned int id : gpu_ids_) entities.push_back({dcgm::kEntityGpu, id});
    const dcgm::Return rc = ReadLatestDcgmValues(*lib_, handle_, entities, watches_.gpu_fields(), values_);
    if (rc == dcgm::kConnectionNotValid) {
      LoseConnection(fmt::format("lost the connection to the DCGM hostengine at {}: {}", address_.display,
                                 lib_->ErrorText(rc)));
      return Unavailable(std::move(snapshot));
    }
    if (rc != dcgm::kOk) {
      std::string reason = fmt::format("DCGM could not read this window's values: {}", lib_->ErrorText(rc));
      for (DcgmGpu& gpu : gpus_) snapshot.gpus.push_back(DcgmUnavailableReading(gpu, end_s, reason));
      return std::optional<Snapshot>(std::move(snapshot));
    }

    std::string instance_reason;  // why the instances' values could not be read this window
    instance_values_.clear();
    if (!watches_.instance_fields().empty()) {
      std::vector<dcgm::GroupEntityPair> instances;
      for (const DcgmGpu& gpu : gpus_) {
        if (gpu.instance_entity) instances.push_back({dcgm::kEntityGpuInstance, *gpu.instance_entity});
      }
      const dcgm::Return instance_rc = ReadLatestDcgmValues(*lib_, handle_, instances, watches_.instance_fields(),
                                                            instance_values_);
      if (instance_rc == dcgm::kConnectionNotValid) {
        LoseConnection(fmt::format("lost the connection to the DCGM hostengine at {}: {}", address_.display,
                                   lib_->ErrorText(instance_rc)));
        return Unavailable(std::move(snapshot));
      }
      if (instance_rc != dcgm::kOk) {
        instance_values_.clear();
        instance_reason = fmt::format("DCGM could not read this window's values of the MIG instances: {}",
                                      lib_->ErrorText(instance_rc));
      }
    }

    for (DcgmGpu& gpu : gpus_) {
      snapshot.gpus.push_back(gpu.instance_entity && !instance_reason.empty()
                                  ? DcgmUnavailableReading(gpu, end_s, instance_reason)
                                  : DcgmReadingFor(gpu, end_s, values_, instance_values_, watches_, snapshot.notes));
    }
    return std::optional<Snapshot>(std::move(snapshot));
  }

 private:
  unsigned ConnectTimeoutMs() const {
    // Never wait on a dead hostengine for longer than a fraction of a window.
    return static_cast<unsigned>(std::clamp(options_.window_s * 250.0, 100.0, 5000.0));
  }

  std::optional<DcgmFailure> Connect(bool allow_embedded) {
    dcgm::ConnectV2Params params{};
    params.version = dcgm::kConnectV2ParamsVersion2;
    params.persistAfterDisconnect = 0;
    params.timeoutMs = ConnectTimeoutMs();
    params.addressIsUnixSocket = address_.kind == AddressKind::kUnixSocket ? 1 : 0;
    dcgm::Handle handle = 0;
    const dcgm::Return rc = lib_->connect_v2(address_.target.c_str(), &params, &handle);
    if (rc == dcgm::kOk) {
      handle_ = handle;
      connected_ = true;
      embedded_ = false;
      return std::nullopt;
    }
    if (!allow_embedded) {
      return DcgmFailure{rc, fmt::format("cannot connect to the DCGM hostengine at {} with {}: {}; start nv-hostengine "
                                         "there (systemctl start nvidia-dcgm) or check the address",
                                         address_.display, lib_->path(), lib_->ErrorText(rc))};
    }
    const dcgm::Return embedded_rc = StartEmbedded();
    if (embedded_rc == dcgm::kOk) return std::nullopt;
    return DcgmFailure{
        embedded_rc, fmt::format("no DCGM hostengine answers at {} ({}) and an embedded one did not start in {} ({}); "
                                 "start nv-hostengine (systemctl start nvidia-dcgm) or run ofu with the privileges "
                                 "DCGM needs",
                                 address_.display, lib_->ErrorText(rc), lib_->path(), lib_->ErrorText(embedded_rc))};
  }

  dcgm::Return StartEmbedded() {
    dcgm::Handle handle = 0;
    dcgm::Return rc = dcgm::kVersionMismatch;
    if (lib_->start_embedded_v2 != nullptr) {
      dcgm::StartEmbeddedV2Params params{};
      params.version = dcgm::kStartEmbeddedV2ParamsVersion2;
      params.opMode = dcgm::kOperationModeManual;
      rc = lib_->start_embedded_v2(&params);
      handle = params.dcgmHandle;
    }
    // A library with more modules than our header has a larger struct and
    // answers VER_MISMATCH; the unversioned call has no struct at all.
    if (rc == dcgm::kVersionMismatch && lib_->start_embedded != nullptr) {
      rc = lib_->start_embedded(dcgm::kOperationModeManual, &handle);
    }
    if (rc == dcgm::kOk) {
      handle_ = handle;
      connected_ = true;
      embedded_ = true;
    }
    return rc;
  }

  void Disconnect() {
    if (!connected_) return;
    if (embedded_) {
      lib_->stop_embedded(handle_);
    } else {
      lib_->disconnect(handle_);
    }
    connected_ = false;
    watches_.Forget();
  }

  // Enumerates the GPUs and their MIG instances and creates the groups,
  // field groups and watches.
  std::optional<DcgmFailure> SetUp() {
    const std::string where = embedded_ ? std::string("the embedded DCGM hostengine")
                                        : "the DCGM hostengine at " + address_.display;
    if (auto failure = DiscoverDcgmDevices(*lib_, handle_, specs_, where, gpu_ids_, gpus_)) return failure;
    const std::string prefix = fmt::format("ofu-{}-{}", getpid(), ++sessions_);
    return watches_.Create(handle_, where, prefix, gpu_ids_, gpus_);
  }

  std::optional<DcgmFailure> Reconnect() {
    if (auto failure = embedded_mode_ ? EmbeddedAgain() : Connect(false)) return failure;
    if (auto failure = SetUp()) {
      Disconnect();
      return failure;
    }
    return std::nullopt;
  }

  std::optional<DcgmFailure> EmbeddedAgain() {
    if (dcgm::Return rc = StartEmbedded(); rc != dcgm::kOk) {
      return DcgmFailure{rc, fmt::format("the embedded DCGM hostengine did not restart: {}", lib_->ErrorText(rc))};
    }
    return std::nullopt;
  }

  // The hostengine went away: release the handle, schedule the next attempt
  // and forget what spanned the gap.
  void LoseConnection(std::string reason) {
    if (connected_) embedded_mode_ = embedded_;
    Disconnect();
    backoff_.Failed(clock_.NowS());
    unavailable_reason_ = fmt::format(
        "{}; retrying with back-off (next attempt in {:.0f} s); if it persists, start "
        "nv-hostengine (systemctl start nvidia-dcgm)",
        reason, backoff_.next_try_s() - clock_.NowS());
    for (DcgmGpu& gpu : gpus_) {
      gpu.paused = false;
      gpu.last_cycles.reset();
    }
  }

  std::optional<Snapshot> Unavailable(Snapshot snapshot) const {
    for (const DcgmGpu& gpu : gpus_)
      snapshot.gpus.push_back(DcgmUnavailableReading(gpu, snapshot.time_s, unavailable_reason_));
    return snapshot;
  }

  std::unique_ptr<DcgmLibrary> lib_;
  Address address_;
  SourceOptions options_;
  DcgmWatchPlan plan_;  // what SetUp() watches
  Clock& clock_;
  std::optional<GpuSpecDatabase> specs_;

  dcgm::Handle handle_ = 0;
  bool connected_ = false;
  bool embedded_ = false;
  bool embedded_mode_ = false;  // what to restart after a loss
  DcgmWatches watches_;         // the groups and watches of this connection
  int sessions_ = 0;

  std::vector<unsigned int> gpu_ids_;                // DCGM's gpuIds, the GPU entities read each window
  std::vector<DcgmGpu> gpus_;                        // the devices reported: whole GPUs and MIG instances
  std::vector<dcgm::FieldValueV2> values_;           // reused: one 4 KiB record per GPU and field
  std::vector<dcgm::FieldValueV2> instance_values_;  // likewise per MIG instance and field
  double window_end_s_ = 0;
  Backoff backoff_{1, 60};
  std::string unavailable_reason_;
};

}  // namespace

Result<std::unique_ptr<Source>> OpenDcgmSource(std::string_view address, const SourceOptions& options, Clock& clock) {
  Address parsed = ParseAddress(address);
  if (parsed.kind == AddressKind::kUnixSocket && parsed.target.empty()) {
    return Error::InvalidArgument("dcgm:unix: needs a socket path, e.g. dcgm:unix:/run/dcgm.sock");
  }
  OFU_ASSIGN_OR_RETURN(auto lib,
                       DcgmLibrary::Load(DcgmLibrary::Candidates(options.dcgm_library), options.call_accounting));
  auto source = std::make_unique<DcgmSource>(std::move(lib), std::move(parsed), options, clock);
  OFU_RETURN_IF_ERROR(source->Start());
  return std::unique_ptr<Source>(std::move(source));
}

}  // namespace ofu::sources
