// //benchmarks:rpc_benchmark: our rpc stack against Debian's gRPC C++ on the
// same echo service (rpc_bench/echo.proto). For each implementation it starts
// the server as a separate process on 127.0.0.1 (port 0; it prints the port),
// then runs the client process (rpc_bench/*_client.cc), which measures
//   (a) sequential unary calls with an empty payload: calls/s, p50, p99;
//   (b) 32 unary calls outstanding on one connection: calls/s and CPU per
//       call (client getrusage + server /proc/PID/stat);
//   (c) one bidi stream echoing 1 KiB (msgs/s) and 64 KiB (MB/s) messages;
// then, each on a fresh server (client --phase=identity, then a server with
// --compression=gzip and client --phase=compressed),
//   (d) sequential unary calls with a 100-byte payload, identity and then
//       gzip (client sets gzip, server default gzip): CPU per call (client +
//       server) both ways and the difference;
//   (e) one bidi stream echoing 64 KiB compressible messages (field names +
//       random bytes) in gzip (both stacks), deflate and zstd (ours): MB/s,
//       and the codec's ratio on that payload (ours' compression::Compressor);
// repeats that --reps times (median), kills the server and prints two tables
// with both rows and the ratio ours / grpc++.
//
// Flags: --duration=S per workload (3), --reps=N (3), --pin=0|1 (0; 1: server
// on CPU 0, client on CPU 1, when there are two CPUs), --compression_only=1
// (only (d) and (e)), and the binaries
// (--ours_server= --ours_client= --grpc_server= --grpc_client=, set by BUILD).

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

// One repetition for one implementation; false (with a message) on failure.
bool RunOnce(const std::string& server_bin, const std::string& client_bin,
             const std::string& phase, double duration, bool pin,
             Results* out) {
  std::vector<std::string> server_args = {server_bin};
  if (phase == "compressed") server_args.push_back("--compression=gzip");
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
  Child client =
      Spawn({client_bin, "--port=" + std::to_string(port),
             "--server_pid=" + std::to_string(server.pid),
             "--duration=" + std::to_string(duration), "--phase=" + phase},
            pin ? 1 : -1);
  // At most four timed workloads plus warm-ups and connection setup.
  const double limit = duration * 4 * 1.5 + 30;
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

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Column {
  const char* key;
  const char* title;
};

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
};

template <size_t N>
void PrintTable(const Column (&columns)[N],
                std::map<std::string, Results>& median) {
  const char* impls[] = {"ours", "grpc"};
  std::printf("| | ");
  for (const Column& c : columns) std::printf("%s | ", c.title);
  std::printf("\n|---|");
  for (size_t i = 0; i < N; ++i) std::printf("---:|");
  std::printf("\n");
  const char* names[] = {"ours", "grpc++"};
  for (int i = 0; i < 2; ++i) {
    std::printf("| %s | ", names[i]);
    for (const Column& c : columns) {
      auto it = median[impls[i]].find(c.key);
      if (it == median[impls[i]].end()) {
        std::printf("- | ");
      } else {
        std::printf(std::fabs(it->second) >= 1000 ? "%.0f | " : "%.3g | ",
                    it->second);
      }
    }
    std::printf("\n");
  }
  std::printf("| ours / grpc++ | ");
  for (const Column& c : columns) {
    auto a = median["ours"].find(c.key), b = median["grpc"].find(c.key);
    if (a == median["ours"].end() || b == median["grpc"].end() ||
        b->second <= 0) {
      std::printf("- | ");
    } else {
      std::printf("%.2fx | ", a->second / b->second);
    }
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> flags = {{"duration", "3"},
                                              {"reps", "3"},
                                              {"pin", "0"},
                                              {"compression_only", "0"}};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    size_t eq = a.find('=');
    if (a.rfind("--", 0) != 0 || eq == std::string::npos) {
      std::fprintf(stderr, "bad flag %s\n", a.c_str());
      return 2;
    }
    flags[a.substr(2, eq - 2)] = a.substr(eq + 1);
  }
  const double duration = std::atof(flags["duration"].c_str());
  const int reps = std::max(1, std::atoi(flags["reps"].c_str()));
  const bool pin = flags["pin"] == "1" && sysconf(_SC_NPROCESSORS_ONLN) >= 2;
  const bool compression_only = flags["compression_only"] == "1";
  signal(SIGPIPE, SIG_IGN);

  std::vector<std::string> phases = {"identity", "compressed"};
  if (!compression_only) phases.insert(phases.begin(), "abc");
  const char* impls[] = {"ours", "grpc"};
  std::map<std::string, Results> median;
  bool ok = true;
  for (const char* impl : impls) {
    std::map<std::string, std::vector<double>> all;
    for (int r = 0; r < reps; ++r) {
      Results res;
      for (const std::string& phase : phases) {
        if (!RunOnce(flags[std::string(impl) + "_server"],
                     flags[std::string(impl) + "_client"], phase, duration, pin,
                     &res)) {
          ok = false;
        }
      }
      for (const auto& [k, v] : res) all[k].push_back(v);
      std::fprintf(stderr, "%s rep %d done\n", impl, r + 1);
    }
    for (const auto& [k, v] : all) median[impl][k] = Median(v);
    Results& m = median[impl];
    if (m.count("d_identity_cpu_us_per_call") &&
        m.count("d_gzip_cpu_us_per_call")) {
      m["d_diff_cpu_us_per_call"] =
          m["d_gzip_cpu_us_per_call"] - m["d_identity_cpu_us_per_call"];
    }
  }

  std::printf("rpc_benchmark: %.1f s per workload, median of %d, %s\n",
              duration, reps,
              pin ? "server on CPU 0, client on CPU 1" : "not pinned");
  if (!compression_only) {
    PrintTable(kColumns, median);
    std::printf("\n");
  }
  PrintTable(kCompressionColumns, median);
  if (!ok) std::fprintf(stderr, "rpc_benchmark: some runs failed\n");
  return ok ? 0 : 1;
}
