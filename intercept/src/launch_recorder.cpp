#include "launch_recorder.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "address_space.hpp"
#include "cubin_params.hpp"
#include "phantora/fnv1a.hpp"
#include "safe_read.hpp"
#include "torch_kernel_name.hpp"

namespace phantora::shim {
namespace {

static_assert(std::is_trivially_copyable_v<LaunchWork>, "recorded as its bytes");

// A struct parameter is read from where `args[i]` points up to the next parameter's address
// (nvcc's stubs keep them side by side), at most this many bytes: the kernel parameter limit
// since CUDA 12.1 (PyTorch's foreach kernels pass 25 KB TensorListAddresses on it).
constexpr size_t kMaxParamBytes = 32764;

struct Recorder {
  std::mutex mu;
  std::string dir;
  FILE* out = nullptr;
  std::set<std::string> seen;                      // launches recorded
  std::map<const void*, std::string> image_names;  // image -> its file name under images/
};

// mkdir -p: each prefix in turn (the folders may already exist, or be made by another rank).
void make_directories(const std::string& path) {
  for (size_t at = path.find('/', 1);; at = path.find('/', at + 1)) {
    ::mkdir(path.substr(0, at).c_str(), 0755);
    if (at == std::string::npos) return;
  }
}

Recorder* recorder() {
  static Recorder* r = [] {
    const char* dir = std::getenv("PHANTORA_RECORD_LAUNCHES");
    if (dir == nullptr || *dir == '\0') return static_cast<Recorder*>(nullptr);
    auto* rec = new Recorder();
    rec->dir = dir;
    make_directories(rec->dir + "/images");
    const std::string file = rec->dir + "/launches-" + std::to_string(::getpid()) + ".txt";
    rec->out = std::fopen(file.c_str(), "a");
    if (rec->out == nullptr) {
      std::fprintf(stderr, "phantora: cannot write %s: %s; launches are not recorded\n",
                   file.c_str(), std::strerror(errno));
      delete rec;
      return static_cast<Recorder*>(nullptr);
    }
    return rec;
  }();
  return r;
}

std::string hex(const void* data, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(2 * n, '0');
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    s[2 * i] = kDigits[p[i] >> 4];
    s[2 * i + 1] = kDigits[p[i] & 15];
  }
  return s;
}

// The parameter types of a demangled function: its last parenthesised group, split at top-level
// commas (read from the end: a qualifier such as "(anonymous namespace)" may come first);
// nullopt when the name is not a C++ function signature.
std::optional<std::vector<std::string_view>> parameter_list(std::string_view d) {
  if (d.empty() || d.back() != ')') return std::nullopt;
  int depth = 0;
  size_t end = d.size() - 1;  // one past the current parameter
  std::vector<std::string_view> reversed;
  for (size_t i = d.size(); i-- > 0;) {
    const char c = d[i];
    if (c == ')' || c == '>' || c == ']') {
      ++depth;
    } else if (c == '(' || c == '<' || c == '[') {
      if (--depth == 0) {
        const std::string_view last = d.substr(i + 1, end - i - 1);
        if (!reversed.empty() || last.find_first_not_of(' ') != std::string_view::npos) {
          reversed.push_back(last);
        }
        return std::vector<std::string_view>(reversed.rbegin(), reversed.rend());
      }
    } else if (depth == 1 && c == ',') {
      reversed.push_back(d.substr(i + 1, end - i - 1));
      end = i;
    }
  }
  return std::nullopt;
}

// Saves the kernel's image once (written aside, then renamed: concurrent ranks agree on the
// name and the file is never seen half-written); "-" when the image is unknown.
std::string save_image(Recorder& r, const KernelInfo& k) {
  if (k.image == nullptr || k.image_bytes == 0) return "-";
  auto [it, inserted] = r.image_names.try_emplace(k.image);
  if (!inserted) return it->second;
  // Named by its bytes (phantora::fnv1a_bytes), so ranks and runs share one file per image.
  char name[17];
  std::snprintf(name, sizeof(name), "%016llx",
                static_cast<unsigned long long>(fnv1a_bytes(k.image, k.image_bytes)));
  it->second = name;
  const std::string path = r.dir + "/images/" + name;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return it->second;
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  if (FILE* f = std::fopen(tmp.c_str(), "wb")) {
    const bool ok = std::fwrite(k.image, 1, k.image_bytes, f) == k.image_bytes;
    if (std::fclose(f) == 0 && ok && std::rename(tmp.c_str(), path.c_str()) == 0) {
      return it->second;
    }
    std::remove(tmp.c_str());
  }
  std::fprintf(stderr, "phantora: cannot save a kernel image to %s\n", path.c_str());
  it->second = "-";
  return it->second;
}

// How many bytes each parameter has: exactly from a cubin's parameter table (Triton's kernels,
// whose names say nothing of their parameters), else from the demangled parameter types (a
// pointer or a scalar exactly, a struct as a window up to the next parameter).
struct ParamExtent {
  size_t bytes;
  bool exact;
};
std::optional<std::vector<ParamExtent>> parameter_extents(const KernelInfo& k, void* const* args) {
  if (k.image != nullptr) {
    if (const auto sizes = cubin_param_sizes(k.image, k.image_bytes, k.name)) {
      std::vector<ParamExtent> out;
      for (uint32_t s : *sizes) out.push_back({s, true});
      return out;
    }
  }
  const std::string demangled = demangle(k.name.c_str());
  const std::optional<std::vector<std::string_view>> types = parameter_list(demangled);
  if (!types) return std::nullopt;
  const size_t n = types->size();
  std::vector<ParamExtent> out;
  for (size_t i = 0; i < n; ++i) {
    // A pointer or a scalar has its size; a struct gets the bytes up to the next parameter.
    const std::string_view type = (*types)[i];
    const size_t last = type.find_last_not_of(' ');
    if (last != std::string_view::npos && type[last] == '*') {
      out.push_back({sizeof(void*), true});
      continue;
    }
    if (const int bytes = scalar_bytes(type); bytes > 0) {
      out.push_back({static_cast<size_t>(bytes), true});
      continue;
    }
    const auto at = reinterpret_cast<uintptr_t>(args[i]);
    uintptr_t end = at + kMaxParamBytes;
    for (size_t j = 0; j < n; ++j) {
      const auto other = reinterpret_cast<uintptr_t>(args[j]);
      if (other > at && other < end) end = other;
    }
    out.push_back({static_cast<size_t>(end - at), false});
  }
  return out;
}

}  // namespace

