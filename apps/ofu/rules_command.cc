#include "rules_command.h"

#include <fmt/format.h>

#include "ofu/cli/exit_codes.h"
#include "ofu/cli/spec_db.h"
#include "ofu/history/dcgm_exporter_rules.h"
#include "ofu/history/dcgm_hourly.h"
#include "ofu/history/prometheus_hourly.h"

namespace ofu::cli {
namespace {

constexpr const char* kRulesHelp = R"(Prometheus rules that ofu reads from.

  hourly         the hourly rollups' rules, of the agent's counters or of
                 dcgm-exporter's series
  dcgm-exporter  the zero-deploy rules: OFU per scrape from dcgm-exporter

Run 'ofu rules hourly --help' or 'ofu rules dcgm-exporter --help' for details.)";

constexpr const char* kDcgmExporterHelp = R"(Print the zero-deploy recording rules (YAML).

For a Prometheus that scrapes dcgm-exporter and no ofu agent: OFU per GPU
(or MIG instance) and scrape, gpu:dcgm_ofu:ratio = tensor activity x the
clock the SMs ran / f_spec x k_arch, and its means per 5 minutes and hour,
per Slurm job (hpc_job), Kubernetes pod, SKU and fleet. f_spec and k_arch
come from the spec database, per model name as dcgm-exporter's modelName
label spells it; the clock is the board's measured clock model where one
was measured (clock_source="measured-model"), else the reported clock.
deploy/prometheus/dcgm-exporter-rules.yml is this output for the built-in
database; after editing a spec file, regenerate it (docs/prometheus.md §4).

Examples:
  ofu rules dcgm-exporter > dcgm-exporter-rules.yml
  ofu rules dcgm-exporter --spec-db my_gpu_specs.json > dcgm-exporter-rules.yml

Exit status: 0 printed, 1 usage, 2 a --spec-db file that cannot be used.)";

constexpr const char* kHourlyHelp = R"(Print the recording rules of the hourly rollups (YAML).

Once an hour, per GPU and per job scraped on it, they record the exact sums
of the agent's counters over that hour, so that `ofu report --prometheus`
and `ofu reconcile --prometheus` answer a month of a large fleet from a few
values per GPU-hour instead of every scrape (--resolution auto, the
default, uses them where they cover the range). The sums are the raw
path's, not averages: a month read from them equals the month read from
the raw counters.

The sums step through each hour at S seconds, the largest divisor of 3600
at most 0.9 x the scrape interval (15 s: 12 s), so give the interval at
which Prometheus scrapes the agents. deploy/prometheus/ofu-hourly-rules.yml
is this output for 15 s. Load the file with rule_files: in prometheus.yml;
for history already stored, backfill it with promtool:
  promtool tsdb create-blocks-from rules --start START --end END \
    --url http://prometheus:9090 ofu-hourly-rules.yml
(docs/prometheus.md, "Hourly rollups").

--series dcgm-exporter writes the rules for a Prometheus that scrapes
dcgm-exporter and no ofu agent: per GPU (or MIG instance), per hpc_job,
namespace, pod and container label and per hour, the scrapes' count, the
sums of tensor activity, of tensor activity x the clock the SMs ran (the
board's measured clock model, from the spec database, as
deploy/prometheus/dcgm-exporter-rules.yml applies it) and of the reported
clock, and each series' first and last scrape; `ofu report --series
dcgm-exporter` reads them (docs/prometheus.md, "Hourly rollups of
dcgm-exporter's series"). Give dcgm-exporter's scrape interval.

Examples:
  ofu rules hourly > ofu-hourly-rules.yml
  ofu rules hourly --scrape-interval 60 > ofu-hourly-rules.yml
  ofu rules hourly --series dcgm-exporter --scrape-interval 30 > dcgm-hourly-rules.yml

Exit status: 0 printed, 1 usage or a scrape interval below 2 s.)";

}  // namespace

void AddRulesFlags(CLI::App& cmd, RulesArgs& args) {
  cmd.description(kRulesHelp);
  cmd.require_subcommand(1);
  CLI::App* hourly = cmd.add_subcommand("hourly", "The hourly rollups' recording rules (YAML)");
  hourly->description(kHourlyHelp);
  hourly
      ->add_option("--scrape-interval", args.scrape_interval_s,
                   "Seconds between Prometheus's scrapes of the agents (sets the sums' step)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  hourly
      ->add_option("--series", args.series,
                   "Whose series the rules sum: ofu (the agent's counters) or dcgm-exporter (its gauges)")
      ->check(CLI::IsMember({"ofu", "dcgm-exporter"}))
      ->capture_default_str();
  AddSpecDbFlag(*hourly, args.spec_db);
  CLI::App* zero_deploy = cmd.add_subcommand("dcgm-exporter",
                                             "The zero-deploy rules: OFU per scrape from dcgm-exporter (YAML)");
  zero_deploy->description(kDcgmExporterHelp);
  zero_deploy->callback([&args] { args.zero_deploy = true; });
  AddSpecDbFlag(*zero_deploy, args.spec_db);
}

Result<int> RunRules(const RulesArgs& args) {
  std::string yaml;
  if (args.zero_deploy) {
    OFU_ASSIGN_OR_RETURN(const auto specs, LoadSpecDatabase(args.spec_db));
    yaml = history::DcgmExporterRulesYaml(specs);
  } else if (args.series == "dcgm-exporter") {
    OFU_ASSIGN_OR_RETURN(const auto specs, LoadSpecDatabase(args.spec_db));
    OFU_ASSIGN_OR_RETURN(yaml, history::DcgmHourlyRulesYaml(args.scrape_interval_s, specs));
  } else {
    OFU_ASSIGN_OR_RETURN(yaml, history::HourlyRulesYaml(args.scrape_interval_s));
  }
  fmt::print("{}", yaml);
  return kExitOk;
}

}  // namespace ofu::cli
