// libFuzzer target for hpack::Decoder (input format: fuzz_input.h).
//
// Each input drives one decoder context through SETTINGS changes and header
// blocks and checks, besides "no crash, no sanitizer report":
//  * invariants: the decoded list never exceeds the max header list size,
//    and its sizes are those of its fields (after an error too);
//    after every block that is not a connection error the table fits its max
//    size and the limit; a connection error is sticky (the next call returns
//    it without reading);
//  * a round trip: every block that decodes with kOk is re-encoded by
//    hpack::Encoder (one context for the whole input) and decoded again by a
//    second hpack::Decoder, which must return kOk and the same fields;
//  * a differential check against nghttp2's inflater, fed the same SETTINGS
//    changes and blocks: nghttp2 must decode every block we decode without a
//    connection error, to the same fields and never-indexed flags (ours may
//    stop at the header list size limit, which nghttp2's inflater lacks).

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "hpack/decode_error.h"
#include "hpack/decoder.h"
#include "hpack/encoder.h"
#include "hpack/fuzz/fuzz_input.h"
#include "hpack/header_list.h"

namespace {

[[noreturn]] void Fail(const char* what, size_t block_index) {
  std::fprintf(stderr, "decoder_fuzzer: block %zu: %s\n", block_index, what);
  std::abort();
}

struct PeerField {
  std::string name;
  std::string value;
  bool never_indexed;
};

// nghttp2's HPACK inflater, one context per input.
class PeerInflater {
 public:
  PeerInflater() {
    if (nghttp2_hd_inflate_new(&inflater_) != 0) std::abort();
  }
  ~PeerInflater() { nghttp2_hd_inflate_del(inflater_); }
  PeerInflater(const PeerInflater&) = delete;
  PeerInflater& operator=(const PeerInflater&) = delete;

  bool failed() const { return failed_; }

  void ChangeTableSize(uint32_t size) {
    if (!failed_ &&
        nghttp2_hd_inflate_change_table_size(inflater_, size) != 0) {
      failed_ = true;
    }
  }

  // Decodes one block into *fields; false on an error (the inflater is then
  // unusable).
  bool Decode(std::string_view block, std::vector<PeerField>* fields) {
    fields->clear();
    if (failed_) return false;
    const uint8_t* in = reinterpret_cast<const uint8_t*>(block.data());
    size_t left = block.size();
    for (;;) {
      nghttp2_nv nv;
      int flags = 0;
      const ssize_t used =
          nghttp2_hd_inflate_hd2(inflater_, &nv, &flags, in, left, 1);
      if (used < 0) {
        failed_ = true;
        return false;
      }
      in += used;
      left -= static_cast<size_t>(used);
      if (flags & NGHTTP2_HD_INFLATE_EMIT) {
        fields->push_back(PeerField{
            std::string(reinterpret_cast<const char*>(nv.name), nv.namelen),
            std::string(reinterpret_cast<const char*>(nv.value), nv.valuelen),
            (nv.flags & NGHTTP2_NV_FLAG_NO_INDEX) != 0});
      }
      if (flags & NGHTTP2_HD_INFLATE_FINAL) {
        nghttp2_hd_inflate_end_headers(inflater_);
        return true;
      }
      if (used == 0 &&
          left == 0) {  // No progress and nothing left: should not happen.
        failed_ = true;
        return false;
      }
    }
  }

