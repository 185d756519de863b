// Parsers for the other small files the process scan reads: a process's
// environment (/proc/PID/environ), its status (/proc/PID/status) and the
// password file that turns a uid into a user name.
//
// Pure functions on text; no I/O. Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ofu::attribution {

// The Slurm variables of a process environment; empty when absent.
struct SlurmEnviron {
  std::string job_id;    // SLURM_JOB_ID (or the older spelling SLURM_JOBID)
  std::string user;      // SLURM_JOB_USER
  std::string job_name;  // SLURM_JOB_NAME
};

// /proc/PID/environ: "KEY=VALUE" entries separated (and usually ended) by
// NUL bytes. The first definition of a name wins, as for getenv(3).
SlurmEnviron ParseSlurmEnviron(std::string_view environment);

// The real uid from the "Uid:\treal\teffective\tsaved\tfs" line of
// /proc/PID/status; nullopt when the line is missing or malformed.
std::optional<std::uint32_t> ParseStatusUid(std::string_view status);

// The first user name with `uid` in passwd(5) text ("name:pw:uid:gid:…").
// Comments, blank lines and NIS "+"/"-" entries are skipped.
std::optional<std::string> LookupPasswdName(std::string_view passwd, std::uint32_t uid);

}  // namespace ofu::attribution
