// The Nsight Systems SQLite reader against databases built here with the
// sqlite3 API. All of them are synthetic: the tables follow the layout of
// `nsys export --type sqlite` (only the columns the reader cares about, plus
// a few it must ignore), and the values are made up so that every expected
// number below can be worked out by hand.
#include "ofu/formats/nsys_sqlite.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace ofu::formats {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// globalTid packs pid << 24 | tid; globalPid is the same with tid = 0. The
// high bits (hardware / VM ids) are set to check that they are carried along.
constexpr int64_t kHigh = int64_t{1} << 56;
constexpr int64_t Pid(int64_t pid) { return kHigh | (pid << 24); }
constexpr int64_t Tid(int64_t pid, int64_t tid) { return Pid(pid) | tid; }

constexpr const char* kKernelWithClusters =
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, "
    "correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, "
    "mangledName INTEGER, registersPerThread INTEGER, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, "
    "gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, "
    "clusterX INTEGER, clusterY INTEGER, clusterZ INTEGER, clusterSchedulingPolicy INTEGER)";
constexpr const char* kKernelWithoutClusters =
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, "
    "correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, "
    "mangledName INTEGER, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, "
    "blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL)";
constexpr const char* kStrings = "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)";
constexpr const char* kRuntime =
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "eventClass INTEGER NOT NULL DEFAULT 0, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, "
    "returnValue INTEGER NOT NULL DEFAULT 0)";
constexpr const char* kNvtx =
    "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, "
    "rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, "
    "textId INTEGER, domainId INTEGER)";

struct KernelRow {
  int64_t start = 0, end = 0;
  int64_t device = 0, stream = 7;
  int64_t correlation = 0;
  int64_t pid = Pid(100);
  int64_t name = 1, short_name = 2;
  int64_t grid[3] = {132, 1, 1};
  int64_t block[3] = {384, 1, 1};
  std::string cluster = "2, 1, 1";  // SQL values, e.g. "0, 0, 0" or "NULL, NULL, NULL"
};

class NsysSqliteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           (std::string("ofu_nsys_") + info->test_suite_name() + "_" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "synthetic.sqlite").string();
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db_), SQLITE_OK);
    Exec("PRAGMA synchronous = OFF");  // a scratch file: no need to wait for the disk
  }
  void TearDown() override {
    Close();
    std::filesystem::remove_all(dir_);
  }
  void Close() {
    if (db_ != nullptr) sqlite3_close(db_);
    db_ = nullptr;
  }

  void Exec(const std::string& sql) {
    char* message = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
    ASSERT_EQ(rc, SQLITE_OK) << sql << ": " << (message ? message : "");
    sqlite3_free(message);
  }

  void AddKernel(const KernelRow& k, bool with_cluster = true) {
    std::string columns =
        "start, end, deviceId, contextId, streamId, correlationId, globalPid, demangledName, shortName, "
        "gridX, gridY, gridZ, blockX, blockY, blockZ";
    std::string values = std::to_string(k.start) + ", " + std::to_string(k.end) + ", " + std::to_string(k.device) +
                         ", 1, " + std::to_string(k.stream) + ", " + std::to_string(k.correlation) + ", " +
                         std::to_string(k.pid) + ", " + std::to_string(k.name) + ", " + std::to_string(k.short_name);
    for (int64_t v : k.grid) values += ", " + std::to_string(v);
    for (int64_t v : k.block) values += ", " + std::to_string(v);
    if (with_cluster) {
      columns += ", clusterX, clusterY, clusterZ";
      values += ", " + k.cluster;
    }
    Exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (" + columns + ") VALUES (" + values + ")");
  }
  // name_id 3 is cudaLaunchKernel_v7000, 5 cudaGraphLaunch_v10000.
  void AddLaunch(int64_t start, int64_t global_tid, int64_t correlation, int64_t name_id = 3) {
    Exec("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId) VALUES (" +
         std::to_string(start) + ", " + std::to_string(start + 500) + ", " + std::to_string(global_tid) + ", " +
         std::to_string(correlation) + ", " + std::to_string(name_id) + ")");
  }
  void AddRange(int64_t start, int64_t end, int64_t global_tid, const std::string& text) {
    Exec("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (" + std::to_string(start) + ", " +
         std::to_string(end) + ", 59, '" + text + "', " + std::to_string(global_tid) + ")");
  }

  // StringIds 1..3 and the kernel table; the usual start of a test.
  void BasicSchema(bool with_cluster = true) {
    Exec(kStrings);
    Exec(
        "INSERT INTO StringIds VALUES (1, 'void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm>(Params)'), "
        "(2, 'Kernel2'), (3, 'cudaLaunchKernel_v7000'), (4, 'elementwise_kernel'), "
        "(5, 'cudaGraphLaunch_v10000')");
    Exec(with_cluster ? kKernelWithClusters : kKernelWithoutClusters);
  }

  Result<KernelTrace> Read() {
    Close();  // the reader opens the file itself, read-only
    return ReadNsysSqlite(path_);
  }

  std::filesystem::path dir_;
  std::string path_;
  sqlite3* db_ = nullptr;
};

