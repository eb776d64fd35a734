// npy.hpp: read and write 2-D NumPy .npy files (format versions 1.0, 2.0 and 3.0).
//
// Reading accepts C-order 2-D arrays of little-endian float32 ('<f4'), float64 ('<f8')
// and uint8 ('|u1'); anything else (Fortran order, other ranks, other or big-endian
// dtypes, structured dtypes, truncated files) throws npy::Error with a message that
// says what the file holds and what is expected. Writing produces version 1.0 files
// (2.0 when the header would not fit), header padded to 64 bytes as NumPy does.
//
// Header-only, C++17, no dependencies. Little-endian hosts only (checked at run time).
#ifndef APAIRS_TOOLS_NPY_HPP
#define APAIRS_TOOLS_NPY_HPP

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace npy {

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class Type { F32, F64, U8, I32 };

inline const char *descr_of(Type t) {
    switch (t) {
    case Type::F32: return "<f4";
    case Type::F64: return "<f8";
    case Type::U8: return "|u1";
    case Type::I32: return "<i4";
    }
    return "?";
}

inline std::size_t itemsize_of(Type t) {
    switch (t) {
    case Type::F32: return 4;
    case Type::F64: return 8;
    case Type::U8: return 1;
    case Type::I32: return 4;
    }
    return 0;
}

inline const char *name_of(Type t) {
    switch (t) {
    case Type::F32: return "float32";
    case Type::F64: return "float64";
    case Type::U8: return "uint8";
    case Type::I32: return "int32";
    }
    return "?";
}

// A 2-D row-major array; data is 64-byte aligned.
struct Array {
    Type type = Type::F32;
    int64_t rows = 0, cols = 0;
    std::shared_ptr<unsigned char> storage;  // rows * cols * itemsize bytes

    void *data() { return storage.get(); }
    const void *data() const { return storage.get(); }
    std::size_t bytes() const {
        return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * itemsize_of(type);
    }
};

// Allocates rows x cols elements (throws std::bad_alloc, or npy::Error on overflow).
inline Array allocate(Type type, int64_t rows, int64_t cols) {
    if (rows < 0 || cols < 0) throw Error("negative array size");
    const std::size_t item = itemsize_of(type);
    const std::size_t maxz = std::numeric_limits<std::size_t>::max();
    if (cols != 0 && static_cast<std::size_t>(rows) > maxz / static_cast<std::size_t>(cols) / item)
        throw Error("array of " + std::to_string(rows) + " x " + std::to_string(cols) +
                    " elements is too large for this machine");
    std::size_t bytes = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * item;
    std::size_t padded = (bytes + 63) / 64 * 64;
    if (padded == 0) padded = 64;
    void *p = std::aligned_alloc(64, padded);
    if (!p) throw std::bad_alloc();
    Array a;
    a.type = type;
    a.rows = rows;
    a.cols = cols;
    a.storage.reset(static_cast<unsigned char *>(p), [](unsigned char *q) { std::free(q); });
    return a;
}

namespace detail {

inline bool host_is_little_endian() {
    const uint16_t one = 1;
    unsigned char b;
    std::memcpy(&b, &one, 1);
    return b == 1;
}

struct File {
    std::FILE *f = nullptr;
    explicit File(std::FILE *fp) : f(fp) {}
    ~File() {
        if (f) std::fclose(f);
    }
    File(const File &) = delete;
    File &operator=(const File &) = delete;
};

// A tiny parser for the Python literal dict NumPy writes as the header, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
  public:
    HeaderParser(const std::string &text, const std::string &path) : s_(text), path_(path) {}

    std::string descr;
    bool have_descr = false, have_order = false, have_shape = false;
    bool fortran_order = false;
    std::vector<int64_t> shape;

    void parse() {
        skip_ws();
        expect('{');
        for (;;) {
            skip_ws();
            if (peek() == '}') {
                ++i_;
                break;
            }
            std::string key = parse_string();
            skip_ws();
            expect(':');
            skip_ws();
            if (key == "descr") {
                if (peek() != '\'' && peek() != '"')
                    fail("'descr' is not a simple type string (structured or sub-array dtypes "
                         "are not supported)");
                descr = parse_string();
                have_descr = true;
            } else if (key == "fortran_order") {
                fortran_order = parse_bool();
                have_order = true;
            } else if (key == "shape") {
                shape = parse_tuple();
                have_shape = true;
            } else {
                fail("unexpected key '" + key + "' in the header");
            }
            skip_ws();
            if (peek() == ',') {
                ++i_;
                continue;
            }
            skip_ws();
            expect('}');
            break;
        }
        if (!have_descr || !have_order || !have_shape)
            fail("the header lacks one of 'descr', 'fortran_order', 'shape'");
    }

  private:
    const std::string &s_;
    const std::string &path_;
    std::size_t i_ = 0;

    [[noreturn]] void fail(const std::string &why) const {
        throw Error(path_ + ": malformed .npy header: " + why + " (header: " + trimmed() + ")");
    }
    std::string trimmed() const {
        std::string t = s_;
        while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\0')) t.pop_back();
        if (t.size() > 200) t = t.substr(0, 200) + "...";
        return t;
    }
    char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
    void skip_ws() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
            ++i_;
    }
    void expect(char c) {
        if (peek() != c) fail(std::string("expected '") + c + "' at offset " + std::to_string(i_));
        ++i_;
    }
    std::string parse_string() {
        char q = peek();
        if (q != '\'' && q != '"') fail("expected a quoted string at offset " + std::to_string(i_));
        ++i_;
        std::string out;
        while (i_ < s_.size() && s_[i_] != q) {
            if (s_[i_] == '\\') fail("escape sequences are not supported");
            out += s_[i_++];
        }
        expect(q);
        return out;
    }
    bool parse_bool() {
        if (s_.compare(i_, 4, "True") == 0) {
            i_ += 4;
            return true;
        }
        if (s_.compare(i_, 5, "False") == 0) {
            i_ += 5;
            return false;
        }
        fail("'fortran_order' is neither True nor False");
    }
    std::vector<int64_t> parse_tuple() {
        std::vector<int64_t> out;
        expect('(');
        for (;;) {
            skip_ws();
            if (peek() == ')') {
                ++i_;
                return out;
            }
            if (peek() < '0' || peek() > '9') fail("'shape' is not a tuple of non-negative integers");
            int64_t v = 0;
            while (peek() >= '0' && peek() <= '9') {
                int digit = peek() - '0';
                if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) fail("a dimension overflows 64 bits");
                v = v * 10 + digit;
                ++i_;
            }
            if (peek() == 'L') ++i_;  // Python 2 longs
            out.push_back(v);
            skip_ws();
            if (peek() == ',') {
                ++i_;
                continue;
            }
            skip_ws();
            expect(')');
            return out;
        }
    }
};

