// Batched gemm through the public API, on test::backend(): every layout (AoS, SoA), order
// (row-, column-major), op (N, T), type and awkward size against a long-double reference,
// with padded leading dimensions and strides whose padding must keep its poison, beta = 0
// on a C full of NaN, alpha = 0 on operands of NaN and infinities (gemv's too), and every
// bad argument. Inputs are fresh every run (the seed is
// printed on failure; APAIRS_TEST_SEED=N replays it).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "apairs.h"
#include "backend.hpp"
#include "catch.hpp"
#include "operand.hpp"
#include "reference.hpp"

using ref::Context;
using ref::fresh_seed;
using ref::Rng;
using test::Operand;

namespace {


struct Case {
    int64_t m, n, k, batch;
    bool trans_a, trans_b, soa, row_major;
    int64_t ld_pad, stride_pad;
    double alpha, beta;
};

std::ostream &operator<<(std::ostream &os, const Case &c) {
    return os << "m=" << c.m << " n=" << c.n << " k=" << c.k << " batch=" << c.batch << " op="
              << (c.trans_a ? 'T' : 'N') << (c.trans_b ? 'T' : 'N') << (c.soa ? " SoA" : " AoS")
              << (c.row_major ? " row-major" : " col-major") << " ld+" << c.ld_pad << " stride+" << c.stride_pad
              << " alpha=" << c.alpha << " beta=" << c.beta;
}

template <class T>
double run_case(apairs_context_t ctx, const Case &c, Rng &rng) {
    INFO(c);
    Operand<T> A(c.trans_a ? c.k : c.m, c.trans_a ? c.m : c.k, c.soa, c.row_major, c.ld_pad, c.stride_pad, c.batch);
    Operand<T> B(c.trans_b ? c.n : c.k, c.trans_b ? c.k : c.n, c.soa, c.row_major, c.ld_pad, c.stride_pad, c.batch);
    Operand<T> C(c.m, c.n, c.soa, c.row_major, c.ld_pad, c.stride_pad, c.batch);
    A.fill(rng);
    B.fill(rng);
    if (c.beta != 0) C.fill(rng);  // beta = 0: C keeps its NaN poison, which must not be read
    const std::vector<T> C0 = C.v;
    apairs_plan_t plan = nullptr;
    APAIRS_REQUIRE_OK(apairs_plan_create_gemm_batched(
        &plan, ctx, ref::Type<T>::dtype, c.soa ? APAIRS_LAYOUT_SOA : APAIRS_LAYOUT_AOS,
        c.row_major ? APAIRS_ORDER_ROW_MAJOR : APAIRS_ORDER_COL_MAJOR, c.trans_a ? APAIRS_OP_T : APAIRS_OP_N,
        c.trans_b ? APAIRS_OP_T : APAIRS_OP_N, c.m, c.n, c.k, c.alpha, c.beta, A.ld, A.stride, B.ld, B.stride, C.ld,
        C.stride, c.batch));
    const apairs_status_t st = apairs_plan_execute_gemm(plan, A.v.data(), B.v.data(), C.v.data());
    INFO(apairs_last_error());
    apairs_plan_destroy(plan);
    REQUIRE(st == APAIRS_SUCCESS);

    const long double u = ref::Type<T>::u();
    double worst = 0;
    int64_t bad = 0;
    for (int64_t e = 0; e < c.batch; ++e)
        for (int64_t i = 0; i < c.m; ++i)
            for (int64_t j = 0; j < c.n; ++j) {
                long double s = 0, scale = 0;
                for (int64_t l = 0; l < c.k; ++l) {
                    const long double a = c.trans_a ? A.at(l, i, e) : A.at(i, l, e);
                    const long double b = c.trans_b ? B.at(j, l, e) : B.at(l, j, e);
                    s += a * b;
                    scale += fabsl(a * b);
                }
                const long double c0 = c.beta != 0 ? static_cast<long double>(C0[size_t(C.index(i, j, e))]) : 0;
                const long double want = c.alpha * s + c.beta * c0;
                // apairs.h: |error| <= (k + 2) u (|alpha| sum |a b| + |beta c|); the
                // reference's own rounding is far below (64-bit significand).
                const long double bound =
                    (c.k + 2) * u * (std::fabs(c.alpha) * scale + std::fabs(c.beta) * fabsl(c0)) + 1e-300L;
                const T got = C.at(i, j, e);
                const long double err = fabsl(static_cast<long double>(got) - want);
                const double frac = got != got ? std::numeric_limits<double>::infinity() : double(err / bound);
                worst = std::max(worst, frac);
                if (!(frac <= 1.0) && ++bad <= 5)
                    FAIL_CHECK("C[" << e << "](" << i << ", " << j << ") = " << +got << ", reference "
                                    << double(want) << ", error / bound " << frac);
            }
    CHECK(bad == 0);
    CHECK(C.padding_touched(C0) == 0);
    return worst;
}

// occupancy: APAIRS_OPTION_OCCUPANCY_TARGET of the context (0: the default).
template <class T>
void check_cases(const std::vector<Case> &cases, double occupancy = 0) {
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << " (replay: APAIRS_TEST_SEED=" << seed << "), backend " << test::backend_name() << ", "
                 << ref::Type<T>::name << ", occupancy target " << occupancy);
    Rng rng(seed);
    Context ctx;
    if (occupancy > 0) APAIRS_REQUIRE_OK(apairs_context_set_option(ctx.h, APAIRS_OPTION_OCCUPANCY_TARGET, occupancy));
    double worst = 0;
    for (const Case &c : cases) worst = std::max(worst, run_case<T>(ctx.h, c, rng));
    ref::print_worst(std::string("gemm batched ") + ref::Type<T>::name, worst, seed);
}

