// The one piece of XPTI that is C++ only: an event's metadata is a
// std::unordered_map<string_id_t, object_id_t> (xpti_data_types.h: uint32_t keys, int32_t values),
// which xptiQueryMetadata returns by pointer. This function copies its entries out for Rust.
//
// It declares the map type itself rather than including the XPTI headers, so pti-sys builds
// without them; the type must stay exactly XPTI's `xpti::metadata_t` (both compiled against
// libstdc++, whose unordered_map layout is part of its stable ABI).
#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace {
using metadata = std::unordered_map<std::uint32_t, std::int32_t>;
}

// Copies up to `capacity` (key, value) entries of the metadata map at `map` into `keys` and
// `values`; returns how many entries the map has (more than `capacity` if it did not fit).
// `map` may be NULL (no metadata): returns 0.
extern "C" std::size_t pti_xpti_metadata_entries(const void* map, std::uint32_t* keys,
                                                 std::int32_t* values,
                                                 std::size_t capacity) noexcept {
  if (map == nullptr) return 0;
  const metadata& entries = *static_cast<const metadata*>(map);
  std::size_t n = 0;
  for (const auto& entry : entries) {
    if (n < capacity) {
      keys[n] = entry.first;
      values[n] = entry.second;
    }
    ++n;
  }
  return n;
}
