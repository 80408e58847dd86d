#include "family.h"

#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/ip_vs.h>

#include "../genl/family.h"

namespace ipvs {

nl::Status ResolveIpvs(nl::NetlinkSocket& s, std::atomic<uint16_t>& id) {
  uint16_t got = 0;
  int kernel_error = 0;
  nl::Status st = genl::ResolveFamily(s, IPVS_GENL_NAME, &got, &kernel_error);
  if (!st.ok()) return st;
  if (kernel_error == ENOENT)
    return nl::Status::Errno(
        EPROTONOSUPPORT, "IPVS",
        "this kernel has no IPVS: the generic netlink family \"IPVS\" is not registered. "
        "Load the module (modprobe ip_vs) or run where IPVS is available");
  if (kernel_error) return nl::Status::Errno(kernel_error, "CTRL_CMD_GETFAMILY", "IPVS");
  id = got;
  return nl::Status::Ok();
}

}  // namespace ipvs
