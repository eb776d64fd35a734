// plink.hpp: PLINK 1 filesets and PLINK 1.9's --distance text, for the apairs command
// line (apairs --bfile PREFIX --distance ...).
//
//   read_fileset(prefix)   .bed (SNP-major), .bim, .fam -> samples x autosomal variants,
//                          packed sample-major in libapairs' genotype layout (apairs.h)
//   append_g(s, x)         x as PLINK 1.9 prints a double in its text outputs
//
// Header-only, C++17, standard library only. Errors are thrown as plink::Error with a
// message naming the file.
#ifndef APAIRS_TOOLS_PLINK_HPP
#define APAIRS_TOOLS_PLINK_HPP

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace plink {

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Fileset {
    int64_t samples = 0;
    int64_t variants_in_file = 0;             // lines of the .bim
    std::vector<int64_t> kept;                // indices of the autosomal variants, in order
    std::vector<std::string> fid, iid;        // from the .fam
    std::vector<uint8_t> founders;            // both parents "0"
    int64_t ld = 0;                           // bytes per packed sample row
    std::vector<uint8_t> packed;              // samples x ld: the kept variants, sample-major
};

// The whitespace-separated fields of a line.
inline std::vector<std::string> fields(const std::string &line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    for (std::string f; in >> f;) out.push_back(f);
    return out;
}

// PLINK 1.9 leaves X, Y and MT out of distance calculations (XY, the pseudo-autosomal
// region, stays): human chromosome codes, with or without a "chr" prefix.
inline bool autosomal(std::string chrom) {
    for (char &c : chrom) c = char(std::toupper(static_cast<unsigned char>(c)));
    if (chrom.rfind("CHR", 0) == 0) chrom = chrom.substr(3);
    return !(chrom == "X" || chrom == "23" || chrom == "Y" || chrom == "24" || chrom == "MT" || chrom == "M" ||
             chrom == "26");
}

// The lines of a .fam or .bim that PLINK 1.9 reads: blank lines and comments (first
// non-blank character '#', anywhere in the file) are skipped, as PLINK skips them.
inline std::vector<std::string> read_lines(const std::string &path) {
    std::ifstream in(path);
    if (!in) throw Error(path + ": cannot open: " + std::strerror(errno));
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        const size_t first = line.find_first_not_of(" \t");
        if (first != std::string::npos && line[first] != '#') lines.push_back(line);
    }
    if (in.bad()) throw Error(path + ": read error");
    return lines;
}

