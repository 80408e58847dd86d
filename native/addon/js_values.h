// Reading plain JavaScript objects handed over by the typed layer. The
// TypeScript API validates first; these checks are the last line, so a bad
// value is still a TypeError/RangeError naming the field, never a bad message.
#pragma once

#include <napi.h>

#include <cstdint>
#include <string>

#include <netinet/in.h>
#include <linux/netfilter.h>

namespace addon {

bool Has(const Napi::Object& o, const char* key);
uint32_t GetUint(const Napi::Object& o, const char* key, const std::string& field, uint64_t max,
                 uint32_t fallback = 0);
bool GetBool(const Napi::Object& o, const char* key, bool fallback = false);
std::string GetString(const Napi::Object& o, const char* key, const std::string& field,
                      size_t max_len, const std::string& fallback = "");
// Parses an address of the given family (AF_INET / AF_INET6) into `out`.
void GetAddress(const Napi::Object& o, const char* key, const std::string& field, int af,
                nf_inet_addr& out);
// inet_ntop of an address.
std::string FormatAddress(int af, const void* addr);
Napi::Object GetObject(const Napi::Object& o, const char* key, const std::string& field);

}  // namespace addon

#include "../netlink/socket.h"
namespace addon {
// { netns?: string, timeoutMs?: number } -> socket options for a protocol.
nl::SocketOptions SocketOptionsFromJs(const Napi::Value& v, int protocol);
Napi::Object CountersToJs(Napi::Env env, const nl::SocketCounters& c);
}  // namespace addon
