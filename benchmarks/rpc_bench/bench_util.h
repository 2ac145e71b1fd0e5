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
  // Which workloads: "abc" ((a)-(c)), "identity" ((d) without compression),
  // "compressed" ((d) with gzip, (e)); the server of "compressed" runs with
  // --compression=gzip.
  std::string phase = "abc";
};

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

// (a): `call()` makes one blocking unary call with an empty payload and
// returns false on failure. Also reports context switches per call.
template <typename Call>
bool RunSequential(const Flags& flags, Call call) {
  for (int i = 0; i < 200; ++i) {  // warm up
    if (!call()) return false;
  }
  std::vector<double> lat;
  lat.reserve(1 << 20);
  const long cs0 = SelfContextSwitches();
  const long server_cs0 = ProcessContextSwitches(flags.server_pid);
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
  const long cs1 = SelfContextSwitches();
  const long server_cs1 = ProcessContextSwitches(flags.server_pid);
  const double elapsed = Seconds(now - start);
  std::sort(lat.begin(), lat.end());
  Result("a_calls_per_s", lat.size() / elapsed);
  Result("a_p50_us", lat[lat.size() / 2] * 1e6);
  Result("a_p99_us",
         lat[std::min(lat.size() - 1, lat.size() * 99 / 100)] * 1e6);
  ResultContextSwitches("a", cs0, cs1, server_cs0, server_cs1,
                        static_cast<long>(lat.size()));
  return true;
}

// (b): shared state of `concurrency` chains of asynchronous unary calls; each
// completion calls `Next`, which says whether to start another.
struct ConcurrentRun {
  std::atomic<bool> stop{false};
  std::atomic<long> completed{0};
  std::atomic<long> failed{0};
  std::atomic<int> active{0};
  // Called from a completion; returns whether the chain goes on.
  bool Next(bool ok) {
    if (!ok) failed.fetch_add(1, std::memory_order_relaxed);
    completed.fetch_add(1, std::memory_order_relaxed);
    if (stop.load(std::memory_order_relaxed) || !ok) {
      active.fetch_sub(1);
      return false;
    }
    return true;
  }
};

// Runs (b) given `start(slot)`, which starts the first call of chain `slot`;
// reports calls/s and CPU per call (this process + the server).
template <typename Start>
bool RunConcurrent(const Flags& flags, ConcurrentRun* run, Start start) {
  run->active = flags.concurrency;
  for (int i = 0; i < flags.concurrency; ++i) start(i);
  // Warm up for 10% of the duration, then measure.
  usleep(static_cast<useconds_t>(flags.duration_s * 1e5));
  const long c0 = run->completed.load();
  const double self0 = SelfCpu(), server0 = ProcessCpu(flags.server_pid);
  const Clock::time_point t0 = Clock::now();
  usleep(static_cast<useconds_t>(flags.duration_s * 1e6));
  const long c1 = run->completed.load();
  const double self1 = SelfCpu(), server1 = ProcessCpu(flags.server_pid);
  const Clock::time_point t1 = Clock::now();
  run->stop = true;
  // Bounded wait for the chains to drain.
  for (int i = 0; i < 1000 && run->active.load() > 0; ++i) usleep(10000);
  if (run->active.load() > 0) {
    std::fprintf(stderr, "(b): %d calls still outstanding after 10 s\n",
                 run->active.load());
    return false;
  }
  if (run->failed.load() > 0) {
    std::fprintf(stderr, "(b): %ld calls failed\n", run->failed.load());
    return false;
  }
  const double calls = c1 - c0;
  Result("b_calls_per_s", calls / Seconds(t1 - t0));
  Result("b_client_cpu_us_per_call", (self1 - self0) / calls * 1e6);
  Result("b_server_cpu_us_per_call", (server1 - server0) / calls * 1e6);
  Result("b_cpu_us_per_call",
         (self1 - self0 + server1 - server0) / calls * 1e6);
  return true;
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

}  // namespace rpcbench

#endif  // BENCHMARKS_RPC_BENCH_BENCH_UTIL_H_
