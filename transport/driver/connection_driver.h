// ConnectionDriver: runs one sans-IO Connection (connection.h) over an
// Endpoint (TCP or TLS) on its EventLoop. It is the I/O glue shared by the
// HTTP/2 server and client (http2_server.h, http2_client.h) and by anything
// else that wants to speak HTTP/2 on a loop (the rpc layer): it knows nothing
// about requests, only bytes, timers and the end of the connection.
//
// Read path. On readable, it reads into the spare room of a SliceBuffer block
// (PrepareAppend/CommitAppend) until the endpoint would block (or
// options.max_read_per_event octets, then it yields to other connections and
// continues in a later iteration), then hands everything read to
// Connection::Receive at once. DATA pieces the listener sees are Slices of
// that read block: no copy. With options.max_stream_ends_per_receive = N, it
// hands over at most the frames that end N streams per step (cut at a frame
// boundary, which it tracks across reads) and keeps the rest: the next step
// runs from a zero-delay timer armed by the flush, i.e. in the next loop
// iteration, after this step's output was written. So a batch of requests
// read at once is answered in writes of N, and the peer works on the first
// while this side works on the rest.
//
// Write path (coalescing). Nothing is written while input is processed or
// while the application submits: the driver only marks "flush scheduled" and
// defers the flush to the end of the loop iteration (EventLoop::Defer). The
// flush writes all of Connection::output() with one Writev (at most
// options.max_iovecs pieces per call; more calls only if the output is
// larger), then ConsumeOutput. A short write stops flushing until the
// endpoint's on_writable (the TCP endpoint keeps EPOLLOUT armed only then).
//
// Timers. Connection::NextDeadline is mirrored into one loop timer, re-armed
// when it changes.
//
// Closing. When the connection is done (drained after GOAWAY, or dead) and
// its output is flushed, the driver shuts down its write side, discards input
// until the peer closes (at most options.linger; this keeps the kernel from
// answering unread input with a RST that could destroy our last frames), and
// closes. EOF or an I/O error from the peer calls
// Connection::OnTransportClosed (every live stream is reset): after an EOF,
// once the input still held is received and the output it produced written
// (a peer that half-closed still reads); after an error (a reset, found by a
// read or by a write), once that input is received too (octets read are data
// the peer sent: a response read just before the reset completes its call)
// and nothing written. Either way the owner hears Owner::OnClosed once, from
// the end of a loop iteration, where it may destroy the driver.
//
// Threading: everything on the endpoint's loop thread. Not thread-safe.

#ifndef TRANSPORT_DRIVER_CONNECTION_DRIVER_H_
#define TRANSPORT_DRIVER_CONNECTION_DRIVER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "transport/connection/connection.h"
#include "transport/io/endpoint.h"
#include "transport/io/event_loop.h"
#include "transport/slice/slice.h"

namespace transport {

struct DriverOptions {
  // Reads go into blocks of this size; a new block is started when the
  // current one has less than min_read_room octets left.
  size_t read_block_size = 32 << 10;
  size_t min_read_room = 4 << 10;
  // Octets read per readable event before yielding to other connections.
  size_t max_read_per_event = 256 << 10;
  // Overlap with the peer: at most this many streams ended by the peer
  // (frames with END_STREAM: a unary request, a response's trailers) are
  // handed to Connection::Receive per step; the rest of what was read waits
  // until this step's output was written (the flush at the end of the loop
  // iteration), and the next step runs in the next iteration. With 32 unary
  // calls in flight, the peer starts on the first responses while this side
  // still works on the rest, instead of each side idling while the other
  // handles the whole batch (benchmarks/README.md). 0: everything read at
  // once (one write per batch). One call in flight, or a stream's messages,
  // never reach the bound: still one Receive per read and one write. While a
  // write is blocked (a short write, waiting for on_writable) steps take all
  // the input: the peer may be blocked writing to us too. On EOF all of it
  // is received and the answers written before the streams are reset; on a
  // read error (a reset) all of it is received and nothing written.
  size_t max_stream_ends_per_receive = 0;
  // iovecs per Writev call.
  size_t max_iovecs = 64;
  // Octets written per flush before yielding to other connections.
  size_t max_write_per_flush = 1 << 20;
  // Lingering close: once the connection is done and its output (the
  // GOAWAY last) is flushed, the write side is shut down (TLS: close_notify
  // first) and input is read and discarded until the peer's EOF, for at most
  // `linger` and at most `linger_max_bytes` octets; then the endpoint is
  // closed. Closing with unread input would make the kernel send a RST, and
  // the peer's kernel would drop our last frames before they are read
  // (nghttpx and h2o linger the same way).
  absl::Duration linger = absl::Seconds(2);
  size_t linger_max_bytes = 16 << 20;
};

class ConnectionDriver {
 public:
  class Owner {
   public:
    virtual ~Owner() = default;
    // Input was processed or output consumed: windows and queues may have
    // moved (the HTTP layer uses this to wake blocked writers).
    virtual void OnDriverProgress() {}
    // The endpoint is closed and the connection dead; runs once, at the end
    // of a loop iteration (never inside a driver or listener call). The owner
    // may destroy the driver here. `status` is OK after an orderly close.
    virtual void OnDriverClosed(const absl::Status& status) = 0;
  };