inline Fileset read_fileset(const std::string &prefix) {
    Fileset fs;
    const std::string bed = prefix + ".bed", bim = prefix + ".bim", fam = prefix + ".fam";
    const std::vector<std::string> fam_lines = read_lines(fam);
    for (size_t i = 0; i < fam_lines.size(); ++i) {
        const std::vector<std::string> f = fields(fam_lines[i]);
        if (f.size() < 6)
            throw Error(fam + ": line " + std::to_string(i + 1) + " has " + std::to_string(f.size()) +
                        " fields; a .fam line has 6 (FID IID father mother sex phenotype)");
        fs.fid.push_back(f[0]);
        fs.iid.push_back(f[1]);
        fs.founders.push_back(f[2] == "0" && f[3] == "0");
    }
    fs.samples = int64_t(fs.fid.size());
    if (fs.samples == 0) throw Error(fam + ": no samples");
    const std::vector<std::string> bim_lines = read_lines(bim);
    for (size_t k = 0; k < bim_lines.size(); ++k) {
        const std::vector<std::string> f = fields(bim_lines[k]);
        if (f.size() < 6)
            throw Error(bim + ": line " + std::to_string(k + 1) + " has " + std::to_string(f.size()) +
                        " fields; a .bim line has 6 (chromosome ID cM position A1 A2)");
        if (autosomal(f[0])) fs.kept.push_back(int64_t(k));
    }
    fs.variants_in_file = int64_t(bim_lines.size());
    if (fs.variants_in_file == 0) throw Error(bim + ": no variants");
    if (fs.kept.empty()) throw Error(bim + ": no autosomal variants (PLINK leaves X, Y and MT out of distances)");

    std::FILE *f = std::fopen(bed.c_str(), "rb");
    if (!f) throw Error(bed + ": cannot open: " + std::strerror(errno));
    std::vector<uint8_t> data;
    uint8_t buf[1 << 16];
    for (size_t got; (got = std::fread(buf, 1, sizeof buf, f)) > 0;) data.insert(data.end(), buf, buf + got);
    const bool read_error = std::ferror(f) != 0;
    std::fclose(f);
    if (read_error) throw Error(bed + ": read error");
    if (data.size() < 3 || data[0] != 0x6c || data[1] != 0x1b)
        throw Error(bed + ": not a PLINK 1 .bed file (its first bytes are not 0x6c 0x1b)");
    if (data[2] == 0x00)
        throw Error(bed + ": individual-major .bed (mode byte 0x00); convert it to SNP-major with "
                          "plink --bfile " + prefix + " --make-bed");
    if (data[2] != 0x01) throw Error(bed + ": unknown .bed mode byte " + std::to_string(int(data[2])));
    const int64_t stride = (fs.samples + 3) / 4;
    const uint64_t want = 3 + uint64_t(stride) * uint64_t(fs.variants_in_file);
    if (data.size() != want)
        throw Error(bed + ": " + std::to_string(data.size()) + " bytes, but " + std::to_string(fs.samples) +
                    " samples (.fam) and " + std::to_string(fs.variants_in_file) + " variants (.bim) need " +
                    std::to_string(want));

    // Transpose SNP-major to sample-major in blocks of 4 variants x 4 samples: a .bed
    // byte holds 4 samples of one variant, an output byte 4 variants of one sample.
    // spread[b] moves the code of sample s in byte b to bits 8 s and 8 s + 1, so the four
    // variants' spreads, shifted by 2 t, OR into the four output bytes at once.
    static const auto spread = [] {
        std::vector<uint32_t> t(256);
        for (uint32_t b = 0; b < 256; ++b)
            for (int s = 0; s < 4; ++s) t[b] |= ((b >> (2 * s)) & 3u) << (8 * s);
        return t;
    }();
    const int64_t m = int64_t(fs.kept.size());
    fs.ld = (m + 3) / 4;
    fs.packed.assign(size_t(fs.samples * fs.ld), 0);
    for (int64_t k0 = 0; k0 < m; k0 += 4) {
        const uint8_t *rows[4];
        for (int t = 0; t < 4; ++t)
            rows[t] = k0 + t < m ? &data[size_t(3 + fs.kept[size_t(k0 + t)] * stride)] : nullptr;
        uint8_t *out = &fs.packed[size_t(k0 / 4)];
        for (int64_t q = 0; q < stride; ++q) {
            uint32_t v = 0;
            for (int t = 0; t < 4; ++t)
                if (rows[t]) v |= spread[rows[t][q]] << (2 * t);
            // The .bed pads a variant's last byte with zeros: samples past the end are dropped.
            for (int64_t s = 0; s < 4 && 4 * q + s < fs.samples; ++s) out[(4 * q + s) * fs.ld] = uint8_t(v >> (8 * s));
        }
    }
    return fs;
}

// PLINK 1.9's printing of a double (6 significant digits, as %g, but with its own
// rounding: a tie within about 5e-9 of a unit in the 6th digit goes to the even digit).
// The scaling steps and constants are PLINK's, so that every double prints as it does.
namespace detail {

// round(x) for 0 <= x < 2^31 with PLINK's tolerant round-half-to-even.
inline uint32_t round_even(double x) {
    static const double tol[2] = {0.499999995, 0.500000005};
    const uint32_t r = uint32_t(int32_t(x));
    return r + uint32_t(int32_t((x - double(int32_t(r))) + tol[r & 1]));
}

// `digits` decimal digits of v (zero-padded), a point after the first `int_digits`,
// trailing zeros of the fraction (and a bare point) dropped.
inline void append_fixed(std::string &s, uint32_t v, int digits, int int_digits) {
    char d[16];
    for (int k = digits - 1; k >= 0; --k, v /= 10) d[k] = char('0' + v % 10);
    int end = digits;
    while (end > int_digits && d[end - 1] == '0') --end;
    s.append(d, size_t(int_digits));
    if (end > int_digits) {
        s += '.';
        s.append(d + int_digits, size_t(end - int_digits));
    }
}

}  // namespace detail