// Sizes at and past the switch points of the CUDA models (tiny, warp-group, block),
// primes, 1, 128; every layout, order and op; odd batches.
template <class T>
std::vector<Case> all_cases() {
    std::vector<Case> cs;
    const int64_t sizes[][3] = {{1, 1, 1},   {2, 2, 2},   {3, 3, 3},    {4, 4, 4},     {5, 3, 7},
                                {8, 8, 8},   {9, 7, 5},   {16, 16, 16}, {17, 13, 11},  {32, 32, 32},
                                {33, 31, 29}, {64, 64, 64}, {1, 128, 3}, {128, 128, 128}};
    int variant = 0;
    for (const auto &s : sizes) {
        const int64_t work = s[0] * s[1] * s[2];
        for (int lay = 0; lay < 4; ++lay) {
            Case c{};
            c.m = s[0], c.n = s[1], c.k = s[2];
            c.soa = lay & 1;
            c.row_major = !(lay & 2);
            c.trans_a = (variant % 3) == 1;
            c.trans_b = (variant % 4) >= 2;
            c.batch = work > 100000 ? 3 : work > 5000 ? 7 : (variant % 2 ? 97 : 1);
            c.ld_pad = variant % 3;
            c.stride_pad = (variant * 5) % 7;
            c.alpha = variant % 5 == 0 ? 1.0 : -0.75;
            c.beta = variant % 3 == 0 ? 0.0 : (variant % 3 == 1 ? 1.0 : 0.5);
            cs.push_back(c);
            ++variant;
        }
    }
    // Many elements of tiny matrices, where the thread-per-element model runs.
    cs.push_back(Case{3, 3, 3, 10007, false, false, true, true, 0, 13, 1.0, 0.0});
    cs.push_back(Case{4, 4, 4, 4099, true, false, false, false, 1, 3, 2.0, -1.0});
    cs.push_back(Case{2, 2, 2, 65537, false, true, true, false, 0, 0, 1.0, 1.0});
    // Sizes 9 to 16 on enough elements to fill the device (64 per SM on a 132-SM part):
    // the CUDA engine's warp-group model in float (8 threads per element) and its
    // pipelined tiles in double (whole slices on the 16-byte grid staged by each
    // element's own threads: the kernel's B of the second and third cases), AoS at compiled
    // and run-time sizes, with transposed (swapped) operands, and SoA; C up to 8 x 8 with
    // k of 9..16 (double: the warp-groups of 16 threads).
    cs.push_back(Case{8, 8, 16, 9001, false, false, false, true, 0, 0, 1.0, 0.5});
    cs.push_back(Case{16, 16, 16, 9001, false, false, false, true, 0, 1, 1.0, 0.0});
    cs.push_back(Case{16, 16, 16, 9001, true, false, false, true, 0, 0, -0.5, 1.0});
    cs.push_back(Case{16, 16, 16, 9001, false, true, false, false, 0, 2, 1.0, 0.0});
    cs.push_back(Case{12, 10, 14, 9001, true, false, false, true, 1, 3, 1.0, 0.5});
    cs.push_back(Case{12, 10, 14, 9001, true, true, true, false, 1, 3, -0.5, 2.0});
    cs.push_back(Case{8, 8, 8, 4099, true, true, false, true, 0, 0, 1.0, 0.0});
    // C past 32 MiB with beta = 0, rows of op(B) and C contiguous: the host engine stores C
    // past the caches (non-temporal stores, x86 with AVX2).
    cs.push_back(Case{8, 8, 8, 65537 * int64_t(8 / sizeof(T)), true, false, false, true, 0, 0, -0.75, 0.0});
    // The CUDA engine's pipelined kernels (C up to 64 x 64): each tile size (8, 16, 32,
    // 64) with 16-byte aligned rows and strides (the vector copies and stores), batches
    // that give a block several groups and end inside one (SoA: inside a 16-byte piece
    // of elements; AoS blocks of several elements: the occupancy-target test below), k in
    // several slices with a partial last one, transposes (entry-wise staging), beta = 0
    // and not.
    cs.push_back(Case{8, 8, 8, 3001, false, false, false, true, 0, 0, 1.0, 0.0});
    cs.push_back(Case{8, 8, 16, 3001, false, false, true, true, 0, 3, 1.0, 0.5});
    cs.push_back(Case{16, 16, 16, 2003, false, false, false, false, 0, 0, -0.75, 1.0});
    cs.push_back(Case{16, 16, 16, 2003, false, false, true, true, 0, 1, 1.0, 0.0});
    cs.push_back(Case{32, 32, 32, 501, false, false, false, true, 0, 0, 1.0, 0.0});
    cs.push_back(Case{32, 32, 32, 501, false, false, true, false, 0, 3, 1.0, -1.0});
    cs.push_back(Case{64, 64, 64, 67, false, false, false, true, 0, 0, 1.0, 0.5});
    cs.push_back(Case{64, 64, 64, 67, false, false, true, true, 0, 1, 1.0, 0.0});
    cs.push_back(Case{24, 20, 40, 333, false, false, false, true, 0, 0, 1.0, 0.0});
    cs.push_back(Case{24, 20, 40, 333, false, false, true, true, 0, 3, -0.75, 0.5});
    cs.push_back(Case{48, 64, 128, 5, true, false, false, true, 0, 0, 1.0, 0.0});
    cs.push_back(Case{40, 56, 72, 37, false, true, true, false, 0, 3, 1.0, 1.0});
    cs.push_back(Case{5, 6, 100, 211, false, false, false, true, 0, 0, 1.0, 0.0});
    // The pipelined kernels' 16-byte copies at the end of the array (compute-sanitizer
    // memcheck sees a copy that runs past it): lds and strides on 16 bytes (f32 and f64),
    // rows whose last 16-byte piece is partial (n and k 1 mod 4, for AoS the last row of
    // the last element ends the array), SoA batches that end inside a 16-byte piece of
    // elements (the stride past the batch shorter than the piece); each tile size, k in
    // one partial slice and in several, small batches, N and T operands, both orders.
    cs.push_back(Case{9, 9, 13, 1, false, false, false, true, 3, 3, -0.75, 1.0});
    cs.push_back(Case{6, 5, 17, 1, false, false, false, true, 3, 3, 1.0, 0.0});
    cs.push_back(Case{20, 29, 25, 2, false, false, false, true, 3, 3, 1.0, 0.5});
    cs.push_back(Case{40, 37, 21, 3, false, false, false, true, 3, 3, -0.75, 1.0});
    cs.push_back(Case{13, 10, 9, 2, false, false, false, false, 3, 3, 1.0, 1.0});
    cs.push_back(Case{9, 7, 13, 1, true, true, false, true, 3, 3, 1.0, 0.0});
    cs.push_back(Case{33, 17, 45, 1, true, false, false, false, 3, 3, 1.0, 1.0});
    cs.push_back(Case{9, 7, 11, 1, false, false, true, true, 1, 3, -0.75, 1.0});
    cs.push_back(Case{5, 3, 7, 7, true, false, true, false, 2, 1, 1.0, 0.5});
    cs.push_back(Case{20, 17, 40, 3, false, false, true, true, 3, 1, 1.0, 0.0});
    cs.push_back(Case{33, 35, 17, 5, false, true, true, true, 0, 3, 1.0, 1.0});
    cs.push_back(Case{64, 61, 9, 37, false, false, true, false, 1, 3, -0.75, 0.0});
    // SoA C above 32 x 32 (one 64 x 64 tile, partial at the bottom and right), few
    // groups, every op. (The kernels' walk over several tiles of one C is no longer
    // selected for any shape, and so not reached by any test: see gemm.cu.)
    cs.push_back(Case{50, 20, 33, 9, false, true, true, true, 1, 2, 1.0, 0.5});
    cs.push_back(Case{17, 45, 8, 3, true, true, true, false, 0, 1, -0.75, 0.0});
    cs.push_back(Case{64, 64, 40, 130, false, false, true, true, 0, 3, 1.0, 1.0});
    cs.push_back(Case{45, 64, 20, 61, true, false, true, false, 2, 0, 1.0, 0.0});
    // AoS C above 32 x 32 (one 64 x 64 tile), vector and entry-wise staging.
    cs.push_back(Case{50, 64, 24, 300, true, true, false, false, 1, 3, 1.0, 0.5});
    cs.push_back(Case{64, 37, 17, 41, false, false, false, true, 3, 3, -0.75, 1.0});
    cs.push_back(Case{33, 64, 9, 2, false, true, false, true, 0, 0, 1.0, 0.0});
    // The AoS tiles' whole slices staged by each element's threads, a partial one walked:
    // C up to 8 x 8 with k in two slices of 8 (few elements: the tiles); C of 17..32 in a
    // slice of 16 and a partial one; C of 64 x 64 in one slice of 16 (double: walked) and
    // in a slice of 16 and a partial one (float: the fma, not the mma).
    cs.push_back(Case{8, 8, 16, 3001, false, false, false, true, 0, 0, -0.75, 1.0});
    cs.push_back(Case{32, 32, 24, 97, false, false, false, true, 0, 0, 1.0, 0.5});
    cs.push_back(Case{64, 64, 16, 45, false, false, false, true, 0, 0, 1.0, 0.0});
    cs.push_back(Case{64, 64, 24, 45, false, false, false, false, 0, 0, 0.5, -1.0});
    // AoS C above 32 x 32 with k in slices of 32: two whole slices, and two with a partial
    // third (vector and entry-wise staging, padded rows); k = 16, one whole slice of 16.
    cs.push_back(Case{64, 48, 16, 45, false, false, false, true, 2, 0, 1.0, 0.5});
    cs.push_back(Case{64, 64, 75, 131, false, false, false, true, 0, 0, 1.0, 0.5});
    cs.push_back(Case{60, 50, 64, 67, true, false, false, true, 2, 1, -0.75, 0.0});
    cs.push_back(Case{41, 64, 70, 29, false, true, false, false, 4, 4, 1.0, 1.0});
    // (the tensor-core fragments: f64, and f32 above 32 x 32) one whole slice and one
    // dimension more; a whole slice of C with one row and one column fewer than the tile,
    // B transposed; C of 17..32 (f64: two warps an element) over two whole slices, partial
    // at the bottom and right, A transposed, column-major, padded rows.
    cs.push_back(Case{64, 64, 33, 7, false, false, false, true, 0, 0, 1.0, 0.0});
    cs.push_back(Case{63, 63, 32, 5, true, true, false, true, 0, 2, 0.5, -1.0});
    cs.push_back(Case{31, 29, 64, 37, true, false, false, false, 1, 2, 0.5, -1.0});
    // SoA C up to 8 x 8 on the pipelined tiles (square 8 x 8 x 8 takes the lane kernel): a
    // batch ending inside a unit of a later block.
    cs.push_back(Case{8, 8, 24, 1061, false, false, true, true, 0, 0, 1.0, 0.5});
    cs.push_back(Case{7, 8, 6, 139, true, true, true, false, 1, 2, -0.75, 0.0});
    // AoS k in several slices with rows padded to 16 bytes (ld past the row); C of 17..32
    // with 16 < k < 32 (slices of 16, the second partial), both operands transposed,
    // column-major; k = 32 (one whole slice of 32), column-major, B transposed.
    cs.push_back(Case{32, 24, 40, 97, false, false, false, true, 4, 0, 1.0, 0.5});
    cs.push_back(Case{28, 30, 19, 33, true, true, false, false, 1, 2, 1.0, 0.5});
    cs.push_back(Case{30, 25, 32, 45, false, true, false, false, 0, 3, -0.75, 1.0});
    cs.push_back(Case{40, 28, 36, 61, true, false, false, false, 4, 4, -0.75, 0.0});
    // AoS C of 9..16 (f64: 4 x 2 sums a thread, three stages): k in several slices with a
    // partial last one, a batch ending inside a block, N and T operands.
    cs.push_back(Case{16, 16, 40, 1001, false, false, false, true, 0, 0, 1.0, 0.5});
    cs.push_back(Case{12, 15, 33, 203, true, false, false, true, 1, 3, -0.75, 0.0});
    cs.push_back(Case{16, 11, 16, 77, false, true, false, false, 0, 1, 1.0, 1.0});
    // SoA C of 9..16: batches ending inside a unit and a block.
    cs.push_back(Case{16, 16, 16, 1029, false, false, true, true, 0, 0, 1.0, 0.0});
    cs.push_back(Case{14, 16, 21, 37, false, true, true, false, 0, 1, 1.0, 0.5});
    // SoA pipelined tiles, whole stages copied by fixed pieces: batches on the 16-byte grid
    // (host arrays are staged with the batch as the stride: multiples of 4 for f32, of 2
    // for f64), ending inside a group (its last stages walked): 16 x 16 with both
    // operands transposed and with C column-major (swapped operands), C through shared
    // memory whole pieces at a time, beta read; k in one slice over more groups than
    // blocks (a pair finishing every iteration); 8 x 8 x 16; 64 x 64 (one tile, a unit of
    // 512 threads): few groups, and twice as many groups as H100's 132 blocks or more (a
    // block going on from a whole group to the next), ending inside a group (1062: f64,
    // two elements past 265 whole groups of 4, f32 off the grid, walked; 2116: f32, four
    // past 264 whole groups of 8, f64 529 whole groups).
    cs.push_back(Case{16, 16, 16, 1028, true, true, true, true, 0, 0, 1.0, 0.5});
    cs.push_back(Case{16, 16, 16, 2052, false, false, true, false, 0, 0, -0.75, 0.0});
    cs.push_back(Case{16, 16, 8, 8196, false, false, true, true, 0, 0, 1.0, 0.0});
    cs.push_back(Case{8, 8, 16, 3004, false, false, true, true, 0, 0, 1.0, 0.0});
    cs.push_back(Case{64, 64, 16, 44, false, true, true, true, 0, 0, 1.0, 1.0});
    cs.push_back(Case{64, 64, 8, 1062, false, true, true, false, 0, 0, -0.75, 0.5});
    cs.push_back(Case{64, 64, 8, 2116, true, false, true, true, 0, 0, 1.0, 0.0});
    // SoA 16 x 16 x 16 (the CUDA lane kernel: 32 consecutive elements a unit): more groups
    // than an H100's resident units take in one round (264 x 32 f32, 132 x 32 f64), the
    // last group partial (20011 = 625 x 32 + 11), an odd stride (host arrays are staged
    // with the chunk as the stride: odd where a chunk, or the last, is; its copies then an
    // entry at a time), A transposed, C column-major, beta read; and on the 16-byte grid
    // with B transposed, beta = 0.
    cs.push_back(Case{16, 16, 16, 20011, true, false, true, false, 0, 0, -0.75, 0.5});
    cs.push_back(Case{16, 16, 16, 8452, false, true, true, true, 0, 0, 1.0, 0.0});
    // SoA 8 x 8 x 8 (the CUDA lane kernel, 8 warps a unit): more groups than an H200's
    // resident units take in one round (264 x 32 f64, 396 x 32 f32), the last group
    // partial, an odd stride, A transposed, C column-major, beta read; on the 16-byte grid
    // with B transposed, beta = 0; and one partial group alone.
    cs.push_back(Case{8, 8, 8, 20011, true, false, true, false, 0, 0, -0.75, 0.5});
    cs.push_back(Case{8, 8, 8, 8452, false, true, true, true, 0, 0, 1.0, 0.0});
    cs.push_back(Case{8, 8, 8, 5, true, true, true, true, 1, 2, 1.0, 1.0});
    // SoA 32 x 32 x 32 (the CUDA pipelined tiles, units of 4 f64 / 8 f32 elements): more
    // groups than an H100's resident blocks take in one round (396 blocks), the last group
    // partial (5003: 3 past whole groups), an odd stride (copies an entry at a time), A
    // transposed, C column-major, beta read; and on the 16-byte grid with B transposed,
    // beta = 0.
    cs.push_back(Case{32, 32, 32, 5003, true, false, true, false, 0, 0, -0.75, 0.5});
    cs.push_back(Case{32, 32, 32, 4232, false, true, true, true, 0, 0, 1.0, 0.0});
    // The same tiles on the 16-byte grid (a batch of whole 16-byte pieces), whose whole
    // stages issue their copies spread over the previous stage's fold: a last group
    // partial (4230 f64 / 4228 f32), k = 33 (a one-dimension slice, spread over one step,
    // before the next group's whole slice) with A transposed and C column-major, k = 36
    // (spread over 4 steps), k = 8 on 16 elements (one item a block, fewer than the f32
    // kernel's stages), and a tile of 24 x 28 (every stage walked).
    const int64_t aligned = sizeof(T) == 8 ? 4230 : 4228;
    cs.push_back(Case{32, 32, 33, aligned, true, false, true, false, 0, 0, -0.75, 0.5});
    cs.push_back(Case{32, 32, 36, aligned, false, true, true, true, 0, 0, 1.0, 0.0});
    cs.push_back(Case{32, 32, 8, 16, false, false, true, true, 0, 0, 1.0, 0.5});
    cs.push_back(Case{24, 28, 40, 1000, true, true, true, false, 0, 0, 1.0, 1.0});
    // SoA C of 32 x 32 and 64 x 64 (the CUDA pipelined tiles) with ops TN, TT and NN (NT:
    // the cases above), C row- and column-major, k over several slices and a partial last
    // one, beta read and not; in double on the 16-byte grid (host arrays are staged with
    // the batch as the stride: even batches), so that whole stages may take the fixed
    // pieces, and the last group of four elements, two short, is walked.
    cs.push_back(Case{64, 64, 48, 2050, true, false, true, true, 0, 1, 1.0, 0.5});
    cs.push_back(Case{64, 64, 40, 1002, true, true, true, true, 0, 1, -0.75, 0.0});
    cs.push_back(Case{64, 64, 64, 1002, false, false, true, false, 0, 1, 1.0, 1.0});
    cs.push_back(Case{32, 32, 64, 3002, true, true, true, true, 0, 1, 0.5, 0.0});
    cs.push_back(Case{32, 32, 20, 3002, false, false, true, true, 0, 1, 1.0, -1.0});
    return cs;
}

}  // namespace

