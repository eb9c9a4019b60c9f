// The Mamba-1 mixer (model/mamba_mixer.hpp) in double precision on arrays from a file, for
// tests/parity/test_mamba_mixer_torch.py, which holds it against PyTorch's own modules:
//   mamba_mixer_probe IN OUT
// IN: eight int32 (B, T, d, E, N, R, K, signed), then float64 arrays: u (B·T, d), in_proj,
// conv_w, conv_b, x_proj, dt_w, dt_b, A_log, D, out_proj (linear-rnn.md's shapes), dout (B·T, d).
// OUT: float64 out (B·T, d), the gradients of the ten weights in that order, du (B·T, d).
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <vector>

#include "model/mamba_mixer.hpp"

using srbench::model::MambaDims;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: mamba_mixer_probe IN OUT\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  int32_t h[8];
  if (!in.read(reinterpret_cast<char*>(h), sizeof h)) {
    std::fprintf(stderr, "mamba_mixer_probe: %s: no header\n", argv[1]);
    return 1;
  }
  MambaDims m;
  m.B = h[0], m.T = h[1], m.d = h[2], m.E = h[3], m.N = h[4], m.R = h[5], m.K = h[6], m.signed_eigenvalues = h[7] != 0;
  const int64_t n = m.rows();
  const int64_t sizes[] = {n * m.d, 2LL * m.E * m.d, 1LL * m.E * m.K, m.E, 1LL * (m.R + 2 * m.N) * m.E,
                           1LL * m.E * m.R, m.E, 1LL * m.E * m.N, m.E, 1LL * m.d * m.E, n * m.d};
  std::vector<std::vector<double>> a;
  for (int64_t s : sizes) {
    a.emplace_back(static_cast<size_t>(s));
    if (!in.read(reinterpret_cast<char*>(a.back().data()), static_cast<std::streamsize>(s * sizeof(double)))) {
      std::fprintf(stderr, "mamba_mixer_probe: %s: too short\n", argv[1]);
      return 1;
    }
  }
  std::vector<std::vector<double>> g;
  for (int i = 1; i <= 9; ++i) g.emplace_back(a[i].size(), 0.0);
  srbench::model::MambaWeights<double> w{a[1].data(), a[2].data(), a[3].data(), a[4].data(), a[5].data(),
                                         a[6].data(), a[7].data(), a[8].data(), a[9].data()};
  srbench::model::MambaGrads<double> gr{g[0].data(), g[1].data(), g[2].data(), g[3].data(), g[4].data(),
                                        g[5].data(), g[6].data(), g[7].data(), g[8].data()};
  srbench::model::MambaMixer<double> mix;
  mix.reserve(m, true);
  std::vector<double> out(static_cast<size_t>(n * m.d)), du(out.size());
  mix.forward(out.data(), a[0].data(), w, m);
  mix.backward(du.data(), gr, a[10].data(), a[0].data(), w, m);
  std::ofstream o(argv[2], std::ios::binary);
  auto put = [&](const std::vector<double>& v) {
    o.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(double)));
  };
  put(out);
  for (const auto& v : g) put(v);
  put(du);
  return o ? 0 : 1;
}
