#include "transport/io/memory_endpoint.h"

#include <sys/socket.h>

#include <algorithm>
#include <cstring>

#include "absl/status/status.h"

namespace transport {

namespace {
constexpr uint16_t kFirstPort = 40000;
}  // namespace

MemoryEndpoint::MemoryEndpoint(EventLoop* loop, uint16_t local_port,
                               uint16_t peer_port)
    : loop_(loop),
      local_address_(SocketAddress::Loopback(AF_INET, local_port)),
      peer_address_(SocketAddress::Loopback(AF_INET, peer_port)),
      self_(std::make_shared<MemoryEndpoint*>(this)) {}

std::unique_ptr<MemoryEndpoint> MemoryEndpoint::Create(EventLoop* loop) {
  return std::unique_ptr<MemoryEndpoint>(
      new MemoryEndpoint(loop, kFirstPort, kFirstPort + 1));
}

std::pair<std::unique_ptr<MemoryEndpoint>, std::unique_ptr<MemoryEndpoint>>
MemoryEndpoint::CreatePair(EventLoop* loop) {
  std::unique_ptr<MemoryEndpoint> a(
      new MemoryEndpoint(loop, kFirstPort, kFirstPort + 1));
  std::unique_ptr<MemoryEndpoint> b(
      new MemoryEndpoint(loop, kFirstPort + 1, kFirstPort));
  a->peer_ = b.get();
  b->peer_ = a.get();
  return {std::move(a), std::move(b)};
}

MemoryEndpoint::~MemoryEndpoint() {
  Close();
  *self_ = nullptr;
}

IoResult MemoryEndpoint::Read(absl::Span<char> buffer) {
  if (closed_) return IoResult::Error(absl::FailedPreconditionError("closed"));
  const size_t n = std::min(buffer.size(), unread());
  if (n == 0) return input_eof_ ? IoResult::Eof() : IoResult::WouldBlock();
  std::memcpy(buffer.data(), input_.data() + input_pos_, n);
  input_pos_ += n;
  if (input_pos_ == input_.size()) {
    input_.clear();
    input_pos_ = 0;
  }
  if (peer_ != nullptr) peer_->OnRoom();
  return IoResult::Ok(n);
}

IoResult MemoryEndpoint::Writev(absl::Span<const std::string_view> buffers) {
  if (closed_ || write_shut_down_) {
    return IoResult::Error(absl::FailedPreconditionError("write side closed"));
  }
  const size_t outstanding = Outstanding();
  size_t room =
      write_capacity_ > outstanding ? write_capacity_ - outstanding : 0;
  size_t n = 0;
  for (std::string_view b : buffers) {
    const std::string_view taken = b.substr(0, room);
    written_.append(taken.data(), taken.size());
    if (peer_ != nullptr) peer_->Deliver(taken);
    n += taken.size();
    room -= taken.size();
    if (taken.size() < b.size()) {
      write_blocked_ = true;
      break;
    }
  }
  return IoResult::Ok(n);
}

void MemoryEndpoint::ShutdownWrite() {
  if (write_shut_down_) return;
  write_shut_down_ = true;
  if (peer_ != nullptr) peer_->DeliverEof();
}

void MemoryEndpoint::Close() {
  if (closed_) return;
  ShutdownWrite();
  closed_ = true;
  DropCallbacks();
  input_.clear();
  input_pos_ = 0;
  if (peer_ != nullptr) {
    peer_->peer_ = nullptr;
    peer_ = nullptr;
  }
}

void MemoryEndpoint::Deliver(std::string_view bytes) {
  if (closed_ || input_eof_ || bytes.empty()) return;
  input_.append(bytes.data(), bytes.size());
  ScheduleReadable();
}

void MemoryEndpoint::DeliverEof() {
  if (closed_ || input_eof_) return;
  input_eof_ = true;
  ScheduleReadable();
}

std::string MemoryEndpoint::TakeWritten() {
  std::string out = std::exchange(written_, std::string());
  OnRoom();
  return out;
}

void MemoryEndpoint::set_write_capacity(size_t n) {
  write_capacity_ = n;
  OnRoom();
}

size_t MemoryEndpoint::Outstanding() const {
  return peer_ != nullptr ? peer_->unread() : written_.size();
}

void MemoryEndpoint::OnRoom() {
  if (!write_blocked_ || closed_ || writable_scheduled_ ||
      Outstanding() >= write_capacity_) {
    return;
  }
  writable_scheduled_ = true;
  loop_->Defer([self = self_] {
    MemoryEndpoint* e = *self;
    if (e == nullptr) return;
    e->writable_scheduled_ = false;
    e->write_blocked_ = false;
    e->NotifyWritable();
  });
}

void MemoryEndpoint::ScheduleReadable() {
  if (readable_scheduled_) return;
  readable_scheduled_ = true;
  loop_->Defer([self = self_] {
    MemoryEndpoint* e = *self;
    if (e == nullptr) return;
    e->readable_scheduled_ = false;
    e->NotifyReadable();
  });
}

}  // namespace transport
