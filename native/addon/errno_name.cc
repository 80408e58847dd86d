#include "errno_name.h"

#include <string.h>

namespace addon {

std::string ErrnoName(int err) {
  const char* n = strerrorname_np(err);
  return n ? n : "E" + std::to_string(err);
}

std::string ErrnoText(int err) {
  char buf[128];
  const char* s = strerror_r(err, buf, sizeof buf);  // GNU variant
  return s ? s : "errno " + std::to_string(err);
}

}  // namespace addon