TEST_F(NsysSqliteTest, ReadsKernelsWithClusterColumns) {
  BasicSchema();
  AddKernel({.start = 3'000'000, .end = 3'012'500, .device = 1, .stream = 13, .correlation = 11});
  AddKernel({.start = 1'000'000,
             .end = 1'004'000,
             .correlation = 10,
             .name = 4,
             .grid = {64, 2, 3},
             .block = {128, 2, 1},
             .cluster = "0, 0, 0"});
  AddKernel({.start = 5'000'000, .end = 5'000'000, .correlation = 12, .cluster = "NULL, NULL, NULL"});
  const Result<KernelTrace> trace = Read();
  ASSERT_TRUE(trace.ok()) << trace.error().message;

  EXPECT_EQ(trace->format, "nsys-sqlite");
  ASSERT_EQ(trace->kernels.size(), 3u);
  // In start order, not table order.
  const TraceKernel& first = trace->kernels[0];
  EXPECT_EQ(trace->NameOf(first), "elementwise_kernel");
  EXPECT_DOUBLE_EQ(first.start_us, 1000.0);
  EXPECT_DOUBLE_EQ(first.duration_us, 4.0);
  EXPECT_EQ(first.device, 0);
  EXPECT_EQ(first.stream, 7);
  EXPECT_EQ(first.grid, (Dim3{64, 2, 3}));
  EXPECT_EQ(first.block, (Dim3{128, 2, 1}));
  EXPECT_EQ(first.cluster, std::nullopt);  // 0x0x0 means no cluster

  const TraceKernel& second = trace->kernels[1];
  EXPECT_EQ(trace->NameOf(second), "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm>(Params)");
  EXPECT_DOUBLE_EQ(second.start_us, 3000.0);
  EXPECT_DOUBLE_EQ(second.duration_us, 12.5);
  EXPECT_EQ(second.device, 1);
  EXPECT_EQ(second.stream, 13);
  EXPECT_EQ(second.grid, (Dim3{132, 1, 1}));
  EXPECT_EQ(second.block, (Dim3{384, 1, 1}));
  EXPECT_EQ(second.cluster, (Dim3{2, 1, 1}));
  EXPECT_EQ(second.op, std::nullopt);
  EXPECT_EQ(second.link, OpLink::kNone);

  EXPECT_EQ(trace->kernels[2].cluster, std::nullopt);  // NULL
  EXPECT_DOUBLE_EQ(trace->kernels[2].duration_us, 0.0);
  // Same name id twice: stored once.
  EXPECT_EQ(trace->kernel_names.size(), 2u);
  EXPECT_EQ(trace->kernels[1].name_id, trace->kernels[2].name_id);
  EXPECT_THAT(trace->notes, Contains(HasSubstr("no NVTX ranges: run with "
                                               "torch.autograd.profiler.emit_nvtx(record_shapes=True)")));
  EXPECT_THAT(trace->devices, IsEmpty());
}

