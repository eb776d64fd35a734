// npy.hpp: read and write 2-D NumPy .npy files (format versions 1.0, 2.0 and 3.0).
//
// Reading accepts C-order 2-D arrays of little-endian float32 ('<f4'), float64 ('<f8')
// and uint8 ('|u1'), the byte order also written '=', '|' or not at all (native to
// NumPy: little-endian here); anything else (Fortran order, other ranks, other or
// big-endian dtypes, structured dtypes, truncated files) throws npy::Error with a
// message that says what the file holds and what is expected. Before allocating, the
// reader compares the bytes the header's shape needs with the bytes the stream has left
// (seekable streams: regular files, fmemopen) or reads the data in bounded, growing
// chunks (pipes), so a lying header never causes a large allocation; every size is
// computed with overflow checks. Writing produces version 1.0 files (2.0 when the
// header would not fit), header padded to 64 bytes as NumPy does, through an
// apairs_tools::OutputFile (output_file.hpp): the target is replaced whole or left
// untouched.
//
// Header-only, C++17, GCC or Clang (overflow builtins, __int128), POSIX. Little-endian
// hosts only (checked at run time).
#ifndef APAIRS_TOOLS_NPY_HPP
#define APAIRS_TOOLS_NPY_HPP

#include <sys/stat.h>
#include <sys/types.h>

#include <algorithm>
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

#include "output_file.hpp"

namespace npy {

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// The reader's std::bad_alloc, reported as an Error (tests/fuzz/fuzz_npy.cpp tells it
// from a refusal by its type: a header's text may say anything).
struct OutOfMemory : Error {
    using Error::Error;
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

namespace detail {

// rows * cols * item in size_t, or false when it does not fit (or a size is negative).
inline bool checked_bytes(int64_t rows, int64_t cols, std::size_t item, std::size_t &out) {
    if (rows < 0 || cols < 0) return false;
    std::size_t elements = 0;
    if (__builtin_mul_overflow(static_cast<std::size_t>(rows), static_cast<std::size_t>(cols), &elements))
        return false;
    return !__builtin_mul_overflow(elements, item, &out);
}

// The exact decimal value of a * b * c (for messages about sizes that overflow 64 bits).
inline std::string product_string(uint64_t a, uint64_t b, uint64_t c) {
    std::vector<uint32_t> limbs;  // base 10^9, least significant first
    for (uint64_t x = a; x; x /= 1000000000u) limbs.push_back(static_cast<uint32_t>(x % 1000000000u));
    for (uint64_t m : {b, c}) {
        unsigned __int128 carry = 0;
        for (uint32_t &l : limbs) {
            const unsigned __int128 v = static_cast<unsigned __int128>(l) * m + carry;
            l = static_cast<uint32_t>(v % 1000000000u);
            carry = v / 1000000000u;
        }
        for (; carry; carry /= 1000000000u) limbs.push_back(static_cast<uint32_t>(carry % 1000000000u));
    }
    while (!limbs.empty() && limbs.back() == 0) limbs.pop_back();
    if (limbs.empty()) return "0";
    std::string out = std::to_string(limbs.back());
    for (std::size_t k = limbs.size() - 1; k-- > 0;) {
        const std::string part = std::to_string(limbs[k]);
        out += std::string(9 - part.size(), '0') + part;
    }
    return out;
}

inline std::string too_large(int64_t rows, int64_t cols, std::size_t item) {
    return "array of " + std::to_string(rows) + " x " + std::to_string(cols) + " elements of " +
           std::to_string(item) + " bytes (" +
           product_string(static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), item) +
           " bytes) is too large for this machine";
}

// 64-byte aligned storage for at least `bytes` bytes (64 when 0), padded to a multiple
// of 64; throws std::bad_alloc, or npy::Error when the padded size overflows.
inline std::shared_ptr<unsigned char> aligned_storage(std::size_t bytes) {
    std::size_t padded = 0;
    if (__builtin_add_overflow(bytes, std::size_t(63), &padded))
        throw Error(std::to_string(bytes) + " bytes are too many for this machine");
    padded &= ~std::size_t(63);
    if (padded == 0) padded = 64;
    void *p = std::aligned_alloc(64, padded);
    if (!p) throw std::bad_alloc();
    return std::shared_ptr<unsigned char>(static_cast<unsigned char *>(p), [](unsigned char *q) { std::free(q); });
}

}  // namespace detail

// A 2-D row-major array; data is 64-byte aligned.
struct Array {
    Type type = Type::F32;
    int64_t rows = 0, cols = 0;
    std::shared_ptr<unsigned char> storage;  // rows * cols * itemsize bytes

