// The route_guide client on the callback API (rpc/client_callback.h), beside
// the blocking one of demo.cc: one call of each kind, each a reactor whose
// reactions run on the channel's loop thread. Like the demo it starts a
// RouteGuide server on a free port in the same process.
//   ./bazelw run //examples/route_guide:route_guide_callback_client

#include <condition_variable>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "examples/route_guide/route_guide.rpc.pb.h"
#include "examples/route_guide/route_guide_service.h"
#include "rpc/rpc.h"

namespace {

using routeguide::Feature;
using routeguide::MakePoint;
using routeguide::Point;
using routeguide::Rectangle;
using routeguide::RouteGuide;
using routeguide::RouteNote;
using routeguide::RouteSummary;

std::string Str(const Point& p) {
  return "(" + std::to_string(p.latitude()) + ", " +
         std::to_string(p.longitude()) + ")";
}

// Where OnDone leaves the status for the thread that waits for it.
class Done {
 public:
  void Set(const rpc::Status& s) {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = s;
    done_ = true;
    cv_.notify_all();
  }
  rpc::Status Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return done_; });
    return status_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  rpc::Status status_;
};

void Deadline(rpc::ClientContext* ctx) {
  ctx->set_deadline(absl::Now() + absl::Seconds(10));
}

// Unary, the std::function form.
bool GetFeature(RouteGuide::Stub* stub) {
  bool ok = true;
  for (const Point& p : {MakePoint(409146138, -746188906), MakePoint(0, 0)}) {
    rpc::ClientContext ctx;
    Deadline(&ctx);
    Feature feature;
    Done done;
    stub->async()->GetFeature(&ctx, &p, &feature,
                              [&done](rpc::Status s) { done.Set(s); });
    const rpc::Status s = done.Wait();
    std::cout << "GetFeature" << Str(p) << " -> "
              << (s.ok()
                      ? (feature.name().empty() ? "(no feature)"
                                                : "\"" + feature.name() + "\"")
                      : s.ToString())
              << "\n";
    ok = ok && s.ok();
  }
  return ok;
}

// Server streaming: each OnReadDone asks for the next feature.
class FeatureReader final : public rpc::ClientReadReactor<Feature> {
 public:
  FeatureReader(RouteGuide::Stub* stub, const Rectangle& rect) {
    Deadline(&ctx_);
    stub->async()->ListFeatures(&ctx_, &rect, this);
    StartRead(&feature_);
    StartCall();
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;  // The end (or a failure: OnDone says).
    std::cout << "  <- \"" << feature_.name() << "\" at "
              << Str(feature_.location()) << "\n";
    ++count_;
    StartRead(&feature_);
  }
  void OnDone(const rpc::Status& s) override { done_.Set(s); }
  rpc::Status Await(int* count) {
    rpc::Status s = done_.Wait();
    *count = count_;
    return s;
  }

 private:
  rpc::ClientContext ctx_;
  Feature feature_;
  int count_ = 0;
  Done done_;
};

bool ListFeatures(RouteGuide::Stub* stub) {
  Rectangle rect;
  *rect.mutable_lo() = MakePoint(400000000, -750000000);
  *rect.mutable_hi() = MakePoint(420000000, -730000000);
  std::cout << "ListFeatures" << Str(rect.lo()) << "-" << Str(rect.hi())
            << ":\n";
  FeatureReader reader(stub, rect);
  int n = 0;
  const rpc::Status s = reader.Await(&n);
  std::cout << "  " << n << " features, status " << s << "\n";
  return s.ok() && n > 0;
}

// Client streaming: each OnWriteDone writes the next point; the last one
// goes with the end of the requests (StartWriteLast).
class RouteRecorder final : public rpc::ClientWriteReactor<Point> {
 public:
  RouteRecorder(RouteGuide::Stub* stub, std::vector<Point> route)
      : route_(std::move(route)) {
    Deadline(&ctx_);
    stub->async()->RecordRoute(&ctx_, &summary_, this);
    Next();
    StartCall();
  }
  void OnWriteDone(bool ok) override {
    if (ok) Next();
  }
  void OnDone(const rpc::Status& s) override { done_.Set(s); }
  rpc::Status Await() { return done_.Wait(); }
  const RouteSummary& summary() const { return summary_; }

