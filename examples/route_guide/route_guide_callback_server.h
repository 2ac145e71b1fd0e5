// RouteGuide on the callback API (rpc/server_callback.h): the same behaviour
// as RouteGuideImpl, each method returning a reactor that runs on the
// server's I/O threads, so no call holds a thread while it waits for its
// client.

#ifndef EXAMPLES_ROUTE_GUIDE_ROUTE_GUIDE_CALLBACK_SERVER_H_
#define EXAMPLES_ROUTE_GUIDE_ROUTE_GUIDE_CALLBACK_SERVER_H_

#include <vector>

#include "examples/route_guide/route_guide.rpc.pb.h"
#include "examples/route_guide/route_guide_service.h"
#include "rpc/rpc.h"

namespace routeguide {

class RouteGuideCallbackImpl final : public RouteGuide::CallbackService {
 public:
  // Unary: nothing to wait for, so the default reactor answers at once.
  rpc::ServerUnaryReactor* GetFeature(rpc::CallbackServerContext* ctx,
                                      const Point* point,
                                      Feature* feature) override {
    *feature->mutable_location() = *point;
    feature->set_name(data_.NameAt(*point));
    rpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    reactor->Finish(rpc::Status::OK);
    return reactor;
  }

  // Server streaming: one StartWrite per feature in the rectangle, the next
  // from OnWriteDone, then Finish.
  rpc::ServerWriteReactor<Feature>* ListFeatures(
      rpc::CallbackServerContext*, const Rectangle* rect) override {
    class Lister final : public rpc::ServerWriteReactor<Feature> {
     public:
      Lister(const RouteGuideData* data, const Rectangle* rect)
          : data_(data), rect_(rect) {
        Next();
      }
      void OnWriteDone(bool ok) override {
        if (ok) {
          Next();
        } else {
          Finish(rpc::Status(rpc::StatusCode::CANCELLED, "write failed"));
        }
      }
      void OnDone() override { delete this; }

     private:
      void Next() {
        const std::vector<Feature>& features = data_->features();
        while (next_ < features.size()) {
          const Feature& f = features[next_++];
          if (RouteGuideData::InRectangle(*rect_, f.location())) {
            StartWrite(&f);
            return;
          }
        }
        Finish(rpc::Status::OK);
      }

      const RouteGuideData* const data_;
      const Rectangle* const rect_;
      size_t next_ = 0;
    };
    return new Lister(&data_, rect);
  }

  // Client streaming: StartRead until OnReadDone(false), then the summary.
  rpc::ServerReadReactor<Point>* RecordRoute(rpc::CallbackServerContext*,
                                             RouteSummary* summary) override {
    class Recorder final : public rpc::ServerReadReactor<Point> {
     public:
      Recorder(const RouteGuideData* data, RouteSummary* summary)
          : route_(data), summary_(summary) {
        StartRead(&point_);
      }
      void OnReadDone(bool ok) override {
        if (ok) {
          route_.Add(point_);
          StartRead(&point_);
          return;
        }
        route_.Summarize(summary_);
        Finish(rpc::Status::OK);
      }
      void OnDone() override { delete this; }

     private:
      RouteGuideData::Route route_;
      RouteSummary* const summary_;
      Point point_;
    };
    return new Recorder(&data_, summary);
  }

  // Bidi: each note read is answered with the earlier notes of its
  // location, written one by one before the next read.
  rpc::ServerBidiReactor<RouteNote, RouteNote>* RouteChat(
      rpc::CallbackServerContext*) override {
    class Chatter final : public rpc::ServerBidiReactor<RouteNote, RouteNote> {
     public:
      explicit Chatter(RouteGuideData* data) : data_(data) {
        StartRead(&note_);
      }
      void OnReadDone(bool ok) override {
        if (!ok) {
          Finish(rpc::Status::OK);
          return;
        }
        earlier_ = data_->AddNote(note_);
        next_ = 0;
        NextWrite();
      }
      void OnWriteDone(bool ok) override {
        if (ok) {
          NextWrite();
        } else {
          Finish(rpc::Status::OK);
        }
      }
      void OnDone() override { delete this; }

     private:
      void NextWrite() {
        if (next_ < earlier_.size()) {
          StartWrite(&earlier_[next_++]);
        } else {
          StartRead(&note_);
        }
      }

      RouteGuideData* const data_;
      RouteNote note_;
      std::vector<RouteNote> earlier_;
      size_t next_ = 0;
    };
    return new Chatter(&data_);
  }

 private:
  RouteGuideData data_;
};

}  // namespace routeguide

#endif  // EXAMPLES_ROUTE_GUIDE_ROUTE_GUIDE_CALLBACK_SERVER_H_
