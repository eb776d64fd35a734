// The two-body host (OpenMP) engine.
#pragma once

#include <string>

#include "twobody/problem.hpp"

namespace apairs::twobody {

// Each thread computes distance tiles of kTileRows x kTileCols pairs, then reduces them
// into its own output (privatised histogram, radius counts or kNN rows).
constexpr int64_t kTileRows = 16, kTileCols = 512;

// The caller's arrays of one execute (unused ones null).
struct Outputs {
    int64_t *counts = nullptr;                   // Counts, Histogram
    double *sums = nullptr;                      // Histogram, weighted
    const double *wa = nullptr, *wb = nullptr;   // weights (wb = wa for AUTO)
    int64_t *indices = nullptr;                  // Knn
    void *distances = nullptr;                   // Knn
};

// Whether pair counts take the cell list (L2, d <= 3, no box, float or double): the
// plan says so in its description.
bool host_uses_cells(const Problem &pb);

// One line for the plan's description: the technique and why.
std::string describe_host_technique(const Problem &pb);

// Runs a validated problem on host arrays; `threads` resolved.
void run_host(const Problem &pb, const void *A, const void *B, const Outputs &out, int threads);

}  // namespace apairs::twobody