inline std::string shape_string(const std::vector<int64_t> &shape) {
    std::string s = "(";
    for (std::size_t k = 0; k < shape.size(); ++k) {
        if (k) s += ", ";
        s += std::to_string(shape[k]);
    }
    if (shape.size() == 1) s += ",";
    return s + ")";
}

}  // namespace detail

// Reads a 2-D C-order .npy file of dtype <f4, <f8 or |u1.
inline Array read(const std::string &path) {
    if (!detail::host_is_little_endian()) throw Error("npy: this reader supports little-endian hosts only");
    std::FILE *fp = std::fopen(path.c_str(), "rb");
    if (!fp) throw Error(path + ": cannot open: " + std::strerror(errno));
    detail::File file(fp);

    unsigned char pre[8];
    if (std::fread(pre, 1, 8, fp) != 8 || std::memcmp(pre, "\x93NUMPY", 6) != 0)
        throw Error(path + ": not a .npy file (missing the \\x93NUMPY magic string)");
    const int major = pre[6], minor = pre[7];
    std::size_t header_len = 0;
    if (major == 1) {
        unsigned char l[2];
        if (std::fread(l, 1, 2, fp) != 2) throw Error(path + ": truncated .npy header");
        header_len = l[0] | (std::size_t(l[1]) << 8);
    } else if (major == 2 || major == 3) {
        unsigned char l[4];
        if (std::fread(l, 1, 4, fp) != 4) throw Error(path + ": truncated .npy header");
        header_len = l[0] | (std::size_t(l[1]) << 8) | (std::size_t(l[2]) << 16) | (std::size_t(l[3]) << 24);
    } else {
        throw Error(path + ": unsupported .npy format version " + std::to_string(major) + "." +
                    std::to_string(minor) + " (1.0, 2.0 and 3.0 are supported)");
    }
    if (header_len > (std::size_t(1) << 24)) throw Error(path + ": implausibly long .npy header");
    std::string header(header_len, '\0');
    if (header_len && std::fread(&header[0], 1, header_len, fp) != header_len)
        throw Error(path + ": truncated .npy header");

    detail::HeaderParser hp(header, path);
    hp.parse();

    Type type;
    const std::string &d = hp.descr;
    if (d == "<f4")
        type = Type::F32;
    else if (d == "<f8")
        type = Type::F64;
    else if (d == "|u1" || d == "<u1" || d == ">u1" || d == "=u1")
        type = Type::U8;
    else if (!d.empty() && d[0] == '>')
        throw Error(path + ": dtype '" + d +
                    "' is big-endian; only little-endian float32 '<f4', float64 '<f8' and uint8 '|u1' "
                    "are supported (convert with a.astype(a.dtype.newbyteorder('<')))");
    else
        throw Error(path + ": unsupported dtype '" + d +
                    "'; supported are float32 '<f4', float64 '<f8' and uint8 '|u1' (convert with "
                    "a.astype(numpy.float32))");

    if (hp.shape.size() != 2)
        throw Error(path + ": expected a 2-D array (rows x dimensions), but the shape is " +
                    detail::shape_string(hp.shape) + " (" + std::to_string(hp.shape.size()) + "-D)");
    if (hp.fortran_order)
        throw Error(path + ": the array is stored in Fortran (column-major) order; save it in C "
                           "order, e.g. numpy.save(path, numpy.ascontiguousarray(a))");
    if (hp.shape[0] == 0 || hp.shape[1] == 0)
        throw Error(path + ": the array is empty, shape " + detail::shape_string(hp.shape));

    Array a = allocate(type, hp.shape[0], hp.shape[1]);
    const std::size_t want = a.bytes();
    const std::size_t got = std::fread(a.data(), 1, want, fp);
    if (got != want)
        throw Error(path + ": truncated data: shape " + detail::shape_string(hp.shape) + " of " +
                    name_of(type) + " needs " + std::to_string(want) + " bytes after the header, the file has " +
                    std::to_string(got));
    return a;
}

