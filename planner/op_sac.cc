#include "planner/op_sac.h"

#include <cstdint>
#include <string_view>

namespace meshplan {

std::vector<OpSacMm> op_sac_mms(const ModelSpec& model, const std::vector<LinearMap>& maps) {
  std::vector<OpSacMm> mms;
  int64_t counted = 0;
  auto call = [&](size_t map, double share) {
    // The policy counts the block's mm's from 1 and recomputes the even ones.
    mms.push_back({map, share, ++counted % 2 == 1});
  };
  for (size_t i = 0; i < maps.size(); ++i) {
    const LinearMap& map = maps[i];
    if (map.role == LinearRole::expert) continue;
    if (map.role == LinearRole::router) {  // forced to recompute, outside the count
      mms.push_back({i, 1, false});
      continue;
    }
    const std::string_view name = map.name;
    if (name == "qkv") {
      const double q = static_cast<double>(model.q_width());
      const double kv = static_cast<double>(model.kv_width());
      const double all = q + 2 * kv;
      call(i, q / all), call(i, kv / all), call(i, kv / all);
    } else if (name == "mlp_up" && model.mlp == MlpKind::swiglu) {
      call(i, 0.5), call(i, 0.5);
    } else {
      call(i, 1);
    }
  }
  return mms;
}

std::vector<double> op_sac_recomputed_shares(const ModelSpec& model,
                                             const std::vector<LinearMap>& maps) {
  std::vector<double> shares(maps.size(), 0.0);
  for (size_t i = 0; i < maps.size(); ++i)
    if (maps[i].role == LinearRole::expert) shares[i] = 1;
  for (const OpSacMm& mm : op_sac_mms(model, maps))
    if (!mm.saved) shares[mm.map] += mm.share;
  return shares;
}

}  // namespace meshplan
