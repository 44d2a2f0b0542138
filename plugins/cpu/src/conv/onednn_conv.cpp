// onednn_conv.cpp - the oneDNN convolution cache (oneDNN 2.6 API).
#include "onednn_conv.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

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

// The caller's layouts of a problem's source, weights and destination (and
// bias): oneDNN weights are ([G,] OC/G, IC/G, k...) with OC the destination's
// channels; PyTorch's are (O, C/G, k...) forward, (C, O/G, k...) transposed.
struct user_layouts {
  memory::desc src, weight, dst, bias;
  dims src_dims, weight_dims, dst_dims;
};

user_layouts layouts_of(const conv_problem& p) {
  user_layouts u;
  const int k = p.spatial;
  dims src_strides{p.src_strides[0], p.src_strides[1]};
  dims dst_strides{p.dst_strides[0], p.dst_strides[1]};
  u.src_dims = {p.n, p.c};
  u.dst_dims = {p.n, p.o};
  for (int i = 0; i < k; ++i) {
    u.src_dims.push_back(p.in[i]);
    u.dst_dims.push_back(p.out[i]);
    src_strides.push_back(p.src_strides[2 + i]);
    dst_strides.push_back(p.dst_strides[2 + i]);
  }
  const int64_t g = p.groups;
  const int64_t* ws = p.weight_strides;
  dims w_strides;
  const int64_t oc_stride = p.transposed ? ws[1] : ws[0];
  const int64_t ic_stride = p.transposed ? ws[0] : ws[1];
  const int64_t ocg = p.o / g, icg = p.c / g;
  if (g > 1) {
    u.weight_dims = {g, ocg, icg};
    w_strides = {p.transposed ? icg * ws[0] : ocg * ws[0], oc_stride, ic_stride};
  } else {
    u.weight_dims = {p.o, p.c};
    w_strides = {oc_stride, ic_stride};
  }
  for (int i = 0; i < k; ++i) {
    u.weight_dims.push_back(p.kernel[i]);
    w_strides.push_back(ws[2 + i]);
  }
  u.src = strided(u.src_dims, src_strides);
  u.dst = strided(u.dst_dims, dst_strides);
  u.weight = strided(u.weight_dims, w_strides);
  if (p.has_bias) u.bias = memory::desc({p.o}, memory::data_type::f32, memory::format_tag::a);
  return u;
}