TEMPLATE_TEST_CASE("batched gemm matches a long-double reference in every layout", "[batched][gemm]", float,
                   double) {
    check_cases<TestType>(all_cases<TestType>());
}

// At the default target the CUDA plan runs AoS sub-block kernels in blocks of one element
// where those keep 90 % of the warps (float C of 32 x 32 on H100/H200, double C of 9..16);
// a target of 1 keeps the estimator's pick of several elements a block,
// whose elements past the first, and batches ending inside a block, these cases reach.
TEMPLATE_TEST_CASE("batched gemm: AoS sub-blocks of several elements a block (occupancy target 1)",
                   "[batched][gemm]", float, double) {
    std::vector<Case> cs;
    cs.push_back(Case{32, 32, 32, 501, false, false, false, true, 0, 0, 1.0, 0.0});
    cs.push_back(Case{32, 24, 40, 97, false, false, false, true, 4, 0, 1.0, 0.5});
    cs.push_back(Case{28, 30, 19, 33, true, true, false, false, 1, 2, 1.0, 0.5});
    cs.push_back(Case{31, 29, 64, 37, true, false, false, false, 1, 2, 0.5, -1.0});
    cs.push_back(Case{16, 16, 40, 1001, false, false, false, true, 0, 0, 1.0, 0.5});
    cs.push_back(Case{12, 15, 33, 203, true, false, false, true, 1, 3, -0.75, 0.0});
    cs.push_back(Case{64, 61, 40, 37, false, true, false, true, 0, 1, 1.0, 1.0});
    // Both operands staged whole by each element's threads, several elements a block and
    // the last block partial (the estimator's blocks on H100 / H200 limits, worked out
    // from the kernels' registers and shared memory: double 16 x 16 x 32 17 elements,
    // float 32 x 32 x 64 13).
    cs.push_back(Case{16, 16, 32, 1001, false, false, false, true, 0, 0, 1.0, 0.0});
    cs.push_back(Case{32, 32, 64, 61, false, false, false, true, 0, 0, -0.75, 0.5});
    check_cases<TestType>(cs, 1.0);
}

