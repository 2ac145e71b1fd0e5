// //benchmarks:rpc_benchmark: our rpc stack against Debian's gRPC C++ on the
// same echo service (rpc_bench/echo.proto). For each implementation it starts
// the server as a separate process on 127.0.0.1 (port 0; it prints the port),
// then runs the client process (rpc_bench/*_client.cc), which measures
//   (a) sequential unary calls with an empty payload: calls/s, p50, p99, CPU
//       per call (client + server), and context switches per call of the
//       client (getrusage, all threads) and of the server
//       (/proc/PID/task/*/status);
//   (b) 32 unary calls outstanding on one connection: calls/s and CPU per
//       call (client getrusage + server /proc/PID/stat);
//   (c) one bidi stream echoing 1 KiB (msgs/s) and 64 KiB (MB/s) messages;
// then, each on a fresh server (client --phase=identity, then a server with
// --compression=gzip and client --phase=compressed),
//   (d) sequential unary calls with a 100-byte payload, identity and then
//       gzip (client sets gzip, server default gzip): CPU per call (client +
//       server) both ways and the difference, and context switches per
//       identity call as in (a);
//   (e) one bidi stream echoing 64 KiB compressible messages (field names +
//       random bytes) in gzip (both stacks), deflate and zstd (ours): MB/s,
//       and the codec's ratio on that payload (ours' compression::Compressor);
// then the concurrency sweep on the same pair of processes: --sweep unary
// calls in flight (async clients, each completion starts the next call) on
// each of --sweep_channels channel counts: calls/s, p99, CPU per call; and
// the floor of (a): a raw loopback TCP ping-pong of 64 octets between two
// processes (rpc_bench/pingpong.cc), blocking and spinning, measured as (a).
// With --callback_rows=1 (the default) (a)-(c) also run on the callback
// servers (blocking client), and on callback servers with callback clients
// ((a) a chain of one async call at a time, (c) a bidi reactor), for each
// workload both stacks' APIs have; and (a) on ours with busy-poll
// (--busy_poll_us) on both sides.
// It repeats all that --reps times, interleaved: each repetition runs the two
// floors, then each pair of rows (ours, grpc++), ours first in odd
// repetitions and grpc++ first in even ones. It prints the medians in two
// tables (ours, grpc++, the ratio ours / grpc++, and the floor rows in the (a)
// columns), how far each stack's (a) is from the blocking floor, and with
// --json=PATH writes every median there.
//
// Flags: --duration=S per workload (3), --reps=N (3), --pin=0|1 (0; 1: server
// on CPU 0, client on CPU 1, when there are two CPUs), --compression_only=1
// (only (d) and (e), no floor, sweep or extra rows), --json=PATH,
// --sweep=1,8,64,512 (empty: no sweep), --sweep_channels=1,8,
// --callback_rows=0|1 (1), --busy_poll_us=N (50; 0: no busy-poll row), and the
// binaries
// (--ours_server= --ours_client= --grpc_server= --grpc_client= --pingpong=,
// set by BUILD; without --pingpong there are no floor rows).

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Child {
  pid_t pid = -1;
  int out = -1;  // read end of its stdout
};

// Starts argv with stdout on a pipe, pinned to `cpu` when >= 0.
Child Spawn(const std::vector<std::string>& args, int cpu) {
  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("pipe");
    std::exit(1);
  }
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(1);
  }
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    if (cpu >= 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      sched_setaffinity(0, sizeof(set), &set);
    }
    std::vector<char*> argv;
    for (const std::string& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    std::perror("execv");
    _exit(127);
  }
  close(fds[1]);
  return Child{pid, fds[0]};
}

// Reads from `fd` until `done(text)` or EOF or `timeout_s`; returns the text.
template <typename Done>
std::string ReadUntil(int fd, double timeout_s, Done done, bool* timed_out) {
  std::string text;
  const Clock::time_point end =
      Clock::now() +
      std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  *timed_out = false;
  while (!done(text)) {
    const long left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          end - Clock::now())
                          .count();
    if (left <= 0) {
      *timed_out = true;
      break;
    }
    pollfd p{fd, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    text.append(buf, n);
  }
  return text;
}

void Kill(Child* c) {
  if (c->pid > 0) {
    kill(c->pid, SIGKILL);
    waitpid(c->pid, nullptr, 0);
    c->pid = -1;
  }
  if (c->out >= 0) close(c->out);
  c->out = -1;
}

