#include "tests/chaos/chaos_driver.h"

#include <stdio.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "tests/chaos/chaos.rpc.pb.h"
#include "tests/chaos/chaos_messages.h"
#include "tests/chaos/fault_proxy.h"
#include "transport/testing/wait_until.h"

namespace chaos {
namespace {

using rpc::StatusCode;
using transport::testing::WaitUntil;

// The known bugs whose fixes are merged: their violations fail. Add an id
// here when its fix lands. Still open: 8 (our server's RST_STREAM flood
// limit closes a client that resets thousands of calls a second).
const std::set<int> kFixedKnownBugs = {1, 2, 3, 4, 5, 6, 7, 9, 10};

std::set<int>& EnforcedBugs() {
  static std::set<int>* ids = new std::set<int>(kFixedKnownBugs);
  return *ids;
}

const char* KindName(CallKind k) {
  switch (k) {
    case CallKind::kUnary:
      return "unary";
    case CallKind::kClientStream:
      return "client-stream";
    case CallKind::kServerStream:
      return "server-stream";
    case CallKind::kBidi:
      return "bidi";
  }
  return "?";
}

const char* FateName(Fate f) {
  switch (f) {
    case Fate::kComplete:
      return "complete";
    case Fate::kDeadline:
      return "deadline";
    case Fate::kClientCancel:
      return "client-cancel";
    case Fate::kServerAbort:
      return "server-abort";
    case Fate::kSlowReader:
      return "slow-reader";
  }
  return "?";
}

std::string StatusName(const rpc::Status& s) {
  return std::string(rpc::StatusCodeName(s.error_code()));
}

bool Is(const CallOutcome& o, StatusCode c) {
  return o.status.error_code() == c;
}

bool MessageHas(const CallOutcome& o, const char* text) {
  return o.status.error_message().find(text) != std::string::npos;
}

// Cancels registered contexts at their time, from one thread.
class Canceller {
 public:
  Canceller() : thread_([this] { Loop(); }) {}
  ~Canceller() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  uint64_t Schedule(absl::Time at, rpc::ClientContext* ctx) {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t id = ++next_id_;
    pending_[id] = {at, ctx};
    cv_.notify_all();
    return id;
  }
  // After this returns, `id`'s context is not touched again.
  void Forget(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.erase(id);
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      const absl::Time now = absl::Now();
      absl::Time next = now + absl::Milliseconds(50);
      for (auto it = pending_.begin(); it != pending_.end();) {
        if (it->second.first <= now) {
          it->second.second->TryCancel();  // under mu_: Forget waits for it
          it = pending_.erase(it);
        } else {
          next = std::min(next, it->second.first);
          ++it;
        }
      }
      cv_.wait_for(lock, absl::ToChronoNanoseconds(next - now));
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  uint64_t next_id_ = 0;
  std::map<uint64_t, std::pair<absl::Time, rpc::ClientContext*>> pending_;
  std::thread thread_;
};

ChaosRequest FirstRequest(const CallPlan& p, uint32_t seq) {
  ChaosRequest req;
  Seal(&req, p.id, seq, p.request_size);
  req.set_response_count(p.responses);
  req.set_response_size(p.response_size);
  req.set_server_delay_ms(p.server_delay_ms);
  req.set_abort_after(p.abort_after);
  return req;
}

void Note(std::string* damage, const std::string& what) {
  if (damage->empty()) *damage = what;
}

// Runs one call to its end and checks what it received.
CallOutcome RunCall(Chaos::Stub* stub, const CallPlan& p,
                    Canceller* canceller) {
  CallOutcome o;
  o.plan = p;
  rpc::ClientContext ctx;
  ctx.set_deadline(absl::Now() + p.deadline);
  if (p.wait_for_ready) ctx.set_wait_for_ready(true);
  uint64_t cancel_id = 0;
  if (p.cancel_after != absl::InfiniteDuration()) {
    cancel_id = canceller->Schedule(absl::Now() + p.cancel_after, &ctx);
  }
  std::string& damage = o.damage;
  switch (p.kind) {
    case CallKind::kUnary: {
      ChaosResponse resp;
      o.status = stub->Unary(&ctx, FirstRequest(p, 0), &resp);
      if (o.status.ok()) {
        o.received = 1;
        Note(&damage, CheckMessage(resp, p.id, 0));
        if (resp.received_digest() !=
            ChaosFold(0, FirstRequest(p, 0).checksum())) {
          Note(&damage, "the server read another request");
        }
      }
      break;
    }
    case CallKind::kClientStream: {
      ChaosResponse resp;
      auto writer = stub->ClientStream(&ctx, &resp);
      uint32_t sent = 0;
      uint32_t digest = 0;
      for (uint32_t i = 0; i < p.requests; ++i) {
        ChaosRequest req = FirstRequest(p, i);
        if (!writer->Write(req)) break;
        digest = ChaosFold(digest, req.checksum());
        ++sent;
      }
      writer->WritesDone();
      o.status = writer->Finish();
      if (o.status.ok()) {
        o.received = 1;
        // With no request the server cannot know the call's id.
        Note(&damage, CheckMessage(resp, sent == 0 ? 0 : p.id, 0));
        if (sent != p.requests) {
          Note(&damage, absl::StrCat("OK after only ", sent, " of ", p.requests,
                                     " writes"));
        }
        if (resp.received() != sent || resp.received_digest() != digest) {
          Note(&damage,
               absl::StrCat("the server read ", resp.received(),
                            " requests of ", sent, " (or not in order)"));
        }
      }
      break;
    }
    case CallKind::kServerStream: {
      auto reader = stub->ServerStream(&ctx, FirstRequest(p, 0));
      ChaosResponse resp;
      while (reader->Read(&resp)) {
        Note(&damage, CheckMessage(resp, p.id, o.received));
        ++o.received;
        if (p.read_pause > absl::ZeroDuration()) absl::SleepFor(p.read_pause);
      }
      o.status = reader->Finish();
      break;
    }
    case CallKind::kBidi: {
      auto stream = stub->Bidi(&ctx);
      ChaosResponse resp;
      for (uint32_t i = 0; i < p.requests; ++i) {
        if (!stream->Write(FirstRequest(p, i))) break;
        if (!stream->Read(&resp)) break;
        Note(&damage, CheckMessage(resp, p.id, o.received));
        ++o.received;
        if (p.read_pause > absl::ZeroDuration()) absl::SleepFor(p.read_pause);
      }
      stream->WritesDone();
      while (stream->Read(&resp)) {
        Note(&damage, CheckMessage(resp, p.id, o.received));
        ++o.received;
      }
      o.status = stream->Finish();
      break;
    }
  }
  if (cancel_id != 0) canceller->Forget(cancel_id);
  // All of them with OK; all before the abort with ABORTED.
  const bool streams_out =
      p.kind == CallKind::kServerStream || p.kind == CallKind::kBidi;
  if (streams_out) {
    const uint32_t due =
        p.kind == CallKind::kServerStream ? p.responses : p.requests;
    if (o.status.ok() && o.received != due) {
      Note(&damage,
           absl::StrCat("OK with ", o.received, " of ", due, " responses"));
    }
    if (Is(o, StatusCode::ABORTED) && p.abort_after != 0 &&
        o.received != p.abort_after - 1) {
      Note(&damage,
           absl::StrCat("ABORTED after ", o.received, " responses where ",
                        p.abort_after - 1, " were sent"));
    }
  }
  return o;
}

CallPlan RandomPlan(std::mt19937_64& rng, uint64_t id,
                    const StormOptions& opt) {
  auto below = [&rng](uint64_t n) { return n == 0 ? 0 : rng() % n; };
  CallPlan p;
  p.id = id;
  p.kind = static_cast<CallKind>(below(4));
  const uint32_t fate = static_cast<uint32_t>(below(100));
  p.fate = fate < 40   ? Fate::kComplete
           : fate < 60 ? Fate::kDeadline
           : fate < 80 ? Fate::kClientCancel
           : fate < 90 ? Fate::kServerAbort
                       : Fate::kSlowReader;
  const bool streams_out =
      p.kind == CallKind::kServerStream || p.kind == CallKind::kBidi;
  if (p.fate == Fate::kSlowReader && !streams_out) p.fate = Fate::kComplete;
  const uint32_t n = 1 + static_cast<uint32_t>(below(opt.max_messages));
  if (p.kind == CallKind::kClientStream || p.kind == CallKind::kBidi) {
    p.requests = below(8) == 0 ? 0 : n;
  }
  if (p.kind == CallKind::kServerStream) p.responses = below(8) == 0 ? 0 : n;
  p.request_size = static_cast<uint32_t>(below(opt.max_message_size + 1));
  p.response_size = static_cast<uint32_t>(below(opt.max_message_size + 1));
  switch (p.fate) {
    case Fate::kComplete:
      p.server_delay_ms = static_cast<uint32_t>(below(3));
      break;
    case Fate::kDeadline:
      p.deadline = absl::Milliseconds(1 + below(60));
      p.server_delay_ms = static_cast<uint32_t>(below(21));
      break;
    case Fate::kClientCancel:
      p.cancel_after = absl::Milliseconds(below(31));
      p.server_delay_ms = static_cast<uint32_t>(below(11));
      break;
    case Fate::kServerAbort: {
      const uint32_t m = p.kind == CallKind::kServerStream ? p.responses
                         : p.kind == CallKind::kUnary      ? 1
                                                           : p.requests;
      if (m == 0) {
        p.fate = Fate::kComplete;  // nothing to abort in
      } else {
        p.abort_after = 1 + static_cast<uint32_t>(below(m));
      }
      break;
    }
    case Fate::kSlowReader:
      p.response_size = 32 * 1024 + static_cast<uint32_t>(below(32 * 1024));
      p.responses = p.kind == CallKind::kServerStream ? 4 + below(9) : 1;
      if (p.kind == CallKind::kBidi) p.requests = 4 + below(9);
      p.read_pause = absl::Milliseconds(1 + below(10));
      break;
  }
  return p;
}

std::shared_ptr<rpc::Channel> ChannelTo(int port) {
  rpc::ChannelArguments args;
  args.initial_backoff = absl::Milliseconds(10);
  args.max_backoff = absl::Milliseconds(100);
  return rpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port),
                                  rpc::InsecureChannelCredentials(), args);
}

// A proxy in front of the server (its planner makes it healthy or faulty)
// and a channel through it.
struct Link {
  Link(ChaosServer* server, FaultProxy::Planner planner, bool faulty)
      : proxy(server->port(), std::move(planner)), faulty(faulty) {
    if (proxy.Start().ok()) {
      channel = ChannelTo(proxy.port());
      stub = std::make_unique<Chaos::Stub>(channel);
    }
  }
  FaultProxy proxy;
  const bool faulty;
  std::shared_ptr<rpc::Channel> channel;
  std::unique_ptr<Chaos::Stub> stub;
};

}  // namespace

