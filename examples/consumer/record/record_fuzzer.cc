// Parses arbitrary bytes as a consumer::Record; one that parses must serialise
// and parse back to an equal message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "record/record.pb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  consumer::Record record;
  if (!record.ParseFromArray(data, static_cast<int>(size))) return 0;
  consumer::Record again;
  if (!again.ParseFromString(record.SerializeAsString()) ||
      again.SerializeAsString() != record.SerializeAsString()) {
    std::abort();
  }
  return 0;
}
