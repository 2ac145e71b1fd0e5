// ServerConnection: one accepted HTTP/2 connection of a Server, on one loop.
// It is the Connection's listener: request HEADERS become ServerCalls (routed
// by :path, UNIMPLEMENTED for unknown methods, 415 for non-gRPC content
// types), DATA, end of stream and resets go to the call of the stream.
//
// Threading: every method runs on the connection's loop thread; calls reach
// it only through tasks posted to that loop.

#ifndef RPC_INTERNAL_SERVER_CONNECTION_H_
#define RPC_INTERNAL_SERVER_CONNECTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "rpc/internal/server_call.h"
#include "rpc/service.h"
#include "transport/connection.h"
#include "transport/connection_driver.h"
#include "transport/endpoint.h"

namespace rpc {
namespace internal {

// "ipv4:127.0.0.1:5000" / "ipv6:[::1]:5000", grpc++'s peer() form.
std::string PeerName(const transport::Endpoint& endpoint);

class ServerConnection final : public transport::ConnectionListener,
                               public transport::ConnectionDriver::Owner {
 public:
  // What the connection needs from its server.
  class Host {
   public:
    virtual ~Host() = default;
    // nullptr when no service has the method.
    virtual const Service::Method* FindMethod(std::string_view path) = 0;
    // Runs the call's handler on a worker thread.
    virtual void Dispatch(std::shared_ptr<ServerCall> call) = 0;
    virtual const ServerCallLimits& limits() const = 0;
    // The connection closed (end of a loop iteration); the host destroys it.
    virtual void OnConnectionClosed(ServerConnection* connection) = 0;
  };

  ServerConnection(Host* host, std::unique_ptr<transport::Endpoint> endpoint,
                   const transport::ConnectionOptions& options);
  ~ServerConnection() override;

  void Start() { driver_.Start(); }
  // GOAWAY; in-flight calls finish, then the connection closes.
  void GracefulShutdown() { driver_.GracefulShutdown(); }
  // Closes now: every call is cancelled.
  void Abort();

  transport::Connection& connection() { return driver_.connection(); }
  void ScheduleFlush() { driver_.ScheduleFlush(); }
  // After SubmitData for `stream_id`: releases the call's write credit once
  // its data left the Connection's queue.
  void TrackWrite(uint32_t stream_id);
  size_t num_calls() const { return calls_.size(); }

  // ---- transport::ConnectionListener ----
  void OnHeaders(uint32_t stream_id, const hpack::HeaderList& headers,
                 bool end_stream) override;
  void OnTrailers(uint32_t stream_id,
                  const hpack::HeaderList& trailers) override;
  void OnData(uint32_t stream_id, transport::Slice data) override;
  void OnEndStream(uint32_t stream_id) override;
  void OnStreamReset(uint32_t stream_id, transport::Http2ErrorCode code,
                     bool remote) override;
  void OnStreamClosed(uint32_t stream_id) override;
  void OnStreamWritable(uint32_t stream_id) override;

  // ---- transport::ConnectionDriver::Owner ----
  void OnDriverProgress() override;
  void OnDriverClosed(const absl::Status& status) override;

 private:
  ServerCall* Find(uint32_t stream_id);
  // A Trailers-Only response without a call (unknown method, bad request).
  void Reject(uint32_t stream_id, std::string_view http_status,
              const Status& status);

  Host* const host_;
  std::string peer_;
  absl::flat_hash_map<uint32_t, std::shared_ptr<ServerCall>> calls_;
  absl::flat_hash_set<uint32_t> waiting_writers_;
  transport::ConnectionDriver driver_;  // Last: destroyed first.
};

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_SERVER_CONNECTION_H_
