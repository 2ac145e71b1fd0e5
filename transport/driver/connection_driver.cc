#include "transport/driver/connection_driver.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/types/span.h"
#include "transport/frame/frame.h"
#include "transport/io/absl_view.h"

namespace transport {

ConnectionDriver::ConnectionDriver(std::unique_ptr<Endpoint> endpoint,
                                   const ConnectionOptions& connection_options,
                                   ConnectionListener* listener, Owner* owner,
                                   const DriverOptions& options)
    : endpoint_(std::move(endpoint)),
      loop_(endpoint_->loop()),
      listener_(listener),
      owner_(owner),
      options_(options),
      self_(std::make_shared<ConnectionDriver*>(this)),
      iovecs_(new std::string_view[std::max<size_t>(options.max_iovecs, 1)]) {
  connection_ =
      std::make_unique<Connection>(connection_options, listener_, NowNs());
  // A server's input starts with the client preface, then frames.
  if (connection_->role() == Role::kServer) {
    frame_skip_ = kClientPreface.size();
  }
}

ConnectionDriver::~ConnectionDriver() {
  *self_ = nullptr;
  if (timer_ != EventLoop::kInvalidTimer) loop_->Cancel(timer_);
  if (linger_timer_ != EventLoop::kInvalidTimer) loop_->Cancel(linger_timer_);
  endpoint_->Close();
}

int64_t ConnectionDriver::NowNs() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             loop_->Now().time_since_epoch())
      .count();
}

void ConnectionDriver::Start() {
  if (state_ != State::kIdle) return;
  state_ = State::kOpen;
  endpoint_->SetCallbacks([this] { OnReadable(); }, [this] { OnWritable(); });
  ScheduleFlush();
  OnReadable();
}

void ConnectionDriver::ScheduleFlush() {
  if (flush_scheduled_ || write_blocked_ || state_ != State::kOpen) return;
  flush_scheduled_ = true;
  loop_->Defer([self = self_] {
    if (*self != nullptr) (*self)->Flush();
  });
}

void ConnectionDriver::GracefulShutdown() {
  if (state_ != State::kOpen) return;
  connection_->GracefulShutdown(NowNs());
  ScheduleFlush();
  AfterActivity();
}

void ConnectionDriver::Abort(absl::Status status) {
  if (state_ == State::kClosed) return;
  close_reason_ = status;
  bool linger = false;
  if (state_ == State::kOpen && connection_->role() == Role::kServer &&
      !connection_->dead()) {
    // RFC 9113 6.8: a server that closes tells the client the last stream it
    // accepted (those above it never ran: the client may retry them) and
    // why, before it closes. Best effort: what the socket takes now.
    state_ = State::kLingering;  // No flush or timer from here on.
    connection_->GoAway(Http2ErrorCode::kNoError, ToStd(status.message()));
    linger = WriteOutputNow();
    if (state_ == State::kClosed) return;  // A listener aborted.
  }
  if (!connection_->dead()) connection_->OnTransportClosed();
  if (state_ == State::kClosed) return;
  if (linger) {
    BeginLinger(std::move(status));
  } else {
    FinishClose(std::move(status));
  }
}

size_t ConnectionDriver::FillIovecs(size_t* offered) {
  const SliceBuffer& out = connection_->output();
  const size_t n = std::min(out.num_slices(), options_.max_iovecs);
  *offered = 0;
  for (size_t i = 0; i < n; ++i) {
    const Slice& s = out.slice(i);
    iovecs_[i] =
        std::string_view(reinterpret_cast<const char*>(s.data()), s.size());
    *offered += s.size();
  }
  return n;
}

bool ConnectionDriver::WriteOutputNow() {
  size_t written = 0;
  while (connection_->WantsWrite()) {
    if (write_blocked_ || written >= options_.max_write_per_flush) {
      return false;
    }
    size_t offered = 0;
    const size_t n = FillIovecs(&offered);
    const IoResult r =
        endpoint_->Writev(absl::Span<const std::string_view>(iovecs_.get(), n));
    ++writev_calls_;
    if (r.outcome == IoOutcome::kError || r.bytes == 0) return false;
    bytes_written_ += r.bytes;
    written += r.bytes;
    connection_->ConsumeOutput(r.bytes);
    if (state_ == State::kClosed) return false;
    if (r.bytes < offered) return false;
  }
  return true;
}

