#include "top_command.h"

// curses' function-like macros (move, erase, timeout, ...) would capture
// std::move and friends; the library has real functions for each.
#define NCURSES_NOMACROS
#include <curses.h>

#include <algorithm>
#include <chrono>
#include <clocale>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "ofu/attribution/process_names.h"
#include "ofu/cli/exit_codes.h"
#include "ofu/cli/spec_db.h"
#include "ofu/cli/stop_signal.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/render/top_view.h"

namespace ofu::cli {
namespace {

// Keys are polled this often while a source waits for its window.
constexpr int kKeyPollMs = 100;

constexpr const char* kTopHelp = R"(A live view of OFU per GPU.

Per GPU: OFU (tensor activity x SM clock / f_spec) with a bar and a history
sparkline, tensor activity, SM clock against f_spec, power, clock event
(throttle) reasons, the processes on it, and what is wrong when a GPU is
lost or its counters are unavailable. A figure that cannot be computed is
shown as "—", never as 0.

Keys: q quit; s cycle the sort order; o, t, p, g sort by OFU, tensor
activity, power, GPU index.

Examples:
  ofu top
  ofu top --source replay:data/recordings/synthetic-2xh100-bf16-matmul.om
  ofu top --once --source dcgm

Exit status: 0 ok, 1 usage, 2 malformed recording, 4 no window read,
5 no source could be opened. See docs/cli.md.)";

// --once: one frame as plain text.
Result<int> RunOnce(const TopArgs& args, const GpuSpecDatabase& specs) {
  sources::SystemClock clock;
  SourceFlags flags = args.source;
  flags.options.pace_replay = false;
  OFU_ASSIGN_OR_RETURN(auto source, OpenSourceFromFlags(flags, clock));

  render::TopModel model(specs, args.history);
  bool ended = false;
  // A live source gives one window; a replay is read to its end so the
  // frame shows its last window with the whole history behind it.
  do {
    OFU_ASSIGN_OR_RETURN(auto next, (source)->Next());
    if (!next.has_value()) {
      ended = true;
      break;
    }
    model.Add(*next);
  } while (!(source)->live());

  if (model.windows() == 0) return Error::NoData("{} gave no window", (source)->Describe());
  render::TopFrame frame;
  frame.source = (source)->Describe();
  frame.sort = render::SortOrderForName(args.sort).value_or(render::SortOrder::kOfu);
  frame.width = args.width;
  frame.ended = ended;
  frame.process_name = [&](std::uint32_t pid) { return attribution::ReadProcessName(args.proc_root, pid); };
  for (const render::TopLine& line : render::RenderTop(model, frame)) fmt::print("{}\n", line.text);
  return kExitOk;
}

// Owns the terminal while it is in curses mode; the destructor gives it back
// on every way out, errors included.
class Screen {
 public:
  Screen() {
    initscr();
    cbreak();  // not raw(): Ctrl-C must still raise SIGINT
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
  }
  ~Screen() { endwin(); }
  Screen(const Screen&) = delete;
  Screen& operator=(const Screen&) = delete;

  void Draw(const std::vector<render::TopLine>& lines) {
    erase();
    const auto rows = static_cast<std::size_t>(std::max(LINES, 0));
    for (std::size_t y = 0; y < lines.size() && y < rows; ++y) {
      const int attributes = lines[y].style == render::LineStyle::kHeader    ? A_BOLD
                             : lines[y].style == render::LineStyle::kWarning ? A_REVERSE
                             : lines[y].style == render::LineStyle::kProblem ? (A_BOLD | A_REVERSE)
                                                                             : A_NORMAL;
      attron(attributes);
      mvaddstr(static_cast<int>(y), 0, lines[y].text.c_str());
      attroff(attributes);
    }
    refresh();
  }

  // A key, or ERR after `wait_ms` without one.
  int Key(int wait_ms) {
    timeout(wait_ms);
    return getch();
  }
};

// The interactive view: the model, the frame and the keys.
class Interactive {
 public:
  Interactive(const TopArgs& args, const GpuSpecDatabase& specs) : model_(specs, args.history) {
    frame_.sort = render::SortOrderForName(args.sort).value_or(render::SortOrder::kOfu);
    frame_.interactive = true;
    frame_.process_name = [root = args.proc_root](std::uint32_t pid) {
      return attribution::ReadProcessName(root, pid);
    };
  }