TEST_F(NsysSqliteTest, OlderSchemaWithoutClusterColumns) {
  BasicSchema(/*with_cluster=*/false);
  AddKernel({.start = 2000, .end = 3000, .correlation = 1}, /*with_cluster=*/false);
  const Result<KernelTrace> trace = Read();
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  ASSERT_EQ(trace->kernels.size(), 1u);
  EXPECT_EQ(trace->kernels[0].cluster, std::nullopt);
  EXPECT_EQ(trace->kernels[0].grid, (Dim3{132, 1, 1}));
  EXPECT_DOUBLE_EQ(trace->kernels[0].start_us, 2.0);
  EXPECT_DOUBLE_EQ(trace->kernels[0].duration_us, 1.0);
}

TEST_F(NsysSqliteTest, ShortNameWhenThereIsNoDemangledName) {
  Exec(kStrings);
  Exec("INSERT INTO StringIds VALUES (2, 'Kernel2')");
  Exec(
      "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, "
      "streamId INTEGER, correlationId INTEGER, shortName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, "
      "blockX INTEGER, blockY INTEGER, blockZ INTEGER)");
  Exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10000, 11000, 0, 7, 5, 2, 1, 1, 1, 32, 1, 1)");
  const Result<KernelTrace> trace = Read();
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  ASSERT_EQ(trace->kernels.size(), 1u);
  EXPECT_EQ(trace->NameOf(trace->kernels[0]), "Kernel2");
}

TEST_F(NsysSqliteTest, DemangledNamePreferredOverShortName) {
  BasicSchema();
  AddKernel({.start = 1, .end = 2, .correlation = 1, .name = 1, .short_name = 2});
  const Result<KernelTrace> trace = Read();
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  EXPECT_EQ(trace->NameOf(trace->kernels[0]), "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm>(Params)");
}

