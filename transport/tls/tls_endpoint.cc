#include "transport/tls/tls_endpoint.h"

#include <cassert>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "transport/io/tcp.h"

namespace transport {

std::unique_ptr<TlsEndpoint> TlsEndpoint::Create(
    std::unique_ptr<Endpoint> transport, std::unique_ptr<TlsSession> session,
    HandshakeCallback on_handshake_done) {
  std::unique_ptr<TlsEndpoint> ep(new TlsEndpoint(
      std::move(transport), std::move(session), std::move(on_handshake_done)));
  TlsEndpoint* self = ep.get();
  self->transport_->SetCallbacks([self] { self->OnTransportReadable(); },
                                 [self] { self->OnTransportWritable(); });
  std::weak_ptr<bool> alive = self->alive_;
  self->loop()->Defer([self, alive] {
    if (!alive.expired()) self->DriveHandshake();
  });
  return ep;
}

TlsEndpoint::TlsEndpoint(std::unique_ptr<Endpoint> transport,
                         std::unique_ptr<TlsSession> session,
                         HandshakeCallback done)
    : transport_(std::move(transport)),
      session_(std::move(session)),
      on_handshake_done_(std::move(done)),
      alive_(std::make_shared<bool>(true)) {}

TlsEndpoint::~TlsEndpoint() {
  alive_.reset();
  Close();
}

void TlsEndpoint::Close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  transport_->Close();
  on_handshake_done_ = nullptr;
  DropCallbacks();
}

bool TlsEndpoint::FlushOutput() {
  for (;;) {
    const std::string_view out = session_->PendingOutput();
    if (out.empty()) {
      MaybeFinishShutdown();
      // Drained from a path other than OnTransportWritable (a Read that
      // flushed, say): the transport owes no callback now, so the on_writable
      // owed to a blocked writer comes from the loop.
      if (write_blocked_ && state_ == State::kOpen) ScheduleWritable();
      return true;
    }
    IoResult r = transport_->Write(out);
    if (!r.ok()) {
      // Open, a write error fails writes only: what the peer sent before it
      // reset the connection is still read (the transport returns it).
      absl::Status& error = state_ == State::kOpen ? write_error_ : error_;
      if (error.ok()) error = r.status;
      return false;
    }
    session_->ConsumeOutput(r.bytes);
    if (r.bytes < out.size()) return false;  // transport's on_writable follows
  }
}

void TlsEndpoint::ScheduleWritable() {
  if (writable_scheduled_) return;
  writable_scheduled_ = true;
  std::weak_ptr<bool> alive = alive_;
  loop()->Defer([this, alive] {
    if (alive.expired()) return;
    writable_scheduled_ = false;
    // Output still pending means the transport is full and will call
    // OnTransportWritable itself.
    if (state_ != State::kOpen || !write_blocked_ ||
        session_->pending_output_size() != 0) {
      return;
    }
    write_blocked_ = false;
    NotifyWritable();
  });
}

TlsEndpoint::Pull TlsEndpoint::PullInput() {
  if (transport_eof_) return Pull::kNoData;
  const absl::Span<char> space = session_->InputSpace();
  // Full: the session must consume first; that needs output room (it is
  // waiting to write), so OnTransportWritable resumes the reader.
  if (space.empty()) {
    // With the write side dead that output never goes, so nothing more can
    // be read: the write's error ends the reads instead of a stall.
    if (!write_error_.ok()) {
      if (error_.ok()) error_ = write_error_;
      return Pull::kFailed;
    }
    read_stalled_ = true;
    return Pull::kNoData;
  }
  IoResult r = transport_->Read(space);
  switch (r.outcome) {
    case IoOutcome::kOk:
      session_->CommitInput(r.bytes);
      return Pull::kGotData;
    case IoOutcome::kWouldBlock:
      return Pull::kNoData;
    case IoOutcome::kEof:
      transport_eof_ = true;
      return Pull::kNoData;
    case IoOutcome::kError:
      if (error_.ok()) error_ = r.status;
      return Pull::kFailed;
  }
  return Pull::kFailed;
}

bool TlsEndpoint::Fail(absl::Status status) {
  if (error_.ok()) error_ = std::move(status);
  if (state_ == State::kClosed) return true;
  state_ = State::kFailed;
  if (!on_handshake_done_) return true;
  HandshakeCallback cb = std::move(on_handshake_done_);
  on_handshake_done_ = nullptr;
  std::weak_ptr<bool> alive = alive_;
  cb(error_);
  return !alive.expired();
}

