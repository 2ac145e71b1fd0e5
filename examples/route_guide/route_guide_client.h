// What both route_guide clients (demo.cc on the blocking API,
// route_guide_callback_client.cc on the callback one) send and print, and
// how they run: the same four calls with the same inputs, against a server
// started on a free port in the same process. Only the calls differ.

#ifndef EXAMPLES_ROUTE_GUIDE_ROUTE_GUIDE_CLIENT_H_
#define EXAMPLES_ROUTE_GUIDE_ROUTE_GUIDE_CLIENT_H_

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "examples/route_guide/route_guide.rpc.pb.h"
#include "examples/route_guide/route_guide_service.h"
#include "rpc/rpc.h"

namespace routeguide {

inline std::string Str(const Point& p) {
  return "(" + std::to_string(p.latitude()) + ", " +
         std::to_string(p.longitude()) + ")";
}

inline void Deadline(rpc::ClientContext* ctx) {
  ctx->set_deadline(absl::Now() + absl::Seconds(10));
}

// GetFeature's points: one with a feature, one without.
inline std::vector<Point> FeaturePoints() {
  return {MakePoint(409146138, -746188906), MakePoint(0, 0)};
}

inline void PrintFeature(const Point& p, const rpc::Status& s,
                         const Feature& feature) {
  std::cout << "GetFeature" << Str(p) << " -> "
            << (s.ok() ? (feature.name().empty() ? "(no feature)"
                                                 : "\"" + feature.name() + "\"")
                       : s.ToString())
            << "\n";
}

// ListFeatures' rectangle.
inline Rectangle SearchArea() {
  Rectangle rect;
  *rect.mutable_lo() = MakePoint(400000000, -750000000);
  *rect.mutable_hi() = MakePoint(420000000, -730000000);
  return rect;
}

// RecordRoute's four points.
inline std::vector<Point> Route() {
  return {MakePoint(407838351, -746143763), MakePoint(408122808, -743999179),
          MakePoint(410000000, -745000000), MakePoint(414008389, -743951297)};
}

inline bool PrintSummary(const rpc::Status& s, const RouteSummary& summary) {
  std::cout << "RecordRoute <- " << summary.point_count() << " points, "
            << summary.feature_count() << " features, " << summary.distance()
            << " m, status " << s << "\n";
  return s.ok() && summary.point_count() == 4;
}

// RouteChat's four notes, on two places: the server answers the two that
// come to a place where a note was left before.
inline std::vector<RouteNote> ChatNotes() {
  const char* messages[] = {"first", "second", "third", "fourth"};
  const Point places[] = {MakePoint(0, 1), MakePoint(0, 2)};
  std::vector<RouteNote> notes(4);
  for (int i = 0; i < 4; ++i) {
    notes[i].set_message(messages[i]);
    *notes[i].mutable_location() = places[i % 2];
  }
  return notes;
}

inline void PrintNote(const char* direction, const RouteNote& note) {
  std::cout << "RouteChat " << direction << " \"" << note.message() << "\" at "
            << Str(note.location()) << "\n";
}

// Serves `service` on a free port, runs the four calls (each prints what it
// exchanged and says whether it went as expected) on one channel to it,
// and says whether all did: the exit code.
struct Calls {
  bool (*get_feature)(RouteGuide::Stub*);
  bool (*list_features)(RouteGuide::Stub*);
  bool (*record_route)(RouteGuide::Stub*);
  bool (*route_chat)(RouteGuide::Stub*);
};

inline int RunAgainstANewServer(rpc::Service* service, const char* what,
                                const Calls& calls) {
  int port = 0;
  std::unique_ptr<rpc::Server> server =
      rpc::ServerBuilder()
          .AddListeningPort("127.0.0.1:0", rpc::InsecureServerCredentials(),
                            &port)
          .RegisterService(service)
          .BuildAndStart();
  if (server == nullptr) return 1;
  std::cout << what << " listening on 127.0.0.1:" << port << "\n";
  auto stub = RouteGuide::NewStub(rpc::CreateChannel(
      "127.0.0.1:" + std::to_string(port), rpc::InsecureChannelCredentials()));
  bool ok = calls.get_feature(stub.get());
  ok = calls.list_features(stub.get()) && ok;
  ok = calls.record_route(stub.get()) && ok;
  ok = calls.route_chat(stub.get()) && ok;
  stub.reset();
  server->Shutdown(absl::Now() + absl::Seconds(2));
  std::cout << (ok ? "all calls succeeded\n" : "SOME CALLS FAILED\n");
  return ok ? 0 : 1;
}

}  // namespace routeguide

#endif  // EXAMPLES_ROUTE_GUIDE_ROUTE_GUIDE_CLIENT_H_
