// Shared by ours_client.cc and grpc_client.cc: flags, clocks, CPU accounting,
// and the parts of the workloads that do not depend on the rpc stack. A client
// prints one "RESULT <key> <value>" line per measurement; rpc_benchmark.cc
// parses them.

#ifndef BENCHMARKS_RPC_BENCH_BENCH_UTIL_H_
#define BENCHMARKS_RPC_BENCH_BENCH_UTIL_H_

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace rpcbench {

struct Flags {
  int port = 0;
  int server_pid = 0;
  double duration_s = 3;  // per workload
  int concurrency = 32;
  // Which workloads: any of the letters a, b, c ("abc": (a)-(c); "ab": no
  // stream), "identity" ((d) without compression), "compressed" ((d) with
  // gzip, (e); the server runs with --compression=gzip), or "sweep" (the
  // concurrency sweep: --sweep calls in flight on each of --sweep_channels
  // channel counts).
  std::string phase = "abc";
  // "sync": blocking stubs for (a) and (c); "callback": (a) as a chain of one
  // asynchronous call at a time (each completion starts the next, no caller
  // thread), (c) through a bidi reactor. (b) and the sweep are asynchronous
  // in both.
  std::string api = "sync";
  std::vector<int> sweep = {1, 8, 64, 512};
  std::vector<int> sweep_channels = {1, 8};
  // Busy-poll (issue 14's spin mode), microseconds; 0: off. Only ours.
  int busy_poll_us = 0;

  bool Runs(char workload) const {
    return phase.find_first_not_of("abc") == std::string::npos &&
           phase.find(workload) != std::string::npos;
  }
};

// "1,8,64" -> {1, 8, 64}; exits 2 on anything but positive integers.
inline std::vector<int> ParseIntList(const char* v) {
  std::vector<int> out;
  const char* p = v;
  while (*p != '\0') {
    char* end = nullptr;
    const long n = std::strtol(p, &end, 10);
    if (end == p || n <= 0 || (*end != ',' && *end != '\0')) {
      std::fprintf(stderr, "bad list %s\n", v);
      std::exit(2);
    }
    out.push_back(static_cast<int>(n));
    p = *end == ',' ? end + 1 : end;
  }
  return out;
}

// The value of `arg` when it is `name=value`, else nullptr.
inline const char* FlagValue(const char* arg, const char* name) {
  const size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) == 0 && arg[n] == '=') return arg + n + 1;
  return nullptr;
}

inline Flags ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    auto val = [&](const char* name) { return FlagValue(a, name); };
    if (const char* v = val("--port")) {
      f.port = std::atoi(v);
    } else if (const char* v = val("--server_pid")) {
      f.server_pid = std::atoi(v);
    } else if (const char* v = val("--duration")) {
      f.duration_s = std::atof(v);
    } else if (const char* v = val("--concurrency")) {
      f.concurrency = std::atoi(v);
    } else if (const char* v = val("--phase")) {
      f.phase = v;
    } else if (const char* v = val("--api")) {
      f.api = v;
      if (f.api != "sync" && f.api != "callback") {
        std::fprintf(stderr, "--api is sync or callback\n");
        std::exit(2);
      }
    } else if (const char* v = val("--sweep")) {
      f.sweep = ParseIntList(v);
    } else if (const char* v = val("--sweep_channels")) {
      f.sweep_channels = ParseIntList(v);
    } else if (const char* v = val("--busy_poll_us")) {
      f.busy_poll_us = std::atoi(v);
    } else {
      std::fprintf(stderr, "unknown flag %s\n", a);
      std::exit(2);
    }
  }
  if (f.port <= 0) {
    std::fprintf(stderr, "--port is required\n");
    std::exit(2);
  }
  return f;
}

using Clock = std::chrono::steady_clock;

inline double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// CPU seconds (user + system) of this process.
inline double SelfCpu() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// CPU seconds (utime + stime) of another process, from /proc/PID/stat;
// 0 when it cannot be read.
inline double ProcessCpu(int pid) {
  if (pid <= 0) return 0;
  std::string path = "/proc/" + std::to_string(pid) + "/stat";
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return 0;
  char buf[4096];
  size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  // Fields after the command name, which ends at the last ')'.
  const char* p = std::strrchr(buf, ')');
  if (p == nullptr) return 0;
  p += 2;  // ") "
  // Field 3 (state) is first here; utime and stime are fields 14 and 15.
  unsigned long long utime = 0, stime = 0;
  int field = 3;
  while (*p != '\0' && field < 14) {
    if (*p == ' ') ++field;
    ++p;
  }
  if (std::sscanf(p, "%llu %llu", &utime, &stime) != 2) return 0;
  return static_cast<double>(utime + stime) / sysconf(_SC_CLK_TCK);
}

