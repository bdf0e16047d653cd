// A map of computed values that answers its last key before the lookup: the search asks the same
// key many times in a row (a work item's shapes share their stage split, a shape's CP variants
// and overlaps their layer compute), so most questions cost one key comparison.
#pragma once

#include <cstddef>
#include <utility>

namespace meshplan {

// Map: std::map or std::unordered_map from the key to the value. A copy starts empty (caches are
// per instance: the cost model's copies are fresh models).
template <class Map>
class LastKeyCache {
 public:
  using Key = typename Map::key_type;
  using Value = typename Map::mapped_type;

  // `limit` > 0: the map is emptied before an insertion that would exceed it.
  explicit LastKeyCache(size_t limit = 0) : limit_(limit) {}
  LastKeyCache(const LastKeyCache& other) : limit_(other.limit_) {}
  LastKeyCache& operator=(const LastKeyCache&) = delete;

  // The value under `key`, made by make() the first time it is asked for (or again after the
  // map was emptied). The reference holds until the next get.
  template <class Make>
  const Value& get(const Key& key, Make&& make) {
    if (last_ && key == last_key_) return *last_;
    auto it = map_.find(key);
    if (it == map_.end()) {
      if (limit_ > 0 && map_.size() >= limit_) map_.clear();
      it = map_.emplace(key, std::forward<Make>(make)()).first;
    }
    last_key_ = key;
    last_ = &it->second;
    return it->second;
  }

 private:
  size_t limit_ = 0;
  Map map_;
  Key last_key_{};
  const Value* last_ = nullptr;  // map_'s value under last_key_
};

}  // namespace meshplan