using Results = std::map<std::string, double>;

// Starts `server_args` (which prints "PORT <n>"), then `client_args` plus
// --port= and --server_pid=, bounded by `limit` seconds (killed after it), and
// adds the client's RESULT lines to `out`; false (with a message) on failure.
bool RunPair(std::vector<std::string> server_args,
             std::vector<std::string> client_args, double limit, bool pin,
             Results* out) {
  const std::string& server_bin = server_args[0];
  const std::string& client_bin = client_args[0];
  Child server = Spawn(server_args, pin ? 0 : -1);
  bool timed_out = false;
  std::string line = ReadUntil(
      server.out, 10,
      [](const std::string& t) { return t.find('\n') != std::string::npos; },
      &timed_out);
  int port = 0;
  if (std::sscanf(line.c_str(), "PORT %d", &port) != 1 || port <= 0) {
    std::fprintf(stderr, "%s: no port printed%s\n", server_bin.c_str(),
                 timed_out ? " within 10 s" : "");
    Kill(&server);
    return false;
  }
  client_args.push_back("--port=" + std::to_string(port));
  client_args.push_back("--server_pid=" + std::to_string(server.pid));
  Child client = Spawn(client_args, pin ? 1 : -1);
  std::string text = ReadUntil(
      client.out, limit, [](const std::string&) { return false; }, &timed_out);
  int status = 0;
  bool ok = true;
  if (timed_out) {
    std::fprintf(stderr, "%s: no end within %.0f s (hang?); killed\n",
                 client_bin.c_str(), limit);
    Kill(&client);
    ok = false;
  } else {
    waitpid(client.pid, &status, 0);
    client.pid = -1;
    Kill(&client);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "%s: failed (status %d)\n", client_bin.c_str(),
                   status);
      ok = false;
    }
  }
  Kill(&server);
  std::istringstream in(text);
  std::string word, key;
  double value;
  while (in >> word) {
    if (word == "RESULT" && in >> key >> value) (*out)[key] = value;
  }
  return ok;
}

// What the driver runs: rows of the rpc stacks (a stack's server and client
// with flags), and the two floors. Each has the key of its results (in
// `median` and in --json) and its row name in the tables.
struct Impl {
  const char* key;
  const char* row;
  const char* stack;  // "ours" or "grpc": which binaries; "" for the floors
  std::vector<std::string> server_flags;
  std::vector<std::string> client_flags;
  // The client phases it runs ("abc", "ab", "a", "identity", "compressed",
  // "sweep"); the main rows run them all, the callback and busy-poll rows
  // only the workloads their API has on both sides.
  std::vector<std::string> phases;
};

struct Options {
  double duration = 3;
  bool pin = false;
  std::string sweep;           // --sweep= for the clients; empty: no sweep
  std::string sweep_channels;  // --sweep_channels=
  int sweep_points = 0;        // sweep x sweep_channels
};

// One phase of one repetition of an rpc implementation.
bool RunOnce(std::map<std::string, std::string>& flags, const Impl& impl,
             const std::string& phase, const Options& o, Results* out) {
  std::vector<std::string> server_args = {
      flags[std::string(impl.stack) + "_server"]};
  server_args.insert(server_args.end(), impl.server_flags.begin(),
                     impl.server_flags.end());
  if (phase == "compressed") server_args.push_back("--compression=gzip");
  std::vector<std::string> client_args = {
      flags[std::string(impl.stack) + "_client"],
      "--duration=" + std::to_string(o.duration), "--phase=" + phase};
  client_args.insert(client_args.end(), impl.client_flags.begin(),
                     impl.client_flags.end());
  // At most four timed workloads (or the sweep's points) plus warm-ups and
  // connection setup.
  double workloads = 4;
  if (phase == "sweep") {
    client_args.push_back("--sweep=" + o.sweep);
    client_args.push_back("--sweep_channels=" + o.sweep_channels);
    workloads = o.sweep_points;
  }
  return RunPair(server_args, client_args, o.duration * workloads * 1.5 + 30,
                 o.pin, out);
}