// Context switches (voluntary + involuntary) of all threads of this process.
inline long SelfContextSwitches() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_nvcsw + ru.ru_nivcsw;
}

// Context switches (voluntary + involuntary) summed over the threads alive in
// another process, from /proc/PID/task/*/status; -1 when it cannot be read.
// Threads that exited in between are not counted: the servers keep theirs.
inline long ProcessContextSwitches(int pid) {
  if (pid <= 0) return -1;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return -1;
  long total = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    FILE* f = std::fopen((dir + "/" + e->d_name + "/status").c_str(), "r");
    if (f == nullptr) continue;  // the thread just exited
    char line[256];
    long n = 0;
    while (std::fgets(line, sizeof(line), f) != nullptr) {
      if (std::sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1 ||
          std::sscanf(line, "nonvoluntary_ctxt_switches: %ld", &n) == 1) {
        total += n;
      }
    }
    std::fclose(f);
  }
  closedir(d);
  return total;
}

inline void Result(const char* key, double value) {
  std::printf("RESULT %s %.6g\n", key, value);
  std::fflush(stdout);
}

// Reports the context switches per call of this process and of the server
// (`<prefix>_client_cs_per_call`, `<prefix>_server_cs_per_call`) between two
// samples; the server's only when it could be read both times.
inline void ResultContextSwitches(const std::string& prefix, long self0,
                                  long self1, long server0, long server1,
                                  long calls) {
  if (calls <= 0) return;
  Result((prefix + "_client_cs_per_call").c_str(),
         static_cast<double>(self1 - self0) / calls);
  if (server0 >= 0 && server1 >= 0) {
    Result((prefix + "_server_cs_per_call").c_str(),
           static_cast<double>(server1 - server0) / calls);
  }
}

// A compressible protobuf-like payload (repeated field names + random bytes),
// as in compression_benchmark.cc.
inline std::string Payload(size_t size) {
  std::string out;
  out.reserve(size + 64);
  std::mt19937 rng(1);
  static const char* kWords[] = {"feature", "latitude", "longitude", "name",
                                 "route",   "point",    "location",  "note"};
  while (out.size() < size) {
    out += kWords[rng() % 8];
    for (int i = 0; i < 6; ++i) out.push_back(static_cast<char>(rng()));
  }
  out.resize(size);
  return out;
}

// (d): sequential blocking unary calls (`call()`, false on failure) for the
// duration; reports CPU per call (this process + the server) as `key`, and
// context switches per call of each.
template <typename Call>
bool RunSequentialCpu(const Flags& flags, const char* key, Call call) {
  for (int i = 0; i < 200; ++i) {  // warm up
    if (!call()) return false;
  }
  const long cs0 = SelfContextSwitches();
  const long server_cs0 = ProcessContextSwitches(flags.server_pid);
  const double self0 = SelfCpu(), server0 = ProcessCpu(flags.server_pid);
  const Clock::time_point start = Clock::now();
  const Clock::time_point end =
      start + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(flags.duration_s));
  long calls = 0;
  while (Clock::now() < end) {
    if (!call()) return false;
    ++calls;
  }
  const double self1 = SelfCpu(), server1 = ProcessCpu(flags.server_pid);
  const long cs1 = SelfContextSwitches();
  const long server_cs1 = ProcessContextSwitches(flags.server_pid);
  Result(key, (self1 - self0 + server1 - server0) / calls * 1e6);
  // "d_identity_cpu_us_per_call" -> "d_identity_client_cs_per_call", ...
  std::string prefix = key;
  prefix = prefix.substr(0, prefix.find("_cpu_us_per_call"));
  ResultContextSwitches(prefix, cs0, cs1, server_cs0, server_cs1, calls);
  return true;
}

// Reports CPU per call over a measured interval: `<prefix>_cpu_us_per_call`
// (this process + the server), `<prefix>_client_cpu_us_per_call` and
// `<prefix>_server_cpu_us_per_call`.
inline void ResultCpu(const std::string& prefix, double self0, double self1,
                      double server0, double server1, double calls) {
  if (calls <= 0) return;
  Result((prefix + "_client_cpu_us_per_call").c_str(),
         (self1 - self0) / calls * 1e6);
  Result((prefix + "_server_cpu_us_per_call").c_str(),
         (server1 - server0) / calls * 1e6);
  Result((prefix + "_cpu_us_per_call").c_str(),
         (self1 - self0 + server1 - server0) / calls * 1e6);
}

