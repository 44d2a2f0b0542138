// onednn_conv.cpp - the oneDNN convolution cache (oneDNN 2.6 API).
#include "onednn_conv.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include <dnnl.hpp>

namespace tessera::cpu {
namespace {

using dims = dnnl::memory::dims;
using dnnl::memory;

struct conv_entry {
  bool ok = false;
  dnnl::primitive conv;
  memory::desc src_user, weight_user, dst_user, bias;
  memory::desc src_conv, weight_conv, dst_conv;
  std::optional<dnnl::reorder> src_reorder, weight_reorder, dst_reorder;
  // User scratchpads (Note [oneDNN scratchpad] in onednn_matmul.cpp): each
  // execution brings its own, so one entry runs from many threads at once.
  memory::desc conv_scratchpad, src_scratchpad, weight_scratchpad, dst_scratchpad;
};

struct conv_cache {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  std::mutex mutex;
  std::map<conv_problem, std::shared_ptr<const conv_entry>> entries;
};

conv_cache& cache() {
  static conv_cache instance;
  return instance;
}

memory::desc strided(const dims& sizes, const dims& strides) {
  return memory::desc(sizes, memory::data_type::f32, strides);
}

dims spatial_of(const conv_problem& p, const int64_t* v, int64_t add = 0) {
  dims d;
  for (int i = 0; i < p.spatial; ++i) d.push_back(v[i] + add);
  return d;
}

std::shared_ptr<const conv_entry> create(const conv_problem& p, const dnnl::engine& engine) {
  auto e = std::make_shared<conv_entry>();
  const int k = p.spatial;
  dims src_dims{p.n, p.c}, dst_dims{p.n, p.o}, src_strides{p.src_strides[0], p.src_strides[1]},
      dst_strides{p.dst_strides[0], p.dst_strides[1]};
  for (int i = 0; i < k; ++i) {
    src_dims.push_back(p.in[i]);
    dst_dims.push_back(p.out[i]);
    src_strides.push_back(p.src_strides[2 + i]);
    dst_strides.push_back(p.dst_strides[2 + i]);
  }
  // oneDNN weights: ([G,] OC/G, IC/G, k...) with OC the destination's channels.
  // PyTorch: (O, C/G, k...) forward, (C, O/G, k...) transposed.
  const int64_t g = p.groups;
  const int64_t* ws = p.weight_strides;
  dims w_dims, w_strides;
  const int64_t oc_stride = p.transposed ? ws[1] : ws[0];
  const int64_t ic_stride = p.transposed ? ws[0] : ws[1];
  const int64_t ocg = p.o / g, icg = p.c / g;
  if (g > 1) {
    w_dims = {g, ocg, icg};
    w_strides = {p.transposed ? icg * ws[0] : ocg * ws[0], oc_stride, ic_stride};
  } else {
    w_dims = {p.o, p.c};
    w_strides = {oc_stride, ic_stride};
  }
  for (int i = 0; i < k; ++i) {
    w_dims.push_back(p.kernel[i]);
    w_strides.push_back(ws[2 + i]);
  }
  e->src_user = strided(src_dims, src_strides);
  e->dst_user = strided(dst_dims, dst_strides);
  e->weight_user = strided(w_dims, w_strides);
  if (p.has_bias) e->bias = memory::desc({p.o}, memory::data_type::f32, memory::format_tag::a);

  const auto any = memory::format_tag::any;
  const memory::desc src_any(src_dims, memory::data_type::f32, any);
  const memory::desc dst_any(dst_dims, memory::data_type::f32, any);
  const memory::desc w_any(w_dims, memory::data_type::f32, any);
  const dims strides = spatial_of(p, p.stride), dilates = spatial_of(p, p.dilation, -1),
             pad_l = spatial_of(p, p.padding);
  dims pad_r = pad_l;
  if (p.transposed)
    for (int i = 0; i < k; ++i) pad_r[i] = p.padding[i] - p.output_padding[i];
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  try {
    if (!p.transposed) {
      const auto desc =
          p.has_bias
              ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                dnnl::algorithm::convolution_direct, src_any, w_any,
                                                e->bias, dst_any, strides, dilates, pad_l, pad_r)
              : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                dnnl::algorithm::convolution_direct, src_any, w_any,
                                                dst_any, strides, dilates, pad_l, pad_r);
      const dnnl::convolution_forward::primitive_desc pd(desc, attr, engine);
      e->conv_scratchpad = pd.scratchpad_desc();
      e->src_conv = pd.src_desc();
      e->weight_conv = pd.weights_desc();
      e->dst_conv = pd.dst_desc();
      e->conv = dnnl::convolution_forward(pd);
    } else {
      const auto desc =
          p.has_bias
              ? dnnl::deconvolution_forward::desc(
                    dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                    src_any, w_any, e->bias, dst_any, strides, dilates, pad_l, pad_r)
              : dnnl::deconvolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                  dnnl::algorithm::deconvolution_direct, src_any,
                                                  w_any, dst_any, strides, dilates, pad_l, pad_r);
      const dnnl::deconvolution_forward::primitive_desc pd(desc, attr, engine);
      e->conv_scratchpad = pd.scratchpad_desc();
      e->src_conv = pd.src_desc();
      e->weight_conv = pd.weights_desc();
      e->dst_conv = pd.dst_desc();
      e->conv = dnnl::deconvolution_forward(pd);
    }
    auto reorder = [&](const memory::desc& from, const memory::desc& to,
                       std::optional<dnnl::reorder>& out, memory::desc& scratchpad) {
      const dnnl::reorder::primitive_desc rpd(engine, from, engine, to, attr);
      out = dnnl::reorder(rpd);
      scratchpad = rpd.scratchpad_desc();
    };
    if (e->src_conv != e->src_user)
      reorder(e->src_user, e->src_conv, e->src_reorder, e->src_scratchpad);
    if (e->weight_conv != e->weight_user)
      reorder(e->weight_user, e->weight_conv, e->weight_reorder, e->weight_scratchpad);
    if (e->dst_conv != e->dst_user)
      reorder(e->dst_conv, e->dst_user, e->dst_reorder, e->dst_scratchpad);
    e->ok = true;
  } catch (const dnnl::error& err) {
    if (err.status != dnnl_unimplemented && err.status != dnnl_invalid_arguments) throw;
    e->ok = false;
  }
  return e;
}

}  // namespace