std::string CallPlan::ToString() const {
  std::string s =
      absl::StrCat("call ", id, " ", KindName(kind), " ", FateName(fate),
                   " req ", requests, "x", request_size, " resp ", responses,
                   "x", response_size, " delay ", server_delay_ms, "ms");
  if (deadline != absl::Seconds(20)) {
    absl::StrAppend(&s, " deadline ", absl::FormatDuration(deadline));
  }
  if (cancel_after != absl::InfiniteDuration()) {
    absl::StrAppend(&s, " cancel ", absl::FormatDuration(cancel_after));
  }
  if (abort_after != 0) absl::StrAppend(&s, " abort_after ", abort_after);
  if (read_pause > absl::ZeroDuration()) {
    absl::StrAppend(&s, " read_pause ", absl::FormatDuration(read_pause));
  }
  return s;
}

std::string CallOutcome::ToString() const {
  return absl::StrCat(plan.ToString(), faulty ? " [faulty]" : " [healthy]",
                      disrupted ? " [disrupted]" : "", ": ", StatusName(status),
                      " \"", status.error_message(), "\", ", received,
                      " received", damage.empty() ? "" : ", DAMAGE: " + damage);
}

bool StatusAllowed(const CallOutcome& o) {
  const StatusCode c = o.status.error_code();
  if (o.faulty &&
      (c == StatusCode::UNAVAILABLE || c == StatusCode::DEADLINE_EXCEEDED)) {
    return true;
  }
  if (o.disrupted &&
      (c == StatusCode::UNAVAILABLE || c == StatusCode::CANCELLED)) {
    return true;
  }
  switch (o.plan.fate) {
    case Fate::kComplete:
    case Fate::kSlowReader:
      return c == StatusCode::OK;
    case Fate::kDeadline:
      return c == StatusCode::OK || c == StatusCode::DEADLINE_EXCEEDED;
    case Fate::kClientCancel:
      return c == StatusCode::OK || c == StatusCode::CANCELLED;
    case Fate::kServerAbort:
      return c == StatusCode::ABORTED;
  }
  return false;
}