 private:
  void Next() {
    if (next_ == route_.size()) return;
    const Point& p = route_[next_++];
    std::cout << "RecordRoute -> " << Str(p) << "\n";
    if (next_ == route_.size()) {
      StartWriteLast(&p, rpc::WriteOptions());
    } else {
      StartWrite(&p);
    }
  }
  rpc::ClientContext ctx_;
  RouteSummary summary_;
  const std::vector<Point> route_;
  size_t next_ = 0;
  Done done_;
};

bool RecordRoute(RouteGuide::Stub* stub) {
  RouteRecorder recorder(
      stub,
      {MakePoint(407838351, -746143763), MakePoint(408122808, -743999179),
       MakePoint(410000000, -745000000), MakePoint(414008389, -743951297)});
  const rpc::Status s = recorder.Await();
  const RouteSummary& summary = recorder.summary();
  std::cout << "RecordRoute <- " << summary.point_count() << " points, "
            << summary.feature_count() << " features, " << summary.distance()
            << " m, status " << s << "\n";
  return s.ok() && summary.point_count() == 4;
}

// Bidi: writes the notes one after the other while reading what comes back;
// the reactions run on the loop, one at a time for this call.
class Chat final : public rpc::ClientBidiReactor<RouteNote, RouteNote> {
 public:
  explicit Chat(RouteGuide::Stub* stub) {
    const char* messages[] = {"first", "second", "third", "fourth"};
    const Point places[] = {MakePoint(0, 1), MakePoint(0, 2)};
    for (int i = 0; i < 4; ++i) {
      notes_[i].set_message(messages[i]);
      *notes_[i].mutable_location() = places[i % 2];
    }
    Deadline(&ctx_);
    stub->async()->RouteChat(&ctx_, this);
    StartRead(&in_);
    Next();
    StartCall();
  }
  void OnWriteDone(bool ok) override {
    if (ok) Next();
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;
    std::cout << "RouteChat <- \"" << in_.message() << "\" at "
              << Str(in_.location()) << "\n";
    ++received_;
    StartRead(&in_);
  }
  void OnDone(const rpc::Status& s) override { done_.Set(s); }
  rpc::Status Await(int* received) {
    rpc::Status s = done_.Wait();
    *received = received_;
    return s;
  }

 private:
  void Next() {
    if (next_ == 4) {
      StartWritesDone();
      ++next_;
      return;
    }
    if (next_ > 4) return;
    const RouteNote& note = notes_[next_++];
    std::cout << "RouteChat -> \"" << note.message() << "\" at "
              << Str(note.location()) << "\n";
    StartWrite(&note);
  }
  rpc::ClientContext ctx_;
  RouteNote notes_[4];
  RouteNote in_;
  int next_ = 0;
  int received_ = 0;
  Done done_;
};

bool RouteChat(RouteGuide::Stub* stub) {
  Chat chat(stub);
  int n = 0;
  const rpc::Status s = chat.Await(&n);
  std::cout << "RouteChat: " << n << " notes back, status " << s << "\n";
  return s.ok() && n == 2;
}

}  // namespace

int main() {
  routeguide::RouteGuideImpl service;
  int port = 0;
  std::unique_ptr<rpc::Server> server =
      rpc::ServerBuilder()
          .AddListeningPort("127.0.0.1:0", rpc::InsecureServerCredentials(),
                            &port)
          .RegisterService(&service)
          .BuildAndStart();
  if (server == nullptr) return 1;
  std::cout << "server listening on 127.0.0.1:" << port << "\n";
  auto stub = RouteGuide::NewStub(rpc::CreateChannel(
      "127.0.0.1:" + std::to_string(port), rpc::InsecureChannelCredentials()));
  bool ok = GetFeature(stub.get());
  ok = ListFeatures(stub.get()) && ok;
  ok = RecordRoute(stub.get()) && ok;
  ok = RouteChat(stub.get()) && ok;
  stub.reset();
  server->Shutdown(absl::Now() + absl::Seconds(2));
  std::cout << (ok ? "all calls succeeded\n" : "SOME CALLS FAILED\n");
  return ok ? 0 : 1;
}
