#include "planner/op_sac.h"

#include <string_view>

namespace meshplan {

std::vector<OpSacMm> op_sac_mms(const ModelSpec& model, const std::vector<LinearMap>& maps) {
  std::vector<OpSacMm> mms;
  auto call = [&](size_t map, double share) {
    // The policy counts the block's mm's from 1 and recomputes the even ones.
    const bool saved = (mms.size() + 1) % 2 == 1;
    mms.push_back({map, share, saved});
  };
  for (size_t i = 0; i < maps.size(); ++i) {
    const LinearMap& map = maps[i];
    if (map.role == LinearRole::expert) continue;
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