bool TlsEndpoint::DriveHandshake() {
  while (state_ == State::kHandshaking) {
    IoResult h = session_->Handshake();
    // Send whatever the step produced: the next flight, or an alert.
    FlushOutput();
    if (h.outcome == IoOutcome::kError) return Fail(h.status);
    if (!error_.ok()) return Fail(error_);
    if (h.ok()) {
      state_ = State::kOpen;
      HandshakeCallback cb = std::move(on_handshake_done_);
      on_handshake_done_ = nullptr;
      std::weak_ptr<bool> alive = alive_;
      if (cb) cb(absl::OkStatus());
      if (alive.expired()) return false;
      // Whoever tried before the handshake finished retries now; bytes that
      // came with the last flight are read now (no new edge will say so).
      write_blocked_ = false;
      if (state_ == State::kOpen && !NotifyWritable()) return false;
      if (state_ == State::kOpen && !NotifyReadable()) return false;
      return true;
    }
    switch (PullInput()) {
      case Pull::kGotData:
        continue;
      case Pull::kFailed:
        return Fail(error_);
      case Pull::kNoData:
        if (transport_eof_) {
          return Fail(absl::UnavailableError(
              absl::StrCat("TLS handshake failed: ", peer_address().ToString(),
                           " closed the connection")));
        }
        return true;  // wait for the transport
    }
  }
  return true;
}

void TlsEndpoint::OnTransportReadable() {
  switch (state_) {
    case State::kHandshaking:
      DriveHandshake();
      return;
    case State::kOpen:
      NotifyReadable();
      return;
    case State::kFailed:
    case State::kClosed:
      return;
  }
}

void TlsEndpoint::OnTransportWritable() {
  if (state_ == State::kClosed || state_ == State::kFailed) return;
  const bool drained = FlushOutput();
  if (!error_.ok()) {  // handshaking (once open, write_error_ is set)
    Fail(error_);
    return;
  }
  if (!write_error_.ok()) {
    // The owner learns it from its next Writev; its Reads still return what
    // the peer sent before, then the end.
    if (NotifyReadable() && write_blocked_) {
      write_blocked_ = false;
      NotifyWritable();
    }
    return;
  }
  if (state_ == State::kHandshaking) {
    DriveHandshake();
    return;
  }
  if (!drained) return;
  // A record OpenSSL could not finish for lack of room goes out now; and a
  // read stalled on a full output buffer may continue.
  session_->Write({});
  FlushOutput();
  if (read_stalled_) {
    read_stalled_ = false;
    if (!NotifyReadable()) return;
  }
  if (state_ == State::kOpen && write_blocked_) {
    write_blocked_ = false;
    NotifyWritable();
  }
}

IoResult TlsEndpoint::Read(absl::Span<char> buffer) {
  switch (state_) {
    case State::kHandshaking:
      return IoResult::WouldBlock();
    case State::kClosed:
      return IoResult::Error(absl::FailedPreconditionError("endpoint closed"));
    case State::kFailed:
      return IoResult::Error(error_);
    case State::kOpen:
      break;
  }
  if (buffer.empty()) return IoResult::Ok(0);
  for (;;) {
    IoResult r = session_->Read(buffer);
    FlushOutput();  // key updates, alerts
    if (r.outcome == IoOutcome::kError) {
      Fail(r.status);
      return IoResult::Error(error_);
    }
    if (!error_.ok()) {
      Fail(error_);
      return IoResult::Error(error_);
    }
    if (r.outcome != IoOutcome::kWouldBlock) return r;
    switch (PullInput()) {
      case Pull::kGotData:
        continue;
      case Pull::kFailed:
        Fail(error_);
        return IoResult::Error(error_);
      case Pull::kNoData:
        return transport_eof_ ? IoResult::Eof() : IoResult::WouldBlock();
    }
  }
}

IoResult TlsEndpoint::Writev(absl::Span<const std::string_view> buffers) {
  switch (state_) {
    case State::kHandshaking:
      write_blocked_ = true;
      return IoResult::Ok(0);
    case State::kClosed:
      return IoResult::Error(absl::FailedPreconditionError("endpoint closed"));
    case State::kFailed:
      return IoResult::Error(error_);
    case State::kOpen:
      break;
  }
  if (!write_error_.ok()) return IoResult::Error(write_error_);
  size_t total = 0;
  for (std::string_view b : buffers) total += b.size();
  size_t accepted = 0;
  std::vector<std::string_view> rest;  // only when a second round is needed
  absl::Span<const std::string_view> todo = buffers;
  int idle_rounds = 0;
  for (;;) {
    IoResult r = session_->Write(todo);
    if (r.outcome == IoOutcome::kError) {
      Fail(r.status);
      return IoResult::Error(error_);
    }
    accepted += r.bytes;
    const bool drained = FlushOutput();
    if (!write_error_.ok()) return IoResult::Error(write_error_);
    if (!error_.ok()) {
      Fail(error_);
      return IoResult::Error(error_);
    }
    // Not drained: the transport is full and will call OnTransportWritable.
    if (accepted == total || !drained) break;
    // The output buffer was full (from before, or filled now) and the
    // transport took all of it: there is room again, go on. An empty buffer
    // always takes a record, so zero progress twice cannot happen; if it
    // did, breaking without a pending transport write would strand the
    // caller, so owe it an on_writable from the loop instead.
    if (r.bytes == 0 && ++idle_rounds > 1) {
      std::weak_ptr<bool> alive = alive_;
      loop()->Defer([this, alive] {
        if (!alive.expired()) OnTransportWritable();
      });
      break;
    }
    rest.clear();
    size_t skip = accepted;
    for (std::string_view b : buffers) {
      if (skip >= b.size()) {
        skip -= b.size();
        continue;
      }
      rest.push_back(b.substr(skip));
      skip = 0;
    }
    todo = rest;
  }
  write_blocked_ = accepted < total;
  return IoResult::Ok(accepted);
}

