// ScriptedServer: a raw HTTP/2 server for client tests, scripted by a Plan
// per connection: a sans-IO transport::Connection over a loopback socket, on
// threads of the test. It answers gRPC calls with messages of zeros (an
// empty one parses; any other does not) and OK, or refuses, holds, stalls,
// sends GOAWAY, or writes raw frames. What one round produces goes out in
// one write, so a response's HEADERS, DATA and trailers reach the client
// together. Every wait is bounded. Used by transparent_retry_test (retry,
// GOAWAY, cardinality) and service_forms_test (a response that does not
// parse, read with its trailers by a co-poller).

#ifndef RPC_TESTING_SCRIPTED_SERVER_H_
#define RPC_TESTING_SCRIPTED_SERVER_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "transport/connection/connection.h"
#include "transport/frame/frame_writer.h"

namespace rpc {
namespace testing {

inline int64_t NowNs() { return absl::GetCurrentTimeNanos(); }

// Writes `out` with one send() where the socket takes it all (what one
// TakeOutput holds reaches the client in one read: a response's HEADERS,
// DATA and trailers together).
inline bool WriteAll(int fd, const transport::SliceBuffer& out) {
  std::string flat;
  for (size_t i = 0; i < out.num_slices(); ++i) {
    flat.append(reinterpret_cast<const char*>(out.slice(i).data()),
                out.slice(i).size());
  }
  size_t done = 0;
  while (done < flat.size()) {
    // No SIGPIPE when the client closed first (it may end a call, and
    // close, while we still write: the cardinality tests).
    const ssize_t n =
        send(fd, flat.data() + done, flat.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// A raw HTTP/2 server answering gRPC calls with an empty message and OK,
// one connection at a time, each following a Plan (the last one repeats).
class ScriptedServer {
 public:
  struct Plan {
    uint32_t max_concurrent_streams = transport::kSettingUnlimited;
    // Refuse (RST_STREAM REFUSED_STREAM) the first `refuse` requests.
    int refuse = 0;
    // Once this many requests are open: GOAWAY(NO_ERROR, last stream id =
    // the first of them), answer that one only, close.
    int goaway_when_open = 0;
    // Answer nothing; the connection closes on CloseHeld().
    bool hold = false;
    // As hold, and once a request arrived, read nothing more (no PING ACK).
    bool stall = false;
    // The answer's response messages and the octets of each (a unary call
    // takes one: more break gRPC's cardinality rule).
    int response_messages = 1;
    size_t response_bytes = 0;
    // Set: each request ended is answered with these frames instead (for
    // its stream id; HPACK literals without indexing only), written after
    // our own output.
    std::function<void(uint32_t, transport::SliceBuffer*)> raw_answer;
  };

  // A plan that refuses the first `n` requests, then answers.
  static Plan Refusing(int n) {
    Plan plan;
    plan.refuse = n;
    return plan;
  }

  explicit ScriptedServer(std::vector<Plan> plans) : plans_(std::move(plans)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) !=
            0 ||
        listen(listen_fd_, 16) != 0 ||
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) !=
            0) {
      ADD_FAILURE() << "cannot listen";
      return;
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  ~ScriptedServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    close(listen_fd_);
  }

  int port() const { return port_; }
  std::string target() const { return absl::StrCat("127.0.0.1:", port_); }
  void CloseHeld() { close_held_ = true; }
  // A hold plan: answers (as Answer does) every request that ended so far,
  // once, each connection's in one write (within a poll interval, 20 ms).
  void AnswerHeld() { answer_held_ = true; }
  // Waits (bounded) until `n` requests arrived in all and the client ACKed
  // the PING that follows our SETTINGS (it has applied them).
  bool WaitRequests(int n) {
    absl::MutexLock lock(&mu_);
    const absl::Time give_up = absl::Now() + absl::Seconds(30);
    while (requests_ < n || !settings_applied_) {
      if (cv_.WaitWithDeadline(&mu_, give_up)) return false;
    }
    return true;
  }
  int connections() {
    absl::MutexLock lock(&mu_);
    return connections_;
  }
  int refused() {
    absl::MutexLock lock(&mu_);
    return refused_;
  }
  int answered() {
    absl::MutexLock lock(&mu_);
    return answered_;
  }
  // The request body octets of each answered call.
  std::vector<size_t> answered_body_bytes() {
    absl::MutexLock lock(&mu_);
    return answered_body_bytes_;
  }

 private:
  class Listener final : public transport::ConnectionListener {
   public:
    void OnHeaders(uint32_t id, const hpack::HeaderList&,
                   bool end_stream) override {
      opened.push_back(id);
      if (end_stream) ended.push_back(id);
    }
    void OnTrailers(uint32_t id, const hpack::HeaderList&) override {
      ended.push_back(id);
    }
    void OnData(uint32_t id, transport::Slice data) override {
      body_bytes[id] += data.size();
      conn->ConsumeData(id, data.size());
    }
    void OnEndStream(uint32_t id) override { ended.push_back(id); }
    void OnStreamReset(uint32_t, transport::Http2ErrorCode, bool) override {}
    void OnPingAck(uint64_t) override { ping_acked = true; }
    transport::Connection* conn = nullptr;
    std::vector<uint32_t> opened;
    std::vector<uint32_t> ended;
    bool ping_acked = false;
    std::map<uint32_t, size_t> body_bytes;
  };

  void Run() {
    while (!stop_) {
      pollfd p = {listen_fd_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      Plan plan;
      {
        absl::MutexLock lock(&mu_);
        plan = plans_[std::min<size_t>(connections_, plans_.size() - 1)];
        ++connections_;
      }
      // Each connection on a thread of its own: a held one does not keep
      // the next from being served.
      connection_threads_.emplace_back([this, fd, plan] {
        Serve(fd, plan);
        close(fd);
      });
    }
    for (std::thread& t : connection_threads_) t.join();
  }

  // Ends our side and reads until the client closes (bounded), so that
  // what we wrote is not lost to a TCP reset for unread input.
  void CloseGracefully(int fd) {
    shutdown(fd, SHUT_WR);
    char buf[4096];
    const absl::Time give_up = absl::Now() + absl::Seconds(10);
    while (!stop_ && absl::Now() < give_up) {
      pollfd p = {fd, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      if (read(fd, buf, sizeof(buf)) <= 0) return;
    }
  }

  void Answer(transport::Connection* conn, const Plan& plan, uint32_t id,
              size_t body_bytes) {
    const hpack::HeaderField headers[] = {{":status", "200"},
                                          {"content-type", "application/grpc"}};
    const hpack::HeaderField trailers[] = {{"grpc-status", "0"}};
    if (!conn->SubmitHeaders(id, headers, false).ok()) return;
    for (int i = 0; i < plan.response_messages; ++i) {
      // Zeros (not a valid EchoResponse unless empty: only the cardinality
      // tests send more, and their calls fail before parsing).
      const size_t n = plan.response_bytes;
      std::string message(5 + n, '\0');
      message[1] = static_cast<char>(n >> 24);
      message[2] = static_cast<char>(n >> 16);
      message[3] = static_cast<char>(n >> 8);
      message[4] = static_cast<char>(n);
      transport::SliceBuffer framed;
      framed.Append(std::string_view(message));
      conn->SubmitData(id, std::move(framed), false).IgnoreError();
    }
    conn->SubmitTrailers(id, trailers).IgnoreError();
    absl::MutexLock lock(&mu_);
    ++answered_;
    answered_body_bytes_.push_back(body_bytes);
  }

  void Serve(int fd, const Plan& plan) {
    Listener l;
    transport::ConnectionOptions options;
    options.role = transport::Role::kServer;
    options.local_settings.max_concurrent_streams = plan.max_concurrent_streams;
    transport::Connection conn(options, &l, NowNs());
    l.conn = &conn;
    conn.SendPing(1);  // Its ACK says the client applied our SETTINGS.
    int refused = 0;
    uint32_t goaway_keep = 0;  // The one stream answered after our GOAWAY.
    bool close_after_answer = false;
    char buf[16384];
    while (!stop_) {
      if (plan.hold && answer_held_ && !l.ended.empty()) {
        std::vector<uint32_t> ended = std::move(l.ended);
        l.ended.clear();
        for (const uint32_t id : ended) {
          Answer(&conn, plan, id, l.body_bytes[id]);
        }
      }
      transport::SliceBuffer out;
      conn.TakeOutput(&out);
      if (!WriteAll(fd, out)) return;
      if (conn.done() || ((plan.hold || plan.stall) && close_held_)) return;
      if (close_after_answer) {
        CloseGracefully(fd);
        return;
      }
      if (plan.stall && conn.last_accepted_stream_id() != 0 && l.ping_acked) {
        absl::SleepFor(absl::Milliseconds(5));  // Polling close_held_.
        continue;
      }
      pollfd p = {fd, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      const ssize_t n = read(fd, buf, sizeof(buf));
      if (n <= 0) return;
      conn.Receive(transport::Slice::Copy(buf, static_cast<size_t>(n)),
                   NowNs());
      {
        absl::MutexLock lock(&mu_);
        requests_ += static_cast<int>(l.opened.size());
        if (l.ping_acked) settings_applied_ = true;
        cv_.SignalAll();
      }
      std::vector<uint32_t> opened = std::move(l.opened);
      l.opened.clear();
      for (const uint32_t id : opened) {
        if (refused < plan.refuse) {
          ++refused;
          conn.ResetStream(id, transport::Http2ErrorCode::kRefusedStream);
          absl::MutexLock lock(&mu_);
          ++refused_;
        }
      }
      if (plan.goaway_when_open > 0 && goaway_keep == 0 &&
          conn.num_active_streams() >=
              static_cast<size_t>(plan.goaway_when_open)) {
        // Our GOAWAY names the lowest open stream as the last processed:
        // the others are excluded (the client may retry them).
        goaway_keep = conn.last_accepted_stream_id() -
                      2 * (static_cast<uint32_t>(plan.goaway_when_open) - 1);
        transport::SliceBuffer goaway;
        conn.TakeOutput(&goaway);
        transport::WriteGoAway(goaway_keep, transport::Http2ErrorCode::kNoError,
                               "scripted", &goaway);
        if (!WriteAll(fd, goaway)) return;
      }
      // A GOAWAY plan answers nothing before its GOAWAY, then the one
      // stream it kept.
      if (plan.hold || plan.stall ||
          (plan.goaway_when_open > 0 && goaway_keep == 0)) {
        continue;
      }
      std::vector<uint32_t> ended = std::move(l.ended);
      l.ended.clear();
      for (const uint32_t id : ended) {
        if (plan.raw_answer) {
          transport::SliceBuffer raw;
          conn.TakeOutput(&raw);
          plan.raw_answer(id, &raw);
          if (!WriteAll(fd, raw)) return;
          continue;
        }
        if (goaway_keep != 0 && id != goaway_keep) continue;
        Answer(&conn, plan, id, l.body_bytes[id]);
        if (goaway_keep != 0) close_after_answer = true;
      }
    }
  }

  const std::vector<Plan> plans_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> close_held_{false};
  std::atomic<bool> answer_held_{false};
  std::thread thread_;
  std::vector<std::thread> connection_threads_;  // Run's only.
  absl::Mutex mu_;
  absl::CondVar cv_;
  int connections_ = 0;
  int requests_ = 0;
  int refused_ = 0;
  int answered_ = 0;
  std::vector<size_t> answered_body_bytes_;
  bool settings_applied_ = false;
};

}  // namespace testing
}  // namespace rpc

#endif  // RPC_TESTING_SCRIPTED_SERVER_H_