namespace {

// A bug whose calls end UNAVAILABLE with `text` in their message.
KnownBug Unavailable(int id, std::string what, std::string text) {
  return {id, std::move(what), [text](const CallOutcome& o) {
            return Is(o, StatusCode::UNAVAILABLE) &&
                   MessageHas(o, text.c_str());
          }};
}

}  // namespace

std::vector<KnownBug> GenericKnownBugs() {
  return {
      Unavailable(1,
                  "HEADERS on a stream reset more than 128 streams ago kill "
                  "the connection",
                  "headers_on_closed_stream"),
      Unavailable(3, "the client fails calls over 100 + 1000 pending streams",
                  "too many pending streams"),
      Unavailable(4, "REFUSED_STREAM reaches the application",
                  "(HTTP/2 error 7)"),
      Unavailable(6,
                  "grpc++'s second trailers after its RST_STREAM kill the "
                  "connection (found_bugs_test)",
                  "headers_on_closed_stream: stream"),
      Unavailable(7,
                  "a call started on a connection that just failed is not "
                  "moved to another connection",
                  "connection is going away"),
      Unavailable(8,
                  "our server's RST_STREAM flood limit closes the connection "
                  "of a client that cancels many calls, and the GOAWAY's "
                  "reason is lost",
                  "peer closed the connection"),
      Unavailable(9,
                  "our client counts the server's RST_STREAMs as a flood and "
                  "closes its own connection",
                  "rst_stream_flood (GOAWAY ENHANCE_YOUR_CALM sent)"),
  };
}

