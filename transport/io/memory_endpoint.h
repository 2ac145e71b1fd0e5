// MemoryEndpoint: an Endpoint whose bytes stay in memory, on an EventLoop. The
// HTTP/2 and rpc layers (ConnectionDriver and everything above it) run over
// it unchanged, without sockets: tests, fuzzers and corpus recorders drive a
// whole connection deterministically and fast, usually on a loop with a
// manual clock (EventLoop::CreateWithManualClock).
//
// Two forms:
//   * Create(loop): one endpoint whose peer is the caller. Deliver() and
//     DeliverEof() feed its reads; TakeWritten() takes what it wrote.
//   * CreatePair(loop): two endpoints joined back to back on one loop: what
//     one writes, the other reads; ShutdownWrite() or Close() of one is the
//     other's end of stream. Each still keeps what it wrote (written()), so
//     a pair records the traffic of both directions.
//
// Readiness. Callbacks never run from inside the call that caused them
// (Deliver, the peer's Writev or Read, TakeWritten): on_readable and
// on_writable run from work Defer()red to the end of the loop iteration (or
// of the next one, when caused outside an iteration). Writev takes everything
// offered unless a write capacity is set: then at most that many octets may
// be outstanding (written and not yet taken by TakeWritten, or, for a pair,
// not yet read by the peer); a short write is followed by on_writable once
// there is room, as for TCP. ShutdownWrite and Close make later writes fail.
//
// Threading: the loop's thread only, like every endpoint.

#ifndef TRANSPORT_IO_MEMORY_ENDPOINT_H_
#define TRANSPORT_IO_MEMORY_ENDPOINT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/types/span.h"
#include "transport/io/endpoint.h"
#include "transport/io/event_loop.h"
#include "transport/io/socket.h"

namespace transport {

class MemoryEndpoint final : public Endpoint {
 public:
  // Addresses are 127.0.0.1 with made-up ports (a pair's match each other).
  static std::unique_ptr<MemoryEndpoint> Create(EventLoop* loop);
  static std::pair<std::unique_ptr<MemoryEndpoint>,
                   std::unique_ptr<MemoryEndpoint>>
  CreatePair(EventLoop* loop);
  // A pair's other endpoint sees end of stream.
  ~MemoryEndpoint() override;

  // ---- Endpoint ----
  EventLoop* loop() const override { return loop_; }
  const SocketAddress& peer_address() const override { return peer_address_; }
  const SocketAddress& local_address() const override { return local_address_; }
  IoResult Read(absl::Span<char> buffer) override;
  IoResult Writev(absl::Span<const std::string_view> buffers) override;
  void ShutdownWrite() override;
  void Close() override;

  // ---- The peer's side ----
  // Bytes for Read (after what was delivered before); on_readable follows.
  // Ignored after DeliverEof or Close.
  void Deliver(std::string_view bytes);
  // Read returns end of stream once the delivered bytes are read.
  void DeliverEof();
  // What Writev took so far (since the last TakeWritten).
  const std::string& written() const { return written_; }
  std::string TakeWritten();
  // Delivered octets not read yet.
  size_t unread() const { return input_.size() - input_pos_; }
  // At most `n` octets outstanding (see the header comment); SIZE_MAX (the
  // default): no limit.
  void set_write_capacity(size_t n);
  bool write_shut_down() const { return write_shut_down_; }
  bool closed() const { return closed_; }

 private:
  MemoryEndpoint(EventLoop* loop, uint16_t local_port, uint16_t peer_port);
  void ScheduleReadable();

  EventLoop* const loop_;
  const SocketAddress local_address_;
  const SocketAddress peer_address_;
  MemoryEndpoint* peer_ = nullptr;  // A pair's other end, while it lives.
  std::string input_;
  size_t input_pos_ = 0;
  bool input_eof_ = false;
  // Written octets not taken (or, for a pair, not read by the peer).
  size_t Outstanding() const;
  // Room appeared: on_writable follows if a write was short.
  void OnRoom();

  std::string written_;
  size_t write_capacity_ = SIZE_MAX;
  bool write_blocked_ = false;  // A short write waits for on_writable.
  bool writable_scheduled_ = false;
  bool write_shut_down_ = false;
  bool closed_ = false;
  bool readable_scheduled_ = false;
  // Points at this endpoint until it is destroyed (the deferred readable
  // notification holds a copy).
  std::shared_ptr<MemoryEndpoint*> self_;
};

}  // namespace transport

#endif  // TRANSPORT_IO_MEMORY_ENDPOINT_H_