 private:
  nghttp2_hd_inflater* inflater_ = nullptr;
  bool failed_ = false;
};

bool SameField(const hpack::HeaderField& f, const PeerField& p) {
  return f.name == p.name && f.value == p.value &&
         f.sensitive == p.never_indexed;
}

// Our list against nghttp2's fields for a block both decoded. kOk: the same
// fields. A stream error: ours is a prefix of nghttp2's that stops only where
// the next field would pass the header list size limit (the decoder keeps no
// field after the first that does not fit), and kHeaderListTooLarge means one
// did not.
void CheckAgainstPeer(hpack::DecodeError e, const hpack::HeaderList& ours,
                      const std::vector<PeerField>& peer, size_t max_list,
                      size_t block_index) {
  if (ours.size() > peer.size()) Fail("more fields than nghttp2", block_index);
  for (size_t i = 0; i < ours.size(); ++i) {
    if (!SameField(ours[i], peer[i])) {
      Fail("fields differ from nghttp2's", block_index);
    }
  }
  if (ours.size() == peer.size()) {
    if (e == hpack::DecodeError::kHeaderListTooLarge) {
      Fail("header_list_too_large but every field is in the list", block_index);
    }
    return;
  }
  if (e == hpack::DecodeError::kOk) {
    Fail("fewer fields than nghttp2", block_index);
  }
  const PeerField& next = peer[ours.size()];
  if (ours.header_list_size() + next.name.size() + next.value.size() +
          hpack::HeaderList::kFieldOverhead <=
      max_list) {
    Fail("a field that fits the header list is missing", block_index);
  }
}

// Whichever way the block ended (a connection error in the middle
// included), the list's sizes are those of its fields: the arena holds their
// names and values back to back and nothing else, header_list_size() adds 32
// per field, the block counted at least the kept fields, and the copy count
// covers them.
void CheckListSizes(const hpack::HeaderList& list,
                    const hpack::Decoder& decoder, size_t block_index) {
  size_t octets = 0;
  const char* next = list.empty() ? nullptr : list[0].name.data();
  for (const hpack::HeaderField f : list) {
    if (f.name.data() != next ||
        f.value.data() != f.name.data() + f.name.size()) {
      Fail("list fields not back to back", block_index);
    }
    next = f.value.data() + f.value.size();
    octets += f.name.size() + f.value.size();
  }
  if (octets != list.arena_size() ||
      octets + list.size() * hpack::HeaderList::kFieldOverhead !=
          list.header_list_size()) {
    Fail("list sizes disagree with its fields", block_index);
  }
  if (decoder.block_list_size() < list.header_list_size() ||
      list.octets_copied() < list.arena_size()) {
    Fail("block_list_size or octets_copied below the list's size", block_index);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hpack::fuzz::FuzzInputReader reader(data, size);
  const size_t max_list = reader.max_header_list_size();

  hpack::Decoder::Options options;
  options.max_header_list_size = max_list;
  hpack::Decoder decoder(options);
  PeerInflater peer;
  uint32_t limit = options.max_table_size;
  auto apply_settings = [&](uint32_t new_limit) {
    decoder.SetMaxTableSizeLimit(new_limit);
    peer.ChangeTableSize(new_limit);  // Is a no-op once it failed.
    limit = new_limit;
  };
  if (reader.initial_table_size_limit() != limit) {
    apply_settings(reader.initial_table_size_limit());
  }

  // The round trip: our encoder's context and a decoder that mirrors it.
  hpack::Encoder encoder;
  hpack::Decoder::Options check_options;
  check_options.max_header_list_size = std::numeric_limits<size_t>::max();
  hpack::Decoder check(check_options);

  hpack::HeaderList list;
  hpack::HeaderList again;
  std::vector<hpack::HeaderField> fields;
  std::vector<PeerField> peer_fields;
  hpack::fuzz::FuzzStep step;
  size_t block_index = 0;
  while (reader.Next(&step)) {
    if (step.kind == hpack::fuzz::FuzzStep::kSettings) {
      apply_settings(step.table_size_limit);
      continue;
    }
    const hpack::DecodeError e = decoder.Decode(step.block, &list);
    if (list.header_list_size() > max_list) {
      Fail("list over max_header_list_size", block_index);
    }
    CheckListSizes(list, decoder, block_index);

    if (hpack::IsConnectionError(e)) {
      if (decoder.error() != e) {
        Fail("error() differs from the returned error", block_index);
      }
      if (decoder.Decode(step.block, &list) != e || !list.empty()) {
        Fail("a connection error is not sticky", block_index);
      }
      break;
    }
    const hpack::DynamicTable& table = decoder.table();
    if (table.size() > table.max_size()) {
      Fail("table over its max size", block_index);
    }
    if (table.max_size() > limit) {
      Fail("table max size over the limit", block_index);
    }

    // Our decoder read the whole block (no connection error): so must nghttp2.
    if (!peer.Decode(step.block, &peer_fields)) {
      Fail("nghttp2 rejects a block we accept", block_index);
    }
    CheckAgainstPeer(e, list, peer_fields, max_list, block_index);

    if (e == hpack::DecodeError::kOk) {
      fields.assign(list.begin(), list.end());
      const std::string_view block =
          encoder.EncodeBlock(fields.data(), fields.size());
      if (check.Decode(block, &again) != hpack::DecodeError::kOk) {
        Fail("our encoder's block does not decode", block_index);
      }
      if (again.size() != list.size()) {
        Fail("round trip changed the field count", block_index);
      }
      for (size_t i = 0; i < list.size(); ++i) {
        const hpack::HeaderField a = list[i];
        const hpack::HeaderField b = again[i];
        // The encoder may add never-indexed (authorization, short cookies),
        // never drop it.
        if (a.name != b.name || a.value != b.value ||
            (a.sensitive && !b.sensitive)) {
          Fail("round trip changed a field", block_index);
        }
      }
    }
    ++block_index;
  }
  return 0;
}