    void *data() { return storage.get(); }
    const void *data() const { return storage.get(); }
    // rows * cols * itemsize (throws npy::Error if that overflows; allocate() ensures
    // it does not for the arrays it makes).
    std::size_t bytes() const {
        std::size_t b = 0;
        if (!detail::checked_bytes(rows, cols, itemsize_of(type), b))
            throw Error(detail::too_large(rows, cols, itemsize_of(type)));
        return b;
    }
};

// Allocates rows x cols elements (throws std::bad_alloc, or npy::Error on overflow).
inline Array allocate(Type type, int64_t rows, int64_t cols) {
    if (rows < 0 || cols < 0) throw Error("negative array size");
    const std::size_t item = itemsize_of(type);
    std::size_t bytes = 0, padded = 0;
    if (!detail::checked_bytes(rows, cols, item, bytes) || __builtin_add_overflow(bytes, std::size_t(63), &padded))
        throw Error(detail::too_large(rows, cols, item));
    Array a;
    a.type = type;
    a.rows = rows;
    a.cols = cols;
    a.storage = detail::aligned_storage(bytes);
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
        // After the dictionary only its padding: spaces and the closing newline (NUL
        // from some writers), as NumPy accepts.
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\0'))
            ++i_;
        if (i_ != s_.size()) fail("text after the dictionary at offset " + std::to_string(i_));
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
            const std::size_t start = i_;
            int64_t v = 0;
            while (peek() >= '0' && peek() <= '9') {
                int digit = peek() - '0';
                if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) fail("a dimension overflows 64 bits");
                v = v * 10 + digit;
                ++i_;
            }
            // Python (whose literal_eval NumPy uses) refuses a leading 0 unless every digit is 0.
            if (s_[start] == '0' && v != 0)
                fail("'shape' has a number with a leading zero (" + s_.substr(start, i_ - start) +
                     "), which Python and NumPy refuse");
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

// Reads exactly n bytes, growing the buffer with the bytes that arrive (so that a
// lying length never allocates much more than the stream holds).
inline std::string read_bounded(std::FILE *fp, std::size_t n, const std::string &path, const char *what) {
    std::string out;
    while (out.size() < n) {
        const std::size_t old = out.size(), chunk = std::min<std::size_t>(n - old, 65536);
        out.resize(old + chunk);
        const std::size_t got = std::fread(&out[old], 1, chunk, fp);
        if (got != chunk) {
            if (std::ferror(fp))
                throw Error(path + ": read error in the .npy " + what + ": " + std::strerror(errno));
            throw Error(path + ": truncated .npy " + what + " (" + std::to_string(n) + " bytes announced, " +
                        std::to_string(old + got) + " present)");
        }
    }
    return out;
}

// Bytes left between the stream's position and its end, or -1 when the stream cannot
// tell (a pipe, a terminal). Regular files: fstat; streams without a descriptor
// (fmemopen): seek to the end and back.
inline long long bytes_left(std::FILE *fp, const std::string &path) {
    const off_t here = ftello(fp);
    if (here < 0) {
        std::clearerr(fp);
        return -1;
    }
    const int fd = fileno(fp);
    if (fd >= 0) {
        struct stat st;
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
        return st.st_size > here ? static_cast<long long>(st.st_size - here) : 0;
    }
    if (fseeko(fp, 0, SEEK_END) != 0) {
        std::clearerr(fp);
        return -1;
    }
    const off_t end = ftello(fp);
    if (fseeko(fp, here, SEEK_SET) != 0) throw Error(path + ": cannot seek back after measuring the stream");
    if (end < 0) return -1;
    return end > here ? static_cast<long long>(end - here) : 0;
}

constexpr std::size_t kReadChunk = std::size_t(1) << 20;

[[noreturn]] inline void short_read(std::FILE *fp, const std::string &claim, std::size_t got) {
    if (std::ferror(fp)) throw Error(claim + ": read error: " + std::strerror(errno));
    throw Error(claim + ", but the file has only " + std::to_string(got) +
                " (a truncated file or a corrupt header)");
}

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

// Reads a 2-D C-order .npy array of dtype <f4, <f8 or |u1 from an open stream
// positioned at the file's first byte; `path` names it in messages.
inline Array read(std::FILE *fp, const std::string &path) {
    if (!detail::host_is_little_endian()) throw Error("npy: this reader supports little-endian hosts only");
    unsigned char pre[8];
    errno = 0;
    const std::size_t got = std::fread(pre, 1, 8, fp);
    // A directory (fopen opens one for reading), an I/O error: errno says it, not "not a .npy file".
    if (got != 8 && std::ferror(fp)) throw Error(path + ": cannot read: " + std::strerror(errno ? errno : EIO));
    if (got != 8 || std::memcmp(pre, "\x93NUMPY", 6) != 0)
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
    std::string header = detail::read_bounded(fp, header_len, path, "header");

    detail::HeaderParser hp(header, path);
    hp.parse();

    Type type;
    const std::string &d = hp.descr;
    // NumPy reads '=' (native), '|' (byte order not applicable: taken as native) and no
    // prefix as the host's byte order, little-endian here (checked above); a one-byte
    // type has no byte order.
    const std::string t = d.empty() || (d[0] != '<' && d[0] != '=' && d[0] != '|' && d != ">u1") ? d : d.substr(1);
    if (t == "f4")
        type = Type::F32;
    else if (t == "f8")
        type = Type::F64;
    else if (t == "u1")
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

    // What the header claims, against what the stream holds, before allocating.
    const int64_t rows = hp.shape[0], cols = hp.shape[1];
    const std::size_t item = itemsize_of(type);
    const std::string claim = path + ": the header says shape " + detail::shape_string(hp.shape) + " of " +
                              name_of(type) + " ('" + d + "'), which needs " +
                              detail::product_string(static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), item) +
                              " bytes of data after the header";
    const long long left = detail::bytes_left(fp, path);  // -1: not seekable, unknown
    std::size_t want = 0, padded = 0;
    const bool fits =
        detail::checked_bytes(rows, cols, item, want) && !__builtin_add_overflow(want, std::size_t(63), &padded);
    if (left >= 0 && (!fits || static_cast<unsigned long long>(left) < want))
        throw Error(claim + ", but the file has only " + std::to_string(left) +
                    " (a truncated file or a corrupt header)");
    if (!fits) throw Error(claim + ", more than this machine can address (a corrupt header)");

