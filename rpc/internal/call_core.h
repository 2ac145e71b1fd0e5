// CallCore: the state of one call shared between its connection's loop thread
// and the application thread that reads and writes it (a sync handler on a
// worker, or a blocking client call).
//
// Receive side (flow controlled end to end). The loop pushes each complete
// message (PushMessage) and the octets of every DATA piece (OnDataBytes); the
// octets are handed back to the loop for Connection::ConsumeData at once while
// the messages waiting unread are charged fewer than `read_bound` octets, else
// they are owed and returned by Read once the reader caught up (so a slow
// reader stops the peer through the HTTP/2 windows).
//
// Messages are handed over without a copy while the reader keeps up: the
// first kMaxZeroCopyQueued messages waiting unread are queued as they came,
// their slices still in the connection's read blocks (Slice counts are
// atomic). Each of those keeps its blocks alive, up to a whole read block
// (32 KiB) for a 1-octet message alone in its block, so a message pushed while
// that many wait is copied instead, packed behind the others into the call's
// own blocks; so is a message cut into more pieces than DATA framing makes
// (more than 2 + size / 8 KiB: each piece may pin a block of its own).
// Memory held for unread messages stays at about read_bound plus one stream
// window (a message is charged its octets + kMessageCharge, which covers its
// bookkeeping) plus the read blocks the zero-copy ones pin (at most
// kMaxZeroCopyQueued messages, each at most (2 + size / 8 KiB) x 32 KiB).
// Without the copy a peer could pin a 32 KiB block with every 1-octet message
// it spaced out with other frames.
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
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "transport/io/mutex.h"
#include "transport/slice/slice.h"

namespace rpc {
namespace internal {

class CallCore {
 public:
  enum class ReadResult { kMessage, kEnd, kCancelled };

  // Messages that may wait unread in the connection's read blocks; later
  // ones are copied (see above).
  static constexpr size_t kMaxZeroCopyQueued = 8;
  // Charged per queued message on top of its octets: the 5-octet prefix it
  // came with, or its length entry in the packed queue (4 octets, 8 with the
  // vector's slack).
  static constexpr size_t kMessageCharge = 8;
  // A zero-copy message has at most 2 + size / kOctetsPerPiece slices.
  static constexpr size_t kOctetsPerPiece = 8 << 10;

  CallCore(size_t read_bound, size_t write_bound)
      : read_bound_(read_bound), write_bound_(write_bound) {}
  CallCore(const CallCore&) = delete;
  CallCore& operator=(const CallCore&) = delete;

  // ---- Loop thread ----
  // `n` DATA octets arrived; returns how many to ConsumeData now.
  size_t OnDataBytes(size_t n);
  // A complete message. While fewer than kMaxZeroCopyQueued wait unread it
  // is queued as it is (its slices may share the connection's read blocks:
  // no copy); else its octets are copied into the call's packed queue, and
  // the blocks it came in are released at once.
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
  // The call has its status: AcquireWriteCredit fails from now on, also for
  // a writer waiting in it (nothing would release its credit again).
  void CloseWrites();
  bool HasWriteCredit() const;

  // ---- Application thread ----
  // Blocks for the next message. *consume gets the octets owed to the
  // Connection (post ConsumeData for them when non-zero).
  ReadResult Read(transport::SliceBuffer* out, size_t* consume);
  // Blocks while more than write_bound octets are in flight, then counts `n`
  // more. False when the call is cancelled or its writes closed.
  bool AcquireWriteCredit(size_t n);

  bool cancelled() const;
  // Read would not block: a message is queued, or the input ended, or the
  // call is cancelled.
  bool readable() const;
  // Any thread: the peer ended its side or the call is cancelled, so Read
  // never blocks again (whoever runs a handler inline, without a thread of
  // its own, starts it then: rpc/fuzz).
  bool input_complete() const;

  // For tests: messages queued zero-copy, messages in the packed queue, and
  // the slots both hold (capacities, so a drained burst shows as released).
  size_t zero_copy_queued() const;
  size_t packed_queued() const;
  size_t queue_slots() const;

 private:
  // Messages copied while kMaxZeroCopyQueued others waited: their octets back
  // to back, and each one's length (sizes[head, end) are queued). Allocated
  // by the first such message, freed when the queue drains.
  struct Packed {
    transport::SliceBuffer bytes;
    std::vector<uint32_t> sizes;
    size_t head = 0;
  };
  // A queue that drained releases a capacity above this many slots (a reader
  // that keeps up needs one or two).
  static constexpr size_t kKeptSlots = 2;

  const size_t read_bound_;
  const size_t write_bound_;
  mutable transport::Mutex mu_;
  transport::CondVar cv_;
  // The queue, oldest first: messages_[head_, end) (zero-copy, at most
  // kMaxZeroCopyQueued; the slots before head_ are empty husks dropped
  // lazily), then packed_'s. Not a std::deque: an empty one already holds
  // 576 octets of heap (its map and first node), a third of an idle call.
  std::vector<transport::SliceBuffer> messages_ ABSL_GUARDED_BY(mu_);
  size_t head_ ABSL_GUARDED_BY(mu_) = 0;
  std::unique_ptr<Packed> packed_ ABSL_GUARDED_BY(mu_);
  size_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  size_t owed_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  size_t inflight_ ABSL_GUARDED_BY(mu_) = 0;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool writes_closed_ ABSL_GUARDED_BY(mu_) = false;
  absl::AnyInvocable<void()> cancel_hook_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace rpc

#endif  // RPC_INTERNAL_CALL_CORE_H_
