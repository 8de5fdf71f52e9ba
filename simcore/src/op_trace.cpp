#include "op_trace.hpp"

namespace phantora::sim {

void OpTrace::on_op(const CompletedOp& op, int gpu,
                    const std::map<uint32_t, std::string>& kernels) {
  if (writer_ == nullptr || op.desc.kind == OpKind::kWaitEvent ||
      op.desc.kind == OpKind::kCollective) {
    return;
  }
  static const std::string kinds[] = {TraceWriter::quote(to_string(OpKind::kKernel)),
                                      TraceWriter::quote(to_string(OpKind::kCopy)),
                                      TraceWriter::quote(to_string(OpKind::kMemset)),
                                      TraceWriter::quote(to_string(OpKind::kEventRecord)),
                                      TraceWriter::quote(to_string(OpKind::kWaitEvent)),
                                      TraceWriter::quote(to_string(OpKind::kGraph)),
                                      TraceWriter::quote(to_string(OpKind::kHostFunc)),
                                      TraceWriter::quote(to_string(OpKind::kCollective))};
  const std::string* name = &kinds[static_cast<int>(op.desc.kind)];
  if (op.desc.kind == OpKind::kKernel) {
    std::string& quoted = quoted_[(static_cast<uint64_t>(op.client) << 32) | op.desc.label];
    if (quoted.empty()) quoted = TraceWriter::quote(kernels.at(op.desc.label));
    name = &quoted;
  }
  writer_->op_span(op.client, op.stream, *name, to_string(op.desc.kind), op.start, op.end,
                   source_name(op.desc.source), op.submitted, gpu, op.desc.bytes);
}

}  // namespace phantora::sim
