// The genotype counting kernels of every instruction set this build has and this CPU
// runs (scalar, popcnt, AVX2, AVX-512), called directly on random bit planes, against counts
// taken bit by bit. The public-API tests reach only the best kernel of the machine.
#include <cstdint>
#include <initializer_list>
#include <random>
#include <utility>
#include <vector>

#include "apairs.h"
#include "catch.hpp"
#include "common/error.hpp"
#include "genotype/planes.hpp"

using namespace apairs::genotype;

TEST_CASE("genotype kernels: every instruction set counts every metric exactly", "[genotype]") {
    std::mt19937_64 rng(std::random_device{}());
    // Slices of 16 chunks and a partial one; d ends inside the last chunk's fifth word.
    // B tiles of 9 rows and of 64 (the weighted sum holds a tile's rows of B in 64 bits);
    // every fifth row has no missing call (and says so, as the engine's flags do), or,
    // `complete`, none has, and the kernel is told so (the allele metrics' two-term form).
    const auto shape = GENERATE(std::pair<int64_t, int64_t>{7, 9}, std::pair<int64_t, int64_t>{5, 64});
    const bool complete = GENERATE(false, true);
    const int64_t ni = shape.first, nj = shape.second, chunks = 19,
                  d = (chunks - 1) * kChunkVariants + 4 * 64 + 37;
    std::vector<uint64_t> planes(size_t((ni + nj) * chunks * kChunkU64));
    std::vector<uint8_t> has_missing(size_t(ni + nj), 1);
    for (int64_t r = 0; r < ni + nj; ++r) {
        has_missing[size_t(r)] = !complete && r % 5 != 3;
        for (int64_t w = 0; w < chunks * kChunkWords; ++w) {
            uint64_t *p = &planes[size_t((r * chunks + w / kChunkWords) * kChunkU64 + w % kChunkWords)];
            const int64_t left = d - 64 * w;
            const uint64_t valid = left >= 64 ? ~uint64_t(0) : left <= 0 ? 0 : (uint64_t(1) << left) - 1;
            const uint64_t m = (has_missing[size_t(r)] ? rng() | rng() : ~uint64_t(0)) & valid, x = rng() & m,
                           y = rng() & x;  // y <= x <= called < d
            p[0] = x, p[kChunkWords] = y, p[2 * kChunkWords] = m;
        }
    }
    std::vector<uint32_t> weights(static_cast<size_t>(d));
    for (auto &w : weights) w = uint32_t(rng() >> 40);
    std::vector<const uint64_t *> rows;
    for (int64_t r = 0; r < ni + nj; ++r) rows.push_back(&planes[size_t(r * chunks * kChunkU64)]);
    struct Named {
        const char *name;
        CountTileSet fn;
    };
    const Named kernels[] = {{"scalar", count_tile_scalar()}, {"popcnt", count_tile_popcnt()},
                             {"avx2", count_tile_avx2()}, {"avx512", count_tile_avx512()}};
    const struct {
        int32_t metric, missing;
    } metrics[] = {{APAIRS_GENOTYPE_HAMMING, 0}, {APAIRS_GENOTYPE_ALLELE_COUNT, 0}, {APAIRS_GENOTYPE_IBS0, 0},
                   {APAIRS_GENOTYPE_IBS1, 0},    {APAIRS_GENOTYPE_IBS2, 0},         {APAIRS_GENOTYPE_NONMISSING, 0},
                   {APAIRS_GENOTYPE_IBS, APAIRS_GENOTYPE_MISSING_FLAT},
                   {APAIRS_GENOTYPE_IBS, APAIRS_GENOTYPE_MISSING_WEIGHTED}};
    for (const Named &k : kernels) {
        if (!k.fn) {
            WARN("kernel " << k.name << ": not built or not supported by this CPU");
            continue;
        }
        for (const auto &mt : metrics) {
            INFO("kernel " << k.name << " ni " << ni << " nj " << nj << " complete " << complete << " metric " << mt.metric << " missing " << mt.missing);
            std::vector<uint32_t> c0(size_t(ni * nj), 0xDEAD), c1(size_t(ni * nj), 0xDEAD),
                both(size_t(ni * nj), 0xDEAD);
            BothMissing bm;
            if (mt.missing == APAIRS_GENOTYPE_MISSING_WEIGHTED)
                bm = BothMissing{weights.data(), d, has_missing.data(), has_missing.data() + ni, both.data()};
            k.fn(mt.metric, mt.missing)(rows.data(), ni, rows.data() + ni, nj, chunks,
                 TileCounts{{c0.data(), c1.data()}, nj}, bm, complete);
            for (int64_t i = 0; i < ni; ++i)
                for (int64_t j = 0; j < nj; ++j) {
                    uint64_t count = 0, nm = 0;
                    uint32_t wboth = 0;
                    for (int64_t w = 0; w < chunks * kChunkWords; ++w) {
                        const int64_t off = (w / kChunkWords) * kChunkU64 + w % kChunkWords;
                        const uint64_t *a = rows[size_t(i)] + off, *b = rows[size_t(ni + j)] + off;
                        for (int bit = 0; bit < 64; ++bit) {
                            const uint64_t one = uint64_t(1) << bit;
                            if (64 * w + bit < d && !((a[16] | b[16]) & one)) wboth += weights[size_t(64 * w + bit)];
                            if (!(a[16] & b[16] & one)) continue;
                            ++nm;
                            const int ga = !!(a[0] & one) + !!(a[8] & one), gb = !!(b[0] & one) + !!(b[8] & one);
                            const int diff = ga > gb ? ga - gb : gb - ga;
                            switch (mt.metric) {
                            case APAIRS_GENOTYPE_HAMMING: count += diff != 0; break;
                            case APAIRS_GENOTYPE_IBS0: count += diff == 2; break;
                            case APAIRS_GENOTYPE_IBS1: count += diff == 1; break;
                            case APAIRS_GENOTYPE_IBS2: count += diff == 0; break;
                            case APAIRS_GENOTYPE_NONMISSING: count += 1; break;
                            default: count += uint64_t(diff);
                            }
                        }
                    }
                    REQUIRE(c0[size_t(i * nj + j)] == count);
                    if (mt.missing == APAIRS_GENOTYPE_MISSING_FLAT) REQUIRE(c1[size_t(i * nj + j)] == nm);
                    if (mt.missing == APAIRS_GENOTYPE_MISSING_WEIGHTED) REQUIRE(both[size_t(i * nj + j)] == wboth);
                }
        }
    }
}

TEST_CASE("genotype kernels: a set's selector refuses an unknown metric before any counting", "[genotype]") {
    // The engines take their kernel before their OpenMP regions, where a throw would end
    // the process: the selector is where an unknown metric must be caught.
    for (CountTileSet set : {count_tile_scalar(), count_tile_popcnt(), count_tile_avx2(), count_tile_avx512()}) {
        if (!set) continue;
        INFO("kernel set " << count_tile_name(set));
        for (int32_t metric = APAIRS_GENOTYPE_HAMMING; metric <= APAIRS_GENOTYPE_ONE_MINUS_IBS; ++metric)
            CHECK(set(metric, APAIRS_GENOTYPE_MISSING_FLAT) != nullptr);
        CHECK(set(APAIRS_GENOTYPE_IBS, APAIRS_GENOTYPE_MISSING_WEIGHTED) != nullptr);
        try {
            (void)set(APAIRS_GENOTYPE_ONE_MINUS_IBS + 1, APAIRS_GENOTYPE_MISSING_FLAT);
            FAIL("an unknown metric was given a kernel");
        } catch (const apairs::Error &e) {
            CHECK(e.status == APAIRS_ERROR_INTERNAL);
        }
    }
}