void ConnectionDriver::OnReadable() {
  if (state_ == State::kLingering) {
    ReadLingering();
    return;
  }
  if (state_ != State::kOpen) return;
  const IoResult last = ReadAvailable();
  // Not stopped by the endpoint: at the budget.
  const bool yield = last.ok();
  const bool reset = last.outcome == IoOutcome::kError;
  const bool closing = reset || last.outcome == IoOutcome::kEof;
  // Before an EOF or a reset, everything read (what earlier steps held too)
  // is received, as it was when each read was received at once: octets the
  // endpoint returned are data the peer sent (a client's response that came
  // just before the server reset the connection completes its call). After a
  // reset no answer can reach the peer, so none is written.
  const bool received = !read_buffer_.empty() && ReceiveInput(closing);
  if (state_ != State::kOpen) return;  // A listener aborted.
  if (last.outcome == IoOutcome::kWouldBlock) ReleaseIfIdle();
  if (closing) {
    // A peer that half-closes after a batch still reads: the answers this
    // input produced go out before the streams are reset (as they did when
    // each read was received at once and flushed before the next read saw
    // the EOF).
    if (received && !reset) {
      WriteOutputNow();
      if (state_ != State::kOpen) return;
    }
    const bool clean = connection_->done();
    close_reason_ = last.outcome == IoOutcome::kError ? last.status
                    : clean
                        ? absl::OkStatus()
                        : absl::UnavailableError("peer closed the connection");
    if (!connection_->dead()) connection_->OnTransportClosed();
    FinishClose(close_reason_);
    return;
  }
  // Let the other connections of this loop run; the endpoint remembers that
  // it was not drained. (A step left for later reads again after the flush.)
  if (yield && !receive_pending_) PostReadResume();
  if (received) {
    owner_->OnDriverProgress();
    if (state_ != State::kOpen) return;
    ScheduleFlush();
    AfterActivity();
  }
}

IoResult ConnectionDriver::ReadAvailable() {
  IoResult last = IoResult::Ok(0);
  // Stops at the budget unless the endpoint would block first. Input that a
  // later step receives counts against it: a peer that keeps sending is
  // held back by TCP, not buffered here.
  while (read_buffer_.size() < options_.max_read_per_event) {
    size_t available = 0;
    uint8_t* room =
        read_room_ < options_.min_read_room
            ? read_buffer_.PrepareAppend(options_.read_block_size, &available)
            : read_buffer_.PrepareAppend(read_room_, &available);
    last = endpoint_->Read(
        absl::Span<char>(reinterpret_cast<char*>(room), available));
    if (!last.ok()) break;
    read_buffer_.CommitAppend(last.bytes);
    read_room_ = available - last.bytes;
    bytes_read_ += last.bytes;
  }
  return last;
}

void ConnectionDriver::CloseAfterWriteError(absl::Status status) {
  if (state_ != State::kOpen) return;
  // A write found the reset before a read did: what the peer sent before it
  // (held by steps, or still in the endpoint) is received as when a read
  // finds it (OnReadable), and nothing is written.
  ReadAvailable();
  if (!read_buffer_.empty()) ReceiveInput(/*all=*/true);
  if (state_ != State::kOpen) return;  // A listener aborted.
  close_reason_ = status;
  if (!connection_->dead()) connection_->OnTransportClosed();
  FinishClose(std::move(status));
}

void ConnectionDriver::PostReadResume() {
  if (read_resume_posted_) return;
  read_resume_posted_ = true;
  loop_->Post([self = self_] {
    if (*self == nullptr) return;
    (*self)->read_resume_posted_ = false;
    (*self)->OnReadable();
  });
}

bool ConnectionDriver::ReceiveInput(bool all) {
  receive_pending_ = false;
  const size_t size = read_buffer_.size();
  size_t cut = size;
  if (!all && options_.max_stream_ends_per_receive != 0) {
    // While a write is blocked there is nothing to overlap with, and input
    // must not wait for it: the peer may be blocked writing to us too (both
    // sides' buffers full), and only receiving lets either go on. Then all
    // of it (but a frame header not fully here) goes in one step.
    const bool split = !write_blocked_;
    if (split && step_unflushed_) {
      // One step per flush: the next waits for this step's output to go
      // (an event that arrived meanwhile only adds to read_buffer_).
      receive_pending_ = true;
      return false;
    }
    const Cut next =
        NextReceiveCut(split ? options_.max_stream_ends_per_receive : 0);
    cut = next.octets;
    frame_skip_ = next.next_header - cut;
    block_ends_stream_ = next.block_ends_stream;
    tail_ends_stream_ = next.tail_ends_stream;
    // What is left starts at a frame header; less than one header waits for
    // more input.
    receive_pending_ = size - cut >= kFrameHeaderSize;
    // A step that reached the bound waits for its flush even when nothing
    // (or less than a frame header) is left: input read before that flush
    // is the next step's, after this one's output.
    step_unflushed_ = next.capped;
  }
  if (cut == 0) return false;
  if (cut == size) {
    connection_->Receive(read_buffer_, NowNs());
    // Keeps the block (and its spare room) for the next read; the DATA
    // Slices handed out keep their own references.
    read_buffer_.TrimFront(size);
  } else if (read_buffer_.front().size() >= cut) {
    connection_->Receive(read_buffer_.front().Sub(0, cut), NowNs());
    read_buffer_.TrimFront(cut);
  } else {
    SliceBuffer step;
    read_buffer_.MoveFrontTo(cut, &step);
    connection_->Receive(step, NowNs());
  }
  return true;
}