  bool quit() const { return quit_ || StopRequested(); }

  void SetSource(std::string description) { frame_.source = std::move(description); }
  void Add(const sources::Snapshot& snapshot) {
    model_.Add(snapshot);
    Redraw();
  }
  void End() {
    frame_.ended = true;
    Redraw();
  }

  // Waits up to `seconds` for keys, answering each; returns early on quit.
  void HandleKeys(double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!quit()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                              std::chrono::steady_clock::now());
      if (left.count() <= 0) return;
      const int key = screen_.Key(static_cast<int>(std::min<long long>(left.count(), kKeyPollMs)));
      if (key == ERR) continue;
      if (key == 'q' || key == 'Q') {
        quit_ = true;
      } else if (key == 's') {
        frame_.sort = render::NextSortOrder(frame_.sort);
      } else if (auto order = render::SortOrderForKey(key)) {
        frame_.sort = *order;
      }
      Redraw();  // after any key, KEY_RESIZE included: the size is read anew
    }
  }

  void Redraw() {
    frame_.width = static_cast<std::size_t>(std::max(COLS, 1));
    screen_.Draw(render::RenderTop(model_, frame_));
  }

 private:
  Screen screen_;
  render::TopModel model_;
  render::TopFrame frame_;
  bool quit_ = false;
};

// The clock handed to the source: time is the system's, but a wait is spent
// answering keys, so the view stays responsive while a live source samples
// its window or a replay is paced, all in one thread.
class KeyAnsweringClock final : public sources::Clock {
 public:
  explicit KeyAnsweringClock(Interactive& view) : view_(view) {}
  double NowS() override { return system_.NowS(); }
  void SleepS(double seconds) override { view_.HandleKeys(seconds); }

 private:
  sources::SystemClock system_;
  Interactive& view_;
};

Result<int> RunInteractive(const TopArgs& args, const GpuSpecDatabase& specs) {
  // Before initscr, so that curses leaves these signals to us.
  InstallStopSignals();
  std::setlocale(LC_ALL, "");  // curses draws UTF-8 (bars, sparkline, "—") only in a UTF-8 locale

  std::optional<Error> failure;
  {
    Interactive view(args, specs);
    KeyAnsweringClock clock(view);
    SourceFlags flags = args.source;
    flags.options.pace_replay = true;
    view.Redraw();
    auto source = OpenSourceFromFlags(flags, clock);
    if (!source.ok()) {
      failure = source.error();
    } else {
      view.SetSource((*source)->Describe());
      view.Redraw();
      while (!view.quit()) {
        auto next = (*source)->Next();
        if (view.quit()) break;
        if (!next.ok()) {
          failure = next.error();
          break;
        }
        if (!next->has_value()) {  // a replay's end: keep the last frame until q
          view.End();
          while (!view.quit()) view.HandleKeys(1);
          break;
        }
        view.Add(**next);
      }
    }
  }  // the terminal is restored here, before main prints any message
  if (failure) return *failure;
  return kExitOk;
}

}  // namespace

void AddTopFlags(CLI::App& cmd, TopArgs& args) {
  cmd.description(kTopHelp);
  AddSourceFlags(cmd, args.source);
  cmd.add_flag("--once", args.once,
               "Print one frame as plain text and exit (a replay is read to its end and its last window shown)");
  cmd.add_option("--sort", args.sort, "Initial sort order: ofu, tensor, power or gpu")
      ->check(CLI::IsMember({"ofu", "tensor", "power", "gpu"}))
      ->capture_default_str();
  cmd.add_option("--history", args.history, "Windows of OFU history in the sparkline")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd.add_option("--width", args.width, "Columns of the --once output")
      ->check(CLI::Range(40, 1000))
      ->capture_default_str();
  cmd.add_option("--proc-root", args.proc_root, "Where procfs is, for process names")->capture_default_str();
  AddSpecDbFlag(cmd, args.spec_db);
}

Result<int> RunTop(const TopArgs& args) {
  OFU_ASSIGN_OR_RETURN(auto specs, LoadSpecDatabase(args.spec_db));
  return args.once ? RunOnce(args, specs) : RunInteractive(args, specs);
}

}  // namespace ofu::cli