// The shape of an emit_nvtx(record_shapes=True) trace: aten::matmul around
// aten::mm on the Python thread, the launch inside aten::mm.
TEST_F(NsysSqliteTest, InnermostGemmRangeGivesTheOpAndItsSizes) {
  BasicSchema();
  Exec(kRuntime);
  Exec(kNvtx);
  const int64_t main_thread = Tid(100, 101);
  const int64_t other_thread = Tid(100, 102);
  AddRange(10'000, 90'000, main_thread,
           "aten::matmul, seq = 3, op_id = 40, sizes = [[64, 1024], [1024, 512]], "
           "input_op_ids = [(0,-1), (39,0)]");
  AddRange(20'000, 60'000, main_thread,
           "aten::mm, seq = 4, op_id = 41, sizes = [[64, 1024], [1024, 512]], "
           "input_op_ids = [(0,-1), (39,0)]");
  AddRange(30'000, 40'000, main_thread, "aten::empty, op_id = 42, sizes = [[], [], [], [], [], []]");
  // Another thread's GEMM range around the same time must not be used.
  AddRange(0, 1'000'000, other_thread, "aten::addmm, seq = 9, op_id = 50, sizes = [[8], [4, 8], [8, 8]]");
  AddLaunch(45'000, main_thread, 21);  // inside mm (and matmul)
  AddLaunch(35'000, main_thread, 22);  // inside empty inside mm: still mm
  AddLaunch(70'000, main_thread, 23);  // inside matmul only
  AddLaunch(95'000, main_thread, 24);  // inside nothing on its own thread
  AddKernel({.start = 100'000, .end = 110'000, .correlation = 21});
  AddKernel({.start = 110'000, .end = 111'000, .correlation = 22, .name = 4});
  AddKernel({.start = 120'000, .end = 130'000, .correlation = 23});
  AddKernel({.start = 140'000, .end = 150'000, .correlation = 24});
  const Result<KernelTrace> trace = Read();
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  ASSERT_EQ(trace->kernels.size(), 4u);

  ASSERT_EQ(trace->ops.size(), 2u);
  const FrameworkOp& mm = trace->ops[0];
  EXPECT_EQ(mm.name, "aten::mm");
  EXPECT_THAT(mm.input_dims, ElementsAre(ElementsAre(64, 1024), ElementsAre(1024, 512)));
  EXPECT_THAT(mm.input_types, IsEmpty());
  EXPECT_DOUBLE_EQ(mm.start_us, 20.0);
  EXPECT_DOUBLE_EQ(mm.duration_us, 40.0);
  const FrameworkOp& matmul = trace->ops[1];
  EXPECT_EQ(matmul.name, "aten::matmul");
  EXPECT_DOUBLE_EQ(matmul.start_us, 10.0);
  EXPECT_DOUBLE_EQ(matmul.duration_us, 80.0);

  EXPECT_EQ(trace->kernels[0].op, 0u);
  EXPECT_EQ(trace->kernels[0].link, OpLink::kNvtxNesting);
  EXPECT_EQ(trace->kernels[1].op, 0u);
  EXPECT_EQ(trace->kernels[2].op, 1u);
  EXPECT_EQ(trace->kernels[2].link, OpLink::kNvtxNesting);
  EXPECT_EQ(trace->kernels[3].op, std::nullopt);
  EXPECT_EQ(trace->kernels[3].link, OpLink::kNone);
  EXPECT_THAT(trace->notes, IsEmpty());
}

TEST_F(NsysSqliteTest, RangeTextThroughTextId) {
  BasicSchema();
  Exec(kRuntime);
  Exec(kNvtx);
  Exec(
      "INSERT INTO StringIds VALUES (20, 'aten::addmm, seq = 12, op_id = 34, sizes = [[1024], [64, 1024], "
      "[1024, 1024], [], []], input_op_ids = [(0,-1), (33,0), (0,-1)]'), (21, 'aten::relu, op_id = 35')");
  const int64_t thread = Tid(100, 101);
  Exec(
      "INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid) VALUES "
      "(1000, 9000, 59, 20, " +
      std::to_string(thread) + "), (2000, 3000, 59, 21, " + std::to_string(thread) + "), (10000, 19000, 59, 20, " +
      std::to_string(thread) + ")");
  AddLaunch(2500, thread, 1);   // in relu inside addmm: addmm
  AddLaunch(12000, thread, 2);  // the second addmm range (same textId)
  AddKernel({.start = 20000, .end = 21000, .correlation = 1});
  AddKernel({.start = 22000, .end = 23000, .correlation = 2});
  const Result<KernelTrace> trace = Read();
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  ASSERT_EQ(trace->ops.size(), 2u);
  EXPECT_EQ(trace->ops[0].name, "aten::addmm");
  EXPECT_THAT(trace->ops[0].input_dims,
              ElementsAre(ElementsAre(1024), ElementsAre(64, 1024), ElementsAre(1024, 1024), IsEmpty(), IsEmpty()));
  EXPECT_DOUBLE_EQ(trace->ops[0].start_us, 1.0);
  EXPECT_DOUBLE_EQ(trace->ops[0].duration_us, 8.0);
  EXPECT_DOUBLE_EQ(trace->ops[1].start_us, 10.0);
  EXPECT_EQ(trace->kernels[0].op, 0u);
  EXPECT_EQ(trace->kernels[1].op, 1u);
}

TEST_F(NsysSqliteTest, RangeWithoutSizesLinksWithEmptyDimsAndANote) {
  BasicSchema();
  Exec(kRuntime);
  Exec(kNvtx);
  const int64_t thread = Tid(100, 101);
  AddRange(0, 10'000, thread, "aten::mm, seq = 3, op_id = 7");  // emit_nvtx() without record_shapes
  AddLaunch(5'000, thread, 1);
  AddKernel({.start = 20'000, .end = 21'000, .correlation = 1});
  const Result<KernelTrace> trace = Read();
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  ASSERT_EQ(trace->ops.size(), 1u);
  EXPECT_EQ(trace->ops[0].name, "aten::mm");
  EXPECT_THAT(trace->ops[0].input_dims, IsEmpty());
  EXPECT_EQ(trace->kernels[0].op, 0u);
  EXPECT_THAT(trace->notes, ElementsAre(HasSubstr("1 GEMM NVTX range(s) carry no input sizes")));
}

TEST_F(NsysSqliteTest, CorrelationIdMatchedWithinTheProcess) {
  BasicSchema();
  Exec(kRuntime);
  Exec(kNvtx);
  // Two processes reuse correlationId 1; each launch sits in its own range.
  AddRange(0, 10'000, Tid(100, 101), "aten::mm, sizes = [[1, 2], [2, 3]]");
  AddRange(0, 10'000, Tid(200, 201), "aten::bmm, sizes = [[4, 5, 6], [4, 6, 7]]");
  AddLaunch(5'000, Tid(100, 101), 1);
  AddLaunch(5'000, Tid(200, 201), 1);
  AddKernel({.start = 20'000, .end = 21'000, .correlation = 1, .pid = Pid(200)});
  const Result<KernelTrace> trace = Read();
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  ASSERT_EQ(trace->ops.size(), 1u);
  EXPECT_EQ(trace->ops[0].name, "aten::bmm");
  EXPECT_THAT(trace->ops[0].input_dims, ElementsAre(ElementsAre(4, 5, 6), ElementsAre(4, 6, 7)));
  EXPECT_EQ(trace->kernels[0].op, 0u);
}

TEST_F(NsysSqliteTest, KernelsWithoutALaunchRowStayUnlinked) {
  BasicSchema();
  Exec(kRuntime);
  Exec(kNvtx);
  AddRange(0, 10'000, Tid(100, 101), "aten::mm, sizes = [[1, 2], [2, 3]]");
  AddLaunch(5'000, Tid(100, 101), 1);
  AddKernel({.start = 20'000, .end = 21'000, .correlation = 1});
  AddKernel({.start = 22'000, .end = 23'000, .correlation = 2});  // no runtime row
  AddKernel({.start = 24'000, .end = 25'000, .correlation = 3});  // no runtime row
  const Result<KernelTrace> trace = Read();
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  EXPECT_EQ(trace->kernels[0].op, 0u);
  EXPECT_EQ(trace->kernels[0].launch, LaunchKind::kKernel);
  EXPECT_EQ(trace->kernels[1].op, std::nullopt);
  EXPECT_EQ(trace->kernels[1].launch, LaunchKind::kUnknown);
  EXPECT_EQ(trace->kernels[2].op, std::nullopt);
  EXPECT_THAT(trace->notes,
              ElementsAre("2 kernel(s) have no launch in CUPTI_ACTIVITY_KIND_RUNTIME (matched by correlationId "
                          "and process); they are not tied to NVTX ranges"));
}

// A graph replay inside a GEMM range (say the range of a module that
// replays its graph): the range did not shape the graph's kernels.
TEST_F(NsysSqliteTest, KernelsReplayedFromAGraphAreMarkedAndTiedToNoRange) {
  BasicSchema();
  Exec(kRuntime);
  Exec(kNvtx);
  AddRange(0, 10'000, Tid(100, 101), "aten::mm, sizes = [[1, 2], [2, 3]]");
  AddLaunch(4'000, Tid(100, 101), 1, 5);  // cudaGraphLaunch_v10000
  AddLaunch(5'000, Tid(100, 101), 2);     // cudaLaunchKernel_v7000
  AddKernel({.start = 20'000, .end = 21'000, .correlation = 1});
  AddKernel({.start = 21'000, .end = 21'500, .correlation = 1});
  AddKernel({.start = 22'000, .end = 23'000, .correlation = 2});
  const Result<KernelTrace> trace = Read();
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  ASSERT_EQ(trace->kernels.size(), 3u);
  for (int i : {0, 1}) {
    EXPECT_EQ(trace->kernels[i].launch, LaunchKind::kGraph);
    EXPECT_EQ(trace->kernels[i].op, std::nullopt);
    EXPECT_EQ(trace->kernels[i].link, OpLink::kNone);
  }
  EXPECT_EQ(trace->kernels[2].launch, LaunchKind::kKernel);
  EXPECT_EQ(trace->kernels[2].op, 0u);
}

TEST_F(NsysSqliteTest, StartEndRangesAndOtherEventTypesAreIgnored) {
  BasicSchema();
  Exec(kRuntime);
  Exec(kNvtx);
  const int64_t thread = Tid(100, 101);
  Exec(
      "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES "
      "(0, 10000, 60, 'aten::mm, sizes = [[1, 2], [2, 3]]', " +
      std::to_string(thread) +
      "), "
      "(0, NULL, 59, 'aten::mm, sizes = [[1, 2], [2, 3]]', " +
      std::to_string(thread) + ")");
  AddLaunch(5'000, thread, 1);
  AddKernel({.start = 20'000, .end = 21'000, .correlation = 1});
  const Result<KernelTrace> trace = Read();
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  EXPECT_EQ(trace->kernels[0].op, std::nullopt);
  EXPECT_THAT(trace->ops, IsEmpty());
  EXPECT_THAT(trace->notes, ElementsAre(HasSubstr("no NVTX range names a GEMM op")));
}

TEST_F(NsysSqliteTest, MissingKernelTable) {
  Exec(kStrings);
  Exec(kNvtx);
  const Result<KernelTrace> trace = Read();
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.error().code, ErrorCode::kMalformedInput);
  EXPECT_EQ(trace.error().message,
            path_ + ": no CUPTI_ACTIVITY_KIND_KERNEL table: was the trace captured with --trace=cuda?");
}

TEST_F(NsysSqliteTest, MissingRequiredColumn) {
  Exec(kStrings);
  Exec(
      "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, "
      "correlationId INTEGER, demangledName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, "
      "blockX INTEGER, blockY INTEGER, blockZ INTEGER)");
  const Result<KernelTrace> trace = Read();
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.error().code, ErrorCode::kMalformedInput);
  EXPECT_EQ(trace.error().message, path_ + ": CUPTI_ACTIVITY_KIND_KERNEL has no column streamId");
}

TEST_F(NsysSqliteTest, MissingNvtxColumn) {
  BasicSchema();
  Exec(kRuntime);
  Exec("CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, globalTid INTEGER)");
  AddKernel({.start = 1, .end = 2, .correlation = 1});
  const Result<KernelTrace> trace = Read();
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.error().message, path_ + ": NVTX_EVENTS has no column text or textId");
}

TEST_F(NsysSqliteTest, DanglingStringId) {
  BasicSchema();
  AddKernel({.start = 1, .end = 2, .correlation = 1});
  AddKernel({.start = 3, .end = 4, .correlation = 77, .name = 999});
  const Result<KernelTrace> trace = Read();
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.error().code, ErrorCode::kMalformedInput);
  EXPECT_EQ(trace.error().message,
            path_ + ": CUPTI_ACTIVITY_KIND_KERNEL row 2 (correlationId 77): name id 999 is not in StringIds");
}

TEST_F(NsysSqliteTest, DanglingNvtxTextId) {
  BasicSchema();
  Exec(kRuntime);
  Exec(kNvtx);
  Exec("INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid) VALUES (0, 10, 59, 555, 1)");
  AddKernel({.start = 1, .end = 2, .correlation = 1});
  const Result<KernelTrace> trace = Read();
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.error().message, path_ + ": NVTX_EVENTS row 1: textId 555 is not in StringIds");
}

TEST_F(NsysSqliteTest, EndBeforeStart) {
  BasicSchema();
  AddKernel({.start = 5000, .end = 4000, .correlation = 8});
  const Result<KernelTrace> trace = Read();
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.error().code, ErrorCode::kMalformedInput);
  EXPECT_EQ(trace.error().message,
            path_ + ": CUPTI_ACTIVITY_KIND_KERNEL row 1 (correlationId 8): end 4000 is before start 5000");
}

TEST_F(NsysSqliteTest, NullInRequiredColumn) {
  Exec(kStrings);
  Exec("INSERT INTO StringIds VALUES (1, 'k')");
  Exec(
      "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER, "
      "correlationId INTEGER, demangledName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, "
      "blockX INTEGER, blockY INTEGER, blockZ INTEGER)");
  Exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, NULL, 7, 3, 1, 1, 1, 1, 1, 1, 1)");
  const Result<KernelTrace> trace = Read();
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.error().message, path_ + ": CUPTI_ACTIVITY_KIND_KERNEL row 1 (correlationId 3): deviceId is NULL");
}

TEST_F(NsysSqliteTest, NotAnSqliteFile) {
  Close();
  {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << "{\"traceEvents\": []} this is JSON, not SQLite, and long enough to hold a header.............";
  }
  const Result<KernelTrace> trace = ReadNsysSqlite(path_);
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.error().code, ErrorCode::kMalformedInput);
  EXPECT_THAT(trace.error().message, HasSubstr(path_ + ": not an SQLite database"));
  EXPECT_THAT(trace.error().message, HasSubstr("file is not a database"));
}

TEST_F(NsysSqliteTest, FileThatDoesNotExist) {
  const std::string missing = (dir_ / "missing.sqlite").string();
  const Result<KernelTrace> trace = ReadNsysSqlite(missing);
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.error().code, ErrorCode::kIo);
  EXPECT_THAT(trace.error().message, HasSubstr(missing + ": cannot open"));
}

TEST_F(NsysSqliteTest, DevicesFromTargetInfoTables) {
  BasicSchema();
  Exec(
      "CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT, "
      "smCount INTEGER, cuDevice INTEGER, computeMajor INTEGER, computeMinor INTEGER)");
  Exec(
      "CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER NOT NULL, pid INTEGER NOT NULL, "
      "uuid TEXT, numMultiprocessors INTEGER)");
  // GPU 5 is CUDA device 1 (by the mapping); GPU 4 has no mapping and says
  // cuDevice 0; GPU 4 appears twice (two VMs' view) and is kept once.
  Exec(
      "INSERT INTO TARGET_INFO_GPU VALUES (0, 5, 'NVIDIA H100 80GB HBM3', '0000:18:00.0', NULL, NULL, 9, 0), "
      "(0, 4, 'NVIDIA H100 80GB HBM3', '0000:2a:00.0', 132, 0, 9, 0), "
      "(1, 4, 'NVIDIA H100 80GB HBM3', '0000:2a:00.0', 132, 0, 9, 0)");
  Exec("INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (5, 1, 1234, 'GPU-x', 132)");
  AddKernel({.start = 1, .end = 2, .correlation = 1});
  const Result<KernelTrace> trace = Read();
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  ASSERT_EQ(trace->devices.size(), 2u);
  EXPECT_EQ(trace->devices[0].id, 0);
  EXPECT_EQ(trace->devices[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(trace->devices[0].sm_count, 132);
  EXPECT_EQ(trace->devices[0].compute_major, 9);
  EXPECT_EQ(trace->devices[0].compute_minor, 0);
  EXPECT_EQ(trace->devices[1].id, 1);
  EXPECT_EQ(trace->devices[1].sm_count, 132);  // from numMultiprocessors
}

TEST_F(NsysSqliteTest, DevicesFromCudaDeviceTableAlone) {
  BasicSchema();
  Exec(
      "CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER NOT NULL, pid INTEGER NOT NULL, "
      "uuid TEXT, numMultiprocessors INTEGER)");
  Exec("INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 1, 'GPU-a', 108), (1, 1, 1, 'GPU-b', 108)");
  const Result<KernelTrace> trace = Read();
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  ASSERT_EQ(trace->devices.size(), 2u);
  EXPECT_EQ(trace->devices[1].id, 1);
  EXPECT_EQ(trace->devices[1].name, "");
  EXPECT_EQ(trace->devices[1].sm_count, 108);
  EXPECT_EQ(trace->devices[1].compute_major, std::nullopt);
}

TEST_F(NsysSqliteTest, ImageReadsTheSameAsTheFile) {
  BasicSchema();
  Exec(kRuntime);
  Exec(kNvtx);
  const int64_t thread = Tid(100, 101);
  AddRange(0, 10'000, thread, "aten::linear, seq = 1, op_id = 2, sizes = [[8, 16], [32, 16], [32]]");
  AddLaunch(5'000, thread, 1);
  AddKernel({.start = 20'000, .end = 21'000, .correlation = 1});
  AddKernel({.start = 30'000, .end = 31'500, .correlation = 2, .name = 4});
  Close();

  std::vector<uint64_t> progress;
  TraceReadOptions options;
  options.progress = [&progress](uint64_t done, uint64_t total) {
    progress.push_back(done);
    progress.push_back(total);
  };
  const Result<KernelTrace> from_file = ReadNsysSqlite(path_, options);
  ASSERT_TRUE(from_file.ok()) << from_file.error().message;
  // 2 kernels + 1 NVTX range + 1 runtime row; reported once, at the end.
  EXPECT_THAT(progress, ElementsAre(4u, 4u));

  std::ifstream in(path_, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const Result<KernelTrace> from_image = ParseNsysSqliteImage(bytes, "image.sqlite");
  ASSERT_TRUE(from_image.ok()) << from_image.error().message;

  EXPECT_EQ(from_image->kernel_names, from_file->kernel_names);
  ASSERT_EQ(from_image->kernels.size(), 2u);
  ASSERT_EQ(from_file->kernels.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const TraceKernel& a = from_image->kernels[i];
    const TraceKernel& b = from_file->kernels[i];
    EXPECT_EQ(a.name_id, b.name_id);
    EXPECT_EQ(a.start_us, b.start_us);
    EXPECT_EQ(a.duration_us, b.duration_us);
    EXPECT_EQ(a.grid, b.grid);
    EXPECT_EQ(a.cluster, b.cluster);
    EXPECT_EQ(a.op, b.op);
    EXPECT_EQ(a.link, b.link);
  }
  EXPECT_EQ(from_image->kernels[0].op, 0u);
  EXPECT_DOUBLE_EQ(from_image->kernels[1].duration_us, 1.5);
  ASSERT_EQ(from_image->ops.size(), 1u);
  EXPECT_EQ(from_image->ops[0].name, "aten::linear");
  EXPECT_THAT(from_image->ops[0].input_dims, ElementsAre(ElementsAre(8, 16), ElementsAre(32, 16), ElementsAre(32)));
  EXPECT_EQ(from_image->notes, from_file->notes);
  EXPECT_EQ(from_image->bytes_read, bytes.size());
}

TEST(NsysSqliteImage, GarbageIsAnErrorNamingTheSource) {
  const Result<KernelTrace> trace = ParseNsysSqliteImage("definitely not a database, just some bytes", "junk.bin");
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.error().code, ErrorCode::kMalformedInput);
  EXPECT_THAT(trace.error().message, HasSubstr("junk.bin: "));
}

TEST(NsysSqliteImage, EmptyImageHasNoKernelTable) {
  const Result<KernelTrace> trace = ParseNsysSqliteImage("", "empty.sqlite");
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.error().message,
            "empty.sqlite: no CUPTI_ACTIVITY_KIND_KERNEL table: was the trace captured with --trace=cuda?");
}

}  // namespace
}  // namespace ofu::formats
