// Flag parsing and PEM loading shared by greeter_server and greeter_client.

#ifndef EXAMPLES_HELLOWORLD_FLAGS_H_
#define EXAMPLES_HELLOWORLD_FLAGS_H_

#include <cstring>
#include <initializer_list>
#include <iostream>
#include <string>
#include <utility>

#include "transport/tls/tls.h"

namespace helloworld {

// "--name=value": stores value and returns true.
inline bool Flag(const char* arg, const char* name, std::string* value) {
  const size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
  *value = arg + n + 1;
  return true;
}

// Reads each non-empty path into its string; false (and a message on
// stderr) when one cannot be read.
inline bool ReadPemFiles(
    std::initializer_list<std::pair<const std::string*, std::string*>> files) {
  for (auto [path, pem] : files) {
    if (path->empty()) continue;
    absl::StatusOr<std::string> contents = transport::ReadPemFile(*path);
    if (!contents.ok()) {
      std::cerr << contents.status() << "\n";
      return false;
    }
    *pem = std::move(*contents);
  }
  return true;
}

}  // namespace helloworld

#endif  // EXAMPLES_HELLOWORLD_FLAGS_H_