// One repetition of the floor: raw TCP ping-pong, blocking or spinning.
bool RunFloor(const std::string& bin, bool spin, double duration, bool pin,
              Results* out) {
  const std::string spin_flag = spin ? "--spin=1" : "--spin=0";
  return RunPair({bin, "--mode=server", spin_flag},
                 {bin, "--mode=client", spin_flag,
                  "--duration=" + std::to_string(duration)},
                 duration * 1.5 + 30, pin, out);
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Column {
  const char* key;
  const char* title;
};

// New columns go at the end: scripts read the titles.
const Column kColumns[] = {
    {"a_calls_per_s", "(a) calls/s"},
    {"a_p50_us", "(a) p50 us"},
    {"a_p99_us", "(a) p99 us"},
    {"b_calls_per_s", "(b) calls/s"},
    {"b_cpu_us_per_call", "(b) CPU us/call"},
    {"b_client_cpu_us_per_call", "(b) client"},
    {"b_server_cpu_us_per_call", "(b) server"},
    {"c1k_msgs_per_s", "(c) 1 KiB msgs/s"},
    {"c64k_mb_per_s", "(c) 64 KiB MB/s"},
    {"a_client_cs_per_call", "(a) client cs/call"},
    {"a_server_cs_per_call", "(a) server cs/call"},
    {"a_cpu_us_per_call", "(a) CPU us/call"},
};

const Column kCompressionColumns[] = {
    {"d_identity_cpu_us_per_call", "(d) identity CPU us/call"},
    {"d_gzip_cpu_us_per_call", "(d) gzip CPU us/call"},
    {"d_diff_cpu_us_per_call", "(d) gzip - identity"},
    {"e_gzip_mb_per_s", "(e) gzip MB/s"},
    {"e_deflate_mb_per_s", "(e) deflate MB/s"},
    {"e_zstd_mb_per_s", "(e) zstd MB/s"},
    {"e_gzip_ratio", "gzip ratio"},
    {"e_deflate_ratio", "deflate ratio"},
    {"e_zstd_ratio", "zstd ratio"},
    {"d_identity_client_cs_per_call", "(d) identity client cs/call"},
    {"d_identity_server_cs_per_call", "(d) identity server cs/call"},
};

// The rows. The main two run every phase; the callback rows (a) to (c)
// only (a phase a row does not run prints "-"): Stream is a
// ServerBidiReactor on the callback servers, and the callback clients run
// (c) through a ClientBidiReactor.
const Impl kOurs{"ours", "ours", "ours",
                 {},     {},     {"abc", "identity", "compressed", "sweep"}};
const Impl kGrpc{"grpc", "grpc++", "grpc",
                 {},     {},       {"abc", "identity", "compressed", "sweep"}};
const Impl kOursCallbackServer{"ours_callback_server",
                               "ours, callback server",
                               "ours",
                               {"--callback=1"},
                               {},
                               {"abc"}};
const Impl kGrpcCallbackServer{"grpc_callback_server",
                               "grpc++, callback server",
                               "grpc",
                               {"--callback=1"},
                               {},
                               {"abc"}};
const Impl kOursCallback{"ours_callback",
                         "ours, callback server and client",
                         "ours",
                         {"--callback=1"},
                         {"--api=callback"},
                         {"abc"}};
const Impl kGrpcCallback{"grpc_callback",
                         "grpc++, callback server and client",
                         "grpc",
                         {"--callback=1"},
                         {"--api=callback"},
                         {"abc"}};
// Its flags get --busy_poll_us=N (--busy_poll_us of the driver) in main.
const Impl kOursBusyPoll{
    "ours_busy_poll", "ours, busy-poll", "ours", {}, {}, {"a"}};
const Impl kFloorBlocking{"floor_blocking", "floor (blocking)", "", {}, {}, {}};
const Impl kFloorSpinning{"floor_spinning", "floor (spinning)", "", {}, {}, {}};

// A row of the stacks' tables: `impl`'s medians, or (with a title) the
// ratio of `impl`'s over `versus`'.
struct Row {
  const Impl* impl;
  const Impl* versus = nullptr;
  const char* ratio_title = nullptr;
};

void PrintRow(const char* name, const Column* columns, size_t n,
              const Results& r) {
  std::printf("| %s | ", name);
  for (size_t i = 0; i < n; ++i) {
    auto it = r.find(columns[i].key);
    if (it == r.end()) {
      std::printf("- | ");
    } else {
      std::printf(std::fabs(it->second) >= 1000 ? "%.0f | " : "%.3g | ",
                  it->second);
    }
  }
  std::printf("\n");
}

void PrintRatioRow(const char* name, const Column* columns, size_t n,
                   const Results& a, const Results& b) {
  std::printf("| %s | ", name);
  for (size_t i = 0; i < n; ++i) {
    auto x = a.find(columns[i].key), y = b.find(columns[i].key);
    if (x == a.end() || y == b.end() || y->second <= 0) {
      std::printf("- | ");
    } else {
      std::printf("%.2fx | ", x->second / y->second);
    }
  }
  std::printf("\n");
}

// The table of `columns`: `rows` (ours, grpc++, their ratio first, as
// before), then the floor rows when they were measured (only the (a)
// columns are filled there).
template <size_t N>
void PrintTable(const Column (&columns)[N], const std::vector<Row>& rows,
                std::map<std::string, Results>& median, bool floors) {
  std::printf("| | ");
  for (const Column& c : columns) std::printf("%s | ", c.title);
  std::printf("\n|---|");
  for (size_t i = 0; i < N; ++i) std::printf("---:|");
  std::printf("\n");
  for (const Row& row : rows) {
    if (row.ratio_title == nullptr) {
      PrintRow(row.impl->row, columns, N, median[row.impl->key]);
    } else {
      PrintRatioRow(row.ratio_title, columns, N, median[row.impl->key],
                    median[row.versus->key]);
    }
  }
  if (!floors) return;
  for (const Impl* impl : {&kFloorBlocking, &kFloorSpinning}) {
    PrintRow(impl->row, columns, N, median[impl->key]);
  }
}

// One line: "(a) against the blocking floor: ours calls/s 0.52x, p50 1.9x,
// p99 2.1x; grpc++ calls/s ...", each row's median over the floor's.
void PrintFloorRatios(const std::vector<const Impl*>& impls,
                      std::map<std::string, Results>& median) {
  const Column kRatios[] = {
      {"a_calls_per_s", "calls/s"}, {"a_p50_us", "p50"}, {"a_p99_us", "p99"}};
  const Results& floor = median[kFloorBlocking.key];
  std::printf("(a) against the blocking floor:");
  const char* sep = " ";
  for (const Impl* impl : impls) {
    const Results& r = median[impl->key];
    if (r.count("a_calls_per_s") == 0) continue;
    std::printf("%s%s", sep, impl->row);
    sep = "; ";
    const char* inner = " ";
    for (const Column& c : kRatios) {
      auto a = r.find(c.key), b = floor.find(c.key);
      if (a == r.end() || b == floor.end() || b->second <= 0) {
        std::printf("%s%s -", inner, c.title);
      } else {
        std::printf("%s%s %.2fx", inner, c.title, a->second / b->second);
      }
      inner = ", ";
    }
  }
  std::printf("\n");
}

std::vector<int> IntList(const std::string& v) {
  std::vector<int> out;
  std::istringstream in(v);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(std::atoi(item.c_str()));
  }
  return out;
}

