// NCCL's GPU-to-NIC path types: names and the PXN rule.
#include "sim/topology/nic_path.hpp"

namespace zerosim {

const char* nic_path_key(NicPath p) {
  switch (p) {
    case NicPath::Pix:
      return "PIX";
    case NicPath::Pxb:
      return "PXB";
    case NicPath::Pxn:
      return "PXN";
    case NicPath::Phb:
      return "PHB";
    case NicPath::Sys:
      return "SYS";
  }
  return "?";
}

bool parse_nic_path(const std::string& key, NicPath& out) {
  for (NicPath p : {NicPath::Pix, NicPath::Pxb, NicPath::Phb, NicPath::Sys})
    if (key == nic_path_key(p)) {
      out = p;
      return true;
    }
  return false;
}

NicPath nccl_type_inter(NicPath path, bool pxn) {
  return pxn && static_cast<int>(path) > static_cast<int>(NicPath::Pxb) ? NicPath::Pxn : path;
}

}  // namespace zerosim