void TlsEndpoint::ShutdownWrite() {
  if (state_ != State::kOpen || shutdown_pending_) return;
  session_->Shutdown();
  shutdown_pending_ = true;
  FlushOutput();
}

void TlsEndpoint::MaybeFinishShutdown() {
  if (!shutdown_pending_) return;
  shutdown_pending_ = false;
  transport_->ShutdownWrite();
}

// ---- TlsConnect ----

namespace {

struct TlsConnectAttempt final : ConnectHandle::Attempt {
  EventLoop* loop;
  std::shared_ptr<const TlsContext> context;
  std::string server_name;
  std::string where;  // the address
  TlsConnectCallback done;
  ConnectHandle tcp;                      // the TCP phase
  std::unique_ptr<TlsEndpoint> endpoint;  // the handshake phase
  EventLoop::TimerId timer = EventLoop::kInvalidTimer;

  // The caller (ConnectHandle) holds a reference: cancelling the timer that
  // owns the attempt does not free it here.
  bool Cancel() override {
    assert(loop->IsInLoopThread());
    if (!done) return false;
    TlsConnectCallback dropped = std::move(done);
    done = nullptr;
    tcp.Cancel();      // still connecting: the socket closes
    endpoint.reset();  // handshaking: the socket closes, the peer sees EOF
    loop->Cancel(timer);
    return true;  // `dropped` goes last: its captures may be anything
  }
};

// Sessions are resumed per (name, address): the address is the cache scope.
absl::StatusOr<std::unique_ptr<TlsSession>> NewClientSession(
    const TlsConnectAttempt& a) {
  return TlsSession::CreateClient(a.context, a.server_name, a.where);
}

// Reports once. The attempt is owned by its timer task: cancelling the timer
// frees it, so everything needed is moved out first.
void FinishTlsConnect(TlsConnectAttempt* a, absl::Status status) {
  TlsConnectCallback done = std::move(a->done);
  a->done = nullptr;  // Cancel() tests it
  std::unique_ptr<TlsEndpoint> endpoint = std::move(a->endpoint);
  EventLoop* loop = a->loop;
  const EventLoop::TimerId timer = a->timer;
  if (!done) return;
  loop->Cancel(timer);  // may free *a
  if (status.ok()) {
    done(std::move(endpoint));
  } else {
    done(std::move(status));
  }
}

}  // namespace

ConnectHandle TlsConnect(EventLoop* loop, const SocketAddress& address,
                         std::shared_ptr<const TlsContext> context,
                         const std::string& server_name, absl::Duration timeout,
                         TlsConnectCallback done) {
  auto attempt = std::make_shared<TlsConnectAttempt>();
  attempt->loop = loop;
  attempt->context = std::move(context);
  attempt->server_name = server_name;
  attempt->where = address.ToString();
  attempt->done = std::move(done);
  std::weak_ptr<TlsConnectAttempt> weak = attempt;
  ConnectHandle handle{std::weak_ptr<TlsConnectAttempt>(attempt)};
  const std::string where = address.ToString();
  // The timer owns the attempt (so a destroyed loop frees it); with no
  // timeout it is a timer that never fires.
  TlsConnectAttempt* a = attempt.get();
  a->timer = loop->RunAfter(timeout, [attempt, where] {
    TlsConnectCallback done = std::move(attempt->done);
    attempt->done = nullptr;
    attempt->tcp.Cancel();  // still connecting: close the socket now
    attempt->endpoint.reset();
    if (done) {
      done(absl::DeadlineExceededError(
          absl::StrCat("TLS connect to ", where, " timed out")));
    }
  });
  a->tcp = TcpConnect(
      loop, address, timeout,
      [weak](absl::StatusOr<std::unique_ptr<TcpEndpoint>> tcp) {
        std::shared_ptr<TlsConnectAttempt> a = weak.lock();
        if (a == nullptr) return;  // timed out meanwhile
        if (!tcp.ok()) {
          FinishTlsConnect(a.get(), tcp.status());
          return;
        }
        auto session = NewClientSession(*a);
        if (!session.ok()) {
          FinishTlsConnect(a.get(), session.status());
          return;
        }
        TlsConnectAttempt* raw = a.get();
        a->endpoint = TlsEndpoint::Create(
            *std::move(tcp), *std::move(session),
            [raw](absl::Status s) { FinishTlsConnect(raw, std::move(s)); });
      });
  return handle;
}

}  // namespace transport
