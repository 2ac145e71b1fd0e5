// hpack_tool: our HPACK codec against the hpack-test-case corpus and against
// real traffic.
//
//   hpack_tool verify FILE...
//   hpack_tool encode [--table-size N] --out DIR FILE...
//   hpack_tool ratio [--table-sizes 256,4096,16384] FILE...
//   hpack_tool seeds [--table-size N] [--max-bytes N] --out DIR FILE...
//
// See README.md for what each prints and the definitions behind the numbers.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "hpack/fuzz/fuzz_input.h"
#include "hpack/tool/har.h"
#include "hpack/tool/message.h"
#include "hpack/tool/ratio.h"
#include "hpack/tool/story.h"
#include "hpack/tool/story_codec.h"
#ifdef HPACK_TOOL_NGHTTP2
#include "hpack/tool/nghttp2_peer.h"
#endif

namespace hpack {
namespace tool {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

constexpr char kUsage[] =
    "usage:\n"
    "  hpack_tool verify FILE...\n"
    "      Decode hpack-test-case stories and compare with their headers.\n"
    "  hpack_tool encode [--table-size N] --out DIR FILE...\n"
    "      Encode the stories' headers (default table size 4096) and write\n"
    "      DIR/<basename> in the same JSON schema.\n"
    "  hpack_tool ratio [--table-sizes 256,4096,16384] FILE...\n"
    "      Compression ratio table over stories or HAR files.\n"
    "  hpack_tool seeds [--table-size N] [--max-bytes N] --out DIR FILE...\n"
    "      Write decoder fuzzer seeds (hpack/fuzz/fuzz_input.h) from\n"
    "      stories.\n";

int Usage(const std::string& problem) {
  if (!problem.empty()) {
    std::fprintf(stderr, "hpack_tool: %s\n", problem.c_str());
  }
  std::fputs(kUsage, stderr);
  return kExitUsage;
}

bool ParseUint32(std::string_view s, uint32_t* out) {
  if (s.empty() || s.size() > 10) return false;
  uint64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > UINT32_MAX) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

// Flags ("--name value" or "--name=value") and files, in any order.
struct Args {
  std::vector<std::pair<std::string, std::string>> flags;
  std::vector<std::string> files;
};

bool SplitArgs(int argc, char** argv, const std::set<std::string>& known,
               Args* args, std::string* error) {
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.size() > 2 && arg.compare(0, 2, "--") == 0) {
      std::string name = arg;
      std::string value;
      const size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        name = arg.substr(0, eq);
        value = arg.substr(eq + 1);
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        *error = name + " needs a value";
        return false;
      }
      if (known.count(name) == 0) {
        *error = "unknown flag " + name;
        return false;
      }
      args->flags.emplace_back(name, value);
    } else {
      args->files.push_back(arg);
    }
  }
  return true;
}

int Verify(int argc, char** argv) {
  if (argc == 0) return Usage("verify: no files");
  size_t ok = 0;
  size_t failed = 0;
  size_t cases = 0;
  for (int i = 0; i < argc; ++i) {
    const std::string path = argv[i];
    Story story;
    std::string error;
    if (!ReadStoryFile(path, &story, &error)) {
      std::printf("FAIL %s: %s\n", path.c_str(), error.c_str());
      ++failed;
      continue;
    }
    const VerifyResult r = VerifyStory(story);
    cases += r.cases;
    if (!r.ok) {
      std::printf("FAIL %s: %s\n", path.c_str(), r.mismatch.c_str());
      ++failed;
      continue;
    }
    std::string note;
    if (r.invalid_field_cases > 0) {
      note = ", " + std::to_string(r.invalid_field_cases) +
             " with fields invalid under RFC 9113";
    }
    std::printf("ok  %s (%zu cases%s)\n", path.c_str(), r.cases, note.c_str());
    ++ok;
  }
  std::fflush(stdout);
  std::fprintf(stderr, "verify: %zu files ok, %zu failed (%zu cases decoded)\n",
               ok, failed, cases);
  return failed == 0 ? kExitOk : kExitFailure;
}