bool recording_launches() {
  return recorder() != nullptr;
}

void record_launch(const KernelInfo& k, const std::array<uint32_t, 3>& grid,
                   const std::array<uint32_t, 3>& block, uint64_t shared_mem,
                   const LaunchWork* work, void* const* args) {
  Recorder* r = recorder();
  if (r == nullptr || args == nullptr) return;
  const LaunchWork w = work != nullptr ? *work : LaunchWork{};
  std::string head = "launch " + k.name;
  std::string config;
  for (uint32_t v : grid) config += ' ' + std::to_string(v);
  for (uint32_t v : block) config += ' ' + std::to_string(v);
  config += ' ' + std::to_string(shared_mem) + ' ' + hex(&w, sizeof(w));
  std::lock_guard lock(r->mu);
  if (!r->seen.insert(k.name + config).second) return;
  const std::optional<std::vector<ParamExtent>> extents = parameter_extents(k, args);
  if (!extents) return;
  std::string text = head + ' ' + save_image(*r, k) + config + '\n';
  std::string pointers;
  std::map<uint64_t, size_t> allocation_index;  // owning allocation's base -> its index
  std::vector<uint64_t> allocation_sizes;
  for (size_t i = 0; i < extents->size(); ++i) {
    const std::string bytes = read_up_to(args[i], (*extents)[i].bytes);
    text += std::string("param ") + ((*extents)[i].exact ? "exact " : "window ") +
            (bytes.empty() ? "-" : hex(bytes.data(), bytes.size())) + '\n';
    // Device addresses are 8-byte aligned words of a parameter (a pointer, or a pointer member
    // of a struct passed by value: flash-attention's params, TensorIterator's data arrays).
    for (size_t off = 0; off + 8 <= bytes.size(); off += 8) {
      uint64_t v = 0;
      std::memcpy(&v, bytes.data() + off, 8);
      const auto owner = AddressSpace::get().owner(reinterpret_cast<const void*>(v));
      if (!owner) continue;
      auto [at, added] = allocation_index.try_emplace(owner->base, allocation_sizes.size());
      if (added) allocation_sizes.push_back(owner->size);
      pointers += "pointer " + std::to_string(i) + ' ' + std::to_string(off) + ' ' +
                  std::to_string(at->second) + ' ' + std::to_string(v - owner->base) + '\n';
    }
  }
  text += pointers;
  for (uint64_t size : allocation_sizes) text += "allocation " + std::to_string(size) + '\n';
  text += "end\n";
  std::fwrite(text.data(), 1, text.size(), r->out);
  std::fflush(r->out);
}

}  // namespace phantora::shim