  // Creates the Connection (its preface goes into the output). `listener`
  // receives the Connection's events and `owner` the driver's; both must
  // outlive the driver. Nothing happens until Start().
  ConnectionDriver(std::unique_ptr<Endpoint> endpoint,
                   const ConnectionOptions& connection_options,
                   ConnectionListener* listener, Owner* owner,
                   const DriverOptions& options = DriverOptions());
  // Closes the endpoint if still open. Calls nothing (no listener or owner
  // callback), so destroying a live driver drops its streams silently.
  ~ConnectionDriver();

  ConnectionDriver(const ConnectionDriver&) = delete;
  ConnectionDriver& operator=(const ConnectionDriver&) = delete;

  // Takes over the endpoint's callbacks, reads what already arrived and
  // schedules the flush of the preface.
  void Start();

  Connection& connection() { return *connection_; }
  const Connection& connection() const { return *connection_; }
  Endpoint* endpoint() const { return endpoint_.get(); }
  EventLoop* loop() const { return loop_; }
  // The loop's cached time in the Connection's clock (nanoseconds).
  int64_t NowNs() const;

  // Call after submitting to the connection from outside a listener callback
  // (a timer, a posted task): flushes at the end of this loop iteration.
  // Cheap when a flush is already scheduled. Listener callbacks run inside
  // Receive or a flush and need not call it (but may).
  void ScheduleFlush();
  // Connection::GracefulShutdown now, then flush; the driver closes once the
  // connection drained.
  void GracefulShutdown();
  // Closes now: Connection::OnTransportClosed (streams reset), endpoint
  // closed, OnDriverClosed(status) later. A server connection that has not
  // failed first writes GOAWAY(last accepted stream, NO_ERROR, status's
  // message) as far as the socket takes it at once; when all of it went, it
  // then lingers (DriverOptions::linger) before closing, so the client can
  // read it.
  void Abort(absl::Status status);

  // The endpoint is closed (OnDriverClosed may still be due).
  bool closed() const { return state_ == State::kClosed; }
  // Why the transport closed (an I/O or TLS error, the peer's EOF, an
  // Abort's status); set before the streams are reset, so listeners can
  // tell their calls. OK while open and after a clean close.
  const absl::Status& close_reason() const { return close_reason_; }
  // Octets written and read so far.
  uint64_t bytes_written() const { return bytes_written_; }
  uint64_t bytes_read() const { return bytes_read_; }
  // Writev calls made so far (tests check the coalescing).
  uint64_t writev_calls() const { return writev_calls_; }

 private:
  enum class State { kIdle, kOpen, kLingering, kClosed };
  using Self = std::shared_ptr<ConnectionDriver*>;

