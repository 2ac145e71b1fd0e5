// Endpoint: a byte stream driven by an EventLoop, implemented by plain TCP
// (tcp.h) and by TLS over TCP (tls_endpoint.h), so the HTTP/2 connection code
// runs over either without knowing which.
//
// Threading: an endpoint belongs to one EventLoop; every method and every
// callback runs on that loop's thread. To hand work to it from elsewhere, use
// loop()->Post().
//
// Reading (the edge-triggered discipline, hidden behind a level-like
// contract):
//   * on_readable runs when Read may return data, end of stream or an error.
//   * Call Read until it returns kWouldBlock; only then is another
//     on_readable promised (when more arrives). A reader that stops earlier
//     (backpressure) just calls Read again later: the endpoint remembers that
//     it was not drained, and Read returns what is there.
//   * on_readable may occasionally run when Read would block.
// Writing:
//   * Writev takes as many bytes as the endpoint can take now, in order, and
//     returns that count (kOk). Fewer than offered (even 0) means the rest was
//     not taken: keep it, and on_writable runs once the endpoint can take
//     more. on_writable runs only after such a short write.
//   * The HTTP/2 connection gathers every frame of one loop iteration and
//     hands them over in one Writev (for TCP: one sendmsg).
// Callbacks may call any method, including Close(), and may destroy the
// endpoint. After Close() no callback runs.

#ifndef TRANSPORT_IO_ENDPOINT_H_
#define TRANSPORT_IO_ENDPOINT_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "transport/io/socket.h"

namespace transport {

class EventLoop;

// The outcome of one I/O call: done, needs the loop first, ended, or failed.
enum class IoOutcome {
  kOk,          // `bytes` were moved (a Read's count is > 0)
  kWouldBlock,  // nothing now; a callback follows when progress is possible
  kEof,         // Read only: the peer finished sending (clean end of stream)
  kError,       // fatal and sticky: `status` says why; only Close() remains
                // (but after a Writev's error, Read may still return what
                // arrived before, then its own end: TCP returns what a peer
                // sent before it reset the connection)
};

std::string_view IoOutcomeName(IoOutcome outcome);

struct IoResult {
  IoOutcome outcome = IoOutcome::kOk;
  size_t bytes = 0;
  absl::Status status;  // non-OK exactly when outcome == kError

  static IoResult Ok(size_t n) { return {IoOutcome::kOk, n, {}}; }
  static IoResult WouldBlock() { return {IoOutcome::kWouldBlock, 0, {}}; }
  static IoResult Eof() { return {IoOutcome::kEof, 0, {}}; }
  static IoResult Error(absl::Status s) {
    return {IoOutcome::kError, 0, std::move(s)};
  }
  bool ok() const { return outcome == IoOutcome::kOk; }
};

class Endpoint {
 public:
  using Callback = absl::AnyInvocable<void()>;

  virtual ~Endpoint();

  virtual EventLoop* loop() const = 0;
  virtual const SocketAddress& peer_address() const = 0;
  virtual const SocketAddress& local_address() const = 0;

  // Replaces both callbacks (either may be empty). Events that arrived before
  // are not replayed: call Read once after setting them. A callback may call
  // SetCallbacks; the new ones take effect with the next event.
  void SetCallbacks(Callback on_readable, Callback on_writable);

  // Reads into `buffer` (non-empty). kOk with 1..size bytes; kWouldBlock;
  // kEof (then forever kEof); kError.
  virtual IoResult Read(absl::Span<char> buffer) = 0;

  // Writes the buffers in order as far as possible (see the header comment).
  // kOk with the count taken (0..total), or kError.
  virtual IoResult Writev(absl::Span<const std::string_view> buffers) = 0;
  IoResult Write(std::string_view data) {
    return Writev(absl::Span<const std::string_view>(&data, 1));
  }

  // Ends our direction once everything taken so far is sent (TCP FIN; TLS:
  // close_notify, then FIN). Reading continues. Later writes fail.
  virtual void ShutdownWrite() = 0;

  // Stops watching and closes the socket now; no callback runs afterwards.
  // Idempotent. The destructor closes too.
  virtual void Close() = 0;

  // Appends to `out` whatever Read returns until kWouldBlock, kEof, kError or
  // `max_bytes` appended, and returns the last outcome with the total count.
  // (kOk means `max_bytes` was reached: the endpoint may hold more.)
  IoResult ReadSome(std::string* out, size_t max_bytes);

 protected:
  Endpoint() = default;

  // Run the user's callback in a way that lets it destroy this endpoint,
  // Close() it or replace the callbacks. Return false if `this` was
  // destroyed: the caller must return without touching any member.
  bool NotifyReadable() { return RunCallback(&on_readable_); }
  bool NotifyWritable() { return RunCallback(&on_writable_); }
  // For Close(): frees the callbacks (a running one finishes first); none
  // runs again.
  void DropCallbacks();

 private:
  bool RunCallback(Callback* cb);

  Callback on_readable_;
  Callback on_writable_;
  bool callbacks_dropped_ = false;
  // Points at a flag on the stack of the innermost running callback.
  bool* destroyed_ = nullptr;
};

}  // namespace transport

#endif  // TRANSPORT_IO_ENDPOINT_H_