// Reports `<prefix>_calls_per_s`, `<prefix>_p50_us` and `<prefix>_p99_us` of
// `lat` (seconds per call, sorted here) over `elapsed` seconds.
inline void ResultLatencies(const std::string& prefix, std::vector<double>* lat,
                            double elapsed) {
  if (lat->empty() || elapsed <= 0) return;
  std::sort(lat->begin(), lat->end());
  Result((prefix + "_calls_per_s").c_str(), lat->size() / elapsed);
  Result((prefix + "_p50_us").c_str(), (*lat)[lat->size() / 2] * 1e6);
  Result((prefix + "_p99_us").c_str(),
         (*lat)[std::min(lat->size() - 1, lat->size() * 99 / 100)] * 1e6);
}

// (a): `call()` makes one blocking unary call with an empty payload and
// returns false on failure. Reports calls/s, p50, p99, CPU per call and
// context switches per call.
template <typename Call>
bool RunSequential(const Flags& flags, Call call) {
  for (int i = 0; i < 200; ++i) {  // warm up
    if (!call()) return false;
  }
  std::vector<double> lat;
  lat.reserve(1 << 20);
  const long cs0 = SelfContextSwitches();
  const long server_cs0 = ProcessContextSwitches(flags.server_pid);
  const double self0 = SelfCpu(), server0 = ProcessCpu(flags.server_pid);
  const Clock::time_point start = Clock::now();
  const Clock::time_point end =
      start + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(flags.duration_s));
  Clock::time_point now = start;
  while (now < end) {
    const Clock::time_point t0 = now;
    if (!call()) return false;
    now = Clock::now();
    lat.push_back(Seconds(now - t0));
  }
  const double self1 = SelfCpu(), server1 = ProcessCpu(flags.server_pid);
  const long cs1 = SelfContextSwitches();
  const long server_cs1 = ProcessContextSwitches(flags.server_pid);
  const long calls = static_cast<long>(lat.size());
  ResultLatencies("a", &lat, Seconds(now - start));
  ResultCpu("a", self0, self1, server0, server1, static_cast<double>(calls));
  ResultContextSwitches("a", cs0, cs1, server_cs0, server_cs1, calls);
  return true;
}

// Chains of asynchronous unary calls, for (b), the sweep and (a) on the
// callback API: each chain has one call in flight, and its completion starts
// the next. A chain calls Begin(i) before it starts a call and Done(i, ok)
// from the call's completion, which says whether to start another. Each
// chain keeps its own latencies (a chain's calls never overlap, so no lock).
class Chains {
 public:
  explicit Chains(int n) : slots_(static_cast<size_t>(n)) {}
  int size() const { return static_cast<int>(slots_.size()); }

  void Begin(int i) { slots_[i].t0 = Clock::now(); }

  bool Done(int i, bool ok) {
    Slot& slot = slots_[i];
    if (measuring_.load(std::memory_order_relaxed)) {
      slot.lat.push_back(Seconds(Clock::now() - slot.t0));
    }
    if (!ok) failed_.fetch_add(1, std::memory_order_relaxed);
    if (stop_.load(std::memory_order_relaxed) || !ok) {
      active_.fetch_sub(1, std::memory_order_release);
      return false;
    }
    return true;
  }

 private:
  template <typename Start>
  friend bool RunChains(const Flags&, const std::string&, Chains*, Start);

  struct alignas(64) Slot {
    Clock::time_point t0;
    std::vector<double> lat;  // seconds, calls completed while measuring
  };
  std::vector<Slot> slots_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> measuring_{false};
  std::atomic<long> failed_{0};
  std::atomic<int> active_{0};
};