// The concurrency sweep: per point (calls in flight x channels) calls/s, p99
// and CPU per call (client + server) of ours and grpc++, with the ratios.
void PrintSweep(const std::vector<int>& sweep, const std::vector<int>& channels,
                std::map<std::string, Results>& median) {
  struct Metric {
    const char* suffix;
    const char* title;
  };
  const Metric kMetrics[] = {{"_calls_per_s", "calls/s"},
                             {"_p99_us", "p99 us"},
                             {"_cpu_us_per_call", "CPU us/call"}};
  std::printf("| sweep: in flight | channels | ");
  for (const Metric& m : kMetrics) {
    std::printf("ours %s | grpc++ %s | ours / grpc++ | ", m.title, m.title);
  }
  std::printf("\n|---:|---:|");
  for (size_t i = 0; i < 3 * (sizeof(kMetrics) / sizeof(kMetrics[0])); ++i) {
    std::printf("---:|");
  }
  std::printf("\n");
  const Results& ours = median[kOurs.key];
  const Results& grpc = median[kGrpc.key];
  auto cell = [](const Results& r, const std::string& key, double* v) {
    auto it = r.find(key);
    if (it == r.end()) {
      std::printf("- | ");
      return false;
    }
    *v = it->second;
    std::printf(std::fabs(*v) >= 1000 ? "%.0f | " : "%.3g | ", *v);
    return true;
  };
  for (int nch : channels) {
    for (int n : sweep) {
      std::printf("| %d | %d | ", n, nch);
      const std::string prefix =
          "sweep_c" + std::to_string(n) + "_ch" + std::to_string(nch);
      for (const Metric& m : kMetrics) {
        double a = 0, b = 0;
        const bool has_a = cell(ours, prefix + m.suffix, &a);
        const bool has_b = cell(grpc, prefix + m.suffix, &b);
        if (has_a && has_b && b > 0) {
          std::printf("%.2fx | ", a / b);
        } else {
          std::printf("- | ");
        }
      }
      std::printf("\n");
    }
  }
}

