// rpc::ServerBuilder: configures and starts a Server (grpc::ServerBuilder's
// shape; see server.h for an example).

#ifndef RPC_SERVER_BUILDER_H_
#define RPC_SERVER_BUILDER_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "rpc/compression/encoding.h"
#include "rpc/credentials.h"
#include "rpc/server.h"
#include "rpc/service.h"

namespace rpc {

class ServerBuilder {
 public:
  ServerBuilder();
  ~ServerBuilder();
  ServerBuilder(ServerBuilder&&) noexcept;
  ServerBuilder& operator=(ServerBuilder&&) noexcept;

  // Listens on `address` ("0.0.0.0:50051", "[::]:0", "localhost:0"); port 0
  // picks a free port, stored in *selected_port by BuildAndStart (0 when
  // binding failed). `creds`: InsecureServerCredentials() or
  // SslServerCredentials(...).
  ServerBuilder& AddListeningPort(const std::string& address,
                                  std::shared_ptr<ServerCredentials> creds,
                                  int* selected_port = nullptr);
  // The service must outlive the server.
  ServerBuilder& RegisterService(Service* service);
  // I/O loops (threads); default 1.
  ServerBuilder& SetNumLoops(int n);
  // Busy-poll ("h2rpc.busy_poll_us", ours; default 0: off): after work, each
  // of the server's loops polls its sockets (epoll_wait with timeout 0) for
  // up to `budget` before it sleeps, and again only while calls keep coming,
  // so an idle server sleeps. Trades CPU (a core per loop while calls
  // arrive) for latency (no wake-up per request). See rpc/README.md,
  // "Threading model".
  ServerBuilder& SetBusyPoll(absl::Duration budget);
  // Handler threads (blocking `Foo::Service` handlers): `min` started up
  // front, more up to `max` as handlers block (default 2..256). A call that
  // arrives while `max` handlers run (say streaming handlers blocked on their
  // clients) waits for one to return, never silently: a call with a deadline
  // that gets no worker in time ends with RESOURCE_EXHAUSTED "no worker
  // thread available within the deadline", which the server sends slightly
  // before the deadline (a tenth of the time left, at most 1 s, earlier) so
  // that it reaches the client before the client's own DEADLINE_EXCEEDED; a
  // call without a deadline waits until a worker is free or it is
  // cancelled. A call cancelled while it waits (by the client, the deadline,
  // shutdown) leaves the queue: no handler runs for it. Callback handlers
  // never take a worker. See rpc/README.md, "Threading model".
  ServerBuilder& SetWorkerThreads(int min, int max);
  // At most `n` calls wait for a worker that way (default 0: no bound); a
  // call beyond them ends at once with RESOURCE_EXHAUSTED "too many calls
  // waiting for a worker thread".
  ServerBuilder& SetMaxPendingCalls(int n);
  // A handler thread above `min` that has had no call to run for `idle`
  // retires (default 10 s), so a burst does not leave its threads behind.
  ServerBuilder& SetWorkerIdleTime(absl::Duration idle);
  // Leader/follower for blocking handlers (default on): a worker whose last
  // call came alone reads the next request of that call's loop itself
  // (co-polls it) and runs its handler, one wake-up per sequential call
  // instead of the loop thread's and the worker's; off, every call is
  // handed from the loop thread to a worker. Calls that come in batches go
  // through the hand-off either way. See rpc/README.md, "Threading model".
  ServerBuilder& SetWorkerLeaderFollower(bool on);
  // Larger request messages fail the call with RESOURCE_EXHAUSTED (default
  // 4 MiB); larger responses too (default unlimited). -1: unlimited.
  ServerBuilder& SetMaxReceiveMessageSize(int bytes);
  ServerBuilder& SetMaxSendMessageSize(int bytes);
  // Request metadata limits, in RFC 9113 header list octets (name + value +
  // 32 per entry; grpc++'s GRPC_ARG_MAX_METADATA_SIZE, the soft limit, and
  // GRPC_ARG_ABSOLUTE_MAX_METADATA_SIZE, the hard one; defaults 8 KiB and
  // 16 KiB, one derived from the other when only one is set, as in gRPC).
  // A call whose metadata is over the soft limit gets a Trailers-Only
  // RESOURCE_EXHAUSTED, every time (grpc++ rejects lists between the two
  // limits at random); the connection and its other calls go on. The hard
  // limit is the SETTINGS_MAX_HEADER_LIST_SIZE sent to clients. See
  // rpc/internal/metadata_limits.h. Negative: back to the default.
  ServerBuilder& SetMaxMetadataSize(int bytes);
  ServerBuilder& SetAbsoluteMaxMetadataSize(int bytes);
  // The response encoding of calls whose handler sets none
  // (ServerContext::set_compression_algorithm); default identity. Used only
  // when the client accepts compression; see ServerContext for the rule.
  ServerBuilder& SetDefaultCompressionAlgorithm(compression::Encoding encoding);
  // Response messages smaller than this go uncompressed (flag 0) on a
  // compressed call; default compression::kDefaultCompressionThreshold (1024).
  ServerBuilder& SetCompressionThreshold(size_t bytes);