TEST_CASE("batched gemm: alpha and beta are taken in the element type", "[batched][gemm]") {
    Context ctx;
    apairs_plan_t plan = nullptr;
    // 1e39 is finite as a double but not as a float.
    CHECK(apairs_plan_create_gemm_batched(&plan, ctx.h, APAIRS_DTYPE_F32, 1, 1, 0, 0, 1, 1, 1, 1e39, 0, 1, 1, 1, 1, 1,
                                          1, 1) == APAIRS_ERROR_INVALID_VALUE);
    CHECK(std::string(apairs_last_error()).find("alpha = ") != std::string::npos);
    CHECK(apairs_plan_create_gemm_batched(&plan, ctx.h, APAIRS_DTYPE_F32, 1, 1, 0, 0, 1, 1, 1, 1, -1e39, 1, 1, 1, 1, 1,
                                          1, 1) == APAIRS_ERROR_INVALID_VALUE);
    CHECK(plan == nullptr);
    APAIRS_REQUIRE_OK(apairs_plan_create_gemm_batched(&plan, ctx.h, APAIRS_DTYPE_F64, 1, 1, 0, 0, 1, 1, 1, 1e39, 0, 1,
                                                      1, 1, 1, 1, 1, 1));
    double a = 1e-20, b = 1e-20, c = std::nan("");
    APAIRS_REQUIRE_OK(apairs_plan_execute_gemm(plan, &a, &b, &c));
    CHECK(std::fabs(c - 0.1) < 1e-16);
    apairs_plan_destroy(plan);
    // An f32 beta of 1e-46 is 0 once rounded: the plan says beta = 0 (so C is neither read
    // nor, on CUDA, staged in), and C's NaN stays out of the result.
    plan = nullptr;
    APAIRS_REQUIRE_OK(apairs_plan_create_gemm_batched(&plan, ctx.h, APAIRS_DTYPE_F32, 1, 1, 0, 0, 1, 1, 1, 2, 1e-46, 1,
                                                      1, 1, 1, 1, 1, 1));
    char text[4096];
    int64_t length = 0;
    APAIRS_REQUIRE_OK(apairs_plan_describe(plan, text, sizeof text, &length));
    CHECK(std::string(text).find(",beta=0") != std::string::npos);
    float af = 3, bf = 5, cf = std::nanf("");
    APAIRS_REQUIRE_OK(apairs_plan_execute_gemm(plan, &af, &bf, &cf));
    CHECK(cf == 30.0f);
    apairs_plan_destroy(plan);
}

