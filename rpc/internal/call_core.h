// CallCore: the state of one call shared between its connection's loop thread
// and the application thread that reads and writes it (a sync handler on a
// worker, or a blocking client call).
//
// Receive side (flow controlled end to end). The loop pushes each complete
// message (PushMessage) and the octets of every DATA piece (OnDataBytes); the
// octets are handed back to the loop for Connection::ConsumeData at once while
// fewer than `read_bound` octets of messages wait unread, else they are owed
// and returned by Read once the reader caught up (so a slow reader stops the
// peer through the HTTP/2 windows, and memory stays at about read_bound plus
// one window).
//
// Send side. AcquireWriteCredit blocks the writer while more than
// `write_bound` octets it wrote are still queued in the Connection (not yet in
// the output); the loop calls ReleaseWriteCredit when the stream's queue is
// empty (Connection::stream_queued_bytes 0, OnStreamWritable).
//
// Every blocking call returns once the call is cancelled (Cancel), so an
// application thread never outlives a dead call in a wait. Thread-safe.

#ifndef RPC_INTERNAL_CALL_CORE_H_
#define RPC_INTERNAL_CALL_CORE_H_

#include <cstddef>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
#include "transport/slice/slice.h"

namespace rpc {
namespace internal {

class CallCore {
 public:
  enum class ReadResult { kMessage, kEnd, kCancelled };

  CallCore(size_t read_bound, size_t write_bound)
      : read_bound_(read_bound), write_bound_(write_bound) {}
  CallCore(const CallCore&) = delete;
  CallCore& operator=(const CallCore&) = delete;

  // ---- Loop thread ----
  // `n` DATA octets arrived; returns how many to ConsumeData now.
  size_t OnDataBytes(size_t n);
  // A complete message, handed to the reader as it is: its slices may share
  // the connection's read block (no copy; Slice counts are atomic). A message
  // queued unread keeps that block alive (up to the read block size, 32 KiB,
  // for a small message alone in it) until the reader takes it.
  void PushMessage(transport::SliceBuffer payload);
  // The peer ended its side: Read returns kEnd after the queued messages.
  void PushEnd();
  // The call is over (reset, deadline, cancelled, failed): wakes every
  // waiter; Read returns kCancelled once the queue is empty... immediately.
  void Cancel();
  // Runs `hook` once, on the thread that cancels the call (outside the lock),
  // or at once when it is already cancelled; replaces an earlier hook. The
  // server takes a call waiting for a worker off the queue this way.
  void SetCancelHook(absl::AnyInvocable<void()> hook);
  // Queued octets of this call left the Connection's queue.
  void ReleaseWriteCredit();
  bool HasWriteCredit() const;

  // ---- Application thread ----
  // Blocks for the next message. *consume gets the octets owed to the
  // Connection (post ConsumeData for them when non-zero).
  ReadResult Read(transport::SliceBuffer* out, size_t* consume);
  // Blocks while more than write_bound octets are in flight, then counts `n`
  // more. False when the call is cancelled.
  bool AcquireWriteCredit(size_t n);

  bool cancelled() const;
  // Any thread: the peer ended its side or the call is cancelled, so Read
  // never blocks again (whoever runs a handler inline, without a thread of
  // its own, starts it then: rpc/fuzz).
  bool input_complete() const;

 private:
  const size_t read_bound_;
  const size_t write_bound_;
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  // A FIFO: messages_[head_, end) are queued, the slots before head_ are
  // empty husks dropped lazily. Not a std::deque: an empty one already holds
  // 576 octets of heap (its map and first node), a third of an idle call.
  std::vector<transport::SliceBuffer> messages_ ABSL_GUARDED_BY(mu_);
  size_t head_ ABSL_GUARDED_BY(mu_) = 0;
  size_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  size_t owed_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  size_t inflight_ ABSL_GUARDED_BY(mu_) = 0;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  absl::AnyInvocable<void()> cancel_hook_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_CALL_CORE_H_
