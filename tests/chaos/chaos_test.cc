// The chaos suite (README.md): our client against --server=ours|grpcpp
// through fault-injecting proxies. Flags (after gtest's):
//   --server=ours|grpcpp   the server on the other end
//   --soak                 the long run: more calls, rounds and kills
//   --seed=N               reproduce a run (default: 3; the soak: the time)
//   --enforce_known_bugs=all|1,2,...  fail on these known bugs too
#include <stdlib.h>
#include <string.h>

#include <memory>
#include <set>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/chaos/chaos_driver.h"
#include "tests/chaos/chaos_servers.h"

namespace chaos {
namespace {

ServerKind g_server = ServerKind::kOurs;
bool g_soak = false;
uint64_t g_seed = 3;

// RSS may grow this much over the rounds after the first (sanitizers keep
// freed memory in quarantine for a while).
#if defined(__SANITIZE_ADDRESS__)
constexpr int64_t kRssGrowthKiB = 384 * 1024;
#else
constexpr int64_t kRssGrowthKiB = 64 * 1024;
#endif

class ChaosTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = StartChaosServer(g_server);
    ASSERT_NE(server_, nullptr);
  }
  // Prints what the known bugs did; fails on violations, with the seed.
  void Expect(const Verdict& v, const std::string& extra = "") {
    const std::string report = v.Report();
    printf("[%s] %s\n", ServerKindName(g_server), report.c_str());
    EXPECT_TRUE(v.ok()) << report << "\n" << extra;
  }
  std::unique_ptr<ChaosServer> server_;
};

// All four kinds, every fate, on healthy and faulty channels; in rounds, so
// that RSS after the first round bounds the rest.
TEST_F(ChaosTest, Storm) {
  StormOptions opt;
  opt.seed = g_seed;
  opt.calls_per_worker = g_soak ? 400 : 40;
  const int rounds = g_soak ? 20 : 2;
  int64_t rss_after_first = 0;
  for (int r = 0; r < rounds; ++r) {
    opt.seed = g_seed + static_cast<uint64_t>(r) * 101;
    std::string plans;
    Verdict v = RunStorm(server_.get(), opt, &plans);
    Expect(v, plans);
    if (!v.ok()) break;
    const int64_t rss = RssKiB();
    if (r == 0) rss_after_first = rss;
    EXPECT_LT(rss - rss_after_first, kRssGrowthKiB)
        << "RSS grew from " << rss_after_first << " KiB to " << rss
        << " KiB by round " << r;
  }
}

// The storm while the server is killed and restarted under it.
TEST_F(ChaosTest, KillRestart) {
  StormOptions opt;
  opt.seed = g_seed + 7;
  opt.calls_per_worker = g_soak ? 600 : 40;
  opt.kills = g_soak ? 12 : 2;
  opt.faulty_channels = 1;
  std::string plans;
  Expect(RunStorm(server_.get(), opt, &plans), plans);
}

TEST_F(ChaosTest, MassCancel) {
  Expect(RunMassCancel(server_.get(), g_seed + 11, g_soak ? 20000 : 5000));
}

TEST_F(ChaosTest, FanOut) {
  Expect(RunFanOut(server_.get(), g_seed + 13, g_soak ? 5000 : 1500));
}

// About 30% of the calls reset; a new connection every 10 rounds keeps
// them under our server's RST_STREAM flood limit (1000, 200/s).
TEST_F(ChaosTest, DeadlineStorm) {
  Expect(RunDeadlineStorm(server_.get(), g_seed + 23, g_soak ? 200 : 20, 150,
                          10, 30));
}

// 75% of 3,000 calls reset within a second or so on one connection: a
// client's deadlines and cancels, not a rapid reset attack.
TEST_F(ChaosTest, ResetFlood) {
  Expect(RunDeadlineStorm(server_.get(), g_seed + 31, g_soak ? 100 : 20, 150,
                          g_soak ? 100 : 20, 75));
}

TEST_F(ChaosTest, ResetBurst) {
  Expect(RunResetBurst(server_.get(), g_seed + 29, g_soak ? 100 : 30));
}

TEST_F(ChaosTest, UnreadStreams) {
  Expect(RunUnreadStreams(server_.get(), g_seed + 17, 6));
}

TEST_F(ChaosTest, BigMetadata) {
  Expect(RunBigMetadata(server_.get(), g_seed + 19));
}

}  // namespace
}  // namespace chaos

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  bool seeded = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--server=grpcpp") {
      chaos::g_server = chaos::ServerKind::kGrpcpp;
    } else if (arg == "--server=ours") {
      chaos::g_server = chaos::ServerKind::kOurs;
    } else if (arg == "--soak") {
      chaos::g_soak = true;
    } else if (arg.rfind("--seed=", 0) == 0 &&
               absl::SimpleAtoi(arg.substr(7), &chaos::g_seed)) {
      seeded = true;
    } else if (arg.rfind("--enforce_known_bugs=", 0) == 0) {
      std::set<int> ids;
      for (absl::string_view part :
           absl::StrSplit(arg.substr(21), ',', absl::SkipEmpty())) {
        int id = 0;
        if (part == "all") {
          ids = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
        } else if (absl::SimpleAtoi(part, &id)) {
          ids.insert(id);
        }
      }
      chaos::SetEnforcedKnownBugs(ids);
    } else {
      fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (chaos::g_soak && !seeded) {
    chaos::g_seed = static_cast<uint64_t>(absl::ToUnixMicros(absl::Now()));
  }
  printf("chaos: server %s, seed %llu%s\n",
         chaos::ServerKindName(chaos::g_server),
         static_cast<unsigned long long>(chaos::g_seed),
         chaos::g_soak ? ", soak" : "");
  return RUN_ALL_TESTS();
}