bool WriteFile(const std::filesystem::path& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  return static_cast<bool>(out);
}

// --out DIR, created if missing; false with a message when impossible.
bool PrepareOutDir(const std::string& dir, std::string* error) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    *error = "cannot create " + dir;
    return false;
  }
  return true;
}

int Encode(int argc, char** argv) {
  Args args;
  std::string error;
  if (!SplitArgs(argc, argv, {"--table-size", "--out"}, &args, &error)) {
    return Usage(error);
  }
  uint32_t table_size = 4096;
  std::string out_dir;
  for (const auto& [name, value] : args.flags) {
    if (name == "--table-size" && !ParseUint32(value, &table_size)) {
      return Usage("bad --table-size " + value);
    }
    if (name == "--out") out_dir = value;
  }
  if (out_dir.empty()) return Usage("encode: --out DIR is required");
  if (args.files.empty()) return Usage("encode: no files");
  std::set<std::string> basenames;
  for (const std::string& f : args.files) {
    const std::string name = std::filesystem::path(f).filename().string();
    if (!basenames.insert(name).second) {
      return Usage("encode: two inputs named " + name);
    }
  }
  if (!PrepareOutDir(out_dir, &error)) return Usage(error);

  int status = kExitOk;
  for (const std::string& path : args.files) {
    Story story;
    if (!ReadStoryFile(path, &story, &error)) {
      std::fprintf(stderr, "FAIL %s\n", error.c_str());
      status = kExitFailure;
      continue;
    }
    const Story encoded = EncodeStory(story, table_size);
    const std::filesystem::path out =
        std::filesystem::path(out_dir) / std::filesystem::path(path).filename();
    if (!WriteFile(out, StoryToJson(encoded))) {
      std::fprintf(stderr, "FAIL %s: cannot write\n", out.c_str());
      status = kExitFailure;
      continue;
    }
    size_t octets = 0;
    for (const Case& c : encoded.cases) octets += c.wire.size();
    std::printf("wrote %s (%zu cases, %zu octets)\n", out.c_str(),
                encoded.cases.size(), octets);
  }
  return status;
}

int Ratio(int argc, char** argv) {
  Args args;
  std::string error;
  if (!SplitArgs(argc, argv, {"--table-sizes"}, &args, &error)) {
    return Usage(error);
  }
  std::vector<uint32_t> sizes = {256, 4096, 16384};
  for (const auto& [name, value] : args.flags) {
    sizes.clear();
    std::string_view rest = value;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      uint32_t size;
      if (!ParseUint32(rest.substr(0, comma), &size)) {
        return Usage("bad --table-sizes " + value);
      }
      sizes.push_back(size);
      rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
    }
    if (sizes.empty()) return Usage("bad --table-sizes " + value);
  }
  if (args.files.empty()) return Usage("ratio: no files");

  std::vector<Conversation> conversations;
  size_t stories = 0;
  size_t hars = 0;
  for (const std::string& path : args.files) {
    std::string text;
    if (!ReadFile(path, &text)) {
      std::fprintf(stderr, "FAIL %s: cannot read\n", path.c_str());
      return kExitFailure;
    }
    if (LooksLikeHar(text)) {
      HarStats stats;
      if (!ParseHar(text, &conversations, &stats, &error)) {
        std::fprintf(stderr, "FAIL %s: %s\n", path.c_str(), error.c_str());
        return kExitFailure;
      }
      if (stats.skipped_entries + stats.skipped_responses > 0) {
        std::fprintf(
            stderr,
            "%s: %zu entries; skipped %zu (not http/https) and %zu responses "
            "(status 0)\n",
            path.c_str(), stats.entries, stats.skipped_entries,
            stats.skipped_responses);
      }
      ++hars;
      continue;
    }
    Story story;
    if (!ParseStory(text, &story, &error)) {
      std::fprintf(stderr, "FAIL %s: neither a HAR nor a story: %s\n",
                   path.c_str(), error.c_str());
      return kExitFailure;
    }
    conversations.push_back(ConversationFromStory(story, path));
    ++stories;
  }

  // hpack_tool_nghttp2 (BUILD.bazel) sets nghttp2 beside ours; hpack_tool
  // cannot link it (a testonly test peer).
