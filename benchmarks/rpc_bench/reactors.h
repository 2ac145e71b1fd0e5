// Callback-API pieces shared by the benchmark servers and clients of both
// stacks. Our API has grpc++'s names and shapes (rpc::ServerBidiReactor is
// grpc::ServerBidiReactor's twin), so each piece is a template over the
// stack's reactor base class and Status, instantiated once per stack.
//
// * EchoBidiReactor: the callback form of Echo.Stream (server): one read,
//   then its echo, then the next read.
// * HeldCalls: the calls the Hold service keeps open without answering
//   (scale_benchmark's held-call rows) and Release() answers; HeldWriter is
//   the held server-streaming call, HeldCalls::AddUnary a held unary one.
// * StreamEchoClient: (c) on the client's callback API: one write and one
//   read always in flight until Stop(), counting the echoes.
// * CallbackEcho, CallbackHold: the Echo and Hold services of a callback
//   server, over a struct naming the stack's types.

#ifndef BENCHMARKS_RPC_BENCH_REACTORS_H_
#define BENCHMARKS_RPC_BENCH_REACTORS_H_

#include <malloc.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace rpcbench {

template <typename Base, typename Msg, typename Status>
class EchoBidiReactor final : public Base {
 public:
  EchoBidiReactor() { this->StartRead(&m_); }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the client's half-close (or a cancellation)
      this->Finish(Status());
      return;
    }
    this->StartWrite(&m_);
  }
  void OnWriteDone(bool ok) override {
    if (!ok) {
      this->Finish(Status());
      return;
    }
    this->StartRead(&m_);
  }
  void OnDone() override { delete this; }

 private:
  Msg m_;
};

// One held streaming call: its way to answer (a message "x", then OK);
// `linked` while it is in its HeldCalls' list.
struct HeldNode {
  HeldNode* prev = nullptr;
  HeldNode* next = nullptr;
  bool linked = false;
  virtual void Answer() = 0;
  virtual ~HeldNode() = default;
};

// The calls a Hold service keeps open. Thread-safe: handlers add from the
// stack's threads, Release() answers from the Release handler. `Unary` is
// the stack's handle of a held unary call (what the handler got to answer it
// later, nothing more), with `void Answer()`; room for 65,536 of them is
// reserved up front, so that a held call costs its own memory only.
template <typename Unary>
class HeldCalls {
 public:
  using Node = HeldNode;

  HeldCalls() { unary_.reserve(1 << 16); }

  void AddUnary(Unary answer) {
    std::lock_guard<std::mutex> lock(mu_);
    unary_.push_back(std::move(answer));
    ++held_;
  }

  // Links a held streaming call in.
  void Add(Node* n) {
    std::lock_guard<std::mutex> lock(mu_);
    n->next = head_;
    n->prev = nullptr;
    if (head_ != nullptr) head_->prev = n;
    head_ = n;
    n->linked = true;
    ++held_;
  }

  // Unlinks `n` when it is still held (its peer went away); false when
  // Release() took it.
  bool Remove(Node* n) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!n->linked) return false;
    if (n->prev != nullptr) n->prev->next = n->next;
    if (n->next != nullptr) n->next->prev = n->prev;
    if (head_ == n) head_ = n->next;
    n->linked = false;
    --held_;
    return true;
  }

  // Answers every held call (outside the lock: an answer may end its call).
  void Release() {
    std::vector<Unary> unary;
    std::vector<Node*> streams;
    {
      std::lock_guard<std::mutex> lock(mu_);
      unary.swap(unary_);
      unary_.reserve(1 << 16);
      for (Node* n = head_; n != nullptr; n = n->next) {
        n->linked = false;
        streams.push_back(n);
      }
      head_ = nullptr;
      held_ = 0;
    }
    for (Unary& u : unary) u.Answer();
    for (Node* n : streams) n->Answer();  // may delete n
  }

  // "held=N heap=B": the calls held now, and the heap in use (glibc's
  // mallinfo2 over all arenas: allocated chunks plus mmapped blocks).
  std::string Stats() {
    long held;
    {
      std::lock_guard<std::mutex> lock(mu_);
      held = held_;
    }
    const struct mallinfo2 mi = mallinfo2();
    return "held=" + std::to_string(held) +
           " heap=" + std::to_string(mi.uordblks + mi.hblkhd);
  }

 private:
  std::mutex mu_;
  std::vector<Unary> unary_;
  Node* head_ = nullptr;
  long held_ = 0;
};

// A held server-streaming call: sends nothing until HeldCalls::Release()
// (then one message and OK); a cancelled one is finished at once (its status
// no longer reaches the client).
template <typename Base, typename Msg, typename Status, typename Registry>
class HeldWriter final : public Base, public HeldNode {
 public:
  explicit HeldWriter(Registry* held) : held_(held) { held_->Add(this); }

  void Answer() override {
    out_.set_payload("x");
    this->StartWriteAndFinish(&out_, {}, Status());
  }
  void OnCancel() override {
    if (held_->Remove(this)) this->Finish(Status());
  }
  void OnWriteDone(bool) override {}
  void OnDone() override { delete this; }

 private:
  Registry* const held_;
  Msg out_;
};

