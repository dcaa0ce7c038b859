// Plugin host: a persistent worker process per plugin, one request at a time over two pipes.
#include "qconform/plugin_host.h"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "qconform/plugin.h"

namespace qconform {
namespace {

// ---- framing: every message is a sequence of length-prefixed blobs ----
bool write_all(int fd, const void* p, std::size_t n) {
  const auto* c = static_cast<const char*>(p);
  while (n) {
    const ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* p, std::size_t n, int timeout_ms) {
  auto* c = static_cast<char*>(p);
  while (n) {
    if (timeout_ms >= 0) {
      pollfd pfd{fd, POLLIN, 0};
      const int r = ::poll(&pfd, 1, timeout_ms);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
    }
    const ssize_t got = ::read(fd, c, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    c += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

bool put_blob(int fd, const void* p, std::uint64_t n) { return write_all(fd, &n, sizeof n) && write_all(fd, p, n); }

bool get_blob(int fd, std::vector<char>& out, int timeout_ms, std::uint64_t limit = std::uint64_t{1} << 34) {
  std::uint64_t n = 0;
  if (!read_all(fd, &n, sizeof n, timeout_ms) || n > limit) return false;
  out.resize(n);
  return read_all(fd, out.data(), n, timeout_ms);
}

template <class T>
std::vector<T> as(const std::vector<char>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

// ---- the worker (child) side ----
int g_reply_fd = -1;
char* g_guard = nullptr;
std::size_t g_page = 4096;

void on_fault(int sig, siginfo_t* info, void*) {
  // Async-signal-safe: tell the parent what happened, then leave.
  const char* addr = static_cast<const char*>(info->si_addr);
  const std::int32_t code = (g_guard && addr >= g_guard && addr < g_guard + g_page) ? -100 : -101 - sig;
  (void)!::write(g_reply_fd, &code, sizeof code);
  ::_exit(3);
}

// An output buffer of exactly `bytes` bytes that ends where a PROT_NONE page begins.
struct GuardedBuffer {
  char* base = nullptr;
  std::size_t len = 0;
  char* data = nullptr;
  explicit GuardedBuffer(std::size_t bytes) {
    const std::size_t pages = (bytes + g_page - 1) / g_page + 1;
    len = pages * g_page;
    base = static_cast<char*>(::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (base == MAP_FAILED) {
      base = nullptr;
      return;
    }
    g_guard = base + len - g_page;
    ::mprotect(g_guard, g_page, PROT_NONE);
    data = g_guard - bytes;
    std::memset(base, 0xA5, static_cast<std::size_t>(g_guard - base));
  }
  // Bytes before the buffer that the plugin overwrote (an underflow).
  [[nodiscard]] bool underflowed() const {
    for (const char* p = base; p < data; ++p) {
      if (static_cast<unsigned char>(*p) != 0xA5) return true;
    }
    return false;
  }
  ~GuardedBuffer() {
    if (base) ::munmap(base, len);
    g_guard = nullptr;
  }
};

[[noreturn]] void worker(const std::string& path, int in_fd, int out_fd) {
  g_reply_fd = out_fd;
  g_page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  struct sigaction sa {};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO;
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) ::sigaction(sig, &sa, nullptr);
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  const qconform_plugin* plugin = nullptr;
  std::string why;
  if (!h) {
    why = std::string("dlopen: ") + ::dlerror();
  } else if (auto sym = reinterpret_cast<const qconform_plugin* (*)()>(::dlsym(h, "qconform_plugin_v1")); !sym) {
    why = "no symbol qconform_plugin_v1";
  } else if (plugin = sym(); !plugin) {
    why = "qconform_plugin_v1 returned NULL";
  } else if (plugin->abi_version != QCONFORM_PLUGIN_ABI_VERSION) {
    why = "ABI version " + std::to_string(plugin->abi_version) + ", expected " + std::to_string(QCONFORM_PLUGIN_ABI_VERSION);
  } else if (!plugin->quantize || !plugin->dequantize) {
    why = "a function pointer is NULL";
  }
  // Hello: 0 and the name, or 1 and the reason.
  const std::int32_t hello = why.empty() ? 0 : 1;
  const std::string name = why.empty() ? (plugin->name ? plugin->name : "unnamed") : why;
  write_all(out_fd, &hello, sizeof hello);
  put_blob(out_fd, name.data(), name.size());
  if (!why.empty()) ::_exit(0);
  std::vector<char> op, scheme, shape, a, b, c;
  while (true) {
    if (!get_blob(in_fd, op, -1) || op.size() != 1) ::_exit(0);
    std::vector<char> cap;
    if (!get_blob(in_fd, scheme, -1) || !get_blob(in_fd, shape, -1) || !get_blob(in_fd, a, -1) ||
        !get_blob(in_fd, b, -1) || !get_blob(in_fd, c, -1) || !get_blob(in_fd, cap, -1) || cap.size() != 8) {
      ::_exit(0);
    }
    scheme.push_back('\0');
    const auto dims = as<std::uint64_t>(shape);
    std::vector<std::size_t> sz(dims.begin(), dims.end());
    std::uint64_t capacity;
    std::memcpy(&capacity, cap.data(), 8);
    qconform_result result{};
    std::int32_t ret;
    std::vector<char> out;
    if (op[0] == 'q') {
      const auto input = as<float>(a);
      const auto scales = as<float>(b);
      const auto global = as<float>(c);
      GuardedBuffer buf(capacity);
      ret = plugin->quantize(scheme.data(), sz.data(), sz.size(), input.data(), input.size(), scales.data(),
                             scales.size(), global.empty() ? nullptr : global.data(),
                             reinterpret_cast<std::uint8_t*>(buf.data), capacity, &result);
      if (buf.underflowed()) ret = -102;
      if (ret == 0 && result.size <= capacity) out.assign(buf.data, buf.data + result.size);
    } else {
      const auto bytes = as<std::uint8_t>(a);
      GuardedBuffer buf(capacity * sizeof(float));
      ret = plugin->dequantize(scheme.data(), sz.data(), sz.size(), bytes.data(), bytes.size(),
                               reinterpret_cast<float*>(buf.data), capacity, &result);
      if (buf.underflowed()) ret = -102;
      if (ret == 0 && result.size <= capacity) out.assign(buf.data, buf.data + result.size * sizeof(float));
    }
    result.error_kind[sizeof result.error_kind - 1] = '\0';
    const std::uint64_t size = result.size;
    write_all(out_fd, &ret, sizeof ret);
    write_all(out_fd, &size, sizeof size);
    put_blob(out_fd, result.error_kind, std::strlen(result.error_kind));
    put_blob(out_fd, out.data(), out.size());
  }
}

// ---- the parent side ----
class Worker {
 public:
  Worker(std::string path, int timeout_ms) : path_(std::move(path)), timeout_ms_(timeout_ms) {}
  ~Worker() { stop(); }

  // Starts the worker if needed; returns an empty string or why it cannot start.
  std::string start() {
    if (pid_ > 0) return {};
    int to_child[2], from_child[2];
    if (::pipe(to_child) != 0) return "pipe failed";
    if (::pipe(from_child) != 0) {
      ::close(to_child[0]);
      ::close(to_child[1]);
      return "pipe failed";
    }
    const pid_t pid = ::fork();
    if (pid < 0) return "fork failed";
    if (pid == 0) {
      ::close(to_child[1]);
      ::close(from_child[0]);
      worker(path_, to_child[0], from_child[1]);
    }
    ::close(to_child[0]);
    ::close(from_child[1]);
    pid_ = pid;
    in_ = from_child[0];
    out_ = to_child[1];
    std::int32_t hello = -1;
    std::vector<char> name;
    if (!read_all(in_, &hello, sizeof hello, timeout_ms_) || !get_blob(in_, name, timeout_ms_, 1 << 16)) {
      return fault("the plugin worker died while loading");
    }
    name_.assign(name.begin(), name.end());
    if (hello != 0) {
      stop();
      return name_;
    }
    return {};
  }

  const std::string& name() const { return name_; }

  struct Reply {
    std::int32_t ret = 0;
    std::uint64_t size = 0;
    std::string kind;
    std::vector<char> out;
    std::string fault;  // non-empty: the plugin misbehaved
  };

  Reply call(char op, const std::string& scheme, std::span<const std::size_t> shape, const void* a, std::size_t an,
             const void* b, std::size_t bn, const void* c, std::size_t cn, std::uint64_t capacity) {
    Reply r;
    if (auto why = start(); !why.empty()) {
      r.fault = why;
      return r;
    }
    std::vector<std::uint64_t> dims(shape.begin(), shape.end());
    const bool sent = put_blob(out_, &op, 1) && put_blob(out_, scheme.data(), scheme.size()) &&
                      put_blob(out_, dims.data(), dims.size() * 8) && put_blob(out_, a, an) && put_blob(out_, b, bn) &&
                      put_blob(out_, c, cn) && put_blob(out_, &capacity, 8);
    std::vector<char> kind;
    if (!sent || !read_all(in_, &r.ret, sizeof r.ret, timeout_ms_)) {
      r.fault = fault("the plugin crashed or hung");
      return r;
    }
    if (r.ret <= -100) {
      r.fault = r.ret == -100 ? "the plugin wrote past out_capacity (" + std::to_string(capacity) + ")"
                : r.ret == -102 ? "the plugin wrote before the start of its output buffer"
                                : "the plugin crashed with signal " + std::to_string(-101 - r.ret) + " (" +
                                      strsignal(-101 - r.ret) + ")";
      if (r.ret != -102) stop();
      if (r.ret == -102) {
        std::uint64_t ignored;
        std::vector<char> skip;
        read_all(in_, &ignored, sizeof ignored, timeout_ms_);
        get_blob(in_, skip, timeout_ms_, 64);
        get_blob(in_, skip, timeout_ms_);
      }
      return r;
    }
    if (!read_all(in_, &r.size, sizeof r.size, timeout_ms_) || !get_blob(in_, kind, timeout_ms_, 64) ||
        !get_blob(in_, r.out, timeout_ms_)) {
      r.fault = fault("the plugin worker stopped answering");
      return r;
    }
    r.kind.assign(kind.begin(), kind.end());
    return r;
  }

 private:
  std::string fault(const std::string& what) {
    std::string detail = what;
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
      if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL) detail += " (signal " + std::string(strsignal(WTERMSIG(status))) + ")";
      pid_ = -1;
    }
    close_fds();
    return detail;
  }
  void stop() {
    if (pid_ > 0) {
      close_fds();
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
    close_fds();
  }
  void close_fds() {
    if (in_ >= 0) ::close(in_);
    if (out_ >= 0) ::close(out_);
    in_ = out_ = -1;
  }

  std::string path_;
  int timeout_ms_;
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::string name_;
};

Error fault(const std::string& what) { return Error{ErrorKind::implementation_fault, what}; }

class Plugin final : public ReferenceImplementation {
 public:
  explicit Plugin(std::unique_ptr<Worker> w) : w_(std::move(w)) {}
  [[nodiscard]] std::string name() const override { return "plugin:" + w_->name(); }
  [[nodiscard]] unsigned ops() const override {
    return static_cast<unsigned>(Op::quantize) | static_cast<unsigned>(Op::dequantize);
  }
  [[nodiscard]] bool lookup_tables() const override { return false; }
  [[nodiscard]] bool text_schemes() const override { return true; }

  [[nodiscard]] Result<QTensor> quantize(const Scheme& s, std::span<const std::size_t> shape,
                                         std::span<const float> data, std::span<const float> scales,
                                         std::optional<float> global, Table table) const override {
    if (table) return fault("the plugin ABI passes no lookup table");
    // The exact serialized length when the scheme and shape define one; else room to fail in.
    std::uint64_t capacity = 1 << 16;
    if (validate_scheme(s).ok()) {
      if (auto l = make_layout(s, shape); l.ok()) capacity = l->total_bytes;
    }
    const float g = global.value_or(0.0f);
    auto r = w_->call('q', print_scheme(s), shape, data.data(), data.size_bytes(), scales.data(), scales.size_bytes(),
                      &g, global ? sizeof g : 0, capacity);
    if (!r.fault.empty()) return fault(r.fault);
    if (r.ret == 1) return typed(r.kind);
    if (r.ret == -1) return fault("the plugin reported out too small at capacity " + std::to_string(capacity));
    if (r.ret != 0) return fault("the plugin returned " + std::to_string(r.ret));
    if (!r.kind.empty()) return fault("the plugin returned 0 with error_kind '" + r.kind + "'");
    if (r.size > capacity) return fault("the plugin claims " + std::to_string(r.size) + " bytes in a buffer of " + std::to_string(capacity));
    const std::vector<std::uint8_t> bytes(r.out.begin(), r.out.end());
    auto t = qconform::parse(s, shape, bytes, std::nullopt);
    if (!t.ok()) {
      return fault("the plugin wrote " + std::to_string(bytes.size()) + " bytes that do not parse: " +
                   std::string(to_string(t.kind())) + ": " + t.error().message);
    }
    return t;
  }

  [[nodiscard]] Result<std::vector<float>> dequantize(const QTensor& t, Table table) const override {
    if (table) return fault("the plugin ABI passes no lookup table");
    auto bytes = qconform::serialize(t);
    if (!bytes.ok()) return bytes.error();  // nothing to hand the plugin
    return call_dequantize(t.scheme, t.shape, *bytes, t.codes.size());
  }

  // The bytes as they are, untrusted: the plugin's own parse is held to SPEC §7's checks.
  [[nodiscard]] Result<std::vector<float>> dequantize_bytes(const Scheme& s, std::span<const std::size_t> shape,
                                                            std::span<const std::uint8_t> bytes,
                                                            Table table) const override {
    if (table) return fault("the plugin ABI passes no lookup table");
    // Room for the elements when the scheme, the shape and the byte count agree; else none (an
    // error is due). Bounded by the bytes, so an untrusted shape never sizes the buffer.
    std::size_t elements = 0;
    if (validate_scheme(s).ok()) {
      if (auto l = make_layout(s, shape); l.ok() && l->total_bytes == bytes.size()) elements = l->elements;
    }
    return call_dequantize(s, shape, bytes, elements);
  }

 private:
  Result<std::vector<float>> call_dequantize(const Scheme& s, std::span<const std::size_t> shape,
                                             std::span<const std::uint8_t> bytes, std::size_t elements) const {
    auto r = w_->call('d', print_scheme(s), shape, bytes.data(), bytes.size(), nullptr, 0, nullptr, 0, elements);
    if (!r.fault.empty()) return fault(r.fault);
    if (r.ret == 1) return typed(r.kind);
    if (r.ret == -1) return fault("the plugin reported out too small at capacity " + std::to_string(elements));
    if (r.ret != 0) return fault("the plugin returned " + std::to_string(r.ret));
    if (!r.kind.empty()) return fault("the plugin returned 0 with error_kind '" + r.kind + "'");
    if (r.size != elements) {
      return fault("the plugin wrote " + std::to_string(r.size) + " floats for " + std::to_string(elements) + " elements");
    }
    std::vector<float> out(r.size);
    if (!out.empty()) std::memcpy(out.data(), r.out.data(), out.size() * sizeof(float));
    return out;
  }

  static Error typed(const std::string& kind) {
    if (auto k = error_kind_from_string(kind)) return Error{*k, "reported by the plugin"};
    return fault("the plugin reported an unknown error kind '" + kind + "'");
  }
  std::unique_ptr<Worker> w_;
};

}  // namespace

PluginLoad load_plugin(const std::string& path, int timeout_ms) {
  // A worker that dies mid-request must not take qconform down through SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  auto w = std::make_unique<Worker>(path, timeout_ms);
  if (auto why = w->start(); !why.empty()) return {nullptr, why};
  return {std::make_unique<Plugin>(std::move(w)), {}};
}

}  // namespace qconform