    Array a;
    a.type = type;
    a.rows = rows;
    a.cols = cols;
    try {
        if (left >= 0) {  // the stream has the bytes: one allocation, one read
            a.storage = detail::aligned_storage(want);
            const std::size_t got = std::fread(a.data(), 1, want, fp);
            if (got != want) detail::short_read(fp, claim, got);
        } else {  // not seekable: grow with the bytes that actually arrive
            std::size_t cap = std::min(want, detail::kReadChunk), filled = 0;
            std::shared_ptr<unsigned char> buf = detail::aligned_storage(cap);
            for (;;) {
                filled += std::fread(buf.get() + filled, 1, cap - filled, fp);
                if (filled == want) break;
                if (filled < cap) detail::short_read(fp, claim, filled);
                const std::size_t next = cap > want / 2 ? want : cap * 2;
                std::shared_ptr<unsigned char> bigger = detail::aligned_storage(next);
                std::memcpy(bigger.get(), buf.get(), filled);
                buf = std::move(bigger);
                cap = next;
            }
            a.storage = std::move(buf);
        }
    } catch (const std::bad_alloc &) {
        throw OutOfMemory(claim + ": out of host memory");
    }
    return a;
}

// Reads a 2-D C-order .npy file of dtype <f4, <f8 or |u1.
inline Array read(const std::string &path) {
    std::FILE *fp = std::fopen(path.c_str(), "rb");
    if (!fp) throw Error(path + ": cannot open: " + std::strerror(errno));
    detail::File file(fp);
    return read(fp, path);
}

