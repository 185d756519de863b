#include "ofu/agent/config.h"

#include <charconv>
#include <cstring>
#include <set>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "ofu/core/windows.h"
#include "ofu/formats/text_file.h"

namespace ofu::agent {
namespace {

Error ConfigError(std::string_view file, const toml::source_region& where, std::string_view what) {
  return Error::InvalidArgument("{}:{}: {}", file, where.begin.line, what);
}

// Reads one table's keys into fields; rejects keys it does not know.
class TableReader {
 public:
  TableReader(std::string_view file, const toml::table& table, std::string_view table_name)
      : file_(file), table_(table), name_(table_name) {}

  template <typename T>
  Status Read(std::string_view key, T& field) {
    known_.insert(std::string(key));
    const toml::node* node = table_.get(key);
    if (node == nullptr) return OkStatus();
    if constexpr (std::is_same_v<T, double>) {
      if (auto v = node->value<double>()) {  // integers convert too
        field = *v;
        return OkStatus();
      }
    } else if constexpr (std::is_same_v<T, int>) {
      if (auto v = node->value<int64_t>(); v && *v >= INT32_MIN && *v <= INT32_MAX) {
        field = static_cast<int>(*v);
        return OkStatus();
      }
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (auto v = node->value<std::string>()) {
        field = *v;
        return OkStatus();
      }
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      if (const toml::array* array = node->as_array()) {
        std::vector<std::string> values;
        for (const toml::node& item : *array) {
          auto v = item.value<std::string>();
          if (!v) return ConfigError(file_, item.source(), fmt::format("{}.{}: expected strings", name_, key));
          values.push_back(*v);
        }
        field = std::move(values);
        return OkStatus();
      }
    }
    return ConfigError(file_, node->source(), fmt::format("{}.{}: wrong type ({})", name_, key, Expected<T>()));
  }

  // Call after every Read: any key not read is unknown.
  Status RejectUnknown(const std::set<std::string>& also_known = {}) const {
    for (const auto& [key, node] : table_) {
      const std::string k(key.str());
      if (known_.count(k) == 0 && also_known.count(k) == 0) {
        return ConfigError(file_, node.source(), fmt::format("unknown key {}.{}", name_, k));
      }
    }
    return OkStatus();
  }

 private:
  template <typename T>
  static constexpr std::string_view Expected() {
    if constexpr (std::is_same_v<T, double>) return "expected a number";
    if constexpr (std::is_same_v<T, int>) return "expected an integer";
    if constexpr (std::is_same_v<T, std::string>) return "expected a string";
    return "expected an array of strings";
  }