void SetEnforcedKnownBugs(std::set<int> ids) { EnforcedBugs() = ids; }
bool KnownBugEnforced(int id) { return EnforcedBugs().count(id) != 0; }

void Verdict::Add(const CallOutcome& o, const std::vector<KnownBug>& bugs) {
  ++calls_;
  ++by_status_[StatusName(o.status)];
  if (o.damage.empty() && StatusAllowed(o)) return;
  if (o.damage.empty()) {  // damage is never excused
    for (const KnownBug& bug : bugs) {
      if (!KnownBugEnforced(bug.id) && bug.explains(o)) {
        if (known_hits_[bug.id]++ == 0) {
          known_examples_[bug.id] = bug.what + ": " + o.ToString();
        }
        return;
      }
    }
  }
  AddViolation(o.ToString());
}

void Verdict::AddViolation(const std::string& what) {
  if (violation_count_++ < 20) violations_.push_back(what);
}

void Verdict::Merge(const Verdict& other) {
  calls_ += other.calls_;
  for (auto& [k, v] : other.by_status_) by_status_[k] += v;
  for (auto& [k, v] : other.known_hits_) {
    if (known_hits_[k] == 0) known_examples_[k] = other.known_examples_.at(k);
    known_hits_[k] += v;
  }
  for (auto& v : other.violations_) AddViolation(v);
  violation_count_ +=
      other.violation_count_ - static_cast<int>(other.violations_.size());
}

std::string Verdict::Report() const {
  std::string s = absl::StrCat("seed ", seed_, " (rerun with --seed=", seed_,
                               "): ", calls_, " calls:");
  for (auto& [k, v] : by_status_) absl::StrAppend(&s, " ", k, " ", v);
  for (auto& [id, n] : known_hits_) {
    absl::StrAppend(&s, "\n  known bug ", id, " (not enforced) hit ", n,
                    " times, e.g. ", known_examples_.at(id));
  }
  if (violation_count_ > 0) {
    absl::StrAppend(&s, "\n  ", violation_count_, " violations:");
    for (auto& v : violations_) absl::StrAppend(&s, "\n    ", v);
  }
  return s;
}