  void OnReadable();
  // Reads into read_buffer_ until the endpoint stops (would block, EOF, an
  // error) or read_buffer_ holds options.max_read_per_event; returns the
  // last result (ok: stopped at that budget).
  IoResult ReadAvailable();
  // A write failed (the peer reset the connection): receives what was read
  // (steps' held input too) and what the endpoint still returns, writes
  // nothing, resets the streams and closes, as OnReadable does when a read
  // fails.
  void CloseAfterWriteError(absl::Status status);
  // Hands the next step of read_buffer_ (all of it when `all` or without
  // max_stream_ends_per_receive; all but a partial frame header while a
  // write is blocked) to Connection::Receive; sets receive_pending_ when a
  // step is left for later.
  // Returns whether anything was received.
  bool ReceiveInput(bool all);
  struct Cut {
    // The octets of read_buffer_ the next step takes.
    size_t octets = 0;
    // Offset of the first frame header not taken (maybe beyond size()).
    size_t next_header = 0;
    // The step stops at the max_ends-th end.
    bool capped = false;
    // block_ends_stream_ and tail_ends_stream_ after this step.
    bool block_ends_stream = false;
    bool tail_ends_stream = false;
  };
  // The next step: up to the end of the frame that ends the max_ends-th
  // stream (0: no limit), or all of read_buffer_ but a frame header that has
  // not fully arrived. A stream ends at a DATA frame with END_STREAM or at
  // the END_HEADERS of a header block whose HEADERS has END_STREAM, in the
  // step that takes the last octet of that frame.
  Cut NextReceiveCut(size_t max_ends) const;
  // Reads again from a posted task, after the loop's other connections (a
  // read that stopped at max_read_per_event); at most one pending. (The next
  // step of held input runs from the zero-delay timer its flush arms.)
  void PostReadResume();
  void OnWritable();
  void ReadLingering();
  void Flush();
  // After Receive or Flush: close if done and flushed, re-arm the timer.
  void AfterActivity();
  // Frees the read block and the connection's idle buffers when no stream
  // is active and nothing waits to be written.
  void ReleaseIfIdle();
  void UpdateTimer();
  void OnConnectionTimer();
  // Shuts the write side down and discards input until EOF, options.linger
  // or options.linger_max_bytes; then FinishClose(status).
  void BeginLinger(absl::Status status);
  // Points iovecs_ at the head of the output; returns their count.
  size_t FillIovecs(size_t* offered);
  // Writes the output until it is empty or the endpoint would block, without
  // callbacks to the owner. True when all of it was written.
  bool WriteOutputNow();
  void FinishClose(absl::Status status);

  std::unique_ptr<Endpoint> endpoint_;
  EventLoop* const loop_;
  ConnectionListener* const listener_;
  Owner* const owner_;
  const DriverOptions options_;
  std::unique_ptr<Connection> connection_;
  // Points at this driver until it is destroyed: the deferred work, posted
  // tasks and timers hold a copy and check it (16 octets: fits the inline
  // storage of a loop task, no allocation).
  Self self_;

  absl::Status close_reason_;
  absl::Status linger_status_;  // For OnDriverClosed after lingering.
  State state_ = State::kIdle;
  SliceBuffer read_buffer_;
  size_t read_room_ = 0;  // Spare octets left in read_buffer_'s block.
  bool flush_scheduled_ = false;
  bool write_blocked_ = false;  // Short write: waiting for on_writable.
  bool read_resume_posted_ = false;
  // Octets of input before the next frame header (the rest of a frame
  // already handed to Receive; the client preface for a server): where
  // NextReceiveCut starts parsing frame headers in read_buffer_.
  size_t frame_skip_ = 0;
  // At frame_skip_: a header block (HEADERS with END_STREAM) is open, and its
  // END_HEADERS (a CONTINUATION's) ends the stream.
  bool block_ends_stream_ = false;
  // The frame whose rest the first frame_skip_ octets are ends a stream.
  bool tail_ends_stream_ = false;
  // read_buffer_ holds input that a later step receives (after the flush).
  bool receive_pending_ = false;
  // A step was received and its flush has not run yet.
  bool step_unflushed_ = false;
  bool step_armed_ = false;  // The timer for the next step is armed.
  EventLoop::TimerId timer_ = EventLoop::kInvalidTimer;
  int64_t timer_deadline_ = kNoDeadline;
  EventLoop::TimerId linger_timer_ = EventLoop::kInvalidTimer;
  std::unique_ptr<std::string_view[]> iovecs_;

  uint64_t bytes_written_ = 0;
  uint64_t bytes_read_ = 0;
  uint64_t writev_calls_ = 0;
  uint64_t lingered_bytes_ = 0;  // Discarded while lingering.
};

}  // namespace transport

#endif  // TRANSPORT_DRIVER_CONNECTION_DRIVER_H_
