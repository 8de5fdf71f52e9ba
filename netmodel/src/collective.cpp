#include "phantora/netmodel/collective.hpp"

namespace phantora::net {

std::string_view to_string(CollOp op) {
  switch (op) {
    case CollOp::AllReduce:
      return "AllReduce";
    case CollOp::AllGather:
      return "AllGather";
    case CollOp::ReduceScatter:
      return "ReduceScatter";
    case CollOp::Broadcast:
      return "Broadcast";
    case CollOp::Reduce:
      return "Reduce";
    case CollOp::AllToAll:
      return "AllToAll";
    case CollOp::SendRecv:
      return "SendRecv";
  }
  return "?";
}

std::string_view to_string(Algorithm a) {
  switch (a) {
    case Algorithm::Ring:
      return "Ring";
    case Algorithm::Tree:
      return "Tree";
    case Algorithm::Nvls:
      return "NVLS";
    case Algorithm::NvlsTree:
      return "NVLSTree";
    case Algorithm::CollNetDirect:
      return "CollnetDirect";
    case Algorithm::CollNetChain:
      return "CollnetChain";
    case Algorithm::Pat:
      return "PAT";
    case Algorithm::P2p:
      return "P2P";
  }
  return "?";
}

std::string_view to_string(Protocol p) {
  switch (p) {
    case Protocol::LL:
      return "LL";
    case Protocol::LL128:
      return "LL128";
    case Protocol::Simple:
      return "Simple";
  }
  return "?";
}

double bus_bandwidth_factor(CollOp op, int n) {
  if (n <= 1)
    return op == CollOp::AllReduce || op == CollOp::AllGather || op == CollOp::ReduceScatter ||
                   op == CollOp::AllToAll
               ? 0.0
               : 1.0;
  const double nd = n;
  switch (op) {
    case CollOp::AllReduce:
      return 2.0 * (nd - 1) / nd;
    case CollOp::AllGather:
    case CollOp::ReduceScatter:
    case CollOp::AllToAll:
      return (nd - 1) / nd;
    case CollOp::Broadcast:
    case CollOp::Reduce:
    case CollOp::SendRecv:
      return 1.0;
  }
  return 1.0;
}

Bytes algbw_bytes(CollOp op, Bytes bytes, int n) {
  switch (op) {
    case CollOp::AllGather:
    case CollOp::ReduceScatter:
    case CollOp::AllToAll:
      return Bytes(bytes.count() * static_cast<uint64_t>(n));
    default:
      return bytes;
  }
}

Bytes nccl_tuning_bytes(CollOp op, Bytes bytes, int n) {
  if (op == CollOp::AllGather || op == CollOp::ReduceScatter)
    return Bytes(bytes.count() * static_cast<uint64_t>(n));
  return bytes;
}

}  // namespace phantora::net
