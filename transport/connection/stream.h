// Stream: the Connection's state for one HTTP/2 stream (RFC 9113 5.1): its
// place in the state machine, both flow-control windows, the data and
// trailers queued to send, and what the field rules need to remember while
// receiving (content-length, whether the final response arrived).
//
// A plain struct owned by the Connection (connection.cc); the listener only
// ever sees its id. Streams are pooled and reused: Reset() keeps the queued
// buffers' and header list's storage.

#ifndef TRANSPORT_CONNECTION_STREAM_H_
#define TRANSPORT_CONNECTION_STREAM_H_

#include <cstdint>

#include "hpack/header_list.h"
#include "transport/connection/flow_control.h"
#include "transport/slice/slice.h"

namespace transport {

// RFC 9113 5.1, for streams that exist (idle streams have no Stream; closed
// ones are released). kPending: a client stream whose id is assigned but whose
// HEADERS wait for the peer's MAX_CONCURRENT_STREAMS (idle on the wire).
enum class StreamState : uint8_t {
  kPending,
  kOpen,
  kHalfClosedLocal,   // We sent END_STREAM.
  kHalfClosedRemote,  // The peer sent END_STREAM.
  kClosed,
};

struct Stream {
  uint32_t id = 0;
  // Written only by Connection::Impl::SetState (which keeps the stream counts
  // in step) and Reset.
  StreamState state = StreamState::kClosed;
  void* user_data = nullptr;

  SendWindow send_window;
  ReceiveWindow recv_window;

  // ---- Send side ----
  SliceBuffer send_queue;   // DATA not yet in the output.
  bool end_queued = false;  // Our side ends after send_queue (and trailers).
  bool trailers_queued = false;  // `trailers` holds trailers to send.
  hpack::HeaderList trailers;
  // Client kPending: the request headers, sent when the stream starts.
  hpack::HeaderList request_headers;
  bool in_write_queue = false;  // Listed in the Connection's round-robin.
  // The application could see output queued here (submitted inside a
  // callback, or it had to wait): OnStreamWritable is due once it all moved.
  // Also due, without this flag, when it moves in a later outermost call than
  // the one that listed the stream (`queued_call`): the submit returned with
  // it queued.
  bool waited = false;
  uint64_t queued_call = 0;  // The Connection's call count when listed.
  bool final_headers_sent = false;

  // ---- Receive side ----
  bool final_headers_received = false;  // Request, or final (non-1xx) response.
  bool head_request = false;            // Client: we sent HEAD (no body).
  int64_t content_length = -1;          // Declared by the peer; -1: none.
  uint64_t data_received = 0;

  bool local_closed() const {
    return state == StreamState::kHalfClosedLocal ||
           state == StreamState::kClosed;
  }
  bool remote_closed() const {
    return state == StreamState::kHalfClosedRemote ||
           state == StreamState::kClosed;
  }
  bool has_queued_output() const {
    return !send_queue.empty() || (end_queued && !local_closed());
  }

  // Back to a fresh stream `id` (storage kept), in no state yet (kClosed,
  // counted nowhere): the Connection's SetState gives it one.
  void Reset(uint32_t new_id, int64_t send_initial, uint32_t recv_initial) {
    id = new_id;
    state = StreamState::kClosed;
    user_data = nullptr;
    send_window = SendWindow(send_initial);
    recv_window = ReceiveWindow(recv_initial);
    send_queue.Clear();
    end_queued = false;
    trailers_queued = false;
    trailers.clear();
    request_headers.clear();
    in_write_queue = false;
    waited = false;
    queued_call = 0;
    final_headers_sent = false;
    final_headers_received = false;
    head_request = false;
    content_length = -1;
    data_received = 0;
  }
};

}  // namespace transport

#endif  // TRANSPORT_CONNECTION_STREAM_H_
