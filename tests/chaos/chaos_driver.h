// The chaos suite's driver: plans calls from a seed, runs them through
// fault proxies against a ChaosServer, and checks every outcome against the
// fate table (README.md).
//
// Every call has a fate, chosen before it starts:
// clang-format off
//   kComplete      no deadline but a 20 s bound, no cancel
//   kDeadline      a deadline of 1-60 ms, the server pausing 0-20 ms per message
//   kClientCancel  TryCancel after 0-30 ms, the server pausing 0-10 ms
//   kServerAbort   the server ends the call with ABORTED part way (abort_after)
//   kSlowReader    (server streaming, bidi) 32-64 KiB responses read with pauses
// and runs on a healthy channel (its proxy forwards, maybe with latency) or a
// faulty one (its proxy cuts, truncates or stalls some connections), maybe
// while the server is killed and restarted (disrupted). The statuses allowed:
//
//   fate           on a healthy channel
//   kComplete      OK
//   kSlowReader    OK
//   kDeadline      OK, DEADLINE_EXCEEDED
//   kClientCancel  OK, CANCELLED
//   kServerAbort   ABORTED
//   any            + UNAVAILABLE, DEADLINE_EXCEEDED on a faulty channel
//   any            + UNAVAILABLE, CANCELLED when disrupted
// clang-format on
//
// and whatever the status, the messages a call received are its own, in
// order, intact, none twice; with OK, all of them (and the server read all
// the requests, in order: the digest); with ABORTED, all before the abort.
#ifndef TESTS_CHAOS_CHAOS_DRIVER_H_
#define TESTS_CHAOS_CHAOS_DRIVER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "rpc/rpc.h"
#include "tests/chaos/chaos_servers.h"

namespace chaos {

enum class CallKind { kUnary, kClientStream, kServerStream, kBidi };
enum class Fate {
  kComplete,
  kDeadline,
  kClientCancel,
  kServerAbort,
  kSlowReader
};

struct CallPlan {
  uint64_t id = 0;
  CallKind kind = CallKind::kUnary;
  Fate fate = Fate::kComplete;
  uint32_t requests = 1;   // client streaming, bidi
  uint32_t responses = 1;  // server streaming
  uint32_t request_size = 0;
  uint32_t response_size = 0;
  uint32_t server_delay_ms = 0;
  uint32_t abort_after = 0;
  absl::Duration deadline = absl::Seconds(20);
  absl::Duration cancel_after = absl::InfiniteDuration();
  absl::Duration read_pause = absl::ZeroDuration();
  bool wait_for_ready = false;
  std::string ToString() const;
};

struct CallOutcome {
  CallPlan plan;
  rpc::Status status;
  uint32_t received = 0;   // response messages read
  std::string damage;      // "" or what was wrong with the messages
  bool faulty = false;     // on a faulty channel
  bool disrupted = false;  // the server was killed during the call
  std::string ToString() const;
};

// Whether the fate table (above) allows the outcome's status.
bool StatusAllowed(const CallOutcome& outcome);

// A bug known to break an invariant (issue 11's five), and how its
// violations look. Until the bug is enforced, a violation it explains is
// counted and reported, not failed; any other violation fails.
struct KnownBug {
  int id;
  std::string what;
  std::function<bool(const CallOutcome&)> explains;
};
// Signatures that tell the bug from any call's status: 1 (HEADERS on a
// stream reset long ago), 3 (too many pending streams), 4 (REFUSED_STREAM
// reaching the application), and two the suite found: 6 (grpc++'s second
// trailers after its RST_STREAM close the connection) and 7 (a call that
// never reached the wire fails with its connection instead of moving to a
// new one), 8 (our server's RST_STREAM flood limit closes the connection
// of a client that cancels many calls, without a reason the client sees),
// 9 (our client counts the server's RST_STREAMs as a flood).
std::vector<KnownBug> GenericKnownBugs();
// The bugs whose violations fail (--enforce_known_bugs; default: the ones
// kFixedKnownBugs in chaos_driver.cc lists).
void SetEnforcedKnownBugs(std::set<int> ids);
bool KnownBugEnforced(int id);

// Collects outcomes; a violation is an outcome the invariants do not allow
// that no unenforced known bug explains.
class Verdict {
 public:
  explicit Verdict(uint64_t seed) : seed_(seed) {}
  void Add(const CallOutcome& outcome, const std::vector<KnownBug>& bugs);
  void AddViolation(const std::string& what);
  void Merge(const Verdict& other);