namespace detail {

// Magic, version, header length and the header dict padded with spaces so that all of
// it is a multiple of 64 bytes, ending in \n; sets bytes to the data's size.
inline std::string preamble(const std::string &path, Type type, int64_t rows, int64_t cols, std::size_t &bytes) {
    if (!host_is_little_endian()) throw Error("npy: this writer supports little-endian hosts only");
    if (!checked_bytes(rows, cols, itemsize_of(type), bytes))
        throw Error(path + ": cannot write: " + too_large(rows, cols, itemsize_of(type)));
    std::string dict = std::string("{'descr': '") + descr_of(type) + "', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(cols) + "), }";
    // (dict is a few dozen bytes: none of this arithmetic can overflow.)
    int major = 1;
    std::size_t prefix = 10;
    std::size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
    if (total - prefix > 65535) {
        major = 2;
        prefix = 12;
        total = (prefix + dict.size() + 1 + 63) / 64 * 64;
    }
    const std::size_t hl = total - prefix;
    std::string pre("\x93NUMPY", 6);
    pre += static_cast<char>(major);
    pre += '\0';
    pre += static_cast<char>(hl & 0xff);
    pre += static_cast<char>((hl >> 8) & 0xff);
    if (major == 2) {
        pre += static_cast<char>((hl >> 16) & 0xff);
        pre += static_cast<char>((hl >> 24) & 0xff);
    }
    pre += dict;
    pre.append(hl - dict.size() - 1, ' ');
    pre += '\n';
    return pre;
}

}  // namespace detail

// Writes a 2-D C-order array (type, rows x cols elements at data, row-major, contiguous)
// to an output file that the caller then commit()s; throws npy::Error (sizes) or
// apairs_tools::OutputError (I/O; the temporary file is then already removed).
inline void write(apairs_tools::OutputFile &out, Type type, int64_t rows, int64_t cols, const void *data) {
    std::size_t bytes = 0;
    out.write(detail::preamble(out.path(), type, rows, cols, bytes));
    out.write(data, bytes);
}

// Writes the same to an open stream (not atomic, not flushed: the caller owns fp, e.g.
// an open_memstream or fmemopen buffer); `path` names it in messages. Throws npy::Error.
inline void write(std::FILE *fp, const std::string &path, Type type, int64_t rows, int64_t cols, const void *data) {
    std::size_t bytes = 0;
    const std::string pre = detail::preamble(path, type, rows, cols, bytes);
    errno = 0;
    if (std::fwrite(pre.data(), 1, pre.size(), fp) != pre.size() ||
        (bytes && std::fwrite(data, 1, bytes, fp) != bytes))
        throw Error(path + ": write failed: " + std::strerror(errno ? errno : EIO));
}

// Writes a 2-D C-order array to path, atomically: path ends up holding the whole new
// file, or (on any error) whatever it held before.
inline void write(const std::string &path, Type type, int64_t rows, int64_t cols, const void *data) {
    apairs_tools::OutputFile out(path);
    write(out, type, rows, cols, data);
    out.commit();
}

}  // namespace npy

#endif  // APAIRS_TOOLS_NPY_HPP
