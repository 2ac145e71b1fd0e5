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

bool GetFeature(RouteGuide::Stub* stub) {
  bool ok = true;
  for (const Point& p : routeguide::FeaturePoints()) {
    rpc::ClientContext ctx;
    Deadline(&ctx);
    Feature feature;
    rpc::Status s = stub->GetFeature(&ctx, p, &feature);
    routeguide::PrintFeature(p, s, feature);
    ok = ok && s.ok();
  }
  return ok;
}

bool ListFeatures(RouteGuide::Stub* stub) {
  const Rectangle rect = routeguide::SearchArea();
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
  for (const Point& p : routeguide::Route()) {
    std::cout << "RecordRoute -> " << Str(p) << "\n";
    if (!writer->Write(p)) break;
  }
  writer->WritesDone();
  return routeguide::PrintSummary(writer->Finish(), summary);
}

bool RouteChat(RouteGuide::Stub* stub) {
  rpc::ClientContext ctx;
  Deadline(&ctx);
  auto stream = stub->RouteChat(&ctx);
  std::thread writer([&stream] {
    for (const RouteNote& note : routeguide::ChatNotes()) {
      routeguide::PrintNote("->", note);
      stream->Write(note);
    }
    stream->WritesDone();
  });
  RouteNote note;
  int n = 0;
  while (stream->Read(&note)) {
    routeguide::PrintNote("<-", note);
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
  return routeguide::RunAgainstANewServer(
      callback_server ? static_cast<rpc::Service*>(&callback_service)
                      : &service,
      callback_server ? "callback server" : "server",
      {GetFeature, ListFeatures, RecordRoute, RouteChat});
}
