// plink.hpp: PLINK 1 filesets and PLINK 1.9's --distance text, for the apairs command
// line (apairs --bfile PREFIX --distance ...).
//
//   read_fileset(prefix)   .bed (SNP-major), .bim, .fam -> samples x the variants PLINK 1.9
//                          uses for distances, packed sample-major in libapairs' genotype
//                          layout (apairs.h); what PLINK refuses is refused
//   append_g(s, x)         x as PLINK 1.9 prints a double in its text outputs
//
// Header-only, C++17, standard library only. Errors are thrown as plink::Error with a
// message naming the file.
#ifndef APAIRS_TOOLS_PLINK_HPP
#define APAIRS_TOOLS_PLINK_HPP

#include <cerrno>
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
    int64_t variants_in_file = 0;             // variant lines of the .bim (= rows of the .bed)
    std::vector<int64_t> kept;                // indices of the variants that enter distances, in order
    std::vector<std::string> fid, iid;        // from the .fam
    std::vector<uint8_t> founders;            // both parents "0"
    int64_t ld = 0;                           // bytes per packed sample row
    std::vector<uint8_t> packed;              // samples x ld: the kept variants, sample-major
};

// A line of a .fam or .bim that PLINK 1.9 reads: its number in the file (counting every
// line, as PLINK's messages do) and its whitespace-separated fields.
struct Line {
    size_t number;
    std::vector<std::string> fields;
};

// The lines PLINK 1.9 reads: blank lines and comments (first non-blank character '#',
// anywhere in the file) are skipped, as PLINK skips them; "#CHROM" header lines go to
// *headers when it is given.
inline std::vector<Line> read_lines(const std::string &path, std::vector<Line> *headers = nullptr) {
    std::ifstream in(path);
    if (!in) throw Error(path + ": cannot open: " + std::strerror(errno));
    std::vector<Line> lines;
    size_t number = 0;
    for (std::string text; std::getline(in, text);) {
        ++number;
        Line line{number, {}};
        std::istringstream words(text);
        for (std::string f; words >> f;) line.fields.push_back(f);
        if (line.fields.empty()) continue;
        if (headers && line.fields[0] == "#CHROM") headers->push_back(std::move(line));
        else if (line.fields[0][0] != '#') lines.push_back(std::move(line));
    }
    if (in.bad()) throw Error(path + ": read error");
    return lines;
}

inline std::string line_of(const std::string &path, const Line &line) {
    return path + ": line " + std::to_string(line.number);
}

// PLINK 1.9's chromosome codes for its default (human) species, as get_chrom_code_raw and
// get_chrom_code read them: an optional "chr" prefix, then 0 to 26 in one or two digits
// ("01" is 1), X, Y, XY, MT or M, or the Oxford spellings 0X, 0Y and 0M; letters in any
// case. Returns 0 (unplaced) to 22, 23 (X), 24 (Y), 25 (XY) or 26 (MT); -1 for anything
// else (27 and up, contig names), which PLINK refuses as an "Invalid chromosome code".
inline int chrom_code(const std::string &name) {
    std::string c;
    for (char ch : name) c += ch >= 'a' && ch <= 'z' ? char(ch - 'a' + 'A') : ch;
    if (c.rfind("CHR", 0) == 0) c.erase(0, 3);
    const auto digit = [](char ch) { return ch >= '0' && ch <= '9'; };
    if (c.size() == 1 && digit(c[0])) return c[0] - '0';
    if (c.size() == 2 && digit(c[0]) && digit(c[1])) {
        const int code = 10 * (c[0] - '0') + (c[1] - '0');
        return code <= 26 ? code : -1;
    }
    if (c == "X" || c == "0X") return 23;
    if (c == "Y" || c == "0Y") return 24;
    if (c == "XY") return 25;
    if (c == "M" || c == "MT" || c == "0M") return 26;
    return -1;
}

// PLINK 1.9 leaves X, Y and MT out of distance calculations (conditional_allocate_non_
// autosomal_markers); XY (pseudo-autosomal) and 0 (unplaced) stay.
inline bool autosomal(int code) { return code != 23 && code != 24 && code != 26; }

// A bp coordinate as PLINK 1.9 reads it (scan_int_abs_defcap): an optional '+' or '-',
// then digits, read up to the first non-digit ("12abc" is 12, "1.5" is 1), at most
// 2147483646 in magnitude. False for anything else ("abc", "-", "--1").
inline bool parse_bp(const std::string &s, int64_t &bp) {
    size_t i = s[0] == '+' || s[0] == '-' ? 1 : 0;
    if (i == s.size() || s[i] < '0' || s[i] > '9') return false;
    int64_t v = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i)
        if ((v = 10 * v + (s[i] - '0')) > 2147483646) return false;
    bp = s[0] == '-' ? -v : v;
    return true;
}