Verdict RunStorm(ChaosServer* server, const StormOptions& opt,
                 std::string* proxy_plans) {
  Verdict verdict(opt.seed);
  std::vector<std::unique_ptr<Link>> links;
  for (int i = 0; i < opt.healthy_channels; ++i) {
    links.push_back(std::make_unique<Link>(
        server,
        i % 2 == 0
            ? FaultProxy::CleanPlanner()
            : FaultProxy::DelayPlanner(opt.seed + i, absl::Milliseconds(3)),
        false));
  }
  for (int i = 0; i < opt.faulty_channels; ++i) {
    links.push_back(std::make_unique<Link>(
        server, FaultProxy::RandomPlanner(opt.seed * 7919 + i, opt.fault_share),
        true));
  }
  for (auto& l : links) {
    if (l->stub == nullptr) {
      verdict.AddViolation("could not start a proxy");
      return verdict;
    }
  }
  Canceller canceller;
  // Odd while the server is down or its old connections are still open.
  std::atomic<int> generation{0};
  std::atomic<int> finished{0};
  std::atomic<bool> killer_stop{false};
  const int total = opt.workers * opt.calls_per_worker;
  const std::vector<KnownBug> bugs = GenericKnownBugs();

  std::mutex results_mu;
  std::vector<CallOutcome> outcomes;
  std::vector<std::thread> workers;
  for (int w = 0; w < opt.workers; ++w) {
    workers.emplace_back([&, w] {
      std::mt19937_64 rng(opt.seed * 1000003 + static_cast<uint64_t>(w));
      for (int i = 0; i < opt.calls_per_worker; ++i) {
        const uint64_t id = static_cast<uint64_t>(w) * 1000000 + i + 1;
        CallPlan plan = RandomPlan(rng, id, opt);
        Link* link = links[rng() % links.size()].get();
        if (opt.kills > 0) plan.wait_for_ready = true;
        const int gen0 = generation.load();
        CallOutcome o = RunCall(link->stub.get(), plan, &canceller);
        const int gen1 = generation.load();
        o.faulty = link->faulty;
        o.disrupted = gen0 % 2 == 1 || gen0 != gen1;
        {
          std::lock_guard<std::mutex> lock(results_mu);
          outcomes.push_back(std::move(o));
        }
        ++finished;
      }
    });
  }
  std::thread killer;
  if (opt.kills > 0) {
    killer = std::thread([&] {
      for (int k = 0; k < opt.kills && !killer_stop.load(); ++k) {
        const int at = (k + 1) * total / (opt.kills + 1);
        WaitUntil([&] { return finished.load() >= at || killer_stop.load(); },
                  absl::Seconds(60));
        ++generation;
        const int old_port = server->port();
        server->Kill();
        if (!server->Restart()) {
          std::lock_guard<std::mutex> lock(results_mu);
          verdict.AddViolation("the server did not restart");
          return;
        }
        for (auto& l : links) l->proxy.SetTargetPort(server->port());
        for (auto& l : links) {
          if (!l->proxy.WaitClosedTo(old_port,
                                     absl::Now() + absl::Seconds(10))) {
            std::lock_guard<std::mutex> lock(results_mu);
            verdict.AddViolation(
                "a connection to the killed server stayed open 10 s");
          }
        }
        ++generation;
      }
    });
  }
  for (auto& t : workers) t.join();
  killer_stop.store(true);
  if (killer.joinable()) killer.join();
  for (const CallOutcome& o : outcomes) verdict.Add(o, bugs);

  // Afterwards every channel works.
  for (auto& l : links) {
    CallPlan p;
    p.id = 999999999;
    p.wait_for_ready = true;
    CallOutcome o = RunCall(l->stub.get(), p, &canceller);
    o.faulty = false;  // its proxy may still fault; one retry if it did
    if (!o.status.ok() && l->faulty) {
      o = RunCall(l->stub.get(), p, &canceller);
      o.faulty = true;
    }
    verdict.Add(o, bugs);
  }
  if (server->damaged_requests.load() != 0) {
    verdict.AddViolation(absl::StrCat("the server read ",
                                      server->damaged_requests.load(),
                                      " damaged requests"));
  }
  if (proxy_plans != nullptr) {
    for (size_t i = 0; i < links.size(); ++i) {
      if (!links[i]->faulty) continue;
      absl::StrAppend(proxy_plans, "faulty proxy ", i, ": ",
                      links[i]->proxy.PlansSummary(), "\n");
    }
  }
  return verdict;
}

namespace {

// Async unary calls on one channel.
struct AsyncBatch {
  struct Slot {
    rpc::ClientContext ctx;
    ChaosRequest req;
    ChaosResponse resp;
    Fate fate = Fate::kComplete;
    rpc::Status status;
  };
  std::vector<std::unique_ptr<Slot>> slots;
  absl::Mutex mu;
  int done = 0;

