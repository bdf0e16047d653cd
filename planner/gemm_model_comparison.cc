#include "planner/gemm_model_comparison.h"

#include <set>
#include <tuple>

#include "planner/gemm_model.h"

namespace meshplan {

namespace {

using Shape = std::tuple<int64_t, int64_t, int64_t>;

void add_shapes(const CalibrationProfile& p, const std::string& dtype, std::set<Shape>& shapes) {
  auto it = p.gemm.find(dtype);
  if (it == p.gemm.end()) return;
  for (const GemmSample& s : it->second.samples)
    if (measured(s)) shapes.insert({s.m, s.n, s.k});
}

}  // namespace

void compare_gemm_models(const CalibrationProfile& base, const CalibrationProfile& other,
                         const GpuSpec& gpu, ProfileComparison& c) {
  c.model_gpu = gpu.name;
  c.gemm_model.clear();
  for (const auto& [dtype, precision] :
       {std::pair{"bf16", Precision::bf16}, std::pair{"fp8", Precision::fp8}}) {
    if (!base.gemm.count(dtype) && !other.gemm.count(dtype)) continue;
    std::set<Shape> shapes;
    add_shapes(base, dtype, shapes);
    add_shapes(other, dtype, shapes);
    // The "delayed" recipe adds no quantization time in any shipped profile; kernel_time_s
    // leaves it out in any case.
    const GemmModel base_model(base, gpu, precision, "delayed");
    const GemmModel other_model(other, gpu, precision, "delayed");
    RatioSet speedup;
    for (const auto& [m, n, k] : shapes) {
      const double md = static_cast<double>(m), nd = static_cast<double>(n),
                   kd = static_cast<double>(k);
      speedup.add(base_model.kernel_time_s(md, nd, kd), other_model.kernel_time_s(md, nd, kd),
                  gemm_shape_label(m, n, k));
    }
    c.gemm_model.push_back({dtype, speedup.summary()});
  }
}

}  // namespace meshplan
