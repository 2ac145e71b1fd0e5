// rpc::ConnectivityState: the state of a Channel (and of each of its
// subchannels), as gRPC's connectivity-semantics-and-api.md defines it.
//
//   kIdle              nothing is connected and nothing is being tried; the
//                      first call (or GetState(true)) starts connecting.
//   kConnecting        resolving names or connecting.
//   kReady             a connection is up; calls go out at once.
//   kTransientFailure  resolving or every connection attempt failed; the
//                      channel keeps retrying with backoff. Fail-fast calls
//                      fail with UNAVAILABLE, wait-for-ready calls wait.
//   kShutdown          the channel is being destroyed.

#ifndef RPC_CONNECTIVITY_STATE_H_
#define RPC_CONNECTIVITY_STATE_H_

namespace rpc {

enum class ConnectivityState {
  kIdle,
  kConnecting,
  kReady,
  kTransientFailure,
  kShutdown,
};

// gRPC C's names for the same values.
inline constexpr ConnectivityState GRPC_CHANNEL_IDLE = ConnectivityState::kIdle;
inline constexpr ConnectivityState GRPC_CHANNEL_CONNECTING =
    ConnectivityState::kConnecting;
inline constexpr ConnectivityState GRPC_CHANNEL_READY =
    ConnectivityState::kReady;
inline constexpr ConnectivityState GRPC_CHANNEL_TRANSIENT_FAILURE =
    ConnectivityState::kTransientFailure;
inline constexpr ConnectivityState GRPC_CHANNEL_SHUTDOWN =
    ConnectivityState::kShutdown;

// "IDLE", "CONNECTING", "READY", "TRANSIENT_FAILURE", "SHUTDOWN".
inline const char* ConnectivityStateName(ConnectivityState state) {
  switch (state) {
    case ConnectivityState::kIdle:
      return "IDLE";
    case ConnectivityState::kConnecting:
      return "CONNECTING";
    case ConnectivityState::kReady:
      return "READY";
    case ConnectivityState::kTransientFailure:
      return "TRANSIENT_FAILURE";
    case ConnectivityState::kShutdown:
      return "SHUTDOWN";
  }
  return "?";
}

}  // namespace rpc

#endif  // RPC_CONNECTIVITY_STATE_H_