// Writes a 2-D C-order array: type, rows x cols elements at data (row-major, contiguous).
inline void write(const std::string &path, Type type, int64_t rows, int64_t cols, const void *data) {
    if (!detail::host_is_little_endian()) throw Error("npy: this writer supports little-endian hosts only");
    std::string dict = std::string("{'descr': '") + descr_of(type) + "', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(cols) + "), }";
    // Pad with spaces so that magic + version + length + header is a multiple of 64, ending in \n.
    int major = 1;
    std::size_t prefix = 10;
    std::size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
    if (total - prefix > 65535) {
        major = 2;
        prefix = 12;
        total = (prefix + dict.size() + 1 + 63) / 64 * 64;
    }
    std::string header = dict;
    header.append(total - prefix - dict.size() - 1, ' ');
    header += '\n';

    std::string pre("\x93NUMPY", 6);
    pre += static_cast<char>(major);
    pre += '\0';
    const std::size_t hl = header.size();
    pre += static_cast<char>(hl & 0xff);
    pre += static_cast<char>((hl >> 8) & 0xff);
    if (major == 2) {
        pre += static_cast<char>((hl >> 16) & 0xff);
        pre += static_cast<char>((hl >> 24) & 0xff);
    }

    std::FILE *fp = std::fopen(path.c_str(), "wb");
    if (!fp) throw Error(path + ": cannot create: " + std::strerror(errno));
    detail::File file(fp);
    const std::size_t bytes = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * itemsize_of(type);
    if (std::fwrite(pre.data(), 1, pre.size(), fp) != pre.size() ||
        std::fwrite(header.data(), 1, header.size(), fp) != header.size() ||
        (bytes && std::fwrite(data, 1, bytes, fp) != bytes))
        throw Error(path + ": write failed: " + std::strerror(errno));
    std::FILE *f = file.f;
    file.f = nullptr;
    if (std::fclose(f) != 0) throw Error(path + ": write failed: " + std::strerror(errno));
}

}  // namespace npy

#endif  // APAIRS_TOOLS_NPY_HPP
