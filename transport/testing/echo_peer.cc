#include "transport/testing/echo_peer.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <string_view>
#include <utility>
#include <vector>

namespace transport {
namespace testing {

void ShrinkSocketBuffers(int fd, int bytes) {
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
}

bool ReadsEofWithin(int fd, absl::Duration bound) {
  const absl::Time deadline = absl::Now() + bound;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return true;
    if (n > 0) continue;
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
  }
}

std::string Pattern(size_t size, unsigned seed) {
  std::string out(size, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < size; ++i) {
    x = x * 1103515245u + 12345u;
    out[i] = static_cast<char>(x >> 23);
  }
  return out;
}

EchoPeer::EchoPeer(std::unique_ptr<Endpoint> endpoint, size_t max_pending)
    : endpoint_(std::move(endpoint)), max_pending_(max_pending) {
  endpoint_->SetCallbacks([this] { Pump(); }, [this] { Pump(); });
  Pump();
}

void EchoPeer::Pump() {
  char buf[32 * 1024];
  while (error_.ok() && !finished_) {
    bool paused = false;
    while (!eof_ && error_.ok()) {
      const size_t unsent = pending_.size() - offset_;
      if (unsent >= max_pending_) {
        ++pauses_;  // stop reading until writes drain
        paused = true;
        break;
      }
      const size_t want = std::min(sizeof(buf), max_pending_ - unsent);
      IoResult r = endpoint_->Read(absl::Span<char>(buf, want));
      if (r.outcome == IoOutcome::kOk) {
        pending_.append(buf, r.bytes);
      } else if (r.outcome == IoOutcome::kEof) {
        eof_ = true;
      } else if (r.outcome == IoOutcome::kError) {
        error_ = r.status;
      } else {
        break;
      }
    }
    if (!error_.ok() || !Flush()) return;  // on_writable follows
    if (eof_) {
      endpoint_->ShutdownWrite();
      finished_ = true;
      return;
    }
    if (!paused) return;  // read until kWouldBlock: on_readable follows
  }
}

bool EchoPeer::Flush() {
  while (offset_ < pending_.size()) {
    IoResult r = endpoint_->Write(std::string_view(pending_).substr(offset_));
    if (!r.ok()) {
      error_ = r.status;
      return false;
    }
    offset_ += r.bytes;
    echoed_ += r.bytes;
    if (offset_ < pending_.size()) return false;
  }
  pending_.clear();
  offset_ = 0;
  return true;
}

TransferClient::TransferClient(std::unique_ptr<Endpoint> endpoint,
                               std::string payload, size_t chunk)
    : endpoint_(std::move(endpoint)),
      payload_(std::move(payload)),
      chunk_(chunk) {
  endpoint_->SetCallbacks([this] { OnReadable(); }, [this] { OnWritable(); });
  OnWritable();
  OnReadable();
}

void TransferClient::OnWritable() {
  while (sent_ < payload_.size() && error_.ok()) {
    // Several buffers per call, as the HTTP/2 writer hands over frames.
    std::vector<std::string_view> views;
    size_t offered = 0;
    for (size_t at = sent_; at < payload_.size() && views.size() < 64;
         at += chunk_) {
      views.push_back(std::string_view(payload_).substr(at, chunk_));
      offered += views.back().size();
    }
    IoResult r = endpoint_->Writev(views);
    if (!r.ok()) {
      error_ = r.status;
      return;
    }
    sent_ += r.bytes;
    if (r.bytes < offered) {
      ++short_writes_;
      return;  // on_writable follows
    }
  }
  if (sent_ == payload_.size() && !shut_) {
    shut_ = true;
    endpoint_->ShutdownWrite();
  }
}

void TransferClient::OnReadable() {
  while (!got_eof_ && error_.ok()) {
    IoResult r = endpoint_->ReadSome(&received_, 1 << 20);
    if (r.outcome == IoOutcome::kEof) {
      got_eof_ = true;
    } else if (r.outcome == IoOutcome::kError) {
      error_ = r.status;
    } else if (r.outcome == IoOutcome::kWouldBlock) {
      break;
    }
  }
}

}  // namespace testing
}  // namespace transport