// Runs `run`'s chains given `start(i)`, which starts the first call of chain
// i: warms up for 10% of the duration, measures for the duration, stops the
// chains (bounded wait). Reports `<prefix>_calls_per_s`, `_p50_us`,
// `_p99_us`, the CPU per call (ResultCpu) and the context switches per call.
template <typename Start>
bool RunChains(const Flags& flags, const std::string& prefix, Chains* run,
               Start start) {
  run->active_ = run->size();
  for (int i = 0; i < run->size(); ++i) start(i);
  usleep(static_cast<useconds_t>(flags.duration_s * 1e5));
  const long cs0 = SelfContextSwitches();
  const long server_cs0 = ProcessContextSwitches(flags.server_pid);
  const double self0 = SelfCpu(), server0 = ProcessCpu(flags.server_pid);
  const Clock::time_point t0 = Clock::now();
  run->measuring_ = true;
  usleep(static_cast<useconds_t>(flags.duration_s * 1e6));
  run->measuring_ = false;
  const Clock::time_point t1 = Clock::now();
  const double self1 = SelfCpu(), server1 = ProcessCpu(flags.server_pid);
  const long cs1 = SelfContextSwitches();
  const long server_cs1 = ProcessContextSwitches(flags.server_pid);
  run->stop_ = true;
  // Bounded wait for the chains to drain.
  for (int i = 0; i < 1000 && run->active_.load(std::memory_order_acquire) > 0;
       ++i) {
    usleep(10000);
  }
  if (run->active_.load(std::memory_order_acquire) > 0) {
    std::fprintf(stderr, "(%s): %d calls still outstanding after 10 s\n",
                 prefix.c_str(), run->active_.load());
    return false;
  }
  if (run->failed_.load() > 0) {
    std::fprintf(stderr, "(%s): %ld calls failed\n", prefix.c_str(),
                 run->failed_.load());
    return false;
  }
  std::vector<double> lat;
  for (Chains::Slot& slot : run->slots_) {
    lat.insert(lat.end(), slot.lat.begin(), slot.lat.end());
  }
  const long calls = static_cast<long>(lat.size());
  ResultLatencies(prefix, &lat, Seconds(t1 - t0));
  ResultCpu(prefix, self0, self1, server0, server1, static_cast<double>(calls));
  ResultContextSwitches(prefix, cs0, cs1, server_cs0, server_cs1, calls);
  return true;
}

// The prefix of a sweep point's keys: "sweep_c64_ch8" for 64 calls in flight
// over 8 channels.
inline std::string SweepPrefix(int in_flight, int channels) {
  return "sweep_c" + std::to_string(in_flight) + "_ch" +
         std::to_string(channels);
}

// Runs `in_flight` chains of async unary calls (empty payload), chain i on
// stubs[i % stubs.size()], and reports them under `prefix` (RunChains).
// `Context` and `Status` are the stack's; `set_deadline(Context*)` gives a
// call its deadline.
template <typename Context, typename Status, typename Msg, typename Stub,
          typename SetDeadline>
bool RunAsyncChains(const Flags& flags, const std::string& prefix,
                    const std::vector<Stub*>& stubs, int in_flight,
                    SetDeadline set_deadline) {
  // Per chain two contexts used alternately, so that the one a completion
  // replaces finished (and its callback returned) a call earlier.
  struct Slot {
    std::unique_ptr<Context> ctx[2];
    Msg req;
    Msg resp[2];
    unsigned gen = 0;
  };
  Chains run(in_flight);
  std::vector<Slot> slots(static_cast<size_t>(in_flight));
  std::function<void(int)> start = [&](int i) {
    Slot& slot = slots[i];
    const unsigned g = slot.gen++ & 1;
    slot.ctx[g] = std::make_unique<Context>();
    set_deadline(slot.ctx[g].get());
    run.Begin(i);
    stubs[i % stubs.size()]->async()->Unary(
        slot.ctx[g].get(), &slot.req, &slot.resp[g], [&, i](Status s) {
          if (!s.ok()) {
            std::fprintf(stderr, "(%s) call failed: %s\n", prefix.c_str(),
                         s.error_message().c_str());
          }
          if (run.Done(i, s.ok())) start(i);
        });
  };
  return RunChains(flags, prefix, &run, start);
}

// The sweep: for each of --sweep_channels, that many stubs (`new_stub(i)`,
// each on a channel and connection of its own), and each --sweep in-flight
// count over them (`run(prefix, stubs, in_flight)`); the exit code.
template <typename NewStub, typename Run>
int RunSweep(const Flags& flags, NewStub new_stub, Run run) {
  for (int nch : flags.sweep_channels) {
    std::vector<decltype(new_stub(0))> owned;
    std::vector<decltype(owned[0].get())> stubs;
    for (int i = 0; i < nch; ++i) {
      owned.push_back(new_stub(i));
      stubs.push_back(owned.back().get());
    }
    for (int n : flags.sweep) {
      if (!run(SweepPrefix(n, nch), stubs, n)) return 1;
    }
  }
  return 0;
}