size_t onednn_convolution_cache_size() {
  conv_cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.entries.size();
}

bool onednn_convolution(const conv_problem& p, const float* src, const float* weights,
                        const float* bias, float* dst, conv_scratch& scratch) {
  conv_cache& c = cache();
  std::shared_ptr<const conv_entry> entry;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto found = c.entries.find(p);
    if (found != c.entries.end()) entry = found->second;
  }
  if (!entry) {
    // Created outside the lock (JIT takes milliseconds); a racing thread may
    // create the same entry, one insert wins.
    std::shared_ptr<const conv_entry> created = create(p, c.engine);
    std::lock_guard<std::mutex> lock(c.mutex);
    if (c.entries.size() >= kMaxConvEntries) c.entries.clear();
    entry = c.entries.emplace(p, std::move(created)).first->second;
  }
  if (!entry->ok) return false;

  const dnnl::engine& engine = c.engine;
  dnnl::stream stream(engine);
  memory src_user(entry->src_user, engine, const_cast<float*>(src));
  memory weight_user(entry->weight_user, engine, const_cast<float*>(weights));
  memory dst_user(entry->dst_user, engine, dst);
  memory src_conv = src_user, weight_conv = weight_user, dst_conv = dst_user;
  // A scratchpad memory of `desc` (none when it is empty).
  auto scratchpad = [&](const memory::desc& desc) {
    const size_t n = desc.get_size();
    return memory(desc, engine, n ? scratch.get(n) : nullptr);
  };
  if (entry->src_reorder) {
    src_conv = memory(entry->src_conv, engine, scratch.get(entry->src_conv.get_size()));
    entry->src_reorder->execute(stream, {{DNNL_ARG_FROM, src_user},
                                         {DNNL_ARG_TO, src_conv},
                                         {DNNL_ARG_SCRATCHPAD, scratchpad(entry->src_scratchpad)}});
  }
  if (entry->weight_reorder) {
    weight_conv = memory(entry->weight_conv, engine, scratch.get(entry->weight_conv.get_size()));
    entry->weight_reorder->execute(stream,
                                   {{DNNL_ARG_FROM, weight_user},
                                    {DNNL_ARG_TO, weight_conv},
                                    {DNNL_ARG_SCRATCHPAD, scratchpad(entry->weight_scratchpad)}});
  }
  if (entry->dst_reorder)
    dst_conv = memory(entry->dst_conv, engine, scratch.get(entry->dst_conv.get_size()));
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, src_conv}, {DNNL_ARG_WEIGHTS, weight_conv}, {DNNL_ARG_DST, dst_conv}};
  if (p.has_bias)
    args.emplace(DNNL_ARG_BIAS, memory(entry->bias, engine, const_cast<float*>(bias)));
  args.emplace(DNNL_ARG_SCRATCHPAD, scratchpad(entry->conv_scratchpad));
  entry->conv.execute(stream, args);
  if (entry->dst_reorder)
    entry->dst_reorder->execute(stream, {{DNNL_ARG_FROM, dst_conv},
                                         {DNNL_ARG_TO, dst_user},
                                         {DNNL_ARG_SCRATCHPAD, scratchpad(entry->dst_scratchpad)}});
  stream.wait();
  return true;
}

}  // namespace tessera::cpu