std::shared_ptr<const conv_entry> create(const conv_problem& p, const dnnl::engine& engine) {
  auto e = std::make_shared<conv_entry>();
  const int k = p.spatial;
  const user_layouts u = layouts_of(p);
  const dims &src_dims = u.src_dims, &dst_dims = u.dst_dims, &w_dims = u.weight_dims;
  e->src_user = u.src;
  e->dst_user = u.dst;
  e->weight_user = u.weight;
  e->bias = u.bias;

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

// ---- backward ---------------------------------------------------------------
//
// One cache entry per (problem, outputs wanted) holds the backward-data and
// backward-weights primitives (each created with a forward-training hint, as
// oneDNN requires) and the reorders between the caller's layouts and the
// ones each primitive chose; diff_dst may need one reorder per primitive.

namespace {

// A reorder from one layout to another, or nothing when they are equal.
struct reorder_step {
  std::optional<dnnl::reorder> r;
  memory::desc from, to, scratchpad;
  void make(const dnnl::engine& engine, const memory::desc& a, const memory::desc& b,
            const dnnl::primitive_attr& attr) {
    from = a;
    to = b;
    if (a == b) return;
    const dnnl::reorder::primitive_desc pd(engine, a, engine, b, attr);
    r = dnnl::reorder(pd);
    scratchpad = pd.scratchpad_desc();
  }
};

struct backward_key {
  conv_problem p;
  bool data = false, weights = false;
  auto operator<=>(const backward_key&) const = default;
};

struct backward_entry {
  bool ok = false;
  user_layouts user;
  std::optional<dnnl::convolution_backward_data> data;
  memory::desc data_scratchpad;
  reorder_step data_diff_dst, data_weights, data_diff_src;  // diff_src: chosen -> user
  std::optional<dnnl::convolution_backward_weights> weights;
  memory::desc weights_scratchpad;
  reorder_step weights_src, weights_diff_dst, weights_diff_weights;  // last: chosen -> user
};

struct backward_cache {
  std::mutex mutex;
  std::map<backward_key, std::shared_ptr<const backward_entry>> entries;
};

backward_cache& bwd_cache() {
  static backward_cache instance;
  return instance;
}

std::shared_ptr<const backward_entry> create_backward(const backward_key& key,
                                                      const dnnl::engine& engine) {
  const conv_problem& p = key.p;
  auto e = std::make_shared<backward_entry>();
  e->user = layouts_of(p);
  const user_layouts& u = e->user;
  const auto any = memory::format_tag::any;
  const memory::desc src_any(u.src_dims, memory::data_type::f32, any);
  const memory::desc dst_any(u.dst_dims, memory::data_type::f32, any);
  const memory::desc w_any(u.weight_dims, memory::data_type::f32, any);
  const dims strides = spatial_of(p, p.stride), dilates = spatial_of(p, p.dilation, -1),
             pad_l = spatial_of(p, p.padding);
  // As in the forward: oneDNN's size rule floors like PyTorch's, so the right
  // padding equals the left.
  const dims pad_r = pad_l;
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  try {
    const auto fwd_desc =
        p.has_bias
            ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                              dnnl::algorithm::convolution_direct, src_any, w_any,
                                              u.bias, dst_any, strides, dilates, pad_l, pad_r)
            : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                              dnnl::algorithm::convolution_direct, src_any, w_any,
                                              dst_any, strides, dilates, pad_l, pad_r);
    const dnnl::convolution_forward::primitive_desc hint(fwd_desc, engine);
    if (key.data) {
      const dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, src_any,
                                                       w_any, dst_any, strides, dilates, pad_l,
                                                       pad_r);
      const dnnl::convolution_backward_data::primitive_desc pd(desc, attr, engine, hint);
      e->data = dnnl::convolution_backward_data(pd);
      e->data_scratchpad = pd.scratchpad_desc();
      e->data_diff_dst.make(engine, u.dst, pd.diff_dst_desc(), attr);
      e->data_weights.make(engine, u.weight, pd.weights_desc(), attr);
      e->data_diff_src.make(engine, pd.diff_src_desc(), u.src, attr);
    }
    if (key.weights) {
      const auto desc = p.has_bias ? dnnl::convolution_backward_weights::desc(
                                         dnnl::algorithm::convolution_direct, src_any, w_any,
                                         u.bias, dst_any, strides, dilates, pad_l, pad_r)
                                   : dnnl::convolution_backward_weights::desc(
                                         dnnl::algorithm::convolution_direct, src_any, w_any,
                                         dst_any, strides, dilates, pad_l, pad_r);
      const dnnl::convolution_backward_weights::primitive_desc pd(desc, attr, engine, hint);
      e->weights = dnnl::convolution_backward_weights(pd);
      e->weights_scratchpad = pd.scratchpad_desc();
      e->weights_src.make(engine, u.src, pd.src_desc(), attr);
      e->weights_diff_dst.make(engine, u.dst, pd.diff_dst_desc(), attr);
      e->weights_diff_weights.make(engine, pd.diff_weights_desc(), u.weight, attr);
    }
    e->ok = true;
  } catch (const dnnl::error& err) {
    if (err.status != dnnl_unimplemented && err.status != dnnl_invalid_arguments) throw;
    e->ok = false;
  }
  return e;
}

}  // namespace