inline Fileset read_fileset(const std::string &prefix) {
    Fileset fs;
    const std::string bed = prefix + ".bed", bim = prefix + ".bim", fam = prefix + ".fam";
    for (const Line &line : read_lines(fam)) {
        const std::vector<std::string> &f = line.fields;
        if (f.size() < 6)
            throw Error(line_of(fam, line) + " has " + std::to_string(f.size()) +
                        " fields; a .fam line has 6 (FID IID father mother sex phenotype)");
        // PLINK 1.9 (load_fam): "Invalid IID '0'"; "0" stands for a missing parent.
        if (f[1] == "0") throw Error(line_of(fam, line) + ": invalid IID '0' (PLINK 1.9 refuses it)");
        fs.fid.push_back(f[0]);
        fs.iid.push_back(f[1]);
        fs.founders.push_back(f[2] == "0" && f[3] == "0");
    }
    fs.samples = int64_t(fs.fid.size());
    // PLINK 1.9: "At least 2 people required for pairwise analysis."
    if (fs.samples < 2)
        throw Error(fam + ": " + std::to_string(fs.samples) + (fs.samples == 1 ? " sample" : " samples") +
                    "; --distance needs at least 2");

    std::vector<Line> headers;
    const std::vector<Line> bim_lines = read_lines(bim, &headers);
    // PLINK 1.9 (load_bim) takes the layout from a "#CHROM ID [CM] POS ALT REF" header
    // line or, with none before it, from the first variant line: with a sixth field it
    // is chromosome ID cM position A1 A2, else (five fields) chromosome ID position A1
    // A2. Later lines need only the fields up to the position (--distance reads neither
    // the cM column nor the alleles).
    bool has_cm = !bim_lines.empty() && bim_lines[0].fields.size() >= 6;
    if (headers.size() > 1) throw Error(line_of(bim, headers[1]) + ": a second #CHROM header line");
    for (const Line &header : headers) {
        std::vector<std::string> f = header.fields;
        const bool cm = f.size() > 2 && f[2] == "CM";
        if (cm) f.erase(f.begin() + 2);
        if (f.size() < 5 || f[1] != "ID" || f[2] != "POS" || f[3] != "ALT" || f[4] != "REF")
            throw Error(line_of(bim, header) +
                        ": unsupported column order (PLINK 1.9 reads #CHROM ID [CM] POS ALT REF)");
        if (cm || (!bim_lines.empty() && header.number < bim_lines[0].number)) has_cm = cm;
    }
    const size_t pos_field = has_cm ? 3 : 2;
    std::vector<bool> seen(27);
    int prev = -1;
    for (size_t k = 0; k < bim_lines.size(); ++k) {
        const Line &line = bim_lines[k];
        const std::vector<std::string> &f = line.fields;
        if (f.size() < (k == 0 ? 5 : pos_field + 1))
            throw Error(line_of(bim, line) + " has " + std::to_string(f.size()) +
                        " fields; a .bim line has 6 (chromosome ID cM position A1 A2) or 5 (no cM)");
        const int chrom = chrom_code(f[0]);
        if (chrom < 0)
            throw Error(line_of(bim, line) + ": invalid chromosome code '" + f[0] +
                        "' (PLINK 1.9's human codes: 0-26, X, Y, XY, MT, optionally with 'chr')");
        // PLINK 1.9 refuses a chromosome in two separate runs unless it is only sorting
        // the fileset (--make-bed).
        if (chrom != prev && seen[size_t(chrom)])
            throw Error(line_of(bim, line) + ": chromosome '" + f[0] +
                        "' is split (not in one run of lines); PLINK 1.9 refuses that: sort the fileset with "
                        "plink --bfile " + prefix + " --make-bed");
        seen[size_t(chrom)] = true;
        prev = chrom;
        int64_t bp = 0;
        if (!parse_bp(f[pos_field], bp))
            throw Error(line_of(bim, line) + ": invalid bp coordinate '" + f[pos_field] + "'");
        // PLINK 1.9 excludes variants with a negative bp position.
        if (bp >= 0 && autosomal(chrom)) fs.kept.push_back(int64_t(k));
    }
    fs.variants_in_file = int64_t(bim_lines.size());
    if (fs.variants_in_file == 0) throw Error(bim + ": no variants");
    if (fs.kept.empty())
        throw Error(bim + ": no variants left (PLINK leaves out X, Y, MT and negative bp positions from distances)");

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