ConnectionDriver::Cut ConnectionDriver::NextReceiveCut(size_t max_ends) const {
  const size_t size = read_buffer_.size();
  Cut cut;
  cut.block_ends_stream = block_ends_stream_;
  size_t pos = frame_skip_;
  size_t ends = 0;
  if (tail_ends_stream_) {
    // The rest of a frame an earlier step took in part: its end counts in
    // the step that completes it.
    if (pos > size) {
      cut.tail_ends_stream = true;
    } else if (++ends == max_ends) {
      cut.capped = true;
      cut.next_header = cut.octets = pos;
      return cut;
    }
  }
  while (pos + kFrameHeaderSize <= size) {
    uint8_t octets[kFrameHeaderSize];
    read_buffer_.CopyTo(octets, kFrameHeaderSize, pos);
    const FrameHeader h = ParseFrameHeader(octets);
    pos += kFrameHeaderSize + h.length;
    bool ends_stream = false;
    if (h.is(FrameType::kData)) {
      ends_stream = h.has_flags(kFlagEndStream);
    } else if (h.is(FrameType::kHeaders) || h.is(FrameType::kContinuation)) {
      // A header block's END_STREAM (on its HEADERS) takes effect at its
      // END_HEADERS: the stream ends there, after its CONTINUATION frames.
      if (h.is(FrameType::kHeaders)) {
        cut.block_ends_stream = h.has_flags(kFlagEndStream);
      }
      if (h.has_flags(kFlagEndHeaders)) {
        ends_stream = cut.block_ends_stream;
        cut.block_ends_stream = false;
      }
    }
    // A frame not fully here: its end counts in the step that completes it.
    if (pos > size) {
      cut.tail_ends_stream = ends_stream;
      break;
    }
    if (ends_stream && ++ends == max_ends) {
      cut.capped = true;
      break;
    }
  }
  cut.next_header = pos;
  cut.octets = std::min(pos, size);
  return cut;
}

void ConnectionDriver::OnWritable() {
  if (state_ != State::kOpen) return;
  write_blocked_ = false;
  Flush();
}

void ConnectionDriver::Flush() {
  flush_scheduled_ = false;
  if (state_ != State::kOpen || write_blocked_) return;
  step_unflushed_ = false;
  size_t written = 0;
  bool wrote_any = false;
  while (connection_->WantsWrite()) {
    size_t offered = 0;
    const size_t n = FillIovecs(&offered);
    const IoResult r =
        endpoint_->Writev(absl::Span<const std::string_view>(iovecs_.get(), n));
    ++writev_calls_;
    if (r.outcome == IoOutcome::kError) {
      if (EventLoop::RunningInline()) {
        // Closing completes every call of the connection (user callbacks):
        // never on an inline runner's thread (a blocking caller, maybe
        // holding a user lock). The loop's own thread does it.
        write_blocked_ = true;
        loop_->Post([self = self_, status = r.status] {
          if (*self != nullptr) (*self)->CloseAfterWriteError(status);
        });
        return;
      }
      CloseAfterWriteError(r.status);
      return;
    }
    if (r.bytes > 0) {
      wrote_any = true;
      bytes_written_ += r.bytes;
      written += r.bytes;
      // May pump queued DATA into the output and run OnStreamWritable.
      connection_->ConsumeOutput(r.bytes);
      if (state_ != State::kOpen) return;
    }
    if (r.bytes < offered) {
      write_blocked_ = true;  // on_writable follows.
      break;
    }
    if (written >= options_.max_write_per_flush) {
      // Fairness: continue after the other connections of this loop.
      loop_->Post([self = self_] {
        if (*self != nullptr) (*self)->ScheduleFlush();
      });
      break;
    }
  }
  if (wrote_any) {
    owner_->OnDriverProgress();
    if (state_ != State::kOpen) return;
    ReleaseIfIdle();
  }
  AfterActivity();
  // The next step of the input, now that this one's output went: in the
  // timer phase of the next loop iteration (which then does not sleep), so
  // that what it produces, also in posted tasks (a client's next calls), is
  // written by that iteration's flush. A zero-delay timer, not a Post: no
  // eventfd write and read per step. Also after a short write: blocked, the
  // next step takes all the input.
  if (receive_pending_ && !step_armed_ && state_ == State::kOpen) {
    step_armed_ = true;
    loop_->RunAfter(absl::ZeroDuration(), [self = self_] {
      if (*self == nullptr) return;
      (*self)->step_armed_ = false;
      (*self)->OnReadable();
    });
  }
}

