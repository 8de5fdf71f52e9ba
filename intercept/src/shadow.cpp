#include "shadow.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace phantora::shim {

namespace {

// Zeroes [p, p + n), writing only the 4 KiB pieces that are not zero already.
void zero_where_nonzero(uint8_t* p, uint64_t n) {
  constexpr uint64_t kPiece = 4096;
  for (uint64_t i = 0; i < n; i += kPiece) {
    const uint64_t m = std::min(kPiece, n - i);
    const bool zero = p[i] == 0 && std::memcmp(p + i, p + i + 1, m - 1) == 0;
    if (!zero) std::memset(p + i, 0, m);
  }
}

bool all_zero(const uint8_t* p, uint64_t n) {
  return n == 0 || (p[0] == 0 && std::memcmp(p, p + 1, n - 1) == 0);
}

}  // namespace

ShadowStore& ShadowStore::get() {
  static ShadowStore* instance = new ShadowStore();
  return *instance;
}

ShadowStore::Page* ShadowStore::page_for_write(uint64_t page) {
  auto it = pages_.find(page);
  if (it != pages_.end()) return it->second.get();
  if ((pages_.size() + 1) * kPage > kMaxTotal) return nullptr;
  auto p = std::make_unique<Page>();
  p->fill(0);
  return pages_.emplace(page, std::move(p)).first->second.get();
}

void ShadowStore::discard_locked(uint64_t addr, uint64_t bytes) {
  if (bytes == 0) return;
  const uint64_t end = addr + bytes;
  // Pages only partly covered keep their other bytes: the covered part reads as zero again.
  auto clear_part = [&](uint64_t page, uint64_t from, uint64_t to) {
    auto it = pages_.find(page);
    if (it != pages_.end()) std::fill(it->second->begin() + from, it->second->begin() + to, 0);
  };
  uint64_t first = addr / kPage;
  uint64_t last = (end - 1) / kPage;
  if (first == last) {
    if (addr % kPage != 0 || end % kPage != 0)
      return clear_part(first, addr % kPage, (end - 1) % kPage + 1);
  } else {
    if (addr % kPage != 0) clear_part(first++, addr % kPage, kPage);
    if (end % kPage != 0) clear_part(last--, 0, end % kPage);
  }
  if (first > last) return;
  if (last - first + 1 > pages_.size()) {
    // Cheaper to scan what is stored than every page of a huge range.
    for (auto it = pages_.begin(); it != pages_.end();) {
      it = (it->first >= first && it->first <= last) ? pages_.erase(it) : std::next(it);
    }
    return;
  }
  for (uint64_t p = first; p <= last; ++p) pages_.erase(p);
}

void ShadowStore::write(uint64_t addr, const void* src, uint64_t bytes) {
  std::lock_guard lock(mu_);
  if (bytes > kMaxWrite) return discard_locked(addr, bytes);
  const auto* in = static_cast<const uint8_t*>(src);
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t a = addr + done;
    const uint64_t off = a % kPage;
    const uint64_t n = std::min(bytes - done, kPage - off);
    // Zeros need no page where none is stored: a byte never written reads as zero. Zero fills
    // (gradients, optimizer state, emulated kernels over zeros) would otherwise hold a host page
    // per 4 KiB of device memory they touch, up to kMaxTotal per process.
    if (!pages_.contains(a / kPage) && all_zero(in + done, n)) {
      done += n;
      continue;
    }
    Page* page = page_for_write(a / kPage);
    if (page == nullptr) return discard_locked(addr, bytes);
    std::memcpy(page->data() + off, in + done, n);
    done += n;
  }
}

void ShadowStore::fill(uint64_t addr, uint8_t value, uint64_t bytes) {
  // Too large to keep, or zeros (the same as writing zeros, without the buffer): either way
  // the range reads as zero afterwards.
  if (bytes > kMaxWrite || value == 0) {
    std::lock_guard lock(mu_);
    return discard_locked(addr, bytes);
  }
  std::vector<uint8_t> buf(bytes, value);
  write(addr, buf.data(), bytes);
}

void ShadowStore::read(uint64_t addr, void* dst, uint64_t bytes) const {
  std::lock_guard lock(mu_);
  auto* out = static_cast<uint8_t*>(dst);
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t a = addr + done;
    const uint64_t off = a % kPage;
    const uint64_t n = std::min(bytes - done, kPage - off);
    auto it = pages_.find(a / kPage);
    if (it == pages_.end()) {
      zero_where_nonzero(out + done, n);
    } else {
      std::memcpy(out + done, it->second->data() + off, n);
    }
    done += n;
  }
}

void ShadowStore::copy(uint64_t dst, uint64_t src, uint64_t bytes) {
  if (bytes > kMaxWrite) {
    std::lock_guard lock(mu_);
    return discard_locked(dst, bytes);
  }
  std::vector<uint8_t> buf(bytes);
  read(src, buf.data(), bytes);
  write(dst, buf.data(), bytes);
}

void ShadowStore::discard(uint64_t addr, uint64_t bytes) {
  std::lock_guard lock(mu_);
  discard_locked(addr, bytes);
}

bool ShadowStore::stores_any(uint64_t addr, uint64_t bytes) const {
  if (bytes == 0) return false;
  std::lock_guard lock(mu_);
  const uint64_t first = addr / kPage, last = (addr + bytes - 1) / kPage;
  if (last - first + 1 > pages_.size()) {
    return std::any_of(pages_.begin(), pages_.end(),
                       [&](const auto& p) { return p.first >= first && p.first <= last; });
  }
  for (uint64_t p = first; p <= last; ++p) {
    if (pages_.contains(p)) return true;
  }
  return false;
}

}  // namespace phantora::shim