// (c) on the client's callback API: keeps one write and one read in flight,
// each reaction starting the next, until Stop(); then half-closes and reads
// the rest. `echoed` counts the echoes (of `size` octets each).
template <typename Base, typename Msg, typename Status>
class StreamEchoClient final : public Base {
 public:
  explicit StreamEchoClient(size_t size) : size_(size) {
    out_.set_payload(std::string(size, 'x'));
  }

  // After the stub's async()->Stream(ctx, this).
  void Begin() {
    this->StartWrite(&out_);
    this->StartRead(&in_);
    this->StartCall();
  }
  void Stop() { stop_ = true; }

  // Waits (bounded) for OnDone; whether every echo had the right size, no
  // write failed and the call ended OK.
  bool Wait(double timeout_s) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, std::chrono::duration<double>(timeout_s),
                      [this] { return done_; })) {
      std::fprintf(stderr, "(c): the stream did not end in %.0f s\n",
                   timeout_s);
      return false;
    }
    if (!ok_ || bad_size_ || write_failed_) {
      std::fprintf(stderr,
                   "(c) %zu bytes: stream failed (status ok=%d, bad echo=%d, "
                   "write failed=%d)\n",
                   size_, ok_, bad_size_.load(), write_failed_.load());
    }
    return ok_ && !bad_size_ && !write_failed_;
  }

  void OnWriteDone(bool ok) override {
    if (!ok) {
      write_failed_ = true;
      return;
    }
    if (stop_.load(std::memory_order_relaxed)) {
      this->StartWritesDone();
    } else {
      this->StartWrite(&out_);
    }
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;  // the server ended the stream
    if (in_.payload().size() != size_) bad_size_ = true;
    echoed.fetch_add(1, std::memory_order_relaxed);
    this->StartRead(&in_);
  }
  void OnDone(const Status& s) override {
    std::lock_guard<std::mutex> lock(mu_);
    ok_ = s.ok();
    done_ = true;
    cv_.notify_all();
  }

  std::atomic<long> echoed{0};

 private:
  const size_t size_;
  Msg out_, in_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> bad_size_{false};
  std::atomic<bool> write_failed_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  bool ok_ = false;
};

// The services of a stack's callback server, given its types:
//   struct Api {
//     using Msg = rpcbench::EchoMessage;
//     using Status = ...;                       // grpc::Status, rpc::Status
//     using Context = ...;                      // CallbackServerContext
//     using UnaryReactor = ...;                 // ServerUnaryReactor
//     using WriteReactor = ...;                 // ServerWriteReactor<Msg>
//     using BidiReactor = ...;                  // ServerBidiReactor<Msg, Msg>
//     using EchoService = ...;                  // Echo::CallbackService
//     using HoldService = ...;                  // Hold::CallbackService
//   };
// CallbackEcho: Unary answered at once through its DefaultReactor, Stream an
// EchoBidiReactor.
template <typename Api>
class CallbackEcho final : public Api::EchoService {
 public:
  using Msg = typename Api::Msg;
  typename Api::UnaryReactor* Unary(typename Api::Context* ctx, const Msg* req,
                                    Msg* resp) override {
    resp->set_payload(req->payload());
    typename Api::UnaryReactor* reactor = ctx->DefaultReactor();
    reactor->Finish(typename Api::Status());
    return reactor;
  }
  typename Api::BidiReactor* Stream(typename Api::Context*) override {
    return new EchoBidiReactor<typename Api::BidiReactor, Msg,
                               typename Api::Status>();
  }
};

// CallbackHold: the Hold service (echo.proto). A held unary call keeps its
// DefaultReactor unfinished; a held stream is a HeldWriter.
template <typename Api>
class CallbackHold final : public Api::HoldService {
 public:
  using Msg = typename Api::Msg;
  using UnaryReactor = typename Api::UnaryReactor;
  using Status = typename Api::Status;

  UnaryReactor* Unary(typename Api::Context* ctx, const Msg*,
                      Msg* resp) override {
    UnaryReactor* reactor = ctx->DefaultReactor();
    held_.AddUnary(HeldUnary{reactor, resp});
    return reactor;
  }
  typename Api::WriteReactor* ServerStream(typename Api::Context*,
                                           const Msg*) override {
    return new HeldWriter<typename Api::WriteReactor, Msg, Status, Held>(
        &held_);
  }
  UnaryReactor* Release(typename Api::Context* ctx, const Msg*, Msg*) override {
    held_.Release();
    UnaryReactor* reactor = ctx->DefaultReactor();
    reactor->Finish(Status());
    return reactor;
  }
  UnaryReactor* Stats(typename Api::Context* ctx, const Msg*,
                      Msg* resp) override {
    resp->set_payload(held_.Stats());
    UnaryReactor* reactor = ctx->DefaultReactor();
    reactor->Finish(Status());
    return reactor;
  }

 private:
  // A held unary call: its unfinished DefaultReactor and its response.
  struct HeldUnary {
    UnaryReactor* reactor;
    Msg* resp;
    void Answer() {
      resp->set_payload("x");
      reactor->Finish(Status());
    }
  };
  using Held = HeldCalls<HeldUnary>;
  Held held_;
};

}  // namespace rpcbench

#endif  // BENCHMARKS_RPC_BENCH_REACTORS_H_
