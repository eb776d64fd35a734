// output_file.hpp: an output file that appears whole or not at all (POSIX).
//
//   apairs_tools::OutputFile out("D.npy");  // creates the temporary file now: fails at
//                                           // once on a missing directory, a directory
//                                           // as target, an unwritable place
//   ... compute ...
//   out.write(data, bytes);                 // any number of times
//   out.commit();                           // fflush, fsync, fclose, rename over the target
//
// The data goes to a temporary file created (mkstemp) in the target's directory, with
// the permissions fopen(path, "w") would give the target (an existing file's permission
// bits, else 0666 & ~umask); commit() renames it over the target, so readers see the
// old file or the complete new one, never a truncated one. On any failure (write error,
// a full disk, a file-size limit, an exception, no commit() before destruction) the
// temporary file is removed and an existing target is left untouched. The temporary
// files not yet committed are also removed when the program ends through std::exit
// (an atexit handler) or is ended by SIGINT, SIGTERM, SIGHUP, SIGQUIT or SIGABRT (an
// uncaught exception) while those have their default disposition (the handler removes
// the files, restores the default and re-raises the signal).
//
// A target that exists and is neither a regular file nor a directory (/dev/null, a
// FIFO, a terminal) is written directly, as fopen would. Symbolic links to regular
// files are followed: the file they point to is replaced, the link kept; a dangling link
// makes the file it points to, as fopen would.
//
// Programs should ignore SIGXFSZ (ignore_sigxfsz()) so that a file-size limit
// (ulimit -f) makes write() fail with EFBIG, which is reported, instead of killing the
// process. Errors are thrown as apairs_tools::OutputError, whose message names the
// target. Use from one thread. Header-only, C++17, POSIX.
#ifndef APAIRS_TOOLS_OUTPUT_FILE_HPP
#define APAIRS_TOOLS_OUTPUT_FILE_HPP

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace apairs_tools {

struct OutputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A file-size limit then makes write() fail with EFBIG instead of killing the process.
inline void ignore_sigxfsz() {
#ifdef SIGXFSZ
    ::signal(SIGXFSZ, SIG_IGN);
#endif
}

namespace detail {

// Temporary files not yet committed, for the atexit and signal handlers. Fixed storage
// so that the signal handler touches only async-signal-safe things (unlink, flags).
struct PendingSlot {
    char path[PATH_MAX];
    volatile sig_atomic_t armed;
};
constexpr int kPendingSlots = 16;
inline PendingSlot g_pending[kPendingSlots];
inline const int g_cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGABRT};
inline volatile sig_atomic_t g_handlers_installed = 0;

inline void unlink_pending() {
    for (PendingSlot &s : g_pending)
        if (s.armed) {
            s.armed = 0;
            ::unlink(s.path);
        }
}

inline void on_cleanup_signal(int sig) {
    const int saved = errno;
    unlink_pending();
    // Back to the default action, and let the signal end the process as it would have.
    ::signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::raise(sig);
    errno = saved;
}

inline void install_handlers() {
    if (g_handlers_installed) return;
    g_handlers_installed = 1;
    std::atexit(unlink_pending);
    for (int sig : g_cleanup_signals) {
        struct sigaction cur;
        if (::sigaction(sig, nullptr, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL) {
            struct sigaction sa;
            std::memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_cleanup_signal;
            sigemptyset(&sa.sa_mask);
            ::sigaction(sig, &sa, nullptr);
        }
    }
}

// Returns the slot index, or -1 when the path does not fit or all slots are taken (the
// destructor still removes the file; only the exit/signal safety net is missing).
inline int arm(const std::string &tmp) {
    if (tmp.size() >= PATH_MAX) return -1;
    for (int k = 0; k < kPendingSlots; ++k)
        if (!g_pending[k].armed) {
            std::memcpy(g_pending[k].path, tmp.c_str(), tmp.size() + 1);
            g_pending[k].armed = 1;
            return k;
        }
    return -1;
}

inline void disarm(int slot) {
    if (slot >= 0) g_pending[slot].armed = 0;
}

inline mode_t current_umask() {
    const mode_t m = ::umask(022);
    ::umask(m);
    return m;
}

inline std::string dir_of(const std::string &path) {
    const std::size_t slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

inline std::string base_of(const std::string &path) {
    const std::size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace detail

class OutputFile {
  public:
    // Creates the temporary file (or, for a special file, opens it); throws OutputError.
    explicit OutputFile(const std::string &path) : path_(path) {
        if (path.empty()) throw OutputError("the output file name is empty");
        if (path.back() == '/') fail_now("cannot create: the name ends in '/' (a directory, not a file)", 0);
        std::string target = path;
        mode_t mode = 0666 & ~detail::current_umask();
        struct stat st;
        if (::stat(path.c_str(), &st) == 0) {
            if (S_ISDIR(st.st_mode)) fail_now("cannot write the output there: it is a directory", 0);
            if (!S_ISREG(st.st_mode)) {  // /dev/null, a FIFO, a terminal: write it directly
                direct_ = true;
                fp_ = std::fopen(path.c_str(), "wb");
                if (!fp_) fail_now("cannot open for writing", errno);
                return;
            }
            if (::access(path.c_str(), W_OK) != 0) fail_now("cannot write", errno);
            existed_ = true;
            mode = st.st_mode & 0777;  // fopen("w") keeps an existing file's permissions
            char resolved[PATH_MAX];
            if (::realpath(path.c_str(), resolved)) target = resolved;  // replace what a link points to
        } else if (errno != ENOENT) {
            fail_now("cannot create", errno);
        } else {
            // A dangling symbolic link: fopen("w") creates the file it points to and keeps
            // the link, so the temporary file replaces that file, not the link. A relative
            // link is relative to its own directory; a chain is followed (as the kernel
            // does, at most 40 links: stat already refused a loop with ELOOP).
            struct stat lst;
            for (int hops = 0; ::lstat(target.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode); ++hops) {
                if (hops == 40) fail_now("cannot create", ELOOP);
                char link[PATH_MAX];
                const ssize_t len = ::readlink(target.c_str(), link, sizeof link);
                const int e = len < 0 ? errno : ENAMETOOLONG;
                if (len < 0 || len == ssize_t(sizeof link)) fail_now("cannot follow the symbolic link " + target, e);
                const std::string dest(link, std::size_t(len)), dir = detail::dir_of(target);
                target = dest[0] == '/' ? dest : (dir == "/" ? "/" : dir + "/") + dest;
            }
            if (target.back() == '/') fail_now("cannot create " + target, EISDIR);  // as open(O_CREAT) says
        }
        target_ = target;
        const std::string dir = detail::dir_of(target);
        // ".NAME.tmp-XXXXXX" is 12 bytes longer than NAME: shorten NAME in the template so
        // that a target of up to NAME_MAX bytes can still be written (mkstemp makes it unique).
        const std::string base = detail::base_of(target).substr(0, NAME_MAX - 12);
        std::string tmpl = (dir == "/" ? "/" : dir + "/") + "." + base + ".tmp-XXXXXX";
        // The cleanup signals wait while the file exists but is not yet registered.
        detail::install_handlers();
        sigset_t block, saved;
        sigemptyset(&block);
        for (int sig : detail::g_cleanup_signals) sigaddset(&block, sig);
        ::sigprocmask(SIG_BLOCK, &block, &saved);
        const int fd = ::mkstemp(&tmpl[0]);
        if (fd >= 0) {
            tmp_ = tmpl;
            slot_ = detail::arm(tmp_);
        }
        const int mkstemp_errno = errno;
        ::sigprocmask(SIG_SETMASK, &saved, nullptr);
        if (fd < 0) {
            const int e = mkstemp_errno;
            if (e == ENOENT) fail_now("cannot create: there is no directory '" + dir + "'", 0);
            fail_now("cannot create a temporary file in the directory '" + dir + "' to write it", e);
        }
        if (::fchmod(fd, mode) != 0) {
            const int e = errno;
            ::close(fd);
            cleanup();
            fail_now("cannot set the permissions of the temporary file " + tmp_, e);
        }
        fp_ = ::fdopen(fd, "wb");
        if (!fp_) {
            const int e = errno;
            ::close(fd);
            cleanup();
            fail_now("cannot open the temporary file " + tmp_, e);
        }
    }

    OutputFile(const OutputFile &) = delete;
    OutputFile &operator=(const OutputFile &) = delete;

    ~OutputFile() { discard(); }

    const std::string &path() const { return path_; }
    bool committed() const { return committed_; }

    // Appends bytes; throws OutputError (and removes the temporary file) on failure.
    void write(const void *data, std::size_t bytes) {
        if (!fp_) throw OutputError(path_ + ": write after commit or failure");
        if (bytes == 0) return;
        errno = 0;
        if (std::fwrite(data, 1, bytes, fp_) != bytes) fail("write failed", errno);
    }
    void write(const std::string &s) { write(s.data(), s.size()); }

    // Flushes, syncs and closes the temporary file, then renames it over the target.
    void commit() {
        finish();
        publish();
    }

    // The two halves of commit(), for a set of files that appear together: finish()
    // every file (the step that can fail for want of space), then publish() each.
    void finish() {
        if (!fp_) throw OutputError(path_ + ": commit after commit or failure");
        errno = 0;
        if (std::fflush(fp_) != 0 || std::ferror(fp_)) fail("write failed", errno);
        if (::fsync(::fileno(fp_)) != 0 && !(direct_ && (errno == EINVAL || errno == EROFS || errno == ENOTSUP)))
            fail("write failed (fsync)", errno);
        std::FILE *f = fp_;
        fp_ = nullptr;
        if (std::fclose(f) != 0) fail("write failed (close)", errno);
        finished_ = true;
    }
    void publish() {
        if (!finished_ || committed_) throw OutputError(path_ + ": publish before finish, or twice");
        if (!direct_) {
            if (::rename(tmp_.c_str(), target_.c_str()) != 0) fail("cannot rename " + tmp_ + " to it", errno);
            detail::disarm(slot_);
            slot_ = -1;
            tmp_.clear();
            // Make the rename itself durable; best effort.
            const int dfd = ::open(detail::dir_of(target_).c_str(), O_RDONLY | O_DIRECTORY);
            if (dfd >= 0) {
                (void)::fsync(dfd);
                ::close(dfd);
            }
        }
        committed_ = true;
    }

    // Closes and removes the temporary file without touching the target (no-op after
    // commit()).
    void discard() noexcept {
        if (fp_) {
            std::fclose(fp_);
            fp_ = nullptr;
        }
        cleanup();
    }

  private:
    std::string path_;    // as given, for messages
    std::string target_;  // what rename() replaces (links to regular files resolved)
    std::string tmp_;     // the temporary file, while it exists
    std::FILE *fp_ = nullptr;
    int slot_ = -1;
    bool direct_ = false, existed_ = false, finished_ = false, committed_ = false;

    void cleanup() noexcept {
        if (!tmp_.empty()) {
            ::unlink(tmp_.c_str());
            tmp_.clear();
        }
        detail::disarm(slot_);
        slot_ = -1;
    }
    [[noreturn]] void fail_now(const std::string &what, int err) const {
        std::string msg = path_ + ": " + what;
        if (err) msg += std::string(": ") + std::strerror(err);
        throw OutputError(msg);
    }
    [[noreturn]] void fail(const std::string &what, int err) {
        discard();
        std::string msg = path_ + ": " + what;
        if (err) msg += std::string(": ") + std::strerror(err);
        if (!direct_) msg += existed_ ? "; the existing file is left as it was" : "; no file was created";
        throw OutputError(msg);
    }
};

}  // namespace apairs_tools

#endif  // APAIRS_TOOLS_OUTPUT_FILE_HPP
