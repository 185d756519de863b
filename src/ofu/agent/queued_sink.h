// The agent's sinks that may block (the history store: a commit can wait on
// the disk), each put behind a bounded queue on a thread of its own
// (sinks/async_sink.h), so that sampling never waits for them. The windows
// a queue drops are counted in the agent's exposition as
// ofu_sink_dropped_windows_total{sink} (docs/prometheus.md), exported from 0.
//
// Queue length: the windows of kQueuedSeconds, at least kMinQueuedWindows.
// A disk that stalls for seconds (a WAL checkpoint, an fsync under I/O
// pressure) loses no window; one slower than that for good drops the oldest
// and says so in the log and the counter. Memory: a batch is a few KiB for
// eight GPUs, so a full queue at the shortest window (0.1 s, 600 batches)
// holds a few MiB, and only while the sink lags.
//
// Ownership: takes the sink; `metrics` must outlive the returned AsyncSink.
// Thread-safety: call from the thread that assembles the agent.
#pragma once

#include <cstddef>
#include <memory>

#include "ofu/sinks/async_sink.h"
#include "ofu/sinks/metrics_state.h"
#include "ofu/sinks/sink.h"

namespace ofu::agent {

inline constexpr double kQueuedSeconds = 60;
inline constexpr std::size_t kMinQueuedWindows = 8;

// The queue's length for windows of `window_s` seconds.
std::size_t QueuedWindows(double window_s);

// `sink` behind a queue of QueuedWindows(window_s) batches, its drops counted
// in `metrics` under sink->name().
std::unique_ptr<sinks::AsyncSink> QueueSink(std::unique_ptr<sinks::Sink> sink, sinks::MetricsState& metrics,
                                            double window_s);

}  // namespace ofu::agent
