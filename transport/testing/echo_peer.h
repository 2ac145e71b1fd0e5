// Test helpers that drive any Endpoint by its callbacks, the way the HTTP/2
// connection will: EchoPeer sends back what it reads (with bounded
// buffering, so a fast writer meets backpressure), TransferClient sends a
// payload and collects the reply. Both live on the endpoint's loop thread.

#ifndef TRANSPORT_TESTING_ECHO_PEER_H_
#define TRANSPORT_TESTING_ECHO_PEER_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "transport/io/endpoint.h"

namespace transport {
namespace testing {

// Sets SO_SNDBUF and SO_RCVBUF of a connected socket to `bytes` (the kernel
// doubles it), so that a transfer of a few MiB over loopback surely meets
// EAGAIN on both sides instead of vanishing into autotuned buffers.
void ShrinkSocketBuffers(int fd, int bytes = 32 * 1024);

// Reads the connected socket `fd` until EOF or an error, discarding what
// comes first (a ClientHello nobody answers), for at most `bound`. True when
// EOF or an error came: the other end closed.
bool ReadsEofWithin(int fd, absl::Duration bound);

// A deterministic payload of `size` bytes (no period of a power of two, so a
// misplaced block shows up as a mismatch).
std::string Pattern(size_t size, unsigned seed = 1);

class EchoPeer {
 public:
  // Holds at most `max_pending` read-but-unsent bytes: reading pauses at the
  // limit and resumes when writes drain. On EOF it sends what is left, then
  // ShutdownWrite().
  explicit EchoPeer(std::unique_ptr<Endpoint> endpoint,
                    size_t max_pending = 256 * 1024);

  bool finished() const { return finished_; }  // EOF seen and all echoed
  const absl::Status& error() const { return error_; }
  size_t echoed() const { return echoed_; }
  // How often reading paused at the limit (proves backpressure happened).
  size_t pauses() const { return pauses_; }
  Endpoint* endpoint() const { return endpoint_.get(); }

 private:
  // Reads (up to the limit) and writes until both would block.
  void Pump();
  // Writes pending bytes; true when all are sent.
  bool Flush();

  std::unique_ptr<Endpoint> endpoint_;
  const size_t max_pending_;
  std::string pending_;
  size_t offset_ = 0;
  bool eof_ = false;
  bool finished_ = false;
  size_t echoed_ = 0;
  size_t pauses_ = 0;
  absl::Status error_;
};

class TransferClient {
 public:
  // Writes `payload` (as fast as the endpoint takes it, in `chunk`-sized
  // buffers handed to Writev together), then ShutdownWrite(); reads until
  // EOF.
  TransferClient(std::unique_ptr<Endpoint> endpoint, std::string payload,
                 size_t chunk = 16 * 1024);

  bool done() const { return got_eof_ || !error_.ok(); }
  bool got_eof() const { return got_eof_; }
  const absl::Status& error() const { return error_; }
  const std::string& received() const { return received_; }
  size_t short_writes() const { return short_writes_; }
  Endpoint* endpoint() const { return endpoint_.get(); }

 private:
  void OnReadable();
  void OnWritable();

  std::unique_ptr<Endpoint> endpoint_;
  const std::string payload_;
  const size_t chunk_;
  size_t sent_ = 0;
  bool shut_ = false;
  std::string received_;
  bool got_eof_ = false;
  size_t short_writes_ = 0;
  absl::Status error_;
};

}  // namespace testing
}  // namespace transport

#endif  // TRANSPORT_TESTING_ECHO_PEER_H_
