// Command-line helpers shared by the interop server and client (ours and the
// grpc++ peers are built from the same sources).

#ifndef TESTS_INTEROP_CLI_UTIL_H_
#define TESTS_INTEROP_CLI_UTIL_H_

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace interop {

// Reads a whole file; false if it cannot be opened.
inline bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

// Matches `--name=value` (sets *value) or a bare `--name` (sets "true").
inline bool FlagValue(const char* arg, const char* name, std::string* value) {
  const size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0) return false;
  if (arg[n] == '=') {
    *value = arg + n + 1;
    return true;
  }
  if (arg[n] == '\0') {
    *value = "true";
    return true;
  }
  return false;
}

}  // namespace interop

#endif  // TESTS_INTEROP_CLI_UTIL_H_