void ConnectionDriver::ReleaseIfIdle() {
  // Busy connections keep their blocks (no allocation per read or write);
  // one without streams gives them back: an idle connection then holds no
  // read block, output block or header storage, and the next read or frame
  // allocates them again.
  if (connection_->num_active_streams() != 0 || connection_->WantsWrite() ||
      !read_buffer_.empty()) {
    return;
  }
  read_buffer_.Clear();
  read_room_ = 0;
  connection_->ReleaseIdleMemory();
}

void ConnectionDriver::AfterActivity() {
  if (state_ != State::kOpen) return;
  if (connection_->done() && !connection_->WantsWrite()) {
    BeginLinger(absl::OkStatus());
    return;
  }
  UpdateTimer();
}

void ConnectionDriver::UpdateTimer() {
  const int64_t deadline = connection_->NextDeadline();
  if (deadline == timer_deadline_) return;
  if (timer_ != EventLoop::kInvalidTimer) loop_->Cancel(timer_);
  timer_ = EventLoop::kInvalidTimer;
  timer_deadline_ = deadline;
  if (deadline == kNoDeadline) return;
  const EventLoop::Clock::time_point when(
      std::chrono::duration_cast<EventLoop::Clock::duration>(
          std::chrono::nanoseconds(deadline)));
  timer_ = loop_->RunAt(when, [self = self_] {
    if (*self != nullptr) (*self)->OnConnectionTimer();
  });
}

void ConnectionDriver::OnConnectionTimer() {
  timer_ = EventLoop::kInvalidTimer;
  timer_deadline_ = kNoDeadline;
  if (state_ != State::kOpen) return;
  connection_->OnTimer(NowNs());
  if (state_ != State::kOpen) return;
  owner_->OnDriverProgress();
  if (state_ != State::kOpen) return;
  ScheduleFlush();
  AfterActivity();
}

void ConnectionDriver::BeginLinger(absl::Status status) {
  state_ = State::kLingering;
  linger_status_ = std::move(status);
  if (timer_ != EventLoop::kInvalidTimer) loop_->Cancel(timer_);
  timer_ = EventLoop::kInvalidTimer;
  endpoint_->ShutdownWrite();
  linger_timer_ = loop_->RunAfter(options_.linger, [self = self_] {
    if (*self == nullptr) return;
    (*self)->linger_timer_ = EventLoop::kInvalidTimer;
    (*self)->FinishClose((*self)->linger_status_);
  });
  ReadLingering();
}

void ConnectionDriver::ReadLingering() {
  // Discards what the peer still sends, so that closing does not meet
  // unread input (the kernel would answer it with a RST, and the peer's
  // kernel would drop our GOAWAY unread). At most max_read_per_event octets
  // per event, then the other connections run; at most linger_max_bytes in
  // all (with options.linger, the bound on what a peer can make us read).
  char discard[4096];
  size_t total = 0;
  while (total < options_.max_read_per_event) {
    const IoResult r = endpoint_->Read(absl::Span<char>(discard));
    if (!r.ok()) {
      if (r.outcome != IoOutcome::kWouldBlock) FinishClose(linger_status_);
      return;
    }
    total += r.bytes;
    lingered_bytes_ += r.bytes;
    if (lingered_bytes_ >= options_.linger_max_bytes) {
      // A peer that keeps sending while we close: stop listening to it.
      FinishClose(linger_status_);
      return;
    }
  }
  // Not drained (the loop is edge-triggered): continue after the others.
  loop_->Post([self = self_] {
    if (*self != nullptr && (*self)->state_ == State::kLingering) {
      (*self)->ReadLingering();
    }
  });
}

void ConnectionDriver::FinishClose(absl::Status status) {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  if (timer_ != EventLoop::kInvalidTimer) loop_->Cancel(timer_);
  timer_ = EventLoop::kInvalidTimer;
  if (linger_timer_ != EventLoop::kInvalidTimer) loop_->Cancel(linger_timer_);
  linger_timer_ = EventLoop::kInvalidTimer;
  endpoint_->Close();
  auto closed = [self = self_, status = std::move(status)] {
    if (*self != nullptr) (*self)->owner_->OnDriverClosed(status);
  };
  // OnDriverClosed completes every call: on an inline runner it is posted to
  // the loop's own thread (as a write error above).
  if (EventLoop::RunningInline()) {
    loop_->Post(std::move(closed));
  } else {
    loop_->Defer(std::move(closed));
  }
}

}  // namespace transport
