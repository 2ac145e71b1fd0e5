// BlockingHttp2Client: Http2Client on its own loop thread, behind calls that
// wait (each bounded by a timeout). For tests, tools and examples; servers and
// the rpc layer use Http2Client on their own loops.
//
//   auto client = transport::BlockingHttp2Client::Connect(address, options);
//   absl::StatusOr<transport::FetchedResponse> r =
//       (*client)->Fetch("GET", "/index.html");
//
// Responses are copied into std::strings on the loop thread (Slices must not
// cross threads while their blocks are still in use there; see slice.h).

#ifndef TRANSPORT_HTTP_BLOCKING_HTTP2_CLIENT_H_
#define TRANSPORT_HTTP_BLOCKING_HTTP2_CLIENT_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "transport/http/http2_client.h"
#include "transport/io/event_loop.h"
#include "transport/io/socket.h"

namespace transport {

struct FetchedResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::vector<std::pair<std::string, std::string>> trailers;
  // OK when the stream completed (see Http2Response::error).
  absl::Status error;

  // The first header named `name`, or empty.
  std::string Header(const std::string& name) const;
};

struct FetchRequest {
  std::string method = "GET";
  std::string path = "/";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

class BlockingHttp2Client {
 public:
  // Starts a loop thread and connects. Errors: the loop's, the connect's
  // (kDeadlineExceeded after options.connect_timeout).
  static absl::StatusOr<std::unique_ptr<BlockingHttp2Client>> Connect(
      const SocketAddress& address, const Http2ClientOptions& options);
  // Closes the connection and stops the thread.
  ~BlockingHttp2Client();

  BlockingHttp2Client(const BlockingHttp2Client&) = delete;
  BlockingHttp2Client& operator=(const BlockingHttp2Client&) = delete;

  // One request. kDeadlineExceeded after `timeout` (the stream is reset).
  absl::StatusOr<FetchedResponse> Fetch(
      const FetchRequest& request, absl::Duration timeout = absl::Seconds(30));
  absl::StatusOr<FetchedResponse> Fetch(
      const std::string& method, const std::string& path,
      absl::Duration timeout = absl::Seconds(30));
  // All requests at once on the one connection (concurrent streams);
  // responses in request order. kDeadlineExceeded if not all finished.
  absl::StatusOr<std::vector<FetchedResponse>> FetchAll(
      const std::vector<FetchRequest>& requests,
      absl::Duration timeout = absl::Seconds(30));

  // Graceful close: GOAWAY, then waits (bounded) until the connection closed.
  absl::Status Shutdown(absl::Duration timeout = absl::Seconds(10));
  bool closed();

  // Runs `fn` on the loop thread with the client and waits for it.
  void RunInLoop(absl::AnyInvocable<void(Http2Client*)> fn);

 private:
  BlockingHttp2Client() = default;

  std::unique_ptr<EventLoopThread> thread_;
  std::unique_ptr<Http2Client> client_;  // Loop thread only.
};

}  // namespace transport

#endif  // TRANSPORT_HTTP_BLOCKING_HTTP2_CLIENT_H_
