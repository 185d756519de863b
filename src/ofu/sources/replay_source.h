// Replay of a recording through the Source interface.
//
// The file is read whole (ReadRecording) and played back as recorded: one
// Snapshot per distinct sample time, in time order, holding every GPU of
// the recording; a GPU with no sample at that instant has an empty sample
// (all counters absent). Values are not re-windowed, so recording a replay
// reproduces the samples. A snapshot's window_s is the time since the
// previous one (for the first, the time to the next). With pace_replay,
// Next() first sleeps that long (at most 10 s), so `ofu top` plays the file
// back in real time.
//
// Errors: Open fails with the reader's error (kIo, kMalformedInput).
//
// Thread-safety: one thread at a time (see Source); the recording it plays
// is its own copy.
#pragma once

#include <memory>
#include <string>

#include "ofu/core/result.h"
#include "ofu/sources/clock.h"
#include "ofu/sources/source.h"

namespace ofu::sources {

Result<std::unique_ptr<Source>> OpenReplaySource(const std::string& path, const SourceOptions& options, Clock& clock);

}  // namespace ofu::sources
