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
#include "examples/route_guide/route_guide_client.h"
#include "examples/route_guide/route_guide_service.h"
#include "rpc/rpc.h"

namespace {

using routeguide::Deadline;
using routeguide::Feature;
using routeguide::Point;
using routeguide::Rectangle;
using routeguide::RouteGuide;
using routeguide::RouteNote;
using routeguide::RouteSummary;
using routeguide::Str;

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

// Unary, the std::function form.
bool GetFeature(RouteGuide::Stub* stub) {
  bool ok = true;
  for (const Point& p : routeguide::FeaturePoints()) {
    rpc::ClientContext ctx;
    Deadline(&ctx);
    Feature feature;
    Done done;
    stub->async()->GetFeature(&ctx, &p, &feature,
                              [&done](rpc::Status s) { done.Set(s); });
    const rpc::Status s = done.Wait();
    routeguide::PrintFeature(p, s, feature);
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
  const Rectangle rect = routeguide::SearchArea();
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
  RouteRecorder recorder(stub, routeguide::Route());
  const rpc::Status s = recorder.Await();
  return routeguide::PrintSummary(s, recorder.summary());
}

// Bidi: writes the notes one after the other while reading what comes back;
// the reactions run on the loop, one at a time for this call.
class Chat final : public rpc::ClientBidiReactor<RouteNote, RouteNote> {
 public:
  explicit Chat(RouteGuide::Stub* stub) : notes_(routeguide::ChatNotes()) {
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
    routeguide::PrintNote("<-", in_);
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
    if (next_ == notes_.size()) {
      StartWritesDone();
      ++next_;
      return;
    }
    if (next_ > notes_.size()) return;
    const RouteNote& note = notes_[next_++];
    routeguide::PrintNote("->", note);
    StartWrite(&note);
  }
  rpc::ClientContext ctx_;
  const std::vector<RouteNote> notes_;
  RouteNote in_;
  size_t next_ = 0;
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
  return routeguide::RunAgainstANewServer(
      &service, "server", {GetFeature, ListFeatures, RecordRoute, RouteChat});
}
