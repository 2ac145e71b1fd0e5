// One-process route_guide demo: a RouteGuide server on a free port and a
// client making one call of each kind, printing what they exchanged.
//   ./bazelw run //examples/route_guide:demo [-- --callback_server]
// --callback_server serves RouteGuideCallbackImpl (the callback API) instead
// of the blocking RouteGuideImpl.

#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "examples/route_guide/route_guide.rpc.pb.h"
#include "examples/route_guide/route_guide_callback_server.h"
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

void Deadline(rpc::ClientContext* ctx) {
  ctx->set_deadline(absl::Now() + absl::Seconds(10));
}

bool GetFeature(RouteGuide::Stub* stub) {
  bool ok = true;
  for (const Point& p : {MakePoint(409146138, -746188906), MakePoint(0, 0)}) {
    rpc::ClientContext ctx;
    Deadline(&ctx);
    Feature feature;
    rpc::Status s = stub->GetFeature(&ctx, p, &feature);
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

bool ListFeatures(RouteGuide::Stub* stub) {
  Rectangle rect;
  *rect.mutable_lo() = MakePoint(400000000, -750000000);
  *rect.mutable_hi() = MakePoint(420000000, -730000000);
  rpc::ClientContext ctx;
  Deadline(&ctx);
  std::cout << "ListFeatures" << Str(rect.lo()) << "-" << Str(rect.hi())
            << ":\n";
  auto reader = stub->ListFeatures(&ctx, rect);
  Feature f;
  int n = 0;
  while (reader->Read(&f)) {
    std::cout << "  <- \"" << f.name() << "\" at " << Str(f.location()) << "\n";
    ++n;
  }
  rpc::Status s = reader->Finish();
  std::cout << "  " << n << " features, status " << s << "\n";
  return s.ok() && n > 0;
}

bool RecordRoute(RouteGuide::Stub* stub) {
  rpc::ClientContext ctx;
  Deadline(&ctx);
  RouteSummary summary;
  auto writer = stub->RecordRoute(&ctx, &summary);
  const Point route[] = {
      MakePoint(407838351, -746143763), MakePoint(408122808, -743999179),
      MakePoint(410000000, -745000000), MakePoint(414008389, -743951297)};
  for (const Point& p : route) {
    std::cout << "RecordRoute -> " << Str(p) << "\n";
    if (!writer->Write(p)) break;
  }
  writer->WritesDone();
  rpc::Status s = writer->Finish();
  std::cout << "RecordRoute <- " << summary.point_count() << " points, "
            << summary.feature_count() << " features, " << summary.distance()
            << " m, status " << s << "\n";
  return s.ok() && summary.point_count() == 4;
}

bool RouteChat(RouteGuide::Stub* stub) {
  rpc::ClientContext ctx;
  Deadline(&ctx);
  auto stream = stub->RouteChat(&ctx);
  std::thread writer([&stream] {
    const char* messages[] = {"first", "second", "third", "fourth"};
    const Point places[] = {MakePoint(0, 1), MakePoint(0, 2)};
    for (int i = 0; i < 4; ++i) {
      RouteNote note;
      note.set_message(messages[i]);
      *note.mutable_location() = places[i % 2];
      std::cout << "RouteChat -> \"" << note.message() << "\" at "
                << Str(note.location()) << "\n";
      stream->Write(note);
    }
    stream->WritesDone();
  });
  RouteNote note;
  int n = 0;
  while (stream->Read(&note)) {
    std::cout << "RouteChat <- \"" << note.message() << "\" at "
              << Str(note.location()) << "\n";
    ++n;
  }
  writer.join();
  rpc::Status s = stream->Finish();
  std::cout << "RouteChat: " << n << " notes back, status " << s << "\n";
  return s.ok() && n == 2;
}

}  // namespace

int main(int argc, char** argv) {
  bool callback_server = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--callback_server") == 0) callback_server = true;
  }
  routeguide::RouteGuideImpl service;
  routeguide::RouteGuideCallbackImpl callback_service;
  int port = 0;
  std::unique_ptr<rpc::Server> server =
      rpc::ServerBuilder()
          .AddListeningPort("127.0.0.1:0", rpc::InsecureServerCredentials(),
                            &port)
          .RegisterService(callback_server
                               ? static_cast<rpc::Service*>(&callback_service)
                               : &service)
          .BuildAndStart();
  if (server == nullptr) return 1;
  std::cout << (callback_server ? "callback " : "")
            << "server listening on 127.0.0.1:" << port << "\n";
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