inline void append_g(std::string &s, double x) {
    if (x != x) {
        s += "nan";
        return;
    }
    if (x < 0) {
        s += '-';
        x = -x;
    }
    struct Step {
        double limit, factor;
        int exp;
    };
    if (x < 9.9999949999999e-5) {  // d.ddddde-XX
        if (x == 0.0) {
            s += '0';
            return;
        }
        static const Step small[] = {{9.9999949999999e-256, 1.0e256, 256}, {9.9999949999999e-128, 1.0e128, 128},
                                     {9.9999949999999e-64, 1.0e64, 64},    {9.9999949999999e-32, 1.0e32, 32},
                                     {9.9999949999999e-16, 1.0e16, 16},    {9.9999949999999e-8, 100000000, 8},
                                     {9.9999949999999e-4, 10000, 4},       {9.9999949999999e-2, 100, 2},
                                     {9.9999949999999e-1, 10, 1}};
        int e = 0;
        for (const Step &st : small)
            if (x < st.limit) x *= st.factor, e |= st.exp;
        detail::append_fixed(s, detail::round_even(x * 100000), 6, 1);
        s += "e-";
        if (e >= 100) s += char('0' + e / 100);
        s += char('0' + e / 10 % 10);
        s += char('0' + e % 10);
        return;
    }
    if (x >= 999999.49999999) {  // d.ddddde+XX
        if (x == __builtin_inf()) {
            s += "inf";
            return;
        }
        static const Step large[] = {{9.9999949999999e255, 1.0e-256, 256}, {9.9999949999999e127, 1.0e-128, 128},
                                     {9.9999949999999e63, 1.0e-64, 64},    {9.9999949999999e31, 1.0e-32, 32},
                                     {9.9999949999999e15, 1.0e-16, 16},    {9.9999949999999e7, 1.0e-8, 8},
                                     {9.9999949999999e3, 1.0e-4, 4},       {9.9999949999999e1, 1.0e-2, 2},
                                     {9.9999949999999e0, 1.0e-1, 1}};
        int e = 0;
        for (const Step &st : large)
            if (x >= st.limit) x *= st.factor, e |= st.exp;
        detail::append_fixed(s, detail::round_even(x * 100000), 6, 1);
        s += "e+";
        if (e >= 100) s += char('0' + e / 100);
        s += char('0' + e / 10 % 10);
        s += char('0' + e % 10);
        return;
    }
    if (x < 0.99999949999999) {  // 0.dddddd: up to six significant digits
        s += "0.";
        if (x < 9.9999949999999e-3) x *= 100, s += "00";
        if (x < 9.9999949999999e-2) x *= 10, s += '0';
        std::string frac;
        detail::append_fixed(frac, detail::round_even(x * 1000000), 6, 6);
        while (frac.size() > 1 && frac.back() == '0') frac.pop_back();
        s += frac;
        return;
    }
    // 1 <= x < 999999.5: six significant digits, k of them before the point.
    static const double bounds[] = {9.9999949999999, 99.999949999999, 999.99949999999, 9999.9949999999,
                                    99999.949999999};
    static const double scale[] = {100000, 10000, 1000, 100, 10};
    for (int k = 0; k < 5; ++k)
        if (x < bounds[k]) {
            detail::append_fixed(s, detail::round_even(x * scale[k]), 6, k + 1);
            return;
        }
    detail::append_fixed(s, detail::round_even(x), 6, 6);
}

}  // namespace plink

#endif  // APAIRS_TOOLS_PLINK_HPP