  // ---- Keepalive and connection lifetime (rpc/README.md; gRPC's
  // keepalive.md and A9). Infinite durations turn a feature off. ----
  // Server pings: a PING after `time` without hearing from the client (only
  // while calls are in flight, unless permit_without_calls); no reply within
  // `timeout` closes the connection. Default 2 h / 20 s.
  ServerBuilder& SetKeepaliveTime(absl::Duration time);
  ServerBuilder& SetKeepaliveTimeout(absl::Duration timeout);
  // Lets the server ping, and clients ping, without calls in flight
  // (default false: a client may then ping once per 2 hours).
  ServerBuilder& SetKeepalivePermitWithoutCalls(bool permit);
  // Client pings closer than `interval` while the server sends no HEADERS or
  // DATA are strikes (default 5 min); more than `max_strikes` (default 2; 0:
  // no limit) get GOAWAY ENHANCE_YOUR_CALM "too_many_pings" and the
  // connection closes.
  ServerBuilder& SetMinPingIntervalWithoutData(absl::Duration interval);
  // 0: unlimited; negative values are ignored.
  ServerBuilder& SetMaxPingStrikes(int max_strikes);
  // A connection without calls for this long gets a graceful GOAWAY
  // (default infinite).
  ServerBuilder& SetMaxConnectionIdle(absl::Duration idle);
  // A connection this old (+-10% jitter) gets a graceful GOAWAY; `grace`
  // later, calls still running are cancelled and it closes (defaults
  // infinite).
  ServerBuilder& SetMaxConnectionAge(absl::Duration age);
  ServerBuilder& SetMaxConnectionAgeGrace(absl::Duration grace);
  // SETTINGS_MAX_CONCURRENT_STREAMS advertised on each connection: streams
  // a client opens beyond it are refused (RST_STREAM REFUSED_STREAM; gRPC
  // clients queue their calls below it). Default: no limit (none advertised,
  // as grpc++); negative: no limit. Without a limit a connection's memory
  // grows with the calls its client keeps open (rpc/README.md, "Streams per
  // connection"); set one to bound it.
  ServerBuilder& SetMaxConcurrentStreams(int max_streams);
  // grpc++'s channel arguments for the settings above, in milliseconds
  // (INT_MAX: infinite) or 0/1: "grpc.keepalive_time_ms",
  // "grpc.keepalive_timeout_ms", "grpc.keepalive_permit_without_calls",
  // "grpc.http2.min_ping_interval_without_data_ms",
  // "grpc.http2.max_ping_strikes", "grpc.max_connection_idle_ms",
  // "grpc.max_connection_age_ms", "grpc.max_connection_age_grace_ms";
  // in octets: "grpc.max_metadata_size", "grpc.absolute_max_metadata_size";
  // a count: "grpc.max_concurrent_streams" (SetMaxConcurrentStreams);
  // ours, in microseconds: "h2rpc.busy_poll_us" (SetBusyPoll).
  // Other names and negative values are ignored (as gRPC ignores arguments
  // it does not know).
  ServerBuilder& AddChannelArgument(const std::string& name, int value);

  // nullptr when a port could not be bound, or two services share a method.
  std::unique_ptr<Server> BuildAndStart();

 private:
  std::unique_ptr<internal::ServerOptions> options_;
  std::vector<std::string> addresses_;
  std::vector<std::shared_ptr<ServerCredentials>> credentials_;
  std::vector<int*> selected_ports_;
  std::vector<Service*> services_;
  // As set (-1: not set); resolved into options_ by BuildAndStart.
  int max_metadata_size_ = -1;
  int absolute_max_metadata_size_ = -1;
};

}  // namespace rpc

#endif  // RPC_SERVER_BUILDER_H_