bool onednn_convolution_backward(const conv_problem& p, const float* src, const float* weights,
                                 const float* diff_dst, float* diff_src, float* diff_weights,
                                 float* diff_bias, conv_scratch& scratch) {
  if (p.transposed) return false;
  backward_key key;
  key.p = p;
  key.data = diff_src != nullptr;
  key.weights = diff_weights != nullptr || (p.has_bias && diff_bias != nullptr);
  if (!key.data && !key.weights) return true;
  backward_cache& c = bwd_cache();
  std::shared_ptr<const backward_entry> entry;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto found = c.entries.find(key);
    if (found != c.entries.end()) entry = found->second;
  }
  if (!entry) {
    std::shared_ptr<const backward_entry> created = create_backward(key, cache().engine);
    std::lock_guard<std::mutex> lock(c.mutex);
    if (c.entries.size() >= kMaxConvEntries) c.entries.clear();
    entry = c.entries.emplace(key, std::move(created)).first->second;
  }
  if (!entry->ok) return false;

  const dnnl::engine& engine = cache().engine;
  dnnl::stream stream(engine);
  auto scratchpad = [&](const memory::desc& desc) {
    const size_t n = desc.get_size();
    return memory(desc, engine, n ? scratch.get(n) : nullptr);
  };
  // The operand `user` in the layout `step` reorders it to (itself when equal).
  auto in_layout = [&](const reorder_step& step, const memory& user) {
    if (!step.r) return user;
    memory m(step.to, engine, scratch.get(step.to.get_size()));
    step.r->execute(stream, {{DNNL_ARG_FROM, user},
                             {DNNL_ARG_TO, m},
                             {DNNL_ARG_SCRATCHPAD, scratchpad(step.scratchpad)}});
    return m;
  };
  // Where a primitive writes an output that `step` then reorders into `user`.
  auto out_layout = [&](const reorder_step& step, const memory& user) {
    return step.r ? memory(step.from, engine, scratch.get(step.from.get_size())) : user;
  };
  auto finish = [&](const reorder_step& step, const memory& produced, const memory& user) {
    if (!step.r) return;
    step.r->execute(stream, {{DNNL_ARG_FROM, produced},
                             {DNNL_ARG_TO, user},
                             {DNNL_ARG_SCRATCHPAD, scratchpad(step.scratchpad)}});
  };
  const user_layouts& u = entry->user;
  memory dst_user(u.dst, engine, const_cast<float*>(diff_dst));
  // diff_dst as backward-data took it: backward-weights reuses it when it
  // chose the same layout (one reorder of the largest operand, not two).
  std::optional<memory> data_dy;
  if (entry->data) {
    memory w_user(u.weight, engine, const_cast<float*>(weights));
    memory dx_user(u.src, engine, diff_src);
    const memory dy = in_layout(entry->data_diff_dst, dst_user);
    const memory w = in_layout(entry->data_weights, w_user);
    const memory dx = out_layout(entry->data_diff_src, dx_user);
    entry->data->execute(stream, {{DNNL_ARG_DIFF_DST, dy},
                                  {DNNL_ARG_WEIGHTS, w},
                                  {DNNL_ARG_DIFF_SRC, dx},
                                  {DNNL_ARG_SCRATCHPAD, scratchpad(entry->data_scratchpad)}});
    finish(entry->data_diff_src, dx, dx_user);
    data_dy = dy;
  }
  if (entry->weights) {
    // Backward weights always produces diff_weights; a caller that wants only
    // the bias gradient gets the weights' written to scratch.
    float* dw_ptr = diff_weights != nullptr ? diff_weights
                                            : static_cast<float*>(scratch.get(u.weight.get_size()));
    memory x_user(u.src, engine, const_cast<float*>(src));
    memory dw_user(u.weight, engine, dw_ptr);
    const memory x = in_layout(entry->weights_src, x_user);
    const bool reuse = data_dy && entry->weights_diff_dst.to == entry->data_diff_dst.to;
    const memory dy = reuse ? *data_dy : in_layout(entry->weights_diff_dst, dst_user);
    const memory dw = out_layout(entry->weights_diff_weights, dw_user);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, x},
        {DNNL_ARG_DIFF_DST, dy},
        {DNNL_ARG_DIFF_WEIGHTS, dw},
        {DNNL_ARG_SCRATCHPAD, scratchpad(entry->weights_scratchpad)}};
    std::vector<float> bias_sink;
    if (p.has_bias) {
      float* db_ptr = diff_bias;
      if (db_ptr == nullptr) {
        bias_sink.resize(static_cast<size_t>(p.o));
        db_ptr = bias_sink.data();
      }
      args.emplace(DNNL_ARG_DIFF_BIAS, memory(u.bias, engine, db_ptr));
    }
    entry->weights->execute(stream, args);
    finish(entry->weights_diff_weights, dw, dw_user);
  }
  stream.wait();
  return true;
}

}  // namespace tessera::cpu