  // `n` calls; `shape` may change a call's request, deadline, fate.
  void Start(Chaos::Stub* stub, int n, uint64_t first_id, uint32_t delay_ms,
             absl::Duration deadline,
             const std::function<void(Slot*)>& shape = nullptr) {
    for (int i = 0; i < n; ++i) {
      auto slot = std::make_unique<Slot>();
      Seal(&slot->req, first_id + static_cast<uint64_t>(i), 0, 16);
      slot->req.set_response_size(16);
      slot->req.set_server_delay_ms(delay_ms);
      slot->ctx.set_deadline(absl::Now() + deadline);
      if (shape) shape(slot.get());
      Slot* raw = slot.get();
      slots.push_back(std::move(slot));
      stub->async()->Unary(&raw->ctx, &raw->req, &raw->resp,
                           [this, raw](rpc::Status s) {
                             absl::MutexLock lock(&mu);
                             raw->status = std::move(s);
                             ++done;
                           });
    }
  }
  // Until the server has started `target` more calls than `before`, or
  // every call ended, or 10 s.
  void WaitServer(ChaosServer* server, int before, int target) {
    WaitUntil(
        [&] {
          absl::MutexLock lock(&mu);
          return server->calls.load() >= before + target ||
                 static_cast<size_t>(done) == slots.size();
        },
        absl::Seconds(10));
  }
  bool Wait(absl::Time deadline) {
    absl::MutexLock lock(&mu);
    const size_t n = slots.size();
    auto all = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
      return static_cast<size_t>(done) == n;
    };
    return mu.AwaitWithDeadline(absl::Condition(&all), deadline);
  }
  void Judge(Verdict* verdict, Fate fate, const std::vector<KnownBug>& bugs) {
    absl::MutexLock lock(&mu);
    for (auto& s : slots) {
      CallOutcome o;
      o.plan.id = s->req.call_id();
      o.plan.fate = fate == Fate::kComplete ? s->fate : fate;
      o.status = s->status;
      if (s->status.ok()) {
        o.received = 1;
        o.damage = CheckMessage(s->resp, s->req.call_id(), 0);
      }
      verdict->Add(o, bugs);
    }
  }
};

// Calls that miss the 20 s bound on a healthy channel under a mass of
// queued calls (the soak's 20,000): found by the suite.
KnownBug SlowQueueBug() {
  return {10,
          "with the output above its high-water mark, every submit walks the "
          "whole write queue: thousands of calls on one connection crawl",
          [](const CallOutcome& o) {
            return Is(o, StatusCode::DEADLINE_EXCEEDED) &&
                   o.plan.fate != Fate::kDeadline;
          }};
}

std::vector<KnownBug> MassBugs() {
  std::vector<KnownBug> bugs = GenericKnownBugs();
  bugs.push_back(SlowQueueBug());
  return bugs;
}

// A clean link to the server, or nullptr with a violation.
std::unique_ptr<Link> CleanLink(ChaosServer* server, Verdict* verdict) {
  auto link = std::make_unique<Link>(server, FaultProxy::CleanPlanner(), false);
  if (link->stub != nullptr) return link;
  verdict->AddViolation("could not start a proxy");
  return nullptr;
}

// Waits for a batch's calls (60 s: their deadlines are at most 20 s) and
// judges them. At the bound, a violation, and the batch is leaked: its
// calls may still end.
bool Finish(std::unique_ptr<AsyncBatch> batch, Verdict* verdict, Fate fate,
            const std::vector<KnownBug>& bugs) {
  if (!batch->Wait(absl::Now() + absl::Seconds(60))) {
    verdict->AddViolation("calls did not end within 60 s");
    batch.release();
    return false;
  }
  batch->Judge(verdict, fate, bugs);
  return true;
}

// Ten unary calls that must succeed (after a storm, on its channel).
void CallsAfter(Chaos::Stub* stub, uint64_t first_id, Verdict* verdict,
                const std::vector<KnownBug>& bugs) {
  auto after = std::make_unique<AsyncBatch>();
  after->Start(stub, 10, first_id, 0, absl::Seconds(20));
  Finish(std::move(after), verdict, Fate::kComplete, bugs);
}

}  // namespace

