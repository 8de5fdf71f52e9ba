#include "pipe_clocks.hpp"

namespace phantora::shim {

size_t PipeClocks::bytes() {
  return sizeof(Table);
}

PipeClocks::PipeClocks(void* memory) : table_(static_cast<Table*>(memory)) {}

PipeClocks::Pipe* PipeClocks::find(uint64_t inode) const {
  if (inode == 0) return nullptr;
  for (Pipe& p : table_->pipe)
    if (p.inode.load(std::memory_order_acquire) == inode) return &p;
  return nullptr;
}

void PipeClocks::track(uint64_t inode) {
  if (inode == 0) return;
  if (Pipe* old = find(inode)) old->inode.store(0);  // an inode reused: the old pipe is gone
  Pipe& p = table_->pipe[table_->tracked.fetch_add(1) % kPipes];
  p.inode.store(0);  // the pipe this slot held is forgotten before its counts are reset
  p.written.store(0);
  p.read.store(0);
  p.stamps.store(0);
  p.inode.store(inode, std::memory_order_release);
}

bool PipeClocks::tracked(uint64_t inode) const {
  return find(inode) != nullptr;
}

void PipeClocks::before_write(uint64_t inode, int64_t clock_ps) {
  Pipe* p = find(inode);
  if (p == nullptr) return;
  const uint64_t n = p->stamps.load(std::memory_order_relaxed);
  Stamp& s = p->stamp[n % kStamps];
  s.offset.store(p->written.load(std::memory_order_relaxed), std::memory_order_relaxed);
  s.clock_ps.store(clock_ps, std::memory_order_relaxed);
  p->stamps.store(n + 1, std::memory_order_release);
}

void PipeClocks::after_write(uint64_t inode, size_t written) {
  if (Pipe* p = find(inode)) p->written.fetch_add(written, std::memory_order_release);
}

std::optional<int64_t> PipeClocks::after_read(uint64_t inode, size_t n) {
  Pipe* p = find(inode);
  if (p == nullptr || n == 0) return std::nullopt;
  const uint64_t last = p->read.fetch_add(n) + n - 1;
  const uint64_t stamps = p->stamps.load(std::memory_order_acquire);
  const uint64_t oldest = stamps > kStamps ? stamps - kStamps : 0;
  // Offsets grow with the stamps' order: the newest stamp at or before the byte wrote it (a
  // write that wrote nothing left a stamp that the next one, at the same offset, replaces).
  for (uint64_t i = stamps; i > oldest; --i) {
    const Stamp& s = p->stamp[(i - 1) % kStamps];
    if (s.offset.load(std::memory_order_relaxed) > last) continue;
    const int64_t clock = s.clock_ps.load(std::memory_order_relaxed);
    // Overwritten while read (the writer a whole ring ahead): the byte's stamp is gone.
    if (p->stamps.load(std::memory_order_acquire) - (i - 1) > kStamps) return std::nullopt;
    return clock;
  }
  return std::nullopt;
}

}  // namespace phantora::shim