// Entry by entry, bit for bit: every entry of `out` is beta times its value in `before`
// (+0 where beta = 0, whatever it held), and nothing else changed.
template <class T>
void check_scaled(const Operand<T> &out, const std::vector<T> &before, double beta) {
    int64_t bad = 0;
    for (int64_t e = 0; e < out.batch; ++e)
        for (int64_t i = 0; i < out.rows; ++i)
            for (int64_t j = 0; j < out.cols; ++j) {
                const size_t at = size_t(out.index(i, j, e));
                const T want = beta == 0 ? T(0) : T(beta) * before[at], got = out.v[at];
                bad += std::memcmp(&want, &got, sizeof(T)) != 0 && !(std::isnan(want) && std::isnan(got));
            }
    CHECK(bad == 0);
    CHECK(out.padding_touched(before) == 0);
}

// BLAS: with alpha = 0, A and B (gemv: A and x) need not be set; C = beta C. Here they
// hold NaN and infinities, which must not reach C; C holds a NaN that beta = 0 must not read.
TEMPLATE_TEST_CASE("batched gemm and gemv: alpha = 0 never reads A, B or x", "[batched][gemm][gemv]", float,
                   double) {
    using T = TestType;
    Context ctx;
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed);
    Rng rng(seed);
    const T junk[] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                      -std::numeric_limits<T>::infinity()};
    auto spoil = [&](Operand<T> &x) {
        for (int64_t e = 0; e < x.batch; ++e)
            for (int64_t i = 0; i < x.rows; ++i)
                for (int64_t j = 0; j < x.cols; ++j) x.at(i, j, e) = junk[(i + 2 * j + e) % 3];
    };
    const int32_t dtype = ref::Type<T>::dtype;
    for (bool soa : {false, true})
        for (bool row : {true, false})
            for (int64_t batch : {1, 37, 300007})
                for (double beta : {0.0, 0.5, -3.0})
                    for (int64_t s : {1, 3, 16, 33}) {
                        // 300007 elements (3 x 5 C, 15 entries): far more than a resident
                        // grid's threads an entry, so that each walks many (the CUDA kernel's
                        // 8 or 4 loads at a time, then the rest: some 16 elements a thread on
                        // an H200).
                        if (batch > 37 && s != 3) continue;
                        const int64_t m = s, n = s == 3 ? 5 : s, k = s == 33 ? 64 : s;
                        INFO((soa ? "SoA" : "AoS") << (row ? " row-major" : " col-major") << " batch " << batch
                                                   << " beta " << beta << " m " << m << " n " << n << " k " << k);
                        const int32_t layout = soa ? APAIRS_LAYOUT_SOA : APAIRS_LAYOUT_AOS;
                        const int32_t order = row ? APAIRS_ORDER_ROW_MAJOR : APAIRS_ORDER_COL_MAJOR;
                        Operand<T> A(m, k, soa, row, 1, 2, batch), B(k, n, soa, row, 0, 3, batch),
                            C(m, n, soa, row, 2, 1, batch);
                        spoil(A), spoil(B);
                        C.fill(rng);
                        C.at(0, 0, 0) = std::numeric_limits<T>::quiet_NaN();
                        std::vector<T> before = C.v;
                        apairs_plan_t plan = nullptr;
                        APAIRS_REQUIRE_OK(apairs_plan_create_gemm_batched(
                            &plan, ctx.h, dtype, layout, order, APAIRS_OP_N, APAIRS_OP_N, m, n, k, 0.0, beta, A.ld,
                            A.stride, B.ld, B.stride, C.ld, C.stride, batch));
                        char text[4096];
                        int64_t length = 0;
                        APAIRS_REQUIRE_OK(apairs_plan_describe(plan, text, sizeof text, &length));
                        CHECK(std::string(text).find(",alpha=0") != std::string::npos);
                        APAIRS_REQUIRE_OK(apairs_plan_execute_gemm(plan, A.data(), B.data(), C.data()));
                        apairs_plan_destroy(plan);
                        check_scaled(C, before, beta);

                        // gemv, A m x n (n = k here), op N and T.
                        for (bool trans : {false, true}) {
                            INFO("gemv " << (trans ? 'T' : 'N'));
                            Operand<T> G(m, k, soa, row, 1, 2, batch);
                            Operand<T> x = Operand<T>::vector(trans ? m : k, soa, 1, batch),
                                       y = Operand<T>::vector(trans ? k : m, soa, 2, batch);
                            spoil(G), spoil(x);
                            y.fill(rng);
                            y.at(0, 0, 0) = std::numeric_limits<T>::quiet_NaN();
                            before = y.v;
                            plan = nullptr;
                            APAIRS_REQUIRE_OK(apairs_plan_create_gemv_batched(
                                &plan, ctx.h, dtype, layout, order, trans ? APAIRS_OP_T : APAIRS_OP_N, m, k, 0.0,
                                beta, G.ld, G.stride, x.stride, y.stride, batch));
                            APAIRS_REQUIRE_OK(apairs_plan_execute_gemv(plan, G.data(), x.data(), y.data()));
                            apairs_plan_destroy(plan);
                            check_scaled(y, before, beta);
                        }
                    }
}