Verdict RunMassCancel(ChaosServer* server, uint64_t seed, int calls) {
  Verdict verdict(seed);
  auto link = CleanLink(server, &verdict);
  if (link == nullptr) return verdict;
  auto batch = std::make_unique<AsyncBatch>();
  const int before = server->calls.load();
  batch->Start(link->stub.get(), calls, seed * 1000000, 0, absl::Seconds(20));
  // Cancel while the answers of the first quarter are on their way back,
  // so that they cross the resets.
  batch->WaitServer(server, before, calls / 4);
  for (auto& s : batch->slots) s->ctx.TryCancel();
  Finish(std::move(batch), &verdict, Fate::kClientCancel, MassBugs());
  return verdict;
}

Verdict RunFanOut(ChaosServer* server, uint64_t seed, int calls) {
  Verdict verdict(seed);
  auto link = CleanLink(server, &verdict);
  if (link == nullptr) return verdict;
  auto batch = std::make_unique<AsyncBatch>();
  batch->Start(link->stub.get(), calls, seed * 1000000, 5, absl::Seconds(20));
  Finish(std::move(batch), &verdict, Fate::kComplete, MassBugs());
  return verdict;
}

Verdict RunDeadlineStorm(ChaosServer* server, uint64_t seed, int rounds,
                         int window, int rounds_per_connection,
                         int reset_percent) {
  Verdict verdict(seed);
  std::mt19937_64 rng(seed);
  std::unique_ptr<Link> link;
  for (int r = 0; r < rounds; ++r) {
    if (r % rounds_per_connection == 0) {
      link = CleanLink(server, &verdict);
      if (link == nullptr) return verdict;
    }
    auto batch = std::make_unique<AsyncBatch>();
    std::vector<AsyncBatch::Slot*> to_cancel;
    batch->Start(
        link->stub.get(), window,
        seed * 1000000 + static_cast<uint64_t>(r) * 10000, 0, absl::Seconds(20),
        [&](AsyncBatch::Slot* slot) {
          slot->req.set_server_delay_ms(rng() % 6);
          const int dice = static_cast<int>(rng() % 100);
          if (dice < reset_percent * 2 / 3) {
            slot->fate = Fate::kDeadline;
            slot->ctx.set_deadline(absl::Now() + absl::Milliseconds(rng() % 6));
          } else if (dice < reset_percent) {
            slot->fate = Fate::kClientCancel;
            to_cancel.push_back(slot);
          }
        });
    for (AsyncBatch::Slot* slot : to_cancel) slot->ctx.TryCancel();
    if (!Finish(std::move(batch), &verdict, Fate::kComplete,
                GenericKnownBugs())) {
      return verdict;
    }
  }
  CallsAfter(link->stub.get(), seed * 1000000 + 999000, &verdict,
             GenericKnownBugs());
  return verdict;
}

Verdict RunResetBurst(ChaosServer* server, uint64_t seed, int batches) {
  Verdict verdict(seed);
  auto link = CleanLink(server, &verdict);
  if (link == nullptr) return verdict;
  for (int b = 0; b < batches; ++b) {
    auto batch = std::make_unique<AsyncBatch>();
    const int before = server->calls.load();
    batch->Start(link->stub.get(), 100,
                 seed * 1000000 + static_cast<uint64_t>(b) * 1000, 1000,
                 absl::Seconds(20));
    // Cancel them once the server runs them (the resets then reach it).
    batch->WaitServer(server, before, 100);
    for (auto& slot : batch->slots) slot->ctx.TryCancel();
    if (!Finish(std::move(batch), &verdict, Fate::kClientCancel,
                GenericKnownBugs())) {
      return verdict;
    }
  }
  CallsAfter(link->stub.get(), seed * 1000000 + 999000, &verdict,
             GenericKnownBugs());
  return verdict;
}