#ifdef HPACK_TOOL_NGHTTP2
  const Peer nghttp2 = Nghttp2Peer();
  const Peer* peer = &nghttp2;
#else
  const Peer* peer = nullptr;
#endif
  std::vector<RatioRow> rows;
  if (!ComputeRatios(conversations, sizes, &rows, &error, peer)) {
    std::fprintf(stderr, "FAIL %s\n", error.c_str());
    return kExitFailure;
  }
  const std::string beside =
      peer == nullptr ? "" : ", " + peer->description + " beside it";
  std::printf(
      "HPACK (h2rpc encoder%s) vs HTTP/1.1 text: %zu stories, %zu HAR files, "
      "%zu contexts\n\n%s",
      beside.c_str(), stories, hars, conversations.size(),
      FormatRatioTable(rows).c_str());
  return kExitOk;
}

int Seeds(int argc, char** argv) {
  Args args;
  std::string error;
  if (!SplitArgs(argc, argv, {"--table-size", "--max-bytes", "--out"}, &args,
                 &error)) {
    return Usage(error);
  }
  uint32_t table_size = 4096;
  uint32_t max_bytes = 4096;
  std::string out_dir;
  for (const auto& [name, value] : args.flags) {
    if (name == "--table-size" && !ParseUint32(value, &table_size)) {
      return Usage("bad --table-size " + value);
    }
    if (name == "--max-bytes" && !ParseUint32(value, &max_bytes)) {
      return Usage("bad --max-bytes " + value);
    }
    if (name == "--out") out_dir = value;
  }
  if (out_dir.empty()) return Usage("seeds: --out DIR is required");
  if (args.files.empty()) return Usage("seeds: no files");
  if (!PrepareOutDir(out_dir, &error)) return Usage(error);

  for (const std::string& path : args.files) {
    Story story;
    if (!ReadStoryFile(path, &story, &error)) {
      std::fprintf(stderr, "FAIL %s\n", error.c_str());
      return kExitFailure;
    }
    const std::filesystem::path p(path);
    std::string name =
        p.parent_path().filename().string() + "_" + p.stem().string();
    if (!story.cases.empty() && !story.cases[0].has_wire) {
      story = EncodeStory(story, table_size);
      name += "_t" + std::to_string(table_size);
    }
    // The most generous header list size, the protocol's initial table size;
    // then each case's SETTINGS change and block, while the input stays within
    // max_bytes.
    fuzz::FuzzInputWriter writer(65536, 4096);
    size_t cases = 0;
    for (const Case& c : story.cases) {
      fuzz::FuzzInputWriter next = writer;
      if (c.header_table_size && !next.AddSettings(*c.header_table_size)) break;
      if (!c.has_wire || !next.AddBlock(c.wire)) break;
      if (cases > 0 && next.bytes().size() > max_bytes) break;
      writer = std::move(next);
      ++cases;
    }
    const std::filesystem::path out = std::filesystem::path(out_dir) / name;
    if (!WriteFile(out, writer.bytes())) {
      std::fprintf(stderr, "FAIL %s: cannot write\n", out.c_str());
      return kExitFailure;
    }
    std::printf("wrote %s (%zu cases, %zu octets)\n", out.c_str(), cases,
                writer.bytes().size());
  }
  return kExitOk;
}

int Main(int argc, char** argv) {
  if (argc < 2) return Usage("");
  const std::string command = argv[1];
  if (command == "verify") return Verify(argc - 2, argv + 2);
  if (command == "encode") return Encode(argc - 2, argv + 2);
  if (command == "ratio") return Ratio(argc - 2, argv + 2);
  if (command == "seeds") return Seeds(argc - 2, argv + 2);
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  return Usage("unknown command " + command);
}

}  // namespace
}  // namespace tool
}  // namespace hpack

int main(int argc, char** argv) { return hpack::tool::Main(argc, argv); }