  std::string_view file_;
  const toml::table& table_;
  std::string_view name_;
  std::set<std::string> known_;
};

Status ReadAgent(std::string_view file, const toml::table& t, AgentConfig& c) {
  TableReader r(file, t, "agent");
  std::string gpu_model = c.gpu_model.value_or("");
  sources::SourceOptions& options = c.source_options;
  OFU_RETURN_IF_ERROR(r.Read("window", options.window_s));
  OFU_RETURN_IF_ERROR(r.Read("source", c.source));
  OFU_RETURN_IF_ERROR(r.Read("gpu_model", gpu_model));
  OFU_RETURN_IF_ERROR(r.Read("busy_threshold", c.busy_threshold));
  OFU_RETURN_IF_ERROR(r.Read("clock_readings", options.clock_readings));
  OFU_RETURN_IF_ERROR(r.Read("nvml_library", options.nvml_library));
  OFU_RETURN_IF_ERROR(r.Read("dcgm_library", options.dcgm_library));
  c.gpu_model = gpu_model.empty() ? std::nullopt : std::optional<std::string>(gpu_model);
  return r.RejectUnknown();
}

Status ReadHttp(std::string_view file, const toml::table& t, AgentConfig& c) {
  TableReader r(file, t, "http");
  std::string listen;
  OFU_RETURN_IF_ERROR(r.Read("listen", listen));
  OFU_RETURN_IF_ERROR(r.Read("web_config", c.web_config));
  OFU_RETURN_IF_ERROR(r.RejectUnknown());
  if (!listen.empty()) {
    if (Status s = SetListenAddress(listen, c); !s.ok()) {
      return ConfigError(file, t.get("listen")->source(), "http.listen: " + s.error().message);
    }
  }
  return OkStatus();
}

Status ReadStore(std::string_view file, const toml::table& t, AgentConfig& c) {
  TableReader r(file, t, "store");
  OFU_RETURN_IF_ERROR(r.Read("path", c.store_path));
  OFU_RETURN_IF_ERROR(r.Read("retention_days", c.retention_days));
  return r.RejectUnknown();
}

Status ReadAttribution(std::string_view file, const toml::table& t, AgentConfig& c) {
  TableReader r(file, t, "attribution");
  OFU_RETURN_IF_ERROR(r.Read("methods", c.attribution_methods));
  OFU_RETURN_IF_ERROR(r.Read("slurm_mapping_dir", c.slurm_mapping_dir));
  OFU_RETURN_IF_ERROR(r.Read("proc_root", c.proc_root));
  OFU_RETURN_IF_ERROR(r.Read("kubelet_socket", c.kubelet_socket));
  OFU_RETURN_IF_ERROR(r.Read("kubelet_plugin", c.kubelet_plugin));
  OFU_RETURN_IF_ERROR(r.Read("interval", c.attribution_interval_s));
  OFU_RETURN_IF_ERROR(r.RejectUnknown({"static"}));
  const toml::node* labels = t.get("static");
  if (labels == nullptr) return OkStatus();
  const toml::array* array = labels->as_array();
  if (array == nullptr)
    return ConfigError(file, labels->source(), "attribution.static: expected [[attribution.static]] tables");
  c.static_labels.clear();
  for (const toml::node& item : *array) {
    const toml::table* entry = item.as_table();
    if (entry == nullptr) return ConfigError(file, item.source(), "attribution.static: expected tables");
    TableReader e(file, *entry, "attribution.static");
    StaticLabel label;
    label.job.scheduler = "static";
    OFU_RETURN_IF_ERROR(e.Read("gpu", label.gpu));
    OFU_RETURN_IF_ERROR(e.Read("job_id", label.job.job_id));
    OFU_RETURN_IF_ERROR(e.Read("user", label.job.user));
    OFU_RETURN_IF_ERROR(e.Read("job_name", label.job.job_name));
    OFU_RETURN_IF_ERROR(e.RejectUnknown());
    if (label.gpu.empty() || label.job.job_id.empty()) {
      return ConfigError(file, item.source(), "attribution.static: each entry needs gpu and job_id");
    }
    c.static_labels.push_back(std::move(label));
  }
  return OkStatus();
}

}  // namespace

Status ParseAgentConfig(std::string_view toml_text, std::string_view source_name, AgentConfig& config) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source_name);
  } catch (const toml::parse_error& e) {
    return Error::InvalidArgument("{}:{}: {}", source_name, e.source().begin.line, e.description());
  }
  for (const auto& [key, node] : root) {
    const std::string name(key.str());
    const toml::table* table = node.as_table();
    if (table == nullptr) {
      return ConfigError(source_name, node.source(),
                         fmt::format("{}: expected a table ([agent], [http], [store] or [attribution])", name));
    }
    Status status = OkStatus();
    if (name == "agent") {
      status = ReadAgent(source_name, *table, config);
    } else if (name == "http") {
      status = ReadHttp(source_name, *table, config);
    } else if (name == "store") {
      status = ReadStore(source_name, *table, config);
    } else if (name == "attribution") {
      status = ReadAttribution(source_name, *table, config);
    } else {
      return ConfigError(source_name, node.source(),
                         fmt::format("unknown table [{}] (known: agent, http, store, attribution)", name));
    }
    if (!status.ok()) return status;
  }
  if (Status valid = ValidateAgentConfig(config); !valid.ok()) {
    return Error::InvalidArgument("{}: {}", source_name, valid.error().message);
  }
  return OkStatus();
}

Status LoadAgentConfig(const std::string& path, AgentConfig& config) {
  OFU_ASSIGN_OR_RETURN(std::string text, formats::ReadTextFile(path));
  return ParseAgentConfig(text, path, config);
}

Status SetListenAddress(std::string_view address, AgentConfig& config) {
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) {
    return Error::InvalidArgument("listen address {:?} is not host:port", address);
  }
  std::string_view host = address.substr(0, colon);
  const std::string_view port_text = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  int port = -1;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 || port > 65535 || host.empty()) {
    return Error::InvalidArgument("listen address {:?} is not host:port with a port in 0..65535", address);
  }
  config.listen_host = std::string(host);
  config.listen_port = port;
  return OkStatus();
}

Status ValidateAgentConfig(const AgentConfig& c) {
  const auto bad = [](std::string what) { return Status(Error::InvalidArgument("{}", std::move(what))); };
  OFU_RETURN_IF_ERROR(sources::CheckSamplingSettings(c.source_options.window_s, c.source_options.clock_readings,
                                                     "window", "clock_readings"));
  if (!(c.busy_threshold >= 0 && c.busy_threshold <= 1)) return bad("busy_threshold must be in 0..1");
  if (!(c.retention_days > 0)) return bad("store.retention_days must be positive");
  if (!(c.attribution_interval_s > 0)) return bad("attribution.interval must be positive");
  static const std::set<std::string> kMethods = {"slurm-mapping", "process", "kubelet", "static"};
  for (const std::string& method : c.attribution_methods) {
    if (kMethods.count(method) == 0) {
      return bad(fmt::format("attribution method {:?} is not one of slurm-mapping, process, kubelet, static", method));
    }
  }
  return OkStatus();
}

}  // namespace ofu::agent
