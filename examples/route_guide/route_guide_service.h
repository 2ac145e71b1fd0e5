// The RouteGuide implementation for the example: a small built-in table of
// features (made-up places), the four methods in their blocking forms.
// route_guide_callback_server.h serves the same on the callback API.

#ifndef EXAMPLES_ROUTE_GUIDE_ROUTE_GUIDE_SERVICE_H_
#define EXAMPLES_ROUTE_GUIDE_ROUTE_GUIDE_SERVICE_H_

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "examples/route_guide/route_guide.rpc.pb.h"

namespace routeguide {

inline Point MakePoint(int32_t latitude, int32_t longitude) {
  Point p;
  p.set_latitude(latitude);
  p.set_longitude(longitude);
  return p;
}

// The example's feature database.
inline std::vector<Feature> ExampleFeatures() {
  const std::pair<const char*, Point> entries[] = {
      {"Old Mill Bridge", MakePoint(407838351, -746143763)},
      {"Harbor Lighthouse", MakePoint(408122808, -743999179)},
      {"Pine Ridge Lookout", MakePoint(413628156, -749015468)},
      {"Cedar Creek Falls", MakePoint(419999544, -740371136)},
      {"Stone Chapel", MakePoint(414008389, -743951297)},
      {"Market Square", MakePoint(409146138, -746188906)},
  };
  std::vector<Feature> features;
  for (const auto& [name, point] : entries) {
    Feature f;
    f.set_name(name);
    *f.mutable_location() = point;
    features.push_back(f);
  }
  return features;
}

// Great-circle distance in meters (haversine).
inline double DistanceMeters(const Point& a, const Point& b) {
  constexpr double kCoordFactor = 1e7;
  constexpr double kRadius = 6371000;
  constexpr double kPi = 3.14159265358979323846;
  auto rad = [&](int32_t v) { return v / kCoordFactor * kPi / 180; };
  const double lat1 = rad(a.latitude()), lat2 = rad(b.latitude());
  const double dlat = lat2 - lat1;
  const double dlon = rad(b.longitude()) - rad(a.longitude());
  const double h =
      std::sin(dlat / 2) * std::sin(dlat / 2) +
      std::cos(lat1) * std::cos(lat2) * std::sin(dlon / 2) * std::sin(dlon / 2);
  return kRadius * 2 * std::atan2(std::sqrt(h), std::sqrt(1 - h));
}

// The state and rules both implementations share (the blocking one below,
// the callback one in route_guide_callback_server.h): the features, the
// notes each location received, and a route's summary.
class RouteGuideData {
 public:
  RouteGuideData() : features_(ExampleFeatures()) {}

  const std::vector<Feature>& features() const { return features_; }

  // The feature's name at `p` ("" when none).
  std::string NameAt(const Point& p) const {
    for (const Feature& f : features_) {
      if (f.location().latitude() == p.latitude() &&
          f.location().longitude() == p.longitude()) {
        return f.name();
      }
    }
    return "";
  }

  static bool InRectangle(const Rectangle& rect, const Point& p) {
    const int32_t left = std::min(rect.lo().longitude(), rect.hi().longitude());
    const int32_t right =
        std::max(rect.lo().longitude(), rect.hi().longitude());
    const int32_t bottom = std::min(rect.lo().latitude(), rect.hi().latitude());
    const int32_t top = std::max(rect.lo().latitude(), rect.hi().latitude());
    return p.longitude() >= left && p.longitude() <= right &&
           p.latitude() >= bottom && p.latitude() <= top;
  }

  // Stores `note` and returns the notes sent to its location before it.
  std::vector<RouteNote> AddNote(const RouteNote& note) {
    absl::MutexLock lock(&mu_);
    auto& at =
        notes_[{note.location().latitude(), note.location().longitude()}];
    std::vector<RouteNote> earlier = at;
    at.push_back(note);
    return earlier;
  }

  // Sums up a route point by point.
  class Route {
   public:
    explicit Route(const RouteGuideData* data)
        : data_(data), start_(std::chrono::steady_clock::now()) {}
    void Add(const Point& point) {
      if (points_ > 0) distance_ += DistanceMeters(previous_, point);
      if (!data_->NameAt(point).empty()) ++features_;
      previous_ = point;
      ++points_;
    }
    void Summarize(RouteSummary* summary) const {
      summary->set_point_count(points_);
      summary->set_feature_count(features_);
      summary->set_distance(static_cast<int32_t>(distance_));
      summary->set_elapsed_time(
          static_cast<int32_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::steady_clock::now() - start_)
                                   .count()));
    }

   private:
    const RouteGuideData* const data_;
    const std::chrono::steady_clock::time_point start_;
    Point previous_;
    int points_ = 0, features_ = 0;
    double distance_ = 0;
  };

 private:
  const std::vector<Feature> features_;
  absl::Mutex mu_;
  std::map<std::pair<int32_t, int32_t>, std::vector<RouteNote>> notes_
      ABSL_GUARDED_BY(mu_);
};

// The four methods in their blocking forms (a worker thread per call).
class RouteGuideImpl final : public RouteGuide::Service {
 public:
  rpc::Status GetFeature(rpc::ServerContext*, const Point* point,
                         Feature* feature) override {
    *feature->mutable_location() = *point;
    feature->set_name(data_.NameAt(*point));
    return rpc::Status::OK;
  }

  rpc::Status ListFeatures(rpc::ServerContext*, const Rectangle* rect,
                           rpc::ServerWriter<Feature>* writer) override {
    for (const Feature& f : data_.features()) {
      if (RouteGuideData::InRectangle(*rect, f.location())) {
        if (!writer->Write(f)) break;
      }
    }
    return rpc::Status::OK;
  }

  rpc::Status RecordRoute(rpc::ServerContext*, rpc::ServerReader<Point>* reader,
                          RouteSummary* summary) override {
    RouteGuideData::Route route(&data_);
    Point point;
    while (reader->Read(&point)) route.Add(point);
    route.Summarize(summary);
    return rpc::Status::OK;
  }

  rpc::Status RouteChat(
      rpc::ServerContext*,
      rpc::ServerReaderWriter<RouteNote, RouteNote>* stream) override {
    RouteNote note;
    while (stream->Read(&note)) {
      for (const RouteNote& n : data_.AddNote(note)) {
        if (!stream->Write(n)) return rpc::Status::OK;
      }
    }
    return rpc::Status::OK;
  }

 private:
  RouteGuideData data_;
};

}  // namespace routeguide

#endif  // EXAMPLES_ROUTE_GUIDE_ROUTE_GUIDE_SERVICE_H_