// (c): one bidi stream; a writer thread sends `size`-byte messages until the
// measurement ends while this thread reads the echoes. `stream` has the
// ClientReaderWriter shape of both stacks; `finish()` returns whether the
// call ended OK. The messages are `size` x's, or `payload` when not empty.
template <typename Msg, typename Stream, typename Finish>
bool RunStream(const Flags& flags, size_t size, const char* key_rate,
               const char* key_mbps, Stream* stream, Finish finish,
               const std::string& payload = std::string()) {
  std::atomic<bool> stop{false};
  std::atomic<bool> write_failed{false};
  std::thread writer([&] {
    Msg m;
    m.set_payload(payload.empty() ? std::string(size, 'x') : payload);
    while (!stop.load(std::memory_order_relaxed)) {
      if (!stream->Write(m)) {
        write_failed = true;
        break;
      }
    }
    stream->WritesDone();
  });
  Msg in;
  long n = 0;
  const Clock::time_point start = Clock::now();
  const Clock::time_point warm =
      start + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(flags.duration_s * 0.1));
  const Clock::time_point end =
      warm + std::chrono::duration_cast<Clock::duration>(
                 std::chrono::duration<double>(flags.duration_s));
  long n0 = -1;
  Clock::time_point t0, t1;
  bool ok = true;
  while (true) {
    if (!stream->Read(&in)) {
      ok = false;
      break;
    }
    if (in.payload().size() != size) {
      std::fprintf(stderr, "(c): echo of %zu bytes, sent %zu\n",
                   in.payload().size(), size);
      ok = false;
      break;
    }
    ++n;
    if ((n & 15) != 0) continue;
    const Clock::time_point now = Clock::now();
    if (n0 < 0 && now >= warm) {
      n0 = n;
      t0 = now;
    } else if (n0 >= 0 && now >= end) {
      t1 = now;
      break;
    }
  }
  stop = true;
  // Drain what is still in flight so that the writer is not stuck on flow
  // control, then end the call.
  if (ok) {
    while (stream->Read(&in)) {
    }
  }
  writer.join();
  const bool finished = finish();
  if (!ok || write_failed || !finished) {
    std::fprintf(stderr,
                 "(c) %zu bytes: stream failed (read ok=%d, write "
                 "failed=%d, finish ok=%d)\n",
                 size, ok, write_failed.load(), finished);
    return false;
  }
  const double secs = Seconds(t1 - t0);
  Result(key_rate, (n - n0) / secs);
  Result(key_mbps, (n - n0) * static_cast<double>(size) / secs / 1e6);
  return true;
}

// (c) on the callback API: `echoed` counts the echoes a reactor received
// (each of `size` octets); warms up for 10% of the duration, then reports the
// echoes per second and MB/s over the duration. `stop()` ends the stream and
// returns whether it ended well.
template <typename Stop>
bool MeasureEchoes(const Flags& flags, size_t size, const char* key_rate,
                   const char* key_mbps, const std::atomic<long>& echoed,
                   Stop stop) {
  usleep(static_cast<useconds_t>(flags.duration_s * 1e5));
  const long n0 = echoed.load();
  const Clock::time_point t0 = Clock::now();
  usleep(static_cast<useconds_t>(flags.duration_s * 1e6));
  const long n1 = echoed.load();
  const double secs = Seconds(Clock::now() - t0);
  if (!stop()) return false;
  Result(key_rate, (n1 - n0) / secs);
  Result(key_mbps, (n1 - n0) * static_cast<double>(size) / secs / 1e6);
  return true;
}

// (c) at 1 KiB and 64 KiB, one stream each: with --api=callback through a
// `StreamClient` reactor (reactors.h's StreamEchoClient over the stack's
// ClientBidiReactor), else the blocking stream (RunStream). `Context` is the
// stack's; `set_deadline(Context*, seconds)` gives the call its deadline.
template <typename Context, typename Msg, typename StreamClient, typename Stub,
          typename SetDeadline>
bool RunStreams(const Flags& flags, Stub* stub, SetDeadline set_deadline) {
  for (size_t size : {size_t{1024}, size_t{65536}}) {
    Context ctx;
    set_deadline(&ctx, flags.duration_s * 3 + 30);
    const bool small = size == 1024;
    const char* key_rate = small ? "c1k_msgs_per_s" : "c64k_msgs_per_s";
    const char* key_mbps = small ? "c1k_mb_per_s" : "c64k_mb_per_s";
    bool ok;
    if (flags.api == "callback") {
      StreamClient reactor(size);
      stub->async()->Stream(&ctx, &reactor);
      reactor.Begin();
      ok = MeasureEchoes(flags, size, key_rate, key_mbps, reactor.echoed, [&] {
        reactor.Stop();
        return reactor.Wait(30);
      });
    } else {
      auto stream = stub->Stream(&ctx);
      ok = RunStream<Msg>(flags, size, key_rate, key_mbps, stream.get(), [&] {
        const auto s = stream->Finish();
        if (!s.ok()) {
          std::fprintf(stderr, "(c) finish: %s\n", s.error_message().c_str());
        }
        return s.ok();
      });
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace rpcbench

#endif  // BENCHMARKS_RPC_BENCH_BENCH_UTIL_H_