  bool ok() const { return violations_.empty(); }
  int calls() const { return calls_; }
  const std::map<int, int>& known_hits() const { return known_hits_; }
  // Seed, counts per status, known-bug hits with an example, and the first
  // violations.
  std::string Report() const;

 private:
  uint64_t seed_;
  int calls_ = 0;
  std::map<std::string, int> by_status_;
  std::map<int, int> known_hits_;
  std::map<int, std::string> known_examples_;
  std::vector<std::string> violations_;
  int violation_count_ = 0;
};

struct StormOptions {
  uint64_t seed = 1;
  int workers = 8;
  int calls_per_worker = 60;
  int healthy_channels = 2;
  int faulty_channels = 2;
  double fault_share = 0.6;  // of a faulty channel's connections
  int kills = 0;             // server kills and restarts during the storm
  uint32_t max_messages = 12;
  uint32_t max_message_size = 8 * 1024;
};

// Many concurrent calls of all four kinds with every fate, on healthy and
// faulty channels. The plans of the faulty proxies' connections are in the
// report.
Verdict RunStorm(ChaosServer* server, const StormOptions& options,
                 std::string* proxy_plans);

// `calls` async unary calls on one channel, all cancelled once the server
// has answered a quarter of them: CANCELLED (or OK, intact, if it won the
// race). Known bugs 1, 3, 10.
Verdict RunMassCancel(ChaosServer* server, uint64_t seed, int calls);

// `calls` async unary calls in flight at once on one channel (the server
// pausing 5 ms in each): all OK. Known bugs 3, 10.
Verdict RunFanOut(ChaosServer* server, uint64_t seed, int calls);

// `rounds` of `window` async unary calls with deadlines of 0-5 ms (for
// 2/3 of `reset_percent` of them) or cancels (the other third), the server
// pausing 0-5 ms, on a new channel every `rounds_per_connection` rounds;
// then 10 calls on the last: each ends as its fate allows. Known bugs 1, 4
// (ours), 8 (ours, with many resets on one connection), 6, 7 (grpc++).
Verdict RunDeadlineStorm(ChaosServer* server, uint64_t seed, int rounds,
                         int window, int rounds_per_connection,
                         int reset_percent);

// `batches` of 100 async unary calls on one channel, each batch cancelled
// once the server runs it (the server pausing 1 s), then 10 calls: the
// cancelled CANCELLED, the others OK (a client that cancels is not a rapid
// reset attack). Known bugs 4, 8 (ours), 9 (grpc++).
Verdict RunResetBurst(ChaosServer* server, uint64_t seed, int batches);

// `unread` server-streaming calls of 64 KiB messages that the application
// does not read, then a unary call beside them on the same channel: OK
// within 3 s. Known bug 2.
Verdict RunUnreadStreams(ChaosServer* server, uint64_t seed, int unread);

// Calls with oversized request metadata (one 64 KiB value; 10,000 small
// entries) beside calls in flight on the same channel: the offender
// RESOURCE_EXHAUSTED (or OK from a server whose limit is higher), the others
// OK, and the channel serves afterwards. Known bug 5.
Verdict RunBigMetadata(ChaosServer* server, uint64_t seed);

// VmRSS of this process, in KiB.
int64_t RssKiB();

}  // namespace chaos

#endif  // TESTS_CHAOS_CHAOS_DRIVER_H_