Verdict RunUnreadStreams(ChaosServer* server, uint64_t seed, int unread) {
  Verdict verdict(seed);
  auto link = CleanLink(server, &verdict);
  if (link == nullptr) return verdict;
  std::vector<KnownBug> bugs = GenericKnownBugs();
  bugs.push_back({2,
                  "unread streams hold the connection window: a call beside "
                  "them misses its deadline",
                  [](const CallOutcome& o) {
                    return o.plan.fate == Fate::kComplete &&
                           Is(o, StatusCode::DEADLINE_EXCEEDED);
                  }});
  struct Unread {
    rpc::ClientContext ctx;
    std::unique_ptr<rpc::ClientReader<ChaosResponse>> reader;
  };
  std::vector<std::unique_ptr<Unread>> streams;
  for (int i = 0; i < unread; ++i) {
    auto u = std::make_unique<Unread>();
    u->ctx.set_deadline(absl::Now() + absl::Seconds(30));
    CallPlan p;
    p.id = seed * 1000 + static_cast<uint64_t>(i);
    p.kind = CallKind::kServerStream;
    p.responses = 16;
    p.response_size = 64 * 1024;
    u->reader = link->stub->ServerStream(&u->ctx, FirstRequest(p, 0));
    streams.push_back(std::move(u));
  }
  // Until most of a connection window (our client's: 4 MiB) has reached
  // the client unread, or 10 s.
  WaitUntil([&] { return link->proxy.bytes_to_client() >= 3 * 1024 * 1024; },
            absl::Seconds(10));
  Canceller canceller;
  {
    CallPlan p;
    p.id = seed * 1000 + 100;
    p.deadline = absl::Seconds(3);
    p.response_size = 1024;
    verdict.Add(RunCall(link->stub.get(), p, &canceller), bugs);
  }
  for (auto& u : streams) u->ctx.TryCancel();
  for (size_t i = 0; i < streams.size(); ++i) {
    CallOutcome o;
    o.plan.id = seed * 1000 + i;
    o.plan.kind = CallKind::kServerStream;
    o.plan.fate = Fate::kClientCancel;
    o.status = streams[i]->reader->Finish();
    verdict.Add(o, bugs);
  }
  return verdict;
}

Verdict RunBigMetadata(ChaosServer* server, uint64_t seed) {
  Verdict verdict(seed);
  auto link = CleanLink(server, &verdict);
  if (link == nullptr) return verdict;
  std::vector<KnownBug> bugs = GenericKnownBugs();
  bugs.push_back({5,
                  "oversized metadata: a bare reset or a GOAWAY for everyone "
                  "instead of RESOURCE_EXHAUSTED for the call",
                  [](const CallOutcome& o) {
                    return !Is(o, StatusCode::RESOURCE_EXHAUSTED) &&
                           !o.status.ok();
                  }});
  Canceller canceller;
  for (int variant = 0; variant < 2; ++variant) {
    // Bystanders in flight on the same connection.
    auto bystanders = std::make_unique<AsyncBatch>();
    bystanders->Start(link->stub.get(), 8, seed * 1000000 + variant * 100, 300,
                      absl::Seconds(20));
    rpc::ClientContext ctx;
    ctx.set_deadline(absl::Now() + absl::Seconds(20));
    if (variant == 0) {
      ctx.AddMetadata("x-chaos-big", std::string(64 * 1024, 'm'));
    } else {
      for (int i = 0; i < 10000; ++i) {
        ctx.AddMetadata("x-chaos-" + std::to_string(i), "v");
      }
    }
    CallPlan p;
    p.id = seed * 1000000 + variant * 100 + 99;
    ChaosResponse resp;
    CallOutcome o;
    o.plan = p;
    o.status = link->stub->Unary(&ctx, FirstRequest(p, 0), &resp);
    // The offender: RESOURCE_EXHAUSTED, or OK from a server whose limit is
    // higher. Anything else is a violation (the fate table has no such
    // fate: kServerAbort never allows it).
    if (!Is(o, StatusCode::RESOURCE_EXHAUSTED) && !o.status.ok()) {
      o.plan.fate = Fate::kServerAbort;  // never ABORTED: always a violation
      verdict.Add(o, bugs);
    }
    if (!Finish(std::move(bystanders), &verdict, Fate::kComplete, bugs)) {
      return verdict;
    }
  }
  // And the channel still serves.
  CallPlan p;
  p.id = seed * 1000000 + 999;
  verdict.Add(RunCall(link->stub.get(), p, &canceller), bugs);
  return verdict;
}

int64_t RssKiB() {
  FILE* f = fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  int64_t kib = -1;
  while (fgets(line, sizeof(line), f) != nullptr) {
    if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  }
  fclose(f);
  return kib;
}

}  // namespace chaos
