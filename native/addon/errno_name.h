#pragma once
#include <string>
namespace addon {
// "ENOENT" for 2, and so on; "E<n>" for codes libc does not name.
std::string ErrnoName(int err);
// strerror() text for an errno.
std::string ErrnoText(int err);
}  // namespace addon