// {"ours": {"a_calls_per_s": ..., ...}, "grpc": {...}, ...}: the medians of
// every metric, as in the tables but with every key the clients reported.
bool WriteJson(const std::string& path, int reps, const Options& o,
               const std::vector<const Impl*>& impls,
               std::map<std::string, Results>& median) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::perror(path.c_str());
    return false;
  }
  std::fprintf(f,
               "{\n  \"config\": {\"duration_s\": %g, \"reps\": %d, "
               "\"pinned\": %s, \"sweep\": [%s], \"sweep_channels\": [%s]},\n",
               o.duration, reps, o.pin ? "true" : "false", o.sweep.c_str(),
               o.sweep_channels.c_str());
  const char* sep = "";
  for (const Impl* impl : impls) {
    auto it = median.find(impl->key);
    if (it == median.end() || it->second.empty()) continue;
    std::fprintf(f, "%s  \"%s\": {", sep, impl->key);
    sep = ",\n";
    const char* inner = "";
    for (const auto& [k, v] : it->second) {
      if (std::isfinite(v)) {
        std::fprintf(f, "%s\"%s\": %.6g", inner, k.c_str(), v);
      } else {
        std::fprintf(f, "%s\"%s\": null", inner, k.c_str());
      }
      inner = ", ";
    }
    std::fprintf(f, "}");
  }
  std::fprintf(f, "\n}\n");
  return std::fclose(f) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> flags = {{"duration", "3"},
                                              {"reps", "3"},
                                              {"pin", "0"},
                                              {"compression_only", "0"},
                                              {"json", ""},
                                              {"sweep", "1,8,64,512"},
                                              {"sweep_channels", "1,8"},
                                              {"callback_rows", "1"},
                                              {"busy_poll_us", "50"}};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    size_t eq = a.find('=');
    if (a.rfind("--", 0) != 0 || eq == std::string::npos) {
      std::fprintf(stderr, "bad flag %s\n", a.c_str());
      return 2;
    }
    flags[a.substr(2, eq - 2)] = a.substr(eq + 1);
  }
  Options o;
  o.duration = std::atof(flags["duration"].c_str());
  const int reps = std::max(1, std::atoi(flags["reps"].c_str()));
  o.pin = flags["pin"] == "1" && sysconf(_SC_NPROCESSORS_ONLN) >= 2;
  const bool compression_only = flags["compression_only"] == "1";
  const bool floors = !compression_only && !flags["pingpong"].empty();
  const std::vector<int> sweep = IntList(flags["sweep"]);
  const std::vector<int> sweep_channels = IntList(flags["sweep_channels"]);
  if (!compression_only && !sweep.empty() && !sweep_channels.empty()) {
    o.sweep = flags["sweep"];
    o.sweep_channels = flags["sweep_channels"];
    o.sweep_points = static_cast<int>(sweep.size() * sweep_channels.size());
  }
  const int busy_poll_us = std::atoi(flags["busy_poll_us"].c_str());
  signal(SIGPIPE, SIG_IGN);

  // The rows of the stacks' table (each pair: ours, then grpc++ with the
  // ratio), and the pairs run per repetition, ours first in odd repetitions
  // and grpc++ first in even ones.
  Impl busy = kOursBusyPoll;
  busy.server_flags.push_back("--busy_poll_us=" + std::to_string(busy_poll_us));
  busy.client_flags.push_back("--busy_poll_us=" + std::to_string(busy_poll_us));
  struct Pair {
    const Impl* ours;
    const Impl* grpc;  // nullptr: the busy-poll row, against grpc++'s main
    const char* ratio_title;
  };
  std::vector<Pair> pairs = {{&kOurs, &kGrpc, "ours / grpc++"}};
  if (!compression_only && flags["callback_rows"] == "1") {
    pairs.push_back({&kOursCallbackServer, &kGrpcCallbackServer,
                     "ours / grpc++, callback server"});
    pairs.push_back({&kOursCallback, &kGrpcCallback,
                     "ours / grpc++, callback server and client"});
  }
  if (!compression_only && busy_poll_us > 0) {
    pairs.push_back({&busy, nullptr, "ours busy-poll / grpc++"});
  }
  std::vector<Row> rows;
  for (const Pair& p : pairs) {
    rows.push_back({p.ours});
    if (p.grpc != nullptr) rows.push_back({p.grpc});
    rows.push_back(
        {p.ours, p.grpc != nullptr ? p.grpc : &kGrpc, p.ratio_title});
  }

  std::vector<const Impl*> impls;
  for (const Pair& p : pairs) {
    impls.push_back(p.ours);
    if (p.grpc != nullptr) impls.push_back(p.grpc);
  }
  std::map<std::string, std::map<std::string, std::vector<double>>> all;
  bool ok = true;
  for (int r = 0; r < reps; ++r) {
    if (floors) {
      for (bool spin : {false, true}) {
        Results res;
        if (!RunFloor(flags["pingpong"], spin, o.duration, o.pin, &res)) {
          ok = false;
        }
        const char* key = spin ? kFloorSpinning.key : kFloorBlocking.key;
        for (const auto& [k, v] : res) all[key][k].push_back(v);
      }
    }
    for (const Pair& p : pairs) {
      std::vector<const Impl*> order = {p.ours};
      if (p.grpc != nullptr) {
        order = r % 2 == 0 ? std::vector<const Impl*>{p.ours, p.grpc}
                           : std::vector<const Impl*>{p.grpc, p.ours};
      }
      for (const Impl* impl : order) {
        Results res;
        for (const std::string& phase : impl->phases) {
          if (compression_only && phase != "identity" && phase != "compressed")
            continue;
          if (phase == "sweep" && o.sweep_points == 0) continue;
          if (!RunOnce(flags, *impl, phase, o, &res)) ok = false;
        }
        for (const auto& [k, v] : res) all[impl->key][k].push_back(v);
      }
    }
    std::fprintf(stderr, "rep %d done (%s first)\n", r + 1,
                 r % 2 == 0 ? "ours" : "grpc++");
  }
  std::map<std::string, Results> median;
  for (const auto& [impl, metrics] : all) {
    for (const auto& [k, v] : metrics) median[impl][k] = Median(v);
  }
  for (const Impl* impl : {&kOurs, &kGrpc}) {
    Results& m = median[impl->key];
    if (m.count("d_identity_cpu_us_per_call") &&
        m.count("d_gzip_cpu_us_per_call")) {
      m["d_diff_cpu_us_per_call"] =
          m["d_gzip_cpu_us_per_call"] - m["d_identity_cpu_us_per_call"];
    }
  }

  std::printf(
      "rpc_benchmark: %.1f s per workload, median of %d, interleaved "
      "(ours first in odd repetitions), %s\n",
      o.duration, reps,
      o.pin ? "server on CPU 0, client on CPU 1" : "not pinned");
  if (!compression_only) {
    PrintTable(kColumns, rows, median, floors);
    if (floors) PrintFloorRatios(impls, median);
    std::printf("\n");
  }
  PrintTable(kCompressionColumns,
             {{&kOurs}, {&kGrpc}, {&kOurs, &kGrpc, "ours / grpc++"}}, median,
             false);
  if (o.sweep_points > 0) {
    std::printf("\n");
    PrintSweep(sweep, sweep_channels, median);
  }
  std::vector<const Impl*> json_impls = impls;
  json_impls.push_back(&kFloorBlocking);
  json_impls.push_back(&kFloorSpinning);
  if (!flags["json"].empty() &&
      !WriteJson(flags["json"], reps, o, json_impls, median)) {
    ok = false;
  }
  if (!ok) std::fprintf(stderr, "rpc_benchmark: some runs failed\n");
  return ok ? 0 : 1;
}