TEST_CASE("batched gemm: every bad argument fails with its status, a message, and writes nothing",
          "[batched][gemm]") {
    Context ctx;
    const apairs_plan_t sentinel = reinterpret_cast<apairs_plan_t>(uintptr_t(0xDEADBE0));
    struct Bad {
        const char *what;
        apairs_status_t want;
        int32_t dtype = APAIRS_DTYPE_F64, layout = APAIRS_LAYOUT_AOS, order = APAIRS_ORDER_ROW_MAJOR, ta = 0, tb = 0;
        int64_t m = 3, n = 4, k = 5;
        double alpha = 1, beta = 0;
        int64_t lda = 5, sa = 15, ldb = 4, sb = 20, ldc = 4, sc = 12, batch = 10;
        const char *word = nullptr;  // the message names it
    };
    std::vector<Bad> bad;
    auto add = [&](Bad b) { bad.push_back(b); };
    { Bad b{"good", APAIRS_SUCCESS}; add(b); }
    { Bad b{"dtype", APAIRS_ERROR_UNKNOWN_ENUM}; b.dtype = 9; b.word = "dtype"; add(b); }
    { Bad b{"dtype u8", APAIRS_ERROR_UNSUPPORTED}; b.dtype = APAIRS_DTYPE_U8; b.word = "dtype"; add(b); }
    { Bad b{"layout", APAIRS_ERROR_UNKNOWN_ENUM}; b.layout = 0; b.word = "layout"; add(b); }
    { Bad b{"order", APAIRS_ERROR_UNKNOWN_ENUM}; b.order = 3; b.word = "order"; add(b); }
    { Bad b{"trans_a", APAIRS_ERROR_UNKNOWN_ENUM}; b.ta = 2; b.word = "trans_a"; add(b); }
    { Bad b{"trans_b", APAIRS_ERROR_UNKNOWN_ENUM}; b.tb = -1; b.word = "trans_b"; add(b); }
    { Bad b{"m = 0", APAIRS_ERROR_INVALID_VALUE}; b.m = 0; b.word = "m"; add(b); }
    { Bad b{"n < 0", APAIRS_ERROR_INVALID_VALUE}; b.n = -4; b.word = "n"; add(b); }
    { Bad b{"k = 129", APAIRS_ERROR_INVALID_VALUE}; b.k = 129; b.word = "k"; add(b); }
    { Bad b{"alpha NaN", APAIRS_ERROR_INVALID_VALUE}; b.alpha = std::nan(""); b.word = "alpha"; add(b); }
    { Bad b{"beta inf", APAIRS_ERROR_INVALID_VALUE}; b.beta = INFINITY; b.word = "beta"; add(b); }
    // f32: finite once rounded to float (3.4028235e38 rounds to FLT_MAX, 3.5e38 to inf).
    { Bad b{"f32 alpha rounding to FLT_MAX", APAIRS_SUCCESS}; b.dtype = APAIRS_DTYPE_F32; b.alpha = 3.4028235e38; add(b); }
    { Bad b{"f32 beta rounding to inf", APAIRS_ERROR_INVALID_VALUE}; b.dtype = APAIRS_DTYPE_F32; b.beta = -3.5e38; b.word = "beta"; add(b); }
    { Bad b{"batch = 0", APAIRS_ERROR_INVALID_VALUE}; b.batch = 0; b.word = "batch"; add(b); }
    { Bad b{"lda < k", APAIRS_ERROR_INVALID_VALUE}; b.lda = 4; b.word = "lda"; add(b); }
    { Bad b{"ldc < n", APAIRS_ERROR_INVALID_VALUE}; b.ldc = 3; b.word = "ldc"; add(b); }
    { Bad b{"AoS stride overlaps", APAIRS_ERROR_INVALID_VALUE}; b.sb = 19; b.word = "stride_b"; add(b); }
    { Bad b{"SoA stride < batch", APAIRS_ERROR_INVALID_VALUE}; b.layout = APAIRS_LAYOUT_SOA; b.sa = b.sb = 10; b.sc = 9; b.word = "stride_c"; add(b); }
    { Bad b{"span overflows", APAIRS_ERROR_OVERFLOW}; b.sa = INT64_MAX / 4; b.word = "stride_a"; add(b); }
    { Bad b{"batch overflows", APAIRS_ERROR_OVERFLOW}; b.batch = INT64_MAX / 8; b.word = "stride_a"; add(b); }
    { Bad b{"ld overflows", APAIRS_ERROR_OVERFLOW}; b.lda = INT64_MAX / 2; b.sa = INT64_MAX; b.word = "lda"; add(b); }
    for (const Bad &b : bad) {
        INFO(b.what);
        apairs_plan_t plan = sentinel;
        const apairs_status_t st = apairs_plan_create_gemm_batched(&plan, ctx.h, b.dtype, b.layout, b.order, b.ta,
                                                                   b.tb, b.m, b.n, b.k, b.alpha, b.beta, b.lda, b.sa,
                                                                   b.ldb, b.sb, b.ldc, b.sc, b.batch);
        const std::string msg = apairs_last_error();
        INFO("status " << apairs_status_string(st) << ", message \"" << msg << "\"");
        CHECK(st == b.want);
        if (b.want == APAIRS_SUCCESS) {
            CHECK(msg.empty());
            CHECK(apairs_plan_destroy(plan) == APAIRS_SUCCESS);
            continue;
        }
        CHECK(plan == sentinel);
        CHECK(msg.find("apairs_plan_create_gemm_batched") != std::string::npos);
        if (b.word) CHECK(msg.find(std::string(b.word) + " = ") != std::string::npos);
    }
    // NULL handles and arrays; a plan executed by another operation's function.
    apairs_plan_t gemm = nullptr, pairwise = nullptr;
    CHECK(apairs_plan_create_gemm_batched(nullptr, ctx.h, APAIRS_DTYPE_F32, 1, 1, 0, 0, 2, 2, 2, 1, 0, 2, 4, 2, 4, 2,
                                          4, 1) == APAIRS_ERROR_NULL_POINTER);
    CHECK(apairs_plan_create_gemm_batched(&gemm, nullptr, APAIRS_DTYPE_F32, 1, 1, 0, 0, 2, 2, 2, 1, 0, 2, 4, 2, 4, 2,
                                          4, 1) == APAIRS_ERROR_NULL_POINTER);
    APAIRS_REQUIRE_OK(apairs_plan_create_gemm_batched(&gemm, ctx.h, APAIRS_DTYPE_F32, APAIRS_LAYOUT_AOS,
                                                      APAIRS_ORDER_ROW_MAJOR, 0, 0, 2, 2, 2, 1, 0, 2, 4, 2, 4, 2, 4,
                                                      1));
    APAIRS_REQUIRE_OK(apairs_plan_create_pairwise(&pairwise, ctx.h, APAIRS_METRIC_L1, 0, APAIRS_DTYPE_F32, 2, 2, 2,
                                                  2, 2, 2));
    float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4] = {-1, -1, -1, -1};
    CHECK(apairs_plan_execute_gemm(gemm, nullptr, b, c) == APAIRS_ERROR_NULL_POINTER);
    CHECK(apairs_plan_execute_gemm(gemm, a, b, nullptr) == APAIRS_ERROR_NULL_POINTER);
    CHECK(apairs_plan_execute(gemm, a, b, c) == APAIRS_ERROR_UNSUPPORTED);
    CHECK(std::string(apairs_last_error()).find("apairs_plan_execute_gemm") != std::string::npos);
    CHECK(apairs_plan_execute_gemm(pairwise, a, b, c) == APAIRS_ERROR_UNSUPPORTED);
    CHECK(std::string(apairs_last_error()).find("apairs_plan_execute") != std::string::npos);
    for (float x : c) CHECK(x == -1.0f);  // nothing written by the failures
    APAIRS_REQUIRE_OK(apairs_plan_execute_gemm(gemm, a, b, c));
    CHECK(c[0] == 19.0f);  // [1 2; 3 4] [5 6; 7 8] = [19 22; 43 50]
    CHECK(c[3] == 50.0f);
    apairs_plan_destroy(gemm);
    apairs_plan_destroy(pairwise);
}
